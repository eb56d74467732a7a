#pragma once

#include <string>

#include <fmt/format.h>

#include "actors/proto/ops.pb.h"
#include "executor/driver_api.hpp"

/// How every op runner of the executor records a driver failure in its
/// op's result. Thread safety: as the result's owner.
namespace gleam::executor {

/// Records `rc` with its human-readable `detail` as the op's result.
inline void fail_op(proto::OpResult& r, CUresult rc, std::string detail) {
  r.set_status(static_cast<int32_t>(rc));
  r.set_error(std::move(detail));
}

/// Records `rc` of driver call `what` (described by `api`) when it failed;
/// true on success.
inline bool check_op(proto::OpResult& r, const driver_api& api, CUresult rc, const char* what) {
  if (rc == CUDA_SUCCESS)
    return true;
  fail_op(r, rc, fmt::format("{} failed: {}", what, api.describe(rc)));
  return false;
}

} // namespace gleam::executor
