// The legacy cuBLAS API's own functions (cublas.h): the implicit handle's
// life, its error state, its stream, and device memory through the
// process's CUDA runtime. The legacy BLAS routines themselves are
// generated: each forwards to its cublas_v2 counterpart on the implicit
// handle (interpose/blas/legacy.hpp).
#include <dlfcn.h>

#include <cstdint>

#include "interpose/blas/common.hpp"
#include "interpose/blas/legacy.hpp"
#include "interpose/cublas_export.hpp"

namespace blas = gleam::interpose::blas;

namespace {

/// The process's CUDA runtime function `name` (ours when the app runs under
/// gleam-run: the legacy API allocates with cudaMalloc, as the vendor's
/// does); null when no runtime is loaded.
template <class F>
F runtime_function(const char* name) noexcept {
  return reinterpret_cast<F>(::dlsym(RTLD_DEFAULT, name));
}

} // namespace

extern "C" {

GLEAM_INTERPOSE_EXPORT cublasStatus cublasInit(void) {
  if (blas::legacy_handle() != nullptr)
    return CUBLAS_STATUS_SUCCESS;
  cublasHandle_t h = nullptr;
  auto s = cublasCreate_v2(&h);
  if (s != CUBLAS_STATUS_SUCCESS)
    return s;
  blas::set_legacy_handle(h);
  return CUBLAS_STATUS_SUCCESS;
}

GLEAM_INTERPOSE_EXPORT cublasStatus cublasShutdown(void) {
  auto h = blas::legacy_handle();
  if (h == nullptr)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  blas::set_legacy_handle(nullptr);
  return cublasDestroy_v2(h);
}

GLEAM_INTERPOSE_EXPORT cublasStatus cublasGetError(void) {
  return blas::legacy_take_error();
}

GLEAM_INTERPOSE_EXPORT cublasStatus cublasGetVersion(int* version) {
  if (version == nullptr)
    return CUBLAS_STATUS_INVALID_VALUE;
  *version = CUBLAS_VERSION;
  return CUBLAS_STATUS_SUCCESS;
}

GLEAM_INTERPOSE_EXPORT cublasStatus cublasSetKernelStream(cudaStream_t stream) {
  auto h = blas::legacy_handle();
  if (h == nullptr)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  return cublasSetStream_v2(h, stream);
}

GLEAM_INTERPOSE_EXPORT cublasStatus cublasAlloc(int n, int elemSize, void** devicePtr) {
  if (blas::legacy_handle() == nullptr)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  if (n <= 0 || elemSize <= 0 || devicePtr == nullptr)
    return CUBLAS_STATUS_INVALID_VALUE;
  auto malloc = runtime_function<cudaError_t (*)(void**, size_t)>("cudaMalloc");
  if (malloc == nullptr)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  auto bytes = static_cast<size_t>(n) * static_cast<size_t>(elemSize);
  return malloc(devicePtr, bytes) == cudaSuccess ? CUBLAS_STATUS_SUCCESS
                                                  : CUBLAS_STATUS_ALLOC_FAILED;
}

GLEAM_INTERPOSE_EXPORT cublasStatus cublasFree(void* devicePtr) {
  if (blas::legacy_handle() == nullptr)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  auto free = runtime_function<cudaError_t (*)(void*)>("cudaFree");
  if (free == nullptr)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  return free(devicePtr) == cudaSuccess ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INTERNAL_ERROR;
}

} // extern "C"
