// cuRAND's traits for the generated stubs, and the one local function:
// curandGetProperty answers from the curand.h Gleam was built with.
#include "interpose/curand/library.hpp"

#include "actors/proto/ops.pb.h"
#include "interpose/error_map.hpp"
#include "interpose/curand_export.hpp"

namespace gleam::interpose::curand {

curandStatus_t from_cuda(cudaError_t x) noexcept {
  switch (x) {
    case cudaSuccess:
      return CURAND_STATUS_SUCCESS;
    case cudaErrorNoDevice:
    case cudaErrorInitializationError:
    case cudaErrorInsufficientDriver:
    case cudaErrorDevicesUnavailable:
      return CURAND_STATUS_INITIALIZATION_FAILED;
    case cudaErrorMemoryAllocation:
      return CURAND_STATUS_ALLOCATION_FAILED;
    case cudaErrorInvalidValue:
    case cudaErrorInvalidResourceHandle:
      return CURAND_STATUS_OUT_OF_RANGE;
    case cudaErrorNotSupported:
      return CURAND_STATUS_ARCH_MISMATCH;
    default:
      // A GPU fault of the process: the vendor's "existing error from a
      // previous kernel launch".
      return is_sticky(x) ? CURAND_STATUS_PREEXISTING_FAILURE : CURAND_STATUS_LAUNCH_FAILURE;
  }
}

const library_traits traits{
  proto::LibraryCall::CURAND,
  "cuRAND",
  CURAND_STATUS_SUCCESS,
  CURAND_STATUS_OUT_OF_RANGE,
  CURAND_STATUS_NOT_INITIALIZED,
  CURAND_STATUS_ALLOCATION_FAILED,
  CURAND_STATUS_ARCH_MISMATCH,
  CURAND_STATUS_INTERNAL_ERROR,
  [](cudaError_t x) noexcept { return static_cast<int32_t>(from_cuda(x)); },
};

} // namespace gleam::interpose::curand

extern "C" {

GLEAM_INTERPOSE_EXPORT curandStatus_t curandGetProperty(libraryPropertyType type, int* value) {
  if (value == nullptr)
    return CURAND_STATUS_OUT_OF_RANGE;
  switch (type) {
    case MAJOR_VERSION:
      *value = CURAND_VER_MAJOR;
      return CURAND_STATUS_SUCCESS;
    case MINOR_VERSION:
      *value = CURAND_VER_MINOR;
      return CURAND_STATUS_SUCCESS;
    case PATCH_LEVEL:
      *value = CURAND_VER_PATCH;
      return CURAND_STATUS_SUCCESS;
  }
  return CURAND_STATUS_OUT_OF_RANGE;
}

} // extern "C"
