#pragma once

#include <cstdint>
#include <functional>

#include "actors/proto/ops.pb.h"

namespace gleam::test {

/// The fake server's memory: the host bytes behind device range [p, p + n)
/// (null when not backed), `known` false when the range is not inside one
/// allocation.
using fake_memory = std::function<char*(uint64_t p, uint64_t n, bool* known)>;

/// Runs a LibraryCall on the fake server through the generated server code
/// (executor/library_call.hpp) over a fake cuBLAS that computes
/// cublasSaxpy_v2, cublasSdot_v2 and cublasSgemv_v2 on the host bytes (any
/// other function: CUBLAS_STATUS_NOT_SUPPORTED, "missing from this
/// server's cuBLAS"). Every handle id is accepted; address checks are the
/// generated ones against `memory`.
void fake_library_call(const fake_memory& memory, const proto::LibraryCall& op,
                       proto::OpResult& r);

} // namespace gleam::test
