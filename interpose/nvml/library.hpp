#pragma once

#include <cstdint>

#include "interpose/library_call.hpp"
#include "wire/nvml.h"

/// The hand-written pieces of Gleam's libnvidia-ml.so.1 that its generated
/// stubs (interpose/spec/nvml.spec, <build>/interpose/nvml_generated.cpp)
/// use: NVML's traits, the initialization state and the client objects
/// behind nvmlDevice_t.
namespace gleam::interpose::nvml {

/// NVML as interpose/library_call.hpp sees it: LibraryCall library NVML,
/// NVML_ERROR_INVALID_ARGUMENT for arguments refused at the call and for a
/// device handle the app does not hold, NVML_ERROR_NOT_SUPPORTED for what
/// Gleam cannot do, and from_cuda().
extern const library_traits traits;

/// The nvmlReturn_t an app sees when the transport failed with `x`: no
/// server NVML_ERROR_DRIVER_NOT_LOADED (the vendor's answer without a
/// driver), a lost session or a sticky GPU fault NVML_ERROR_GPU_IS_LOST,
/// else NVML_ERROR_UNKNOWN.
nvmlReturn_t from_cuda(cudaError_t x) noexcept;

/// NVML_SUCCESS while the app holds at least one nvmlInit reference, else
/// NVML_ERROR_UNINITIALIZED. Thread-safe.
int32_t initialized() noexcept;

/// The most GPUs a session can have (nvmlDevice_t objects are static).
inline constexpr unsigned max_devices = 64;

} // namespace gleam::interpose::nvml

/// The app-visible object behind an nvmlDevice_t (the spec's 'handle
/// nvmlDevice_t device nvmlDevice_st'): one per GPU of the session, static,
/// its wire id the GPU's index in the session.
struct nvmlDevice_st {
  gleam::interpose::library_handle state;
};
