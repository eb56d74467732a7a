#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <cuda_runtime_api.h>

namespace gleam::interpose {

/// The client's view of the stream captures of its process: which streams
/// capture (the origin stream and those joined through events), in which
/// mode, begun by which thread, and the per-thread capture interaction mode
/// of cudaThreadExchangeStreamCaptureMode. It answers cudaStreamIsCapturing
/// without a round trip and decides whether a thread is bound by the
/// capture rules (CUDA's "potentially unsafe API calls" prohibition), so
/// that the server can judge that thread's ops as the local driver would.
///
/// The server holds the real captures; this table only mirrors what the
/// client did. Thread-safe: every member takes the table's mutex.
class capture_state {
public:
  /// One capture sequence.
  struct capture {
    /// The stream cudaStreamBeginCapture was called on (wire value).
    uint64_t origin = 0;
    /// Client graph handle of the capture.
    uint64_t graph = 0;
    /// Capture id from the server.
    uint64_t id = 0;
    /// Mode of cudaStreamBeginCapture.
    cudaStreamCaptureMode mode = cudaStreamCaptureModeGlobal;
    /// The thread that began it.
    std::thread::id owner;
    /// A failure invalidated it (known to the client or reported by the
    /// server); cudaStreamEndCapture will fail.
    bool invalidated = false;
  };

  /// Records that `stream` began capturing; replaces any earlier record.
  void begin(uint64_t stream, uint64_t graph, uint64_t id,
             cudaStreamCaptureMode mode, std::thread::id owner);

  /// Forgets the capture that began on `origin` and every stream joined to
  /// it.
  void end(uint64_t origin);

  /// The capture `stream` takes part in, or null.
  [[nodiscard]] std::shared_ptr<capture> of_stream(uint64_t stream) const;

  /// Status of `stream`: None, Active or Invalidated.
  [[nodiscard]] cudaStreamCaptureStatus status(uint64_t stream) const;

  /// Marks the capture of `stream` (if any) invalidated.
  void invalidate(uint64_t stream);

  /// Marks every ongoing capture invalidated.
  void invalidate_all();

  /// Event `event` was recorded in `stream`: remembers the capture it
  /// belongs to (a later wait joins that capture), or forgets it.
  void record_event(uint64_t event, uint64_t stream);

  /// `stream` waits on `event`: a stream outside every capture joins the
  /// capture the event was recorded in.
  void wait_event(uint64_t stream, uint64_t event);

  /// Forgets event `event` (destroyed).
  void forget_event(uint64_t event);

  /// Forgets stream `stream` (destroyed).
  void forget_stream(uint64_t stream);

  /// A capture-related error (cudaErrorStreamCapture*) came back from the
  /// server: some capture may have been invalidated behind the client's
  /// back, so statuses are worth asking the server for.
  void note_capture_error() noexcept { suspect_ = true; }

  /// Whether note_capture_error happened since the last begin().
  [[nodiscard]] bool suspect() const noexcept { return suspect_; }

  /// Whether any stream for which `blocking(stream)` is true captures.
  template <class Pred>
  [[nodiscard]] bool any_stream(Pred blocking) const {
    std::lock_guard<std::mutex> guard{mutex_};
    for (const auto& kv : streams_)
      if (blocking(kv.first))
        return true;
    return false;
  }

  /// Whether any capture is ongoing in the process.
  [[nodiscard]] bool any() const;

  /// CUDA's rule: whether a thread `self` with capture interaction mode
  /// `mode` is prohibited from potentially unsafe calls: when `self` has an
  /// ongoing capture not begun in relaxed mode (whatever `mode` is), or, in
  /// global mode, when another thread has an ongoing global-mode capture.
  [[nodiscard]] bool prohibited(std::thread::id self, cudaStreamCaptureMode mode) const {
    return !prohibiting(self, mode).empty();
  }

  /// The origin streams of the captures that prohibit `self` (see
  /// prohibited), each once; empty when `self` is free.
  [[nodiscard]] std::vector<uint64_t> prohibiting(std::thread::id self,
                                                  cudaStreamCaptureMode mode) const;

private:
  mutable std::mutex mutex_;
  std::atomic<bool> suspect_{false};
  std::map<uint64_t, std::shared_ptr<capture>> streams_;
  std::map<uint64_t, std::weak_ptr<capture>> events_;
};

/// The process's capture table; never destroyed.
capture_state& captures();

/// The calling thread's capture interaction mode (cudaThreadExchangeStreamCaptureMode);
/// Global until changed.
cudaStreamCaptureMode& thread_capture_mode() noexcept;

/// The origin streams of the captures that bind the calling thread by the
/// capture rules now; empty when it is free (also inside internal_ops).
std::vector<uint64_t> thread_prohibited_by();

/// While alive, ops the calling thread sends are Gleam's own (internal
/// syncs, lazy module loads): never judged by the capture rules.
class internal_ops {
public:
  internal_ops() noexcept;
  ~internal_ops();
  internal_ops(const internal_ops&) = delete;
  internal_ops& operator=(const internal_ops&) = delete;

  /// Whether the calling thread is inside an internal_ops scope.
  static bool active() noexcept;
};

} // namespace gleam::interpose
