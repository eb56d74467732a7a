#pragma once

#include <cstdint>

#include <cublas_api.h>

#include "interpose/blas/common.hpp"
#include "interpose/library_call.hpp"
#include "wire/library_args.hpp"

namespace gleam::interpose::blas {

/// One call of a generated cuBLAS function (interpose/spec/cublas.spec,
/// class generated) on its way to the server: interpose::library_call with
/// cuBLAS's statuses, the handle's wire id first and its pointer mode for
/// the scalars. Scalar parameters follow the handle's pointer mode as
/// cuBLAS does: values read at the call (host mode) or device addresses
/// (device mode). Lives on the stub's stack; not thread-safe.
class library_call : public interpose::library_call {
public:
  /// A call of function `id` (its pinned spec id; `name` for messages) on
  /// the handle behind `handle`, whose wire id goes first.
  library_call(uint32_t id, const char* name, const handle_state& handle);

  /// Scalar parameters of `bytes` bytes read (in), written (out) or both
  /// (inout) by the function. INVALID_VALUE for a null pointer in host
  /// mode, NOT_SUPPORTED (logged once) for a size Gleam cannot tell
  /// (a data type it does not know); else CUBLAS_STATUS_SUCCESS.
  cublasStatus_t scalar_in(const void* p, uint64_t bytes) {
    return static_cast<cublasStatus_t>(interpose::library_call::scalar_in(p, bytes));
  }
  cublasStatus_t scalar_out(void* p, uint64_t bytes) {
    return static_cast<cublasStatus_t>(interpose::library_call::scalar_out(p, bytes));
  }
  cublasStatus_t scalar_inout(void* p, uint64_t bytes) {
    return static_cast<cublasStatus_t>(interpose::library_call::scalar_inout(p, bytes));
  }

  /// Host memory parameters (the spec's 'host': host memory whatever the
  /// pointer mode, e.g. the info result of a batched routine): as the
  /// scalars in host mode.
  cublasStatus_t host_in(const void* p, uint64_t bytes) {
    return static_cast<cublasStatus_t>(interpose::library_call::host_in(p, bytes));
  }
  cublasStatus_t host_out(void* p, uint64_t bytes) {
    return static_cast<cublasStatus_t>(interpose::library_call::host_out(p, bytes));
  }
  cublasStatus_t host_inout(void* p, uint64_t bytes) {
    return static_cast<cublasStatus_t>(interpose::library_call::host_inout(p, bytes));
  }

  /// Sends the call. With host outputs (host pointer mode and a result
  /// parameter) it waits for the server and copies the results into the
  /// app's memory: the function's own status. Without, it is
  /// error-code-only (blas::submit): CUBLAS_STATUS_SUCCESS at once, a
  /// later failure as the runtime's deferred error.
  cublasStatus_t finish() noexcept {
    return static_cast<cublasStatus_t>(interpose::library_call::finish(false));
  }
};

} // namespace gleam::interpose::blas
