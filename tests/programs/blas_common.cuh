// Shared by the cuBLAS test programs: the status check that exits with the
// failing call, its status name and description.
#pragma once

#include <cstdio>
#include <cstdlib>

#include <cublas_v2.h>
#include <fcntl.h>
#include <unistd.h>

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

namespace gleam_program {

/// The status of `call`, with the diagnostic the vendor library prints for
/// an invalid argument silenced: that text is not part of the API's answer
/// (the status is), so it stays out of the local-vs-Gleam comparison.
template <class F>
cublasStatus_t quietly(F call) {
  std::fflush(stdout);
  std::fflush(stderr);
  int saved_out = dup(1), saved_err = dup(2);
  int null_fd = open("/dev/null", O_WRONLY);
  dup2(null_fd, 1);
  dup2(null_fd, 2);
  cublasStatus_t status = call();
  std::fflush(stdout);
  std::fflush(stderr);
  dup2(saved_out, 1);
  dup2(saved_err, 2);
  close(null_fd);
  close(saved_out);
  close(saved_err);
  return status;
}

} // namespace gleam_program
