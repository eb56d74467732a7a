#pragma once

#include "actors/proto/ops.pb.h"
#include "executor/driver_api.hpp"
#include "executor/session.hpp"

namespace gleam::executor {

/// GraphClone of session `s` into `r`: cuGraphClone of the session's graph
/// `op.original()` as the new client handle `op.graph()`, and each client
/// node of `op.original_nodes()` mapped to its copy (cuGraphNodeFindInClone)
/// under the handle at the same index of `op.nodes()`. Refused with
/// CUDA_ERROR_INVALID_VALUE (nothing created) when the original is not a
/// graph of the session, the new handle or a node handle is taken or
/// reserved, the two node lists differ in length, or a node is not one of
/// the original's. Not thread-safe.
void graph_clone(driver_api& api, session& s, const proto::GraphClone& op, proto::OpResult& r);

} // namespace gleam::executor
