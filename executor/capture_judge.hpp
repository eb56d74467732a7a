#pragma once

#include <cstdint>
#include <functional>

#include <cuda.h>

#include <google/protobuf/repeated_field.h>

#include "executor/driver_api.hpp"
#include "executor/session.hpp"

namespace gleam::executor {

/// Sets the calling thread's capture interaction mode for its lifetime and
/// restores the previous one. A no-op when the driver lacks the entry point
/// (test doubles).
class scoped_capture_mode {
public:
  scoped_capture_mode(driver_api& api, CUstreamCaptureMode mode) : api_(api), mode_(mode) {
    if (api_.cuThreadExchangeStreamCaptureMode != nullptr)
      active_ = api_.cuThreadExchangeStreamCaptureMode(&mode_) == CUDA_SUCCESS;
  }
  scoped_capture_mode(const scoped_capture_mode&) = delete;
  scoped_capture_mode& operator=(const scoped_capture_mode&) = delete;
  ~scoped_capture_mode() {
    if (active_)
      static_cast<void>(api_.cuThreadExchangeStreamCaptureMode(&mode_));
  }

private:
  driver_api& api_;
  CUstreamCaptureMode mode_;
  bool active_ = false;
};

/// Judges the ops of an app thread that CUDA's capture rules bind
/// (Op.capture_checked) against that app's own captures only.
///
/// Every session's work runs on the executor's one thread, and CUDA binds a
/// thread by each non-relaxed capture begun on it and by each global-mode
/// capture of the process. Were the sessions' captures begun in the apps'
/// modes, one app's unsafe call would be judged against the others'
/// captures and invalidate them, and Gleam's own threads would be bound
/// too. So every capture on the server begins in relaxed mode, and a
/// flagged op runs while the executor's thread is bound by a capture of the
/// judge's own: a thread-local capture of a private stream. The driver
/// decides which calls are unsafe exactly as it would for the app; when it
/// refuses one, only the judge's capture is invalidated. The judge then
/// invalidates the captures that bind the app's thread (Op.prohibited_by),
/// as the app's driver does, and begins its capture again.
///
/// Not thread-safe: one per executor, used on the executor's thread.
class capture_judge {
public:
  explicit capture_judge(driver_api& api) : api_(api) {
  }
  capture_judge(const capture_judge&) = delete;
  capture_judge& operator=(const capture_judge&) = delete;
  ~capture_judge();

  /// Runs `op` (which issues the driver calls of one op of `s`) judged by
  /// the capture rules. When the driver refuses an unsafe call, the
  /// captures of `s` begun on the client streams `bound_by` are
  /// invalidated. Without the capture entry points (test doubles) `op` runs
  /// in global mode.
  void run(session& s, const google::protobuf::RepeatedField<uint64_t>& bound_by,
           const std::function<void()>& op);

  /// Ends the judge's capture and destroys its stream (also done at
  /// destruction); the context must be current.
  void release();

private:
  /// Makes sure the judge's capture is active; false when it cannot be.
  bool arm();

  driver_api& api_;
  CUstream stream_ = nullptr;
};

} // namespace gleam::executor
