#include "executor/capture_judge.hpp"

namespace gleam::executor {

namespace {

/// The driver stream of client stream `handle` of `s`, or null.
CUstream driver_stream(const session& s, uint64_t handle) {
  if (handle == stream_handle::per_thread)
    return s.per_thread_stream;
  auto i = s.streams.find(handle);
  return i == s.streams.end() ? nullptr : i->second;
}

CUstreamCaptureStatus status_of(driver_api& api, CUstream stream) {
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  if (api.cuStreamIsCapturing(stream, &status) != CUDA_SUCCESS)
    return CU_STREAM_CAPTURE_STATUS_NONE;
  return status;
}

} // namespace

capture_judge::~capture_judge() {
  release();
}

void capture_judge::release() {
  if (stream_ == nullptr)
    return;
  if (status_of(api_, stream_) != CU_STREAM_CAPTURE_STATUS_NONE) {
    CUgraph g = nullptr;
    static_cast<void>(api_.cuStreamEndCapture(stream_, &g));
    if (g != nullptr)
      static_cast<void>(api_.cuGraphDestroy(g));
  }
  static_cast<void>(api_.cuStreamDestroy(stream_));
  stream_ = nullptr;
}

bool capture_judge::arm() {
  if (api_.cuStreamBeginCapture == nullptr || api_.cuStreamIsCapturing == nullptr
      || api_.cuThreadExchangeStreamCaptureMode == nullptr)
    return false;
  if (stream_ == nullptr
      && api_.cuStreamCreateWithPriority(&stream_, CU_STREAM_NON_BLOCKING, 0) != CUDA_SUCCESS) {
    stream_ = nullptr;
    return false;
  }
  auto status = status_of(api_, stream_);
  if (status == CU_STREAM_CAPTURE_STATUS_ACTIVE)
    return true;
  if (status == CU_STREAM_CAPTURE_STATUS_INVALIDATED) {
    CUgraph g = nullptr;
    static_cast<void>(api_.cuStreamEndCapture(stream_, &g));
    if (g != nullptr)
      static_cast<void>(api_.cuGraphDestroy(g));
  }
  // Begun from the executor's relaxed thread; the mode binds this thread
  // only (no other thread of the server is ever affected).
  return api_.cuStreamBeginCapture(stream_, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
         == CUDA_SUCCESS;
}

void capture_judge::run(session& s, const google::protobuf::RepeatedField<uint64_t>& bound_by,
                        const std::function<void()>& op) {
  if (!arm()) {
    scoped_capture_mode mode{api_, CU_STREAM_CAPTURE_MODE_GLOBAL};
    op();
    return;
  }
  {
    scoped_capture_mode mode{api_, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL};
    op();
  }
  if (status_of(api_, stream_) == CU_STREAM_CAPTURE_STATUS_ACTIVE)
    return;
  // The driver refused an unsafe call: the app's driver would have
  // invalidated the captures that bound the calling thread. A query of a
  // capturing stream is illegal and invalidates its capture.
  for (auto origin : bound_by) {
    if (s.captures.count(origin) == 0)
      continue;
    CUstream stream = driver_stream(s, origin);
    if (stream != nullptr && status_of(api_, stream) == CU_STREAM_CAPTURE_STATUS_ACTIVE)
      static_cast<void>(api_.cuStreamQuery(stream));
  }
}

} // namespace gleam::executor
