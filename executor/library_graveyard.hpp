#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

namespace gleam::executor {

/// Library handles whose destruction waits until no session of the context
/// captures: cublasDestroy, cublasLtDestroy and curandDestroyGenerator may
/// synchronize the device (they free device memory), and a device
/// synchronization invalidates every capture in progress, other sessions'
/// included. The executor owns one per context and reaches it through
/// session::graves. Not thread-safe.
class library_graveyard {
public:
  /// `context_captures` says whether a capture is in progress in the
  /// context now.
  explicit library_graveyard(std::function<bool()> context_captures)
    : context_captures_(std::move(context_captures)) {
  }
  library_graveyard(const library_graveyard&) = delete;
  library_graveyard& operator=(const library_graveyard&) = delete;
  /// Destroys what is parked (bury(true)).
  ~library_graveyard();

  /// Runs `destroy_now` (a handle's destruction; the library's status) at
  /// once, or, while the context captures, runs `detach` (which takes the
  /// handle off the session's stream and memory, which may be gone by then)
  /// and parks `destroy_now`; its status, or 0 (success) when parked.
  int32_t destroy(std::function<int32_t()> destroy_now, const std::function<void()>& detach);

  /// Runs the parked destructions, when no capture is in progress or
  /// `force`.
  void bury(bool force = false);

  /// Destructions parked now.
  [[nodiscard]] size_t parked() const noexcept {
    return parked_.size();
  }

private:
  std::function<bool()> context_captures_;
  std::vector<std::function<int32_t()>> parked_;
};

} // namespace gleam::executor
