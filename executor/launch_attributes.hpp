#pragma once

#include <string>
#include <vector>

#include <cuda.h>

#include "actors/proto/ops.pb.h"
#include "executor/session.hpp"

namespace gleam::executor {

/// The driver launch attributes of LaunchKernel `op` of session `s`, for
/// cuLaunchKernelEx: the cluster and cooperative fields first, then
/// op.attributes() in the app's order, each translated as CUDA defines it
/// (CU_LAUNCH_ATTRIBUTE_IGNORE entries are kept; the driver skips them).
/// Client event handles become the session's driver events, and an access
/// policy window must start inside the session's memory (its length is the
/// driver's to check: a window is a cache hint, never an access).
///
/// Returns CUDA_SUCCESS with `out` filled, or the failure with `detail`
/// saying what was refused: CUDA_ERROR_INVALID_VALUE for an attribute id
/// this server does not know or a window outside the session's memory,
/// CUDA_ERROR_INVALID_HANDLE for an event the session does not hold.
/// Pure translation: no driver call.
[[nodiscard]] CUresult launch_attributes(const proto::LaunchKernel& op, const session& s,
                                         std::vector<CUlaunchAttribute>& out,
                                         std::string& detail);

} // namespace gleam::executor
