#include "executor/session_streams.hpp"

#include <vector>

namespace gleam::executor {

namespace {

/// The stand-in for a default stream, created at first use.
CUresult stand_in(driver_api& api, CUstream& slot) {
  if (slot != nullptr)
    return CUDA_SUCCESS;
  return api.cuStreamCreateWithPriority(&slot, CU_STREAM_NON_BLOCKING, 0);
}

/// The driver stream of a blocking stream's handle.
CUstream blocking_driver_stream(const session& s, uint64_t handle) {
  if (handle == stream_handle::per_thread)
    return s.per_thread_stream;
  auto i = s.streams.find(handle);
  return i == s.streams.end() ? nullptr : i->second;
}

/// Whether `stream` captures (an ongoing or an invalidated capture); only
/// asked while the session has a capture.
bool capturing(driver_api& api, const session& s, CUstream stream) {
  if (s.captures.empty() || stream == nullptr)
    return false;
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  return api.cuStreamIsCapturing(stream, &status) == CUDA_SUCCESS
         && status != CU_STREAM_CAPTURE_STATUS_NONE;
}

/// `waiter` waits for the work issued on `stream` so far, through `event`.
CUresult wait_for(driver_api& api, CUstream waiter, CUstream stream, CUevent& event) {
  if (event == nullptr)
    if (auto rc = api.cuEventCreate(&event, CU_EVENT_DISABLE_TIMING); rc != CUDA_SUCCESS)
      return rc;
  if (auto rc = api.cuEventRecordWithFlags(event, stream, 0); rc != CUDA_SUCCESS)
    return rc;
  return api.cuStreamWaitEvent(waiter, event, 0);
}

CUresult legacy_waits(driver_api& api, session& s, CUstream legacy) {
  for (auto& [handle, b] : s.blocking) {
    auto stream = blocking_driver_stream(s, handle);
    if (stream == nullptr)
      continue;
    if (capturing(api, s, stream)) {
      // Querying a capturing stream is illegal and invalidates its capture:
      // the invalidation CUDA's implicit dependency would cause.
      static_cast<void>(api.cuStreamQuery(stream));
      return CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
    }
    if (b.work > b.seen_by_legacy) {
      if (auto rc = wait_for(api, legacy, stream, b.done); rc != CUDA_SUCCESS)
        return rc;
      b.seen_by_legacy = b.work;
    }
  }
  ++s.legacy_work;
  return CUDA_SUCCESS;
}

CUresult blocking_waits(driver_api& api, session& s, CUstream stream, blocking_stream& b) {
  // A capture does not wait for earlier work outside it (its begin did).
  if (s.legacy_stream != nullptr && s.legacy_work > b.legacy_seen
      && !capturing(api, s, stream)) {
    if (auto rc = wait_for(api, stream, s.legacy_stream, s.legacy_done); rc != CUDA_SUCCESS)
      return rc;
    b.legacy_seen = s.legacy_work;
  }
  ++b.work;
  return CUDA_SUCCESS;
}

} // namespace

CUresult driver_stream(driver_api& api, session& s, uint64_t handle, CUstream* out) {
  if (handle == stream_handle::legacy_default || handle == stream_handle::legacy
      || handle == stream_handle::per_thread) {
    auto& slot = handle == stream_handle::per_thread ? s.per_thread_stream : s.legacy_stream;
    if (auto rc = stand_in(api, slot); rc != CUDA_SUCCESS)
      return rc;
    *out = slot;
    return CUDA_SUCCESS;
  }
  auto i = s.streams.find(handle);
  if (i == s.streams.end())
    return CUDA_ERROR_INVALID_HANDLE;
  *out = i->second;
  return CUDA_SUCCESS;
}

CUresult stream_for_work(driver_api& api, session& s, uint64_t handle, CUstream* out) {
  if (auto rc = driver_stream(api, s, handle, out); rc != CUDA_SUCCESS)
    return rc;
  if (handle == stream_handle::legacy_default || handle == stream_handle::legacy)
    return legacy_waits(api, s, *out);
  if (handle == stream_handle::per_thread)
    return blocking_waits(api, s, *out, s.blocking[handle]);
  auto b = s.blocking.find(handle);
  return b == s.blocking.end() ? CUDA_SUCCESS : blocking_waits(api, s, *out, b->second);
}

CUresult sync_session(driver_api& api, session& s) {
  std::vector<CUstream> all;
  for (const auto& kv : s.streams)
    all.push_back(kv.second);
  for (auto st : {s.legacy_stream, s.per_thread_stream})
    if (st != nullptr)
      all.push_back(st);
  bool refused = false;
  for (auto st : all)
    if (capturing(api, s, st)) {
      static_cast<void>(api.cuStreamQuery(st)); // invalidates the capture
      refused = true;
    }
  if (refused)
    return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  CUresult first = CUDA_SUCCESS;
  for (auto st : all)
    if (auto rc = api.cuStreamSynchronize(st); rc != CUDA_SUCCESS && first == CUDA_SUCCESS)
      first = rc;
  return first;
}

void release_session_streams(driver_api& api, session& s) {
  for (auto& kv : s.blocking)
    if (kv.second.done != nullptr)
      static_cast<void>(api.cuEventDestroy(kv.second.done));
  s.blocking.clear();
  if (s.legacy_done != nullptr)
    static_cast<void>(api.cuEventDestroy(s.legacy_done));
  s.legacy_done = nullptr;
  for (auto* st : {&s.legacy_stream, &s.per_thread_stream}) {
    if (*st != nullptr)
      static_cast<void>(api.cuStreamDestroy(*st));
    *st = nullptr;
  }
  s.legacy_work = 0;
}

} // namespace gleam::executor
