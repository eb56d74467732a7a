#pragma once

#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <cuda.h>

#include "actors/proto/ops.pb.h"
#include "executor/library_handles.hpp"
#include "wire/library_args.hpp"

namespace gleam::executor {

class blas_api;
class driver_api;

/// How check_pointer_array() ended.
enum class pointer_array_check {
  /// The array and every pointer it holds lie in the session's memory.
  ok,
  /// `in_range` refused the array or one of its pointers (and failed the
  /// call).
  refused,
  /// The stream's earlier work failed (*rc): the array was not read.
  sync_failed,
  /// Reading the array failed (*rc).
  read_failed,
};

/// Checks a device array of `count` device pointers at `ptr` (a batched
/// routine's matrices), each to `bytes_each` bytes: the array's own bytes
/// with `in_range(address, bytes, what)`, then, once `stream` has done the
/// work before this call (which may have written the array), every pointer
/// read from it, named "<what>[i]". `in_range` fails the call itself when it
/// refuses; a failed synchronization or read leaves its CUresult in `*rc`.
/// Reads the array in pieces (its size is the client's to choose).
pointer_array_check
check_pointer_array(driver_api& driver, CUstream stream, uint64_t ptr, int64_t count,
                    uint64_t bytes_each, const char* what,
                    const std::function<bool(uint64_t, uint64_t, const char*)>& in_range,
                    CUresult* rc);

/// What the generated server code of a library's functions (generate.py,
/// library_calls.py server_file: <lib>_library_calls.cpp) needs from the op
/// it runs: the session's handles and allocations, the scalars' and host
/// outputs' memory, and where the status and host outputs go. One per
/// LibraryCall op; the library's runner implements the virtual part (the
/// cuBLAS runner, executor/blas.cpp, the legacy handle; the generic runner,
/// executor/library_runner.cpp, the declared handle types). Not thread-safe.
class library_call_env {
public:
  /// A scalar parameter as it arrived: a device address (device pointer
  /// mode) or its host bytes (host mode; empty for an output).
  struct scalar_arg {
    uint64_t address = 0;
    std::string_view bytes;
  };

  /// A 'dev_or_host' output as it arrived: a device address, or host
  /// memory of the app (nothing on the wire; the bytes go back).
  struct placement_arg {
    bool host = false;
    /// The flag was neither device (0) nor host (1).
    bool bad = false;
    uint64_t address = 0;
  };

  /// The most bytes of host outputs one call may produce (256 MiB): the
  /// server allocates them before the library writes.
  static constexpr uint64_t max_host_outputs = uint64_t{256} << 20;

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
  /// is 0); else fails the call naming `what`. Call after handle() (or
  /// library_handle() for work). The default fails the call: a runner that
  /// serves device arrays overrides it (cuBLAS's, the generic one).
  virtual bool device_array(uint64_t ptr, int64_t count, uint64_t bytes_each,
                            const char* what);

  // --- declared handle types (libraries other than cuBLAS) ---------------
  // The defaults fail the call: a runner without handle types serves no
  // entry that uses them.

  /// The library handle of the session's handle `id` of spec handle type
  /// `type`; for `handle_use::work`, on its stream ordered for work. Null
  /// after failing the call (unknown handle: the library's
  /// NOT_INITIALIZED).
  virtual void* library_handle(uint64_t id, int32_t type, handle_use use);

  /// True when `id` names no handle of `type` yet and may name a new one;
  /// else fails the call.
  virtual bool fresh(uint64_t id, int32_t type);

  /// Records the library's new `handle` under the client's `id`; `host`: a
  /// host-side object. False after failing the call (then `handle` is
  /// destroyed).
  virtual bool adopt(uint64_t id, int32_t type, void* handle, bool host);

  /// Records the library's new address handle under its own value, which
  /// becomes the call's host output (8 bytes). False after failing the call.
  virtual bool adopt_address(int32_t type, void* handle);

  /// Destroys handle `id` of `type` with its type's destroy function (now,
  /// or once no capture of the GPU is in progress) and forgets it; reports
  /// the status as `function`'s.
  virtual void destroy(uint64_t id, int32_t type, const char* function);

  /// The session's driver stream for client stream `id`; `work`: for work
  /// about to be issued there (ordered by the session's stream rule). Null
  /// after failing the call.
  virtual CUstream stream(uint64_t id, bool work);

  /// The note slot of the session's handle `id` of `type`
  /// (library_handle_entry::note), valid until the call ends; null when the
  /// session has no such handle (the call is not failed: look the handle up
  /// with library_handle() where it must exist).
  virtual std::shared_ptr<void>* handle_note(uint64_t id, int32_t type);

  /// Fails the call with the library's invalid status and `detail` (what
  /// was wrong, with what value, and what to do).
  void refuse(std::string detail) {
    invalid(std::move(detail));
  }

  /// Records that handle `handle_id` of `type` now works on client stream
  /// `stream_id`, driver stream `stream` (its type's stream function
  /// succeeded).
  virtual void stream_set(uint64_t handle_id, int32_t type, uint64_t stream_id, CUstream stream);

  /// Reads the next 'dev_or_host' parameter.
  placement_arg placement(wire::arg_reader& in);

  /// Host memory for an 'out host' parameter of `bytes` bytes, zeroed; its
  /// bytes become the next host output. Null after failing the call (more
  /// than max_host_outputs in all).
  void* host_output(uint64_t bytes, const char* what);

  /// Host memory of `bytes` bytes, zeroed, that only the library uses (a
  /// 'scratch' parameter): nothing comes back. Null after failing the call
  /// (more than max_host_outputs).
  void* host_scratch(uint64_t bytes, const char* what);

  /// Where a 'dev_or_host' output of `bytes` bytes goes: the device address
  /// (checked like device()) or host_output() memory, matching the host
  /// flag of the call's handle. False after failing the call.
  bool output(const placement_arg& p, uint64_t bytes, const char* what, void** out);

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

  /// In and inout host memory parameters ("host" in the spec: host memory
  /// whatever the pointer mode; at most wire::max_host_input_bytes): read
  /// like scalar() / scalar_in / scalar_inout in host pointer mode. An out
  /// one is a host_output().
  scalar_arg host(wire::arg_reader& in, bool has_input);
  void* host_in(const scalar_arg& a, uint64_t bytes, const char* what);
  void* host_inout(const scalar_arg& a, uint64_t bytes, const char* what);

  /// True when the call's scalars are device addresses.
  [[nodiscard]] bool device_scalars() const noexcept {
    return device_scalars_;
  }

protected:
  /// Fails the call as invalid with `detail` (used by scalar_in/out).
  virtual void invalid(std::string detail) = 0;

  /// Fails the call for host outputs larger than max_host_outputs (default:
  /// invalid()).
  virtual void too_large(std::string detail);

  /// Moves the host outputs, in parameter order, into `out`.
  void take_outputs(proto::LibraryOutputs& out);

  /// The host outputs, in parameter order, as one run of bytes (emptied).
  std::string take_joined_outputs();

  /// Notes whether the handle the call named is a host object (for
  /// output()).
  void note_handle_host(bool host) noexcept {
    handle_host_ = host ? 1 : 0;
  }

private:
  /// Aligned host memory of `bytes` bytes, kept until the call ends.
  void* host_memory(uint64_t bytes);
  /// A copy of a host parameter's bytes (null after failing the call).
  void* host_copy(const scalar_arg& a, uint64_t bytes, const char* what);

  bool device_scalars_;
  /// The host flag of the call's handle: -1 before any lookup.
  int handle_host_ = -1;
  /// Bytes of host outputs so far.
  uint64_t output_bytes_ = 0;
  std::vector<std::unique_ptr<std::max_align_t[]>> memory_;
  /// Host outputs: memory and size, in parameter order.
  std::vector<std::pair<void*, uint64_t>> outputs_;
};

/// The value of type `T` at the start of an in or inout host parameter's
/// bytes as they arrived (a generated 'dev' extent's '*<param>'); zero when
/// fewer bytes came.
template <class T>
T host_arg_value(const library_call_env::scalar_arg& a) noexcept {
  T v{};
  if (a.bytes.size() >= sizeof(T))
    std::memcpy(&v, a.bytes.data(), sizeof(T));
  return v;
}

/// For a hand-written server side of a function with an id: true when its
/// arguments `in` were read to their end and the loaded library has the
/// function (`fn`, its pointer); else fails the call as malformed or
/// unavailable, naming `function`.
template <class Fn>
bool arguments_ready(library_call_env& env, const wire::arg_reader& in, Fn* fn,
                     const char* function) {
  if (!in.done()) {
    env.malformed(function);
    return false;
  }
  if (fn == nullptr) {
    env.unavailable(function);
    return false;
  }
  return true;
}

/// Runs generated cuBLAS function `function` (its spec id) with the
/// arguments in `in`; false when no generated function has that id.
/// Generated from interpose/spec/cublas.spec (cublas_library_calls.cpp).
bool run_generated_cublas(blas_api& api, library_call_env& env, uint32_t function,
                          wire::arg_reader& in);

} // namespace gleam::executor
