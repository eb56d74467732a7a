// cuFFT's traits for the generated stubs and the hand-written plans.
#include "interpose/cufft/library.hpp"

#include "actors/proto/ops.pb.h"
#include "interpose/cufft_export.hpp"
#include "interpose/error_map.hpp"

namespace gleam::interpose::cufft {

cufftResult from_cuda(cudaError_t x) noexcept {
  switch (x) {
    case cudaSuccess:
      return CUFFT_SUCCESS;
    case cudaErrorNoDevice:
    case cudaErrorInitializationError:
    case cudaErrorInsufficientDriver:
    case cudaErrorDevicesUnavailable:
      return CUFFT_SETUP_FAILED;
    case cudaErrorMemoryAllocation:
      return CUFFT_ALLOC_FAILED;
    case cudaErrorInvalidValue:
      return CUFFT_INVALID_VALUE;
    case cudaErrorInvalidResourceHandle:
      return CUFFT_INVALID_PLAN;
    case cudaErrorInvalidDevice:
      return CUFFT_INVALID_DEVICE;
    case cudaErrorNotSupported:
      return CUFFT_NOT_SUPPORTED;
    default:
      return is_sticky(x) ? CUFFT_EXEC_FAILED : CUFFT_INTERNAL_ERROR;
  }
}

const library_traits traits{
  proto::LibraryCall::CUFFT,
  "cuFFT",
  CUFFT_SUCCESS,
  CUFFT_INVALID_VALUE,
  CUFFT_INVALID_PLAN,
  CUFFT_ALLOC_FAILED,
  CUFFT_NOT_SUPPORTED,
  CUFFT_INTERNAL_ERROR,
  [](cudaError_t x) noexcept { return static_cast<int32_t>(from_cuda(x)); },
};

} // namespace gleam::interpose::cufft
