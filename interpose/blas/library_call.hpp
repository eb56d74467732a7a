#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include <cublas_api.h>

#include "interpose/blas/common.hpp"
#include "wire/library_args.hpp"

namespace gleam::interpose::blas {

/// One call of a generated cuBLAS function (interpose/spec/cublas.spec,
/// class generated) on its way to the server: the generated stub adds its
/// parameters in order after the handle (wire/library_args.hpp) and
/// finish() sends one LibraryCall op. Scalar parameters follow the handle's
/// pointer mode as cuBLAS does: values read at the call (host mode) or
/// device addresses (device mode). Lives on the stub's stack; not
/// thread-safe.
class library_call {
public:
  /// A call of function `id` (its pinned spec id; `name` for messages) on
  /// the handle behind `handle`, whose wire id goes first.
  library_call(uint32_t id, const char* name, const handle_state& handle);

  /// A by-value parameter.
  template <class T>
  void value(const T& v) {
    args_.value(v);
  }

  /// A device pointer parameter.
  void device(const void* p) {
    args_.address(p);
  }

  /// Scalar parameters of `bytes` bytes read (in), written (out) or both
  /// (inout) by the function. INVALID_VALUE for a null pointer in host
  /// mode, NOT_SUPPORTED (logged once) for a size Gleam cannot tell
  /// (a data type it does not know); else CUBLAS_STATUS_SUCCESS.
  cublasStatus_t scalar_in(const void* p, uint64_t bytes);
  cublasStatus_t scalar_out(void* p, uint64_t bytes);
  cublasStatus_t scalar_inout(void* p, uint64_t bytes);

  /// Host memory parameters of `bytes` bytes, whatever the pointer mode
  /// (the info result of the batched LAPACK-style routines): INVALID_VALUE
  /// for a null pointer; out and inout ones make the call wait for them.
  cublasStatus_t host_in(const void* p, uint64_t bytes);
  cublasStatus_t host_out(void* p, uint64_t bytes);
  cublasStatus_t host_inout(void* p, uint64_t bytes);

  /// Sends the call. With host outputs (host pointer mode and a result
  /// parameter) it waits for the server and copies the results into the
  /// app's memory: the function's own status. Without, it is
  /// error-code-only (blas::submit): CUBLAS_STATUS_SUCCESS at once, a
  /// later failure as the runtime's deferred error.
  cublasStatus_t finish() noexcept;

  /// The largest host scalar (bytes): rotm's five doubles fit many times.
  static constexpr uint64_t max_scalar_bytes = 256;

private:
  cublasStatus_t scalar(const void* p, uint64_t bytes, bool send, void* back);
  cublasStatus_t host(const void* p, uint64_t bytes, bool send, void* back);

  uint32_t id_;
  const char* name_;
  bool device_mode_;
  wire::arg_packer args_;
  /// Where each host output goes, with its size, in parameter order.
  std::vector<std::pair<void*, uint64_t>> outputs_;
};

} // namespace gleam::interpose::blas
