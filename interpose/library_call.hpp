#pragma once

#include <cstdint>
#include <new>
#include <utility>
#include <vector>

#include <cuda_runtime_api.h>

#include "wire/library_args.hpp"

namespace gleam::proto {
class Op;
class OpResult;
} // namespace gleam::proto

/// The client side of LibraryCall ops, shared by every library surface with
/// generated calls (interpose/spec/<lib>.spec, interpose/gen/library_calls.py):
/// what the generated stubs pack, the library's handle objects, the
/// synchronous and error-code-only sending, and the reading back of host
/// outputs. Compiled into the shared client runtime (libgleam_interpose.so):
/// every library uses the process's one session of interpose/runtime.hpp.
namespace gleam::interpose {

/// What the client needs of a library: its wire identity and the statuses
/// it answers with, in the library's status type. Static storage, one per
/// library surface (interpose/curand/library.hpp).
struct library_traits {
  /// proto::LibraryCall::Library value.
  int32_t library;
  /// The library as users know it ("cuRAND"), for messages.
  const char* name;
  int32_t success;
  /// Arguments the vendor refuses at the call.
  int32_t invalid;
  /// A handle the app does not hold.
  int32_t not_initialized;
  /// Client memory for a handle object.
  int32_t alloc_failed;
  /// A size Gleam cannot tell, a feature it does not remote.
  int32_t not_supported;
  /// An exception inside Gleam, an answer that does not fit the call.
  int32_t internal_error;
  /// The library status an app sees when the transport failed with `x`
  /// (no server, lost session, a sticky CUDA error of the process).
  int32_t (*from_cuda)(cudaError_t x) noexcept;
};

/// A library's status for each kind of runtime error that a failed
/// transport or the process's GPU state stands for (the body of a
/// library_traits::from_cuda).
struct cuda_error_statuses {
  int32_t success;
  /// No server or device, a lost session, a driver that cannot start.
  int32_t no_server;
  /// cudaErrorMemoryAllocation.
  int32_t alloc_failed;
  /// cudaErrorInvalidValue.
  int32_t invalid;
  /// cudaErrorInvalidResourceHandle.
  int32_t bad_handle;
  /// cudaErrorNotSupported.
  int32_t not_supported;
  /// A sticky error: the process's GPU context faulted.
  int32_t gpu_fault;
  /// Any other runtime error.
  int32_t other;
};

/// The status of `s` that runtime error `x` stands for.
int32_t status_of_cuda(cudaError_t x, const cuda_error_statuses& s) noexcept;

/// Marks a client handle object of a library ("GLMLHND\0").
constexpr uint64_t library_handle_magic = 0x00444e484c4d4c47ull;

/// The client side of a library handle of a spec-declared object type: the
/// first member of the app-visible struct (e.g. curandGenerator_st). Owned
/// by the app through the library's create and destroy functions. Not
/// thread-safe, like the vendor's handles.
struct library_handle {
  /// library_handle_magic while alive; cleared at destruction.
  uint64_t magic = library_handle_magic;
  /// Client-chosen handle on the wire (interpose::next_handle()).
  uint64_t id = 0;
  /// library_traits::library and the type's index in the spec.
  int32_t library = 0;
  int32_t type = 0;
  /// A host-side object (its results are host memory).
  bool host = false;
};

/// The handle behind an app's handle `p` (an object whose first member is a
/// library_handle), or null when `p` is null or not a live handle of type
/// `type` of `lib`.
library_handle* library_handle_of(const void* p, const library_traits& lib,
                                  int32_t type) noexcept;

/// A fresh id for a new handle (never 0, 1 or 2).
uint64_t fresh_library_handle_id() noexcept;

/// A new client object of type `Object` (whose member `state` is a
/// library_handle) with a fresh wire id; null when out of memory.
template <class Object>
Object* make_library_handle(const library_traits& lib, int32_t type, bool host) noexcept {
  auto* o = new (std::nothrow) Object{};
  if (o == nullptr)
    return nullptr;
  o->state.id = fresh_library_handle_id();
  o->state.library = lib.library;
  o->state.type = type;
  o->state.host = host;
  return o;
}

/// Ends a client object of make_library_handle (its handle is no longer
/// live: a later call with it is refused at the call).
template <class Object>
void release_library_handle(Object* o) noexcept {
  if (o == nullptr)
    return;
  o->state.magic = 0;
  delete o;
}

/// A new value handle (an integer handle such as cuFFT's cufftHandle) of
/// type `type` of `lib`, live until release_value_handle(): a positive int
/// never live before in this process; 0 when none is left. Thread-safe.
int make_value_handle(const library_traits& lib, int32_t type) noexcept;

/// True when `v` is a live value handle of type `type` of `lib`.
/// Thread-safe.
bool value_handle_live(const library_traits& lib, int32_t type, long long v) noexcept;

/// Ends value handle `v` (a later call with it is refused at the call).
/// Thread-safe.
void release_value_handle(const library_traits& lib, int32_t type, long long v) noexcept;

/// Logs `name` once per process, with `reason`, to standard error, leaving
/// the CUDA runtime's last error alone (libraries report failures only
/// through their return value). Thread-safe.
void report_library_unsupported(const char* name, const char* reason) noexcept;

/// Runs `op` synchronously: the library status the server reported
/// (OpResult.blas_status), or lib.from_cuda() of a transport error.
/// `result` may be null. Never throws.
int32_t run_library_op(const library_traits& lib, proto::Op op,
                       proto::OpResult* result = nullptr) noexcept;

/// Sends an error-code-only library op after the caller made the checks the
/// vendor makes at the call: queued (interpose::submit) with success at
/// once, a later failure becoming the runtime's deferred CUDA error; a
/// sticky CUDA error of the process or an unusable session at once through
/// lib.from_cuda(); with GLEAM_ASYNC=off run_library_op(). Never throws.
int32_t submit_library_op(const library_traits& lib, proto::Op op) noexcept;

/// Runs `f` (returning the library's status as int) for an extern "C"
/// entry point: any exception becomes lib.internal_error.
template <class F>
int32_t library_guarded(const library_traits& lib, F&& f) noexcept {
  try {
    return f();
  } catch (...) {
    return lib.internal_error;
  }
}

/// One call of a generated library function (or a manual one with an id)
/// on its way to the server: the stub adds its parameters in order
/// (wire/library_args.hpp) and finish() sends one LibraryCall op. Lives on
/// the stub's stack; not thread-safe.
class library_call {
public:
  /// A call of function `id` (its pinned spec id; `name` for messages) of
  /// library `lib`; `device_scalars`: 'scalar' parameters are device
  /// addresses (cuBLAS's CUBLAS_POINTER_MODE_DEVICE).
  library_call(const library_traits& lib, uint32_t id, const char* name,
               bool device_scalars = false);

  /// A by-value parameter.
  template <class T>
  void value(const T& v) {
    args_.value(v);
  }

  /// A device pointer parameter.
  void device(const void* p) {
    args_.address(p);
  }

  /// A handle parameter of a declared object type (by value, or the new
  /// one of an 'out handle'): its wire id.
  void handle(const library_handle& h) {
    args_.value(h.id);
  }

  /// A handle parameter of a declared address type: its value.
  void handle_id(uint64_t id) {
    args_.value(id);
  }

  /// A cudaStream_t parameter: the client's stream handle.
  void stream(cudaStream_t s);

  /// The arguments so far, for hand-written packings of several parameters
  /// (wire/fft_geometry.hpp).
  wire::arg_packer& args() noexcept {
    return args_;
  }

  /// cuBLAS scalars of `bytes` bytes read (in), written (out) or both
  /// (inout): host values or device addresses by the call's pointer mode.
  /// invalid for a null pointer in host mode, not_supported (logged once)
  /// for a size Gleam cannot tell; else success.
  int32_t scalar_in(const void* p, uint64_t bytes);
  int32_t scalar_out(void* p, uint64_t bytes);
  int32_t scalar_inout(void* p, uint64_t bytes);

  /// Host memory of the app that the call fills with `bytes` bytes (an
  /// 'out host' parameter): nothing travels; the bytes come back. invalid
  /// for a null `p` with bytes to write.
  int32_t host_output(void* p, uint64_t bytes);

  /// Host memory the call reads (in: 'in host'), or reads and writes
  /// (inout), `bytes` bytes of it travelling with the call; inout's come
  /// back; 0 bytes (null or not) is an empty run. invalid for a null `p`
  /// with bytes, not_supported (logged once) above
  /// wire::max_host_input_bytes. host_out: host_output() of at most
  /// max_scalar_bytes, refusing a null `p` (cuBLAS's host results).
  int32_t host_in(const void* p, uint64_t bytes);
  int32_t host_inout(void* p, uint64_t bytes);
  int32_t host_out(void* p, uint64_t bytes);

  /// A 'dev_or_host' output: `host` (the handle is a host object) makes it
  /// a host_output(), else a device pointer.
  int32_t output(void* p, uint64_t bytes, bool host);

  /// Sends the call. With host outputs, or `wait` (a call that creates a
  /// handle), it waits for the server and, on success, copies the results
  /// into the app's memory (more than a message's worth is read back in
  /// pieces: LibraryCall.hold, LibraryOutputRead): the function's own
  /// status. Otherwise it is error-code-only (submit_library_op).
  int32_t finish(bool wait = false) noexcept;

  /// The largest host scalar (bytes): rotm's five doubles fit many times.
  static constexpr uint64_t max_scalar_bytes = 256;

private:
  int32_t scalar(const void* p, uint64_t bytes, bool send, void* back);
  int32_t host(const void* p, uint64_t bytes, uint64_t limit, bool send, void* back);
  int32_t read_held(uint64_t hold, uint64_t total) noexcept;

  const library_traits& lib_;
  uint32_t id_;
  const char* name_;
  bool device_scalars_;
  wire::arg_packer args_;
  /// Where each host output goes, with its size, in parameter order.
  std::vector<std::pair<void*, uint64_t>> outputs_;
};

} // namespace gleam::interpose
