// Streams, events and host callbacks. Stream and event handles are chosen
// here (next_handle) and mapped to real ones by the server, so creating one
// costs no round trip of its own beyond the op.
#define __CUDA_API_VERSION_INTERNAL
#include "interpose/export.hpp"

#include "interpose/capture_state.hpp"
#include "interpose/runtime.hpp"
#include "interpose/wait_report.hpp"

using namespace gleam::interpose;
namespace proto = gleam::proto;

namespace {

bool builtin_stream(cudaStream_t s) {
  return wire_stream(s) <= 2;
}

cudaError_t known_event(cudaEvent_t e) {
  auto& r = reg();
  std::lock_guard<std::recursive_mutex> guard{r.mutex};
  return r.events.count(reinterpret_cast<uintptr_t>(e)) != 0
           ? cudaSuccess
           : cudaErrorInvalidResourceHandle;
}

uint64_t wire_event(cudaEvent_t e) {
  return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(e));
}

cudaError_t stream_create(cudaStream_t* out, unsigned flags, int priority) {
  if (out == nullptr)
    return cudaErrorInvalidValue;
  auto h = next_handle();
  proto::Op op;
  auto* c = op.mutable_stream_create();
  c->set_stream(h);
  c->set_flags(flags);
  c->set_priority(priority);
  // A client handle: the server maps it when the queued create runs.
  if (auto err = submit(std::move(op)); err != cudaSuccess)
    return err;
  auto& r = reg();
  std::lock_guard<std::recursive_mutex> guard{r.mutex};
  r.streams[h] = {flags, priority};
  *out = reinterpret_cast<cudaStream_t>(static_cast<uintptr_t>(h));
  return cudaSuccess;
}

cudaError_t stream_query(cudaStream_t stream) {
  if (auto err = known_stream(stream); err != cudaSuccess)
    return err;
  if (stream_known_idle(stream))
    return cudaSuccess;
  proto::Op op;
  op.mutable_stream_query()->set_stream(wire_stream(stream));
  return deliver_deferred(run_op(std::move(op)));
}

cudaError_t stream_sync(cudaStream_t stream) {
  if (auto err = known_stream(stream); err != cudaSuccess)
    return err;
  return sync_stream(stream);
}

/// The app's cudaStreamSynchronize: stream_sync, without the round trip
/// when the stream's last op is an upload (upload_is_tail). Gleam's own
/// synchronizes (before a host function runs) always wait.
cudaError_t app_stream_sync(cudaStream_t stream) {
  if (auto err = known_stream(stream); err != cudaSuccess)
    return err;
  if (upload_is_tail(stream)) {
    note_answered_locally("stream_synchronize after an upload");
    return deliver_deferred(cudaSuccess);
  }
  return sync_stream(stream);
}

cudaError_t stream_wait(cudaStream_t stream, cudaEvent_t event, unsigned flags) {
  if (auto err = known_stream(stream); err != cudaSuccess)
    return err;
  if (auto err = known_event(event); err != cudaSuccess)
    return err;
  proto::Op op;
  auto* w = op.mutable_stream_wait_event();
  w->set_stream(wire_stream(stream));
  w->set_event(wire_event(event));
  w->set_flags(flags);
  // The client's capture mirror follows the dependency at once (the op
  // itself is error-code-only).
  captures().wait_event(wire_stream(stream), wire_event(event));
  return submit_on(stream, std::move(op));
}

cudaError_t stream_flags(cudaStream_t stream, unsigned* flags, int* priority) {
  if (builtin_stream(stream)) {
    if (flags != nullptr)
      *flags = cudaStreamDefault;
    if (priority != nullptr)
      *priority = 0;
    return cudaSuccess;
  }
  auto& r = reg();
  std::lock_guard<std::recursive_mutex> guard{r.mutex};
  auto i = r.streams.find(wire_stream(stream));
  if (i == r.streams.end())
    return cudaErrorInvalidResourceHandle;
  if (flags != nullptr)
    *flags = i->second.first;
  if (priority != nullptr)
    *priority = i->second.second;
  return cudaSuccess;
}

cudaError_t event_record(cudaEvent_t event, cudaStream_t stream, unsigned flags) {
  if (auto err = known_event(event); err != cudaSuccess)
    return err;
  if (auto err = known_stream(stream); err != cudaSuccess)
    return err;
  proto::Op op;
  auto* e = op.mutable_event_record();
  e->set_event(wire_event(event));
  e->set_stream(wire_stream(stream));
  e->set_flags(flags);
  // The client's capture mirror follows the dependency at once (the op
  // itself is error-code-only).
  captures().record_event(wire_event(event), wire_stream(stream));
  return submit_on(stream, std::move(op));
}

cudaError_t event_create(cudaEvent_t* event, unsigned flags) {
  if (event == nullptr)
    return cudaErrorInvalidValue;
  auto h = next_handle();
  proto::Op op;
  auto* c = op.mutable_event_create();
  c->set_event(h);
  c->set_flags(flags);
  if (auto err = submit(std::move(op)); err != cudaSuccess)
    return err;
  auto& r = reg();
  std::lock_guard<std::recursive_mutex> guard{r.mutex};
  r.events[h] = flags;
  *event = reinterpret_cast<cudaEvent_t>(static_cast<uintptr_t>(h));
  return cudaSuccess;
}

} // namespace

extern "C" {

GLEAM_INTERPOSE_EXPORT cudaError_t cudaStreamCreate(cudaStream_t* pStream) {
  return guarded([&] { return stream_create(pStream, cudaStreamDefault, 0); });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaStreamCreateWithFlags(cudaStream_t* pStream,
                                                             unsigned int flags) {
  return guarded([&] { return stream_create(pStream, flags, 0); });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaStreamCreateWithPriority(cudaStream_t* pStream,
                                                                unsigned int flags,
                                                                int priority) {
  // Clamp into the range cudaDeviceGetStreamPriorityRange reports, as CUDA does.
  return guarded([&] { return stream_create(pStream, flags, std::min(0, std::max(-5, priority))); });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  return guarded([&] {
    if (builtin_stream(stream))
      return cudaErrorInvalidResourceHandle;
    if (auto err = known_stream(stream); err != cudaSuccess)
      return err;
    proto::Op op;
    op.mutable_stream_destroy()->set_stream(wire_stream(stream));
    auto err = submit(std::move(op));
    auto& r = reg();
    std::lock_guard<std::recursive_mutex> guard{r.mutex};
    r.streams.erase(wire_stream(stream));
    captures().forget_stream(wire_stream(stream));
    return err;
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  return guarded([&] { return app_stream_sync(stream); });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaStreamSynchronize_ptsz(cudaStream_t stream) {
  return guarded([&] { return app_stream_sync(per_thread(stream)); });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaStreamQuery(cudaStream_t stream) {
  return guarded([&] { return stream_query(stream); });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaStreamQuery_ptsz(cudaStream_t stream) {
  return guarded([&] { return stream_query(per_thread(stream)); });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event,
                                                       unsigned int flags) {
  return guarded([&] { return stream_wait(stream, event, flags); });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaStreamWaitEvent_ptsz(cudaStream_t stream,
                                                            cudaEvent_t event,
                                                            unsigned int flags) {
  return guarded([&] { return stream_wait(per_thread(stream), event, flags); });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaStreamGetFlags(cudaStream_t hStream,
                                                      unsigned int* flags) {
  return guarded([&] {
    if (flags == nullptr)
      return cudaErrorInvalidValue;
    return stream_flags(hStream, flags, nullptr);
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaStreamGetFlags_ptsz(cudaStream_t hStream,
                                                           unsigned int* flags) {
  return cudaStreamGetFlags(per_thread(hStream), flags);
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaStreamGetPriority(cudaStream_t hStream, int* priority) {
  return guarded([&] {
    if (priority == nullptr)
      return cudaErrorInvalidValue;
    return stream_flags(hStream, nullptr, priority);
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaStreamGetPriority_ptsz(cudaStream_t hStream,
                                                              int* priority) {
  return cudaStreamGetPriority(per_thread(hStream), priority);
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaStreamGetDevice(cudaStream_t hStream, int* device) {
  return guarded([&] {
    if (device == nullptr)
      return cudaErrorInvalidValue;
    if (auto err = known_stream(hStream); err != cudaSuccess)
      return err;
    *device = reg().device;
    return cudaSuccess;
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaStreamGetDevice_ptsz(cudaStream_t hStream, int* device) {
  return cudaStreamGetDevice(per_thread(hStream), device);
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaStreamGetId(cudaStream_t hStream,
                                                   unsigned long long* streamId) {
  return guarded([&] {
    if (streamId == nullptr)
      return cudaErrorInvalidValue;
    if (auto err = known_stream(hStream); err != cudaSuccess)
      return err;
    *streamId = wire_stream(hStream);
    return cudaSuccess;
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaStreamGetId_ptsz(cudaStream_t hStream,
                                                        unsigned long long* streamId) {
  return cudaStreamGetId(per_thread(hStream), streamId);
}

/// cudaStreamAddCallback cannot be captured (CUDA refuses it too): during a
/// capture it fails with cudaErrorStreamCaptureUnsupported and invalidates
/// the capture.
cudaError_t refuse_callback_in_capture(cudaStream_t stream) {
  if (captures().status(wire_stream(stream)) == cudaStreamCaptureStatusNone)
    return cudaSuccess;
  captures().invalidate(wire_stream(stream));
  return cudaErrorStreamCaptureUnsupported;
}

// Outside a capture, host functions run on the calling thread once
// everything issued to the stream before them has completed (the stream is
// synchronized first), so they cannot overlap later work on that stream.
// Into a capturing stream, the function becomes a host node of the server's
// graph, which calls back into this process at every replay
// (interpose/host_calls.hpp).
GLEAM_INTERPOSE_EXPORT cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn,
                                                      void* userData) {
  return guarded([&] {
    if (fn == nullptr)
      return cudaErrorInvalidValue;
    if (captures().status(wire_stream(stream)) != cudaStreamCaptureStatusNone) {
      proto::Op op;
      op.mutable_stream_host_func()->set_stream(wire_stream(stream));
      op.mutable_stream_host_func()->set_callback(register_host_call(fn, userData));
      return submit_on(stream, std::move(op));
    }
    // The synchronization is Gleam's own, not the app's: the capture rules
    // do not apply to it.
    internal_ops internal;
    if (auto err = stream_sync(stream); err != cudaSuccess)
      return err;
    fn(userData);
    return cudaSuccess;
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaLaunchHostFunc_ptsz(cudaStream_t stream,
                                                           cudaHostFn_t fn, void* userData) {
  return cudaLaunchHostFunc(per_thread(stream), fn, userData);
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaStreamAddCallback(cudaStream_t stream,
                                                         cudaStreamCallback_t callback,
                                                         void* userData, unsigned int flags) {
  return guarded([&] {
    if (callback == nullptr || flags != 0)
      return cudaErrorInvalidValue;
    if (auto err = refuse_callback_in_capture(stream); err != cudaSuccess)
      return err;
    internal_ops internal;
    auto status = stream_sync(stream);
    if (status == cudaErrorInvalidResourceHandle)
      return status;
    callback(stream, status, userData);
    return cudaSuccess;
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaStreamAddCallback_ptsz(cudaStream_t stream,
                                                              cudaStreamCallback_t callback,
                                                              void* userData,
                                                              unsigned int flags) {
  return cudaStreamAddCallback(per_thread(stream), callback, userData, flags);
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaEventCreate(cudaEvent_t* event) {
  return guarded([&] { return event_create(event, cudaEventDefault); });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event,
                                                            unsigned int flags) {
  return guarded([&] { return event_create(event, flags); });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaEventDestroy(cudaEvent_t event) {
  return guarded([&] {
    if (auto err = known_event(event); err != cudaSuccess)
      return err;
    proto::Op op;
    op.mutable_event_destroy()->set_event(wire_event(event));
    auto err = submit(std::move(op));
    auto& r = reg();
    std::lock_guard<std::recursive_mutex> guard{r.mutex};
    r.events.erase(wire_event(event));
    captures().forget_event(wire_event(event));
    return err;
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
  return guarded([&] { return event_record(event, stream, 0); });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaEventRecord_ptsz(cudaEvent_t event, cudaStream_t stream) {
  return guarded([&] { return event_record(event, per_thread(stream), 0); });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaEventRecordWithFlags(cudaEvent_t event,
                                                            cudaStream_t stream,
                                                            unsigned int flags) {
  return guarded([&] { return event_record(event, stream, flags); });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaEventRecordWithFlags_ptsz(cudaEvent_t event,
                                                                 cudaStream_t stream,
                                                                 unsigned int flags) {
  return guarded([&] { return event_record(event, per_thread(stream), flags); });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaEventQuery(cudaEvent_t event) {
  return guarded([&] {
    if (auto err = known_event(event); err != cudaSuccess)
      return err;
    proto::Op op;
    op.mutable_event_query()->set_event(wire_event(event));
    return deliver_deferred(run_op(std::move(op)));
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaEventSynchronize(cudaEvent_t event) {
  return guarded([&] {
    if (auto err = known_event(event); err != cudaSuccess)
      return err;
    proto::Op op;
    op.mutable_event_synchronize()->set_event(wire_event(event));
    return deliver_deferred(run_op(std::move(op)));
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start,
                                                        cudaEvent_t end) {
  return guarded([&] {
    if (ms == nullptr)
      return cudaErrorInvalidValue;
    if (auto err = known_event(start); err != cudaSuccess)
      return err;
    if (auto err = known_event(end); err != cudaSuccess)
      return err;
    proto::Op op;
    auto* e = op.mutable_event_elapsed_time();
    e->set_start(wire_event(start));
    e->set_end(wire_event(end));
    proto::OpResult result;
    auto err = run_op(std::move(op), &result);
    if (err == cudaSuccess)
      *ms = result.elapsed_ms();
    return err;
  });
}

} // extern "C"
