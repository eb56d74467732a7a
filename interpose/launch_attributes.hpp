#pragma once

#include <cstdint>
#include <functional>

#include <cuda_runtime_api.h>

#include "actors/proto/ops.pb.h"

namespace gleam::interpose {

/// Says whether a client event handle names an event of this process.
using event_known = std::function<bool(uint64_t)>;

/// Encodes cudaLaunchAttribute `a` (cudaLaunchKernelExC; cuLaunchKernelEx
/// passes the same layout) as a LaunchAttribute op field, every value kind
/// CUDA 13 defines, for the server to hand to cuLaunchKernelEx. Event
/// handles are the client's own (cudaEventCreate), so they travel as they
/// are and the server maps them.
///
/// Returns cudaSuccess, or the error CUDA returns at the launch:
/// cudaErrorInvalidValue for an attribute id CUDA does not define,
/// cudaErrorInvalidResourceHandle for a programmatic or launch completion
/// event that `known` does not know. Checks of values (cluster shapes,
/// priorities, event flags) are the server driver's, whose error comes back
/// like any launch error. Thread-safe; touches no global state.
cudaError_t encode_launch_attribute(const cudaLaunchAttribute& a, const event_known& known,
                                    proto::LaunchAttribute* out);

/// The client event a programmatic or launch completion attribute records
/// (0 for every other attribute): the capture mirror follows it like a
/// cudaEventRecord on the launch's stream.
uint64_t recorded_event(const cudaLaunchAttribute& a) noexcept;

} // namespace gleam::interpose
