#include "executor/cusolver_api.hpp"

#include <dlfcn.h>

#include "executor/blas_api.hpp"
#include "executor/vendor_library.hpp"

namespace gleam::executor {

cusolver_api::~cusolver_api() {
  if (lib_ != nullptr)
    ::dlclose(lib_);
}

caf::expected<std::unique_ptr<cusolver_api>> cusolver_api::load(const std::string& dir) {
  // libcusolver.so.12 names libcublas.so.13 and libcublasLt.so.13 as NEEDED.
  // The vendor's, found by explicit path and loaded RTLD_GLOBAL first, then
  // answer them, never the libraries of those names in Gleam's bundle (which
  // a gleam binary's RUNPATH would find).
  static_cast<void>(blas_api::shared());
  return load_vendor_api<cusolver_api>(
    dir, {"libcusolver.so.12", "GLEAM_CUSOLVER_DIR", "CUDA 13 cuSOLVER"},
    "the loaded libcusolver.so.12 defines none of cuSOLVER's functions: install the cuSOLVER "
    "of CUDA 13",
    [](cusolver_api& api, void* lib) {
      api.lib_ = lib;
      return resolve_vendor_entries(api, lib);
    });
}

caf::expected<cusolver_api*> cusolver_api::shared() {
  return shared_vendor_api<cusolver_api>();
}

namespace {

/// The elements getrf_bufferSize `query` reports for the arguments, or
/// invalid_extent.
template <class Query, class T>
uint64_t workspace_of(Query query, cusolverDnHandle_t handle, int m, int n, T* A,
                      int lda) noexcept {
  if (query == nullptr)
    return wire::extents::invalid_extent;
  int lwork = 0;
  if (query(handle, m, n, A, lda, &lwork) != CUSOLVER_STATUS_SUCCESS || lwork < 0)
    return wire::extents::invalid_extent;
  return static_cast<uint64_t>(lwork);
}

} // namespace

uint64_t getrf_workspace(cusolver_api& api, cusolverDnHandle_t handle, int m, int n, float* A,
                         int lda) noexcept {
  return workspace_of(api.cusolverDnSgetrf_bufferSize, handle, m, n, A, lda);
}

uint64_t getrf_workspace(cusolver_api& api, cusolverDnHandle_t handle, int m, int n, double* A,
                         int lda) noexcept {
  return workspace_of(api.cusolverDnDgetrf_bufferSize, handle, m, n, A, lda);
}

uint64_t getrf_workspace(cusolver_api& api, cusolverDnHandle_t handle, int m, int n,
                         cuComplex* A, int lda) noexcept {
  return workspace_of(api.cusolverDnCgetrf_bufferSize, handle, m, n, A, lda);
}

uint64_t getrf_workspace(cusolver_api& api, cusolverDnHandle_t handle, int m, int n,
                         cuDoubleComplex* A, int lda) noexcept {
  return workspace_of(api.cusolverDnZgetrf_bufferSize, handle, m, n, A, lda);
}

bool irs_keep_precision(std::shared_ptr<void>* note, cusolverPrecType_t main) {
  uint64_t bytes = 0;
  switch (main) {
    case CUSOLVER_R_32F:
      bytes = 4;
      break;
    case CUSOLVER_R_64F:
    case CUSOLVER_C_32F:
      bytes = 8;
      break;
    case CUSOLVER_C_64F:
      bytes = 16;
      break;
    default:
      return true;
  }
  if (note != nullptr)
    *note = std::make_shared<uint64_t>(bytes);
  return true;
}

uint64_t irs_main_size(std::shared_ptr<void>* note) noexcept {
  if (note == nullptr || *note == nullptr)
    return wire::extents::invalid_extent;
  return *static_cast<const uint64_t*>(note->get());
}

} // namespace gleam::executor
