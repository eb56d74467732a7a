#include "interpose/blas/common.hpp"

#include "interpose/runtime.hpp"

namespace gleam::interpose::blas {

void report_unsupported(const char* name, const char* reason) noexcept {
  report_library_unsupported(name, reason);
}

handle_state* state_of(const void* p) noexcept {
  if (p == nullptr)
    return nullptr;
  auto* s = static_cast<handle_state*>(const_cast<void*>(p));
  return s->magic == handle_magic ? s : nullptr;
}

cublasStatus_t from_cuda(cudaError_t x) noexcept {
  switch (x) {
    case cudaSuccess:
      return CUBLAS_STATUS_SUCCESS;
    case cudaErrorNoDevice:
    case cudaErrorInitializationError:
    case cudaErrorInsufficientDriver:
      return CUBLAS_STATUS_NOT_INITIALIZED;
    case cudaErrorMemoryAllocation:
      return CUBLAS_STATUS_ALLOC_FAILED;
    case cudaErrorInvalidValue:
    case cudaErrorInvalidResourceHandle:
      return CUBLAS_STATUS_INVALID_VALUE;
    case cudaErrorNotSupported:
      return CUBLAS_STATUS_NOT_SUPPORTED;
    case cudaErrorIllegalAddress:
      return CUBLAS_STATUS_MAPPING_ERROR;
    default:
      return CUBLAS_STATUS_EXECUTION_FAILED;
  }
}

const library_traits& traits() noexcept {
  static const library_traits t{
    proto::LibraryCall::CUBLAS,
    "cuBLAS",
    CUBLAS_STATUS_SUCCESS,
    CUBLAS_STATUS_INVALID_VALUE,
    CUBLAS_STATUS_NOT_INITIALIZED,
    CUBLAS_STATUS_ALLOC_FAILED,
    CUBLAS_STATUS_NOT_SUPPORTED,
    CUBLAS_STATUS_INTERNAL_ERROR,
    [](cudaError_t x) noexcept { return static_cast<int32_t>(from_cuda(x)); },
  };
  return t;
}

cublasStatus_t run(proto::Op op, proto::OpResult* result) noexcept {
  return static_cast<cublasStatus_t>(run_library_op(traits(), std::move(op), result));
}

cublasStatus_t submit(proto::Op op) noexcept {
  return static_cast<cublasStatus_t>(submit_library_op(traits(), std::move(op)));
}

const char* status_name(cublasStatus_t s) noexcept {
  switch (s) {
    case CUBLAS_STATUS_SUCCESS:
      return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED:
      return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED:
      return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE:
      return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH:
      return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_MAPPING_ERROR:
      return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED:
      return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR:
      return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED:
      return "CUBLAS_STATUS_NOT_SUPPORTED";
    case CUBLAS_STATUS_LICENSE_ERROR:
      return "CUBLAS_STATUS_LICENSE_ERROR";
  }
  return "unrecognized status";
}

const char* status_string(cublasStatus_t s) noexcept {
  // The texts of the vendor's cublasGetStatusString (cuBLAS 13.1).
  switch (s) {
    case CUBLAS_STATUS_SUCCESS:
      return "success";
    case CUBLAS_STATUS_NOT_INITIALIZED:
      return "the library was not initialized";
    case CUBLAS_STATUS_ALLOC_FAILED:
      return "the resource allocation failed";
    case CUBLAS_STATUS_INVALID_VALUE:
      return "an unsupported value or parameter was passed to the function";
    case CUBLAS_STATUS_ARCH_MISMATCH:
      return "the function requires an architectural feature absent from the device";
    case CUBLAS_STATUS_MAPPING_ERROR:
      return "an access to GPU memory space failed";
    case CUBLAS_STATUS_EXECUTION_FAILED:
      return "the function failed to launch on the GPU";
    case CUBLAS_STATUS_INTERNAL_ERROR:
      return "an internal operation failed";
    case CUBLAS_STATUS_NOT_SUPPORTED:
      return "the requested functionality is not supported";
    case CUBLAS_STATUS_LICENSE_ERROR:
      return "the license check failed";
  }
  return "unrecognized status";
}

bool is_complex(cudaDataType t) noexcept {
  switch (t) {
    case CUDA_C_16F:
    case CUDA_C_16BF:
    case CUDA_C_32F:
    case CUDA_C_64F:
    case CUDA_C_4I:
    case CUDA_C_4U:
    case CUDA_C_8I:
    case CUDA_C_8U:
    case CUDA_C_16I:
    case CUDA_C_16U:
    case CUDA_C_32I:
    case CUDA_C_32U:
    case CUDA_C_64I:
    case CUDA_C_64U:
      return true;
    default:
      return false;
  }
}

} // namespace gleam::interpose::blas
