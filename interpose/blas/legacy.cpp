#include "interpose/blas/legacy.hpp"

#include <atomic>

namespace gleam::interpose::blas {

namespace {

std::atomic<cublasHandle_t> implicit{nullptr};
std::atomic<int> error{CUBLAS_STATUS_SUCCESS};

} // namespace

cublasHandle_t legacy_handle() noexcept {
  return implicit.load();
}

void set_legacy_handle(cublasHandle_t h) noexcept {
  implicit.store(h);
}

void legacy_record(cublasStatus_t s) noexcept {
  if (s != CUBLAS_STATUS_SUCCESS)
    error.store(static_cast<int>(s));
}

cublasStatus_t legacy_take_error() noexcept {
  return static_cast<cublasStatus_t>(error.exchange(CUBLAS_STATUS_SUCCESS));
}

cublasOperation_t legacy_op(char c) noexcept {
  switch (c) {
    case 'N':
    case 'n':
      return CUBLAS_OP_N;
    case 'T':
    case 't':
      return CUBLAS_OP_T;
    case 'C':
    case 'c':
      return CUBLAS_OP_C;
    default:
      return static_cast<cublasOperation_t>(-1);
  }
}

cublasFillMode_t legacy_fill(char c) noexcept {
  switch (c) {
    case 'U':
    case 'u':
      return CUBLAS_FILL_MODE_UPPER;
    case 'L':
    case 'l':
      return CUBLAS_FILL_MODE_LOWER;
    default:
      return static_cast<cublasFillMode_t>(-1);
  }
}

cublasSideMode_t legacy_side(char c) noexcept {
  switch (c) {
    case 'L':
    case 'l':
      return CUBLAS_SIDE_LEFT;
    case 'R':
    case 'r':
      return CUBLAS_SIDE_RIGHT;
    default:
      return static_cast<cublasSideMode_t>(-1);
  }
}

cublasDiagType_t legacy_diag(char c) noexcept {
  switch (c) {
    case 'N':
    case 'n':
      return CUBLAS_DIAG_NON_UNIT;
    case 'U':
    case 'u':
      return CUBLAS_DIAG_UNIT;
    default:
      return static_cast<cublasDiagType_t>(-1);
  }
}

} // namespace gleam::interpose::blas
