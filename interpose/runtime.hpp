#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "actors/proto/control.pb.h"
#include "actors/proto/ops.pb.h"
#include "interpose/host_calls.hpp"
#include "interpose/pool_table.hpp"
#include "interpose/slab_pool.hpp"

namespace gleam::interpose {

/// Logs "gleam: NAME is not supported: REASON" to standard error, once per
/// name and process. Thread-safe.
void log_unsupported_once(const char* name, const char* reason) noexcept;

/// log_unsupported_once, and records cudaErrorNotSupported as the calling
/// thread's last error.
void report_unsupported(const char* name, const char* reason) noexcept;

// --- errors -------------------------------------------------------------

/// Records `x` as the calling thread's last error when it is not
/// cudaSuccess, and as the process's sticky error when CUDA documents it as
/// sticky. Returns `x`.
cudaError_t record(cudaError_t x) noexcept;

/// The calling thread's last error; `clear` resets it to cudaSuccess.
cudaError_t last_error(bool clear) noexcept;

/// The sticky error of the process, cudaSuccess while there is none.
cudaError_t sticky_error() noexcept;

/// Runs `f` (returning cudaError_t) for an extern "C" entry point: returns
/// the sticky error if one is set, maps any exception to cudaErrorUnknown,
/// and records the result as the last error. A host function of a graph
/// (in_host_call) gets cudaErrorNotPermitted, as CUDA documents.
template <class F>
cudaError_t guarded(F&& f) noexcept {
  if (in_host_call())
    return record(cudaErrorNotPermitted);
  if (auto s = sticky_error(); s != cudaSuccess)
    return record(s);
  try {
    return record(f());
  } catch (...) {
    return record(cudaErrorUnknown);
  }
}

// --- the connection -----------------------------------------------------

/// Connects on first use (thread-safe). cudaSuccess once a session is open;
/// cudaErrorNoDevice when no server could be reached (logged once);
/// cudaErrorDevicesUnavailable after the session was lost.
cudaError_t connect() noexcept;

/// True once a session is open (never connects).
bool connected() noexcept;

/// The session the server opened; valid only after connect() succeeded.
const proto::SessionOpened& session();

/// Runs `ops` and waits for their results: they go out in one batch behind
/// every op submitted earlier (so a sync call waits for all earlier ops),
/// then every batch in flight is waited for. Fills `results` (one per
/// executed op of `ops`) and returns the runtime error of the first failing
/// op of `ops`, or cudaSuccess; errors of earlier async ops stay deferred
/// (see deliver_deferred), a sticky one is returned. Connects first if
/// needed. Thread-safe: ops of all threads are serialized and numbered in
/// one sequence.
cudaError_t run_ops(std::vector<proto::Op>& ops,
                    std::vector<proto::OpResult>* results);

/// run_ops for a single op; `result` may be null.
cudaError_t run_op(proto::Op op, proto::OpResult* result = nullptr);

/// Submits an error-code-only op (launch, async copy or memset, event
/// record, stream wait, free, handle creation): it is queued and the call
/// returns at once. The queue leaves as one batch when a synchronous call
/// comes, when it holds 256 ops or max_message_payload (1 MiB) of payload, or 200 us after its
/// first op (GLEAM_FLUSH_US overrides the 200 us), at once when that op
/// comes after 200 us without a batch sent; at most max_pending_batch batches are in flight (a full window
/// waits for the oldest reply). The op's error arrives later: a sticky one
/// latches (sticky_error), another is deferred and delivered exactly once,
/// by the next deliver_deferred or cudaGetLastError. Returns cudaSuccess,
/// or the session's state when it is not usable. With GLEAM_ASYNC=off the
/// op is sent alone and waited for, and its own error is returned.
/// `op` must carry every byte it needs (no pointer into app memory).
cudaError_t submit(proto::Op op);

/// Whether an op on `stream` meets CUDA's implicit-dependency rule now: the
/// legacy stream while a blocking stream captures. CUDA fails such a call
/// at once (cudaErrorStreamCaptureImplicit) and invalidates the capture.
bool legacy_capture_conflict(cudaStream_t stream);

/// submit() for an op on `stream`, except that under
/// legacy_capture_conflict the op runs synchronously and its own code comes
/// back from this call, where CUDA's would.
cudaError_t submit_on(cudaStream_t stream, proto::Op op);

/// Receives the result of one owned op of a pipelined or waited batch.
using result_sink = std::function<void(proto::OpResult&)>;

/// Bulk transfers: sends `count` ops, `make(i)` each, every op in a batch
/// of its own, pipelined under the window of max_pending_batch batches, and
/// waits for all of them. `sink` (may be empty) gets each op's result in
/// order. Stops sending after the first failure, which it returns.
cudaError_t run_pipelined(size_t count, const std::function<proto::Op(size_t)>& make,
                          const result_sink& sink);

/// Sends every queued op and waits for all batches in flight. Returns the
/// session's state (errors of the ops stay deferred or sticky).
cudaError_t flush();

/// At a synchronizing entry point: returns `own` when it is an error, else
/// takes and returns the deferred error of an earlier async op (exactly
/// once), else cudaSuccess.
cudaError_t deliver_deferred(cudaError_t own) noexcept;

/// Whether async forwarding is on for this process (GLEAM_ASYNC, [client]
/// async). Connects first if needed.
bool async_enabled() noexcept;

/// How a thread waiting for the server's reply waits, from the app's
/// cudaSetDeviceFlags: cudaDeviceScheduleBlockingSync makes it sleep at
/// once; any other flag lets it poll first ([client] poll).
void set_wait_flags(unsigned flags) noexcept;

// --- registry -----------------------------------------------------------

struct module_record;

/// One __global__ function registered by the app's host code.
struct function_record {
  /// The module that holds it; owned by the registry.
  module_record* module = nullptr;
  /// Host stub address the app uses to name the kernel.
  const void* host = nullptr;
  /// Mangled device name.
  std::string name;
  /// Parameter layout from the server (bytes), filled at module load.
  std::vector<proto::ParamInfo> params;
  /// CUfunction_attribute -> value from the server.
  std::map<int, int> attributes;
  /// Whether the server found the function in the loaded image.
  bool found = false;
};

/// One __device__ / __constant__ variable registered by the app.
struct variable_record {
  /// The module that holds it; owned by the registry.
  module_record* module = nullptr;
  /// Address of the host shadow the app names the variable by.
  const void* host = nullptr;
  /// Device name of the variable.
  std::string name;
  /// Size in bytes (from registration, then from the server).
  size_t size = 0;
  /// Declared __constant__.
  bool constant = false;
  /// Device address on the server, filled at module load.
  uint64_t dptr = 0;
  /// Whether the server found the variable in the loaded image.
  bool found = false;
};

/// One fatbin registered by __cudaRegisterFatBinary. Its address is the
/// handle returned to the app.
struct module_record {
  /// First member so that the handle (void**) points at valid storage.
  void* fatbin_wrapper = nullptr;
  /// The fatbin image in the app's memory and its size in bytes.
  const void* image = nullptr;
  size_t image_size = 0;
  /// Client module handle on the wire; 0 until first uploaded.
  uint64_t handle = 0;
  /// Whether a ModuleLoad was answered; `load_error` is its outcome.
  bool loaded = false;
  cudaError_t load_error = cudaSuccess;
  /// The module's kernels and variables, in registration order.
  std::vector<std::unique_ptr<function_record>> functions;
  std::vector<std::unique_ptr<variable_record>> variables;
};

/// Process-wide local state of the interposer. Guarded by `mutex`.
struct registry {
  /// Guards every member; taken before the client's batch lock, never after.
  std::recursive_mutex mutex;
  /// Registered fatbins, never freed.
  std::vector<std::unique_ptr<module_record>> modules;
  /// Functions by host stub address, and by their own address (the
  /// cudaKernel_t handed out by __cudaGetKernel).
  std::map<const void*, function_record*> functions;
  /// Variables by host shadow address.
  std::map<const void*, variable_record*> variables;
  /// Device allocations: base -> size in bytes.
  std::map<uint64_t, uint64_t> allocations;
  /// Slabs the allocations above are carved from (when they are); set up
  /// from the config at the first cudaMalloc (slabs_configured).
  slab_pool slabs{0};
  bool slabs_configured = false;
  /// A host range the app allocated or registered through us.
  struct host_range {
    size_t size = 0;
    unsigned flags = 0;
    bool registered = false;
  };
  /// Pinned or registered host ranges by start address.
  std::map<uintptr_t, host_range> host_ranges;
  /// Streams: handle -> (flags, priority).
  std::map<uint64_t, std::pair<unsigned, int>> streams;
  /// Events: handle -> flags.
  std::map<uint64_t, unsigned> events;
  /// Memory pools, the current pool of each device and the allocations
  /// made from pools.
  pool_table pools;
  /// Device selected by cudaSetDevice (only 0..count-1 exist).
  int device = 0;
  /// Flags of cudaSetDeviceFlags, reported back by cudaGetDeviceFlags.
  unsigned device_flags = 0;
};

/// The registry; never destroyed (registration and teardown calls may come
/// from static destructors).
registry& reg();

/// A fresh client handle for a stream, event or module: never 0, 1 or 2.
uint64_t next_handle() noexcept;

/// Sends ModuleLoad for `m` (its image, function and variable names) unless
/// already answered; fills the records from the reply. Call with reg().mutex
/// held. Returns the load's outcome (remembered in m.load_error).
cudaError_t load_module(module_record& m);

/// Marks `m` as not loaded on any server (its handle, the found flags,
/// layouts and device addresses are cleared), so the next use loads it again:
/// for a child after fork(), whose session is a new one.
void forget_server_state(module_record& m) noexcept;

/// Looks up the function for a host stub address (or cudaKernel_t); loads
/// its module on the server if needed.
cudaError_t resolve_function(const void* host, function_record** out);

/// Looks up a variable by host address; loads its module if needed.
cudaError_t resolve_variable(const void* host, variable_record** out);

/// The device address of `count` bytes at `offset` into variable `symbol`,
/// the device end of a copy of `kind` to the variable (`to_symbol`) or
/// from it; as cudaMemcpyToSymbol / FromSymbol answer:
/// cudaErrorInvalidMemcpyDirection for a kind such a copy cannot have,
/// cudaErrorInvalidSymbol, cudaErrorInvalidValue past the variable's end.
cudaError_t symbol_end(const void* symbol, size_t offset, size_t count, cudaMemcpyKind kind,
                       bool to_symbol, void** out);

/// Packs launch arguments by `params` (offset/size each): a buffer of size
/// last offset + last size with each args[i] copied to its offset.
std::string pack_arguments(const std::vector<proto::ParamInfo>& params,
                           void** args);

/// The stream a _ptsz entry point means: its null stream is the calling
/// thread's default stream.
inline cudaStream_t per_thread(cudaStream_t s) noexcept {
  return s == nullptr ? cudaStreamPerThread : s;
}

/// The wire value of a stream: its handle (0, 1 and 2 pass through).
inline uint64_t wire_stream(cudaStream_t s) noexcept {
  return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(s));
}

/// Where a pointer lives, from local records: device allocation, pinned or
/// registered host memory, or unknown (pageable host memory).
enum class pointer_kind {
  /// Inside one of our device allocations, or a virtual address range
  /// reserved with cuMemAddressReserve (interpose/vmm.hpp).
  device,
  /// Inside host memory from cudaMallocHost/cudaHostAlloc/cudaHostRegister.
  host_pinned,
  /// Anything else.
  host_pageable,
};
pointer_kind classify(const void* p) noexcept;

/// False when `p` lies in one of our allocations but [p, p + count) runs
/// past its end, in a virtual memory reservation outside a read-write
/// mapping, or in one but [p, p + count) runs past the adjacent read-write
/// mappings (interpose/vmm.hpp); addresses outside every allocation are
/// left to the server.
/// Lets an error-code-only call fail at once, as CUDA's would, instead of
/// later through the deferred error.
bool fits_allocation(const void* p, size_t count);

/// The kind of a copy from `src` to `dst`: cudaMemcpyDefault inferred
/// from where each pointer lives, and a side in managed memory or in mapped
/// memory of cudaHostAlloc (one address on both sides, interpose/mirror.hpp)
/// counted as device memory whatever `kind` says.
cudaMemcpyKind effective_kind(const void* dst, const void* src, cudaMemcpyKind kind);

/// Copies `count` bytes by `kind` (cudaMemcpyDefault inferred); `stream`
/// and `async` go on the wire for device-side copies.
cudaError_t copy(void* dst, const void* src, size_t count,
                 cudaMemcpyKind kind, cudaStream_t stream, bool async);

/// CUdevice_attribute `attr` of the current device from the session, or
/// `fallback` when the server did not report it. Requires connect().
int device_attribute(int attr, int fallback);

/// Whether all work of `stream` is known complete: the last op sent was a
/// copy back or a synchronize on it, answered, and nothing was queued since.
/// A synchronize or query of it then needs no round trip.
bool stream_known_idle(cudaStream_t stream) noexcept;

/// Whether the app's synchronize of `stream` may return without a round
/// trip because waiting would show the app nothing: the last op queued is a
/// copy of host bytes to the device on that stream (the bytes travel in the
/// op, so the app's buffer is free at once), no graph ever launched (host
/// nodes), no host memory is mirrored (mapped or managed memory), and the
/// session runs async. The device finishes the stream's work in order
/// anyway; an error of that work reaches the app at its next synchronizing
/// call, as any async error does. A synchronize after a kernel still waits:
/// apps time their kernels with it.
bool upload_is_tail(cudaStream_t stream) noexcept;

/// Synchronizes a stream on the server (StreamSynchronize op).
cudaError_t sync_stream(cudaStream_t stream);

/// cudaSuccess for a built-in stream or one the app created and did not
/// destroy, else cudaErrorInvalidResourceHandle.
cudaError_t known_stream(cudaStream_t stream);

} // namespace gleam::interpose
