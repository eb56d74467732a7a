// Shared by the cuBLAS test programs: the status check that exits with the
// failing call, its status name and description (gleam_program::quietly,
// for the vendor's diagnostics, is in common.cuh).
#pragma once

#include <cstdio>
#include <cstdlib>

#include <cublas_v2.h>

#define GLEAM_BLAS_CHECK(call)                                                    \
  do {                                                                            \
    cublasStatus_t gleam_blas_status_ = (call);                                   \
    if (gleam_blas_status_ != CUBLAS_STATUS_SUCCESS) {                            \
      std::fprintf(stderr, "%s:%d: %s failed: %s (%s)\n", __FILE__, __LINE__,     \
                   #call, cublasGetStatusName(gleam_blas_status_),                \
                   cublasGetStatusString(gleam_blas_status_));                    \
      std::exit(1);                                                               \
    }                                                                             \
  } while (false)

