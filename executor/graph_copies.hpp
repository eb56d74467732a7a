#pragma once

#include <cuda.h>

#include "actors/proto/ops.pb.h"
#include "executor/driver_api.hpp"
#include "executor/session.hpp"

namespace gleam::executor {

/// Memcpy and memset nodes of session `s` (actors/proto/ops.proto,
/// "Memcpy nodes"): GraphAddMemcpyNode, GraphMemcpyNodeSetParams,
/// GraphExecMemcpyNodeSetParams, StreamHostCopy, GraphMemsetNodeSetParams
/// and GraphExecMemsetNodeSetParams, into `r`. A copy between device
/// addresses is the driver's memcpy node; one with a host end in the
/// client is a child graph of a host node (host_copy_target, which calls
/// the session's back channel) and a memcpy node through a pinned staging
/// buffer of the session (session::host_copies), or the same two nodes
/// captured into a stream. Every device range is checked against the
/// session's memory first (CUDA_ERROR_INVALID_VALUE, nothing made); host
/// ends need the back channel (CUDA_ERROR_NOT_SUPPORTED without one). Not
/// thread-safe.
void run_graph_copy(driver_api& api, session& s, const proto::Op& op, proto::OpResult& r);

/// The driver's parameters of a memset node over the session's memory;
/// false with `r` set when they are not valid.
bool memset_node_params(const session& s, const proto::MemsetNodeParams& m,
                        CUDA_MEMSET_NODE_PARAMS& p, proto::OpResult& r);

/// Frees the staging buffers of the session's copies (after its graphs).
void release_host_copies(driver_api& api, session& s);

} // namespace gleam::executor
