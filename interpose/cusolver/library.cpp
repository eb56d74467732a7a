// cuSOLVER's traits for the generated stubs, and the one local function:
// cusolverDnGetStream answers from the client's handle.
#include "interpose/cusolver/library.hpp"

#include "actors/proto/ops.pb.h"
#include "interpose/cusolver_export.hpp"

namespace gleam::interpose::cusolver {

cusolverStatus_t from_cuda(cudaError_t x) noexcept {
  static constexpr cuda_error_statuses statuses{
    CUSOLVER_STATUS_SUCCESS,          CUSOLVER_STATUS_NOT_INITIALIZED,
    CUSOLVER_STATUS_ALLOC_FAILED,     CUSOLVER_STATUS_INVALID_VALUE,
    CUSOLVER_STATUS_NOT_INITIALIZED,  CUSOLVER_STATUS_NOT_SUPPORTED,
    CUSOLVER_STATUS_EXECUTION_FAILED, CUSOLVER_STATUS_INTERNAL_ERROR,
  };
  return static_cast<cusolverStatus_t>(status_of_cuda(x, statuses));
}

const library_traits traits{
  proto::LibraryCall::CUSOLVER,
  "cuSOLVER",
  CUSOLVER_STATUS_SUCCESS,
  CUSOLVER_STATUS_INVALID_VALUE,
  CUSOLVER_STATUS_NOT_INITIALIZED,
  CUSOLVER_STATUS_ALLOC_FAILED,
  CUSOLVER_STATUS_NOT_SUPPORTED,
  CUSOLVER_STATUS_INTERNAL_ERROR,
  [](cudaError_t x) noexcept { return static_cast<int32_t>(from_cuda(x)); },
};

} // namespace gleam::interpose::cusolver

namespace cusolver = gleam::interpose::cusolver;

extern "C" {

GLEAM_INTERPOSE_EXPORT cusolverStatus_t cusolverDnGetStream(cusolverDnHandle_t handle,
                                                            cudaStream_t* streamId) {
  if (gleam::interpose::library_handle_of(handle, cusolver::traits, cusolver::handle_type)
      == nullptr)
    return CUSOLVER_STATUS_NOT_INITIALIZED;
  if (streamId == nullptr)
    return CUSOLVER_STATUS_INVALID_VALUE;
  *streamId = handle->stream;
  return CUSOLVER_STATUS_SUCCESS;
}

} // extern "C"
