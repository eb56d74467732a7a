#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

#include <pthread.h>

namespace gleam::actors {

/// Finds out where a thread spends a long step: while a step of the target
/// thread has run longer than a threshold, a watchdog thread interrupts it
/// with a signal every `interval` and its handler records the call stack;
/// after the step, where() names the functions of the stack seen most.
///
/// For the network thread (multiplexer_loop): a step that keeps it from its
/// sockets for the peers' connection timeout loses the connection, and the
/// stack says which work did (serializing, a handler, a page fault).
///
/// The signal is one real-time signal; the sampler installs its handler on
/// the first stall only, and only where the process left that signal at its
/// default (an app that uses it keeps it; the sampler then samples nothing
/// and says so in where()). Cost while no step is long: two relaxed atomic
/// stores per step and a watchdog wake-up every `interval`.
///
/// Thread safety: step_began()/step_ended()/where() on the target thread;
/// the constructor and destructor on any one thread.
class stall_sampler {
public:
  /// Most stacks recorded per stall, and frames per stack.
  static constexpr size_t max_samples = 16;
  static constexpr size_t max_frames = 48;

  /// Samples `target` in its steps that run longer than `threshold`, every
  /// `interval` (one wake-up of the watchdog each) until the step ends.
  stall_sampler(pthread_t target, std::chrono::milliseconds threshold,
                std::chrono::milliseconds interval);

  stall_sampler(const stall_sampler&) = delete;
  stall_sampler& operator=(const stall_sampler&) = delete;

  /// Stops the watchdog (a step still running is no longer sampled).
  ~stall_sampler();

  /// The target enters a step (now) / leaves it.
  void step_began(std::chrono::steady_clock::time_point now) noexcept {
    began_ns_.store(now.time_since_epoch().count(), std::memory_order_relaxed);
  }
  void step_ended() noexcept {
    began_ns_.store(0, std::memory_order_relaxed);
  }

  /// The stack (innermost function first, " < " between frames, our signal
  /// handler left out) seen in most samples since the last call, with how
  /// many of the samples showed it; empty when nothing was sampled. Clears
  /// the samples. On the target thread, after the step.
  [[nodiscard]] std::string where();

  /// Drops the samples taken so far (a stall not reported).
  void discard() noexcept {
    taken_.store(0, std::memory_order_release);
  }

private:
  struct sample {
    std::array<void*, max_frames> frames{};
    int depth = 0;
  };

  void watch();
  bool install();
  static void on_signal(int);

  pthread_t target_;
  std::chrono::milliseconds threshold_;
  std::chrono::milliseconds interval_;
  std::atomic<int64_t> began_ns_{0};
  /// Samples written by the handler; `taken_` counts the complete ones.
  std::array<sample, max_samples> samples_{};
  std::atomic<size_t> taken_{0};
  /// Set by the watchdog before it signals, cleared by the handler.
  std::atomic<bool> pending_{false};
  /// 1: handler installed, -1: the signal is the app's (no sampling).
  int installed_ = 0;
  std::mutex mtx_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread watchdog_;
};

} // namespace gleam::actors
