#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "actors/proto/ops.pb.h"
#include "wire/library_args.hpp"

namespace gleam::executor {

class blas_api;

/// What the generated server code of a library's functions (generate.py
/// server_file: <lib>_library_calls.cpp) needs from the op it runs: the
/// session's handles and allocations, the scalars' memory, and where the
/// status and host outputs go. One per LibraryCall op; the library's
/// runner implements the virtual part. Not thread-safe.
class library_call_env {
public:
  /// A scalar parameter as it arrived: a device address (device pointer
  /// mode) or its host bytes (host mode; empty for an output).
  struct scalar_arg {
    uint64_t address = 0;
    std::string_view bytes;
  };

  explicit library_call_env(bool device_scalars) : device_scalars_(device_scalars) {
  }
  virtual ~library_call_env() = default;
  library_call_env(const library_call_env&) = delete;
  library_call_env& operator=(const library_call_env&) = delete;

  /// The library handle of the session's client handle `id`, ready for
  /// work on its stream in this call's pointer mode; null after failing the
  /// call (unknown handle, unusable stream).
  virtual void* handle(uint64_t id) = 0;

  /// True when [ptr, ptr + bytes) is inside one of the session's
  /// allocations (0 bytes: always); else fails the call naming `what`.
  virtual bool device(uint64_t ptr, uint64_t bytes, const char* what) = 0;

  /// Records the library's status `status` of `function`; on success the
  /// host outputs go into the op's result.
  virtual void report(int status, const char* function) = 0;

  /// Fails the call: its arguments do not unpack as `function`'s.
  virtual void malformed(const char* function) = 0;

  /// Fails the call: the server's library lacks `function`.
  virtual void unavailable(const char* function) = 0;

  /// True when the device array of `count` device pointers at `ptr` is
  /// inside the session's allocations and each pointer it holds, read once
  /// the handle's stream has done the work before this call, starts
  /// `bytes_each` bytes inside one (a null pointer only when `bytes_each`
  /// is 0); else fails the call naming `what`. Call after handle().
  virtual bool device_array(uint64_t ptr, int64_t count, uint64_t bytes_each,
                            const char* what) = 0;

  /// Reads the next scalar parameter; `has_input`: in or inout (its value
  /// travels in host mode).
  scalar_arg scalar(wire::arg_reader& in, bool has_input);

  /// The memory the library gets for an in or inout scalar of `bytes`
  /// bytes: its device address (checked like device()) or a copy of its
  /// value (an inout one's comes back as a host output); null after
  /// failing the call (a size that differs from the spec's).
  void* scalar_in(const scalar_arg& a, uint64_t bytes, const char* what);

  /// scalar_in for an inout scalar: in host mode its value also comes
  /// back as a host output.
  void* scalar_inout(const scalar_arg& a, uint64_t bytes, const char* what);

  /// Same for an out scalar: its device address or zeroed host memory
  /// that comes back as a host output.
  void* scalar_out(const scalar_arg& a, uint64_t bytes, const char* what);

  /// Host memory parameters ("host" in the spec: host memory whatever the
  /// pointer mode): read like scalar() / scalar_in / scalar_inout /
  /// scalar_out in host pointer mode.
  scalar_arg host(wire::arg_reader& in, bool has_input);
  void* host_in(const scalar_arg& a, uint64_t bytes, const char* what);
  void* host_inout(const scalar_arg& a, uint64_t bytes, const char* what);
  void* host_out(const scalar_arg& a, uint64_t bytes, const char* what);

  /// True when the call's scalars are device addresses.
  [[nodiscard]] bool device_scalars() const noexcept {
    return device_scalars_;
  }

protected:
  /// Fails the call as invalid with `detail` (used by scalar_in/out).
  virtual void invalid(std::string detail) = 0;

  /// Moves the host outputs, in parameter order, into `out`.
  void take_outputs(proto::LibraryOutputs& out);

private:
  /// Aligned host memory of `bytes` bytes, kept until the call ends.
  void* host_memory(uint64_t bytes);
  /// A copy of a host parameter's bytes (null after failing the call).
  void* host_copy(const scalar_arg& a, uint64_t bytes, const char* what);
  /// Zeroed host memory for an output (null after failing the call).
  void* host_result(uint64_t bytes, const char* what);

  bool device_scalars_;
  std::vector<std::unique_ptr<std::max_align_t[]>> memory_;
  /// Host outputs: memory and size, in parameter order.
  std::vector<std::pair<void*, uint64_t>> outputs_;
};

/// Runs generated cuBLAS function `function` (its spec id) with the
/// arguments in `in`; false when no generated function has that id.
/// Generated from interpose/spec/cublas.spec (cublas_library_calls.cpp).
bool run_generated_cublas(blas_api& api, library_call_env& env, uint32_t function,
                          wire::arg_reader& in);

} // namespace gleam::executor
