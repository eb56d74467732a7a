#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>

namespace gleam::actors {

class stall_sampler;

/// Runs CAF's network multiplexer on a thread of ours instead of CAF's own
/// (middleman.manual-multiplexing), so that it can poll its sockets without
/// sleeping while traffic is expected.
///
/// Why: a sync call crosses four thread hand-offs that raw TCP does not
/// have (app -> middleman, middleman -> GPU actor, GPU actor -> middleman,
/// middleman -> app). Each hand-off to a sleeping thread costs its wake-up:
/// 40-60 us on the GPU machine's virtual CPUs when the thread slept through
/// a 1 ms round trip (tools/bench/README.md). A thread that polls pays none.
///
/// The loop polls (epoll with a zero timeout) while someone holds it (a
/// thread waiting for a reply, the GPU actor executing a batch) and for
/// `linger` after the last event it handled; otherwise it sleeps in epoll
/// as CAF's own loop does. So a busy node burns one core on its network,
/// as CUDA's default spin-wait burns one on a device sync, and an idle one
/// none. A linger of 0 keeps CAF's own thread (nothing polls).
///
/// Lifetime: construct before the actor system (it sets the config), call
/// start() right after the system exists and before any connect or publish,
/// and stop() (or destroy it) before the system is destroyed. hold(),
/// release() and touch() are thread-safe and cheap (one atomic).
class multiplexer_loop {
public:
  /// Sets middleman.manual-multiplexing in `cfg` when `linger` > 0.
  multiplexer_loop(caf::actor_system_config& cfg, std::chrono::microseconds linger);

  multiplexer_loop(const multiplexer_loop&) = delete;
  multiplexer_loop& operator=(const multiplexer_loop&) = delete;

  ~multiplexer_loop();

  /// Starts the thread over `sys`'s middleman (nothing when linger is 0).
  void start(caf::actor_system& sys);

  /// Stops and joins the thread; the network is silent afterwards. Idempotent.
  void stop();

  /// Poll without sleeping until the matching release().
  void hold() noexcept {
    holders_.fetch_add(1, std::memory_order_relaxed);
  }
  void release() noexcept {
    holders_.fetch_sub(1, std::memory_order_relaxed);
  }

  /// Whether the loop polls (linger > 0 and started).
  [[nodiscard]] bool polling() const noexcept {
    return thread_.joinable();
  }

  /// How long the loop polls after an event.
  [[nodiscard]] std::chrono::microseconds linger() const noexcept {
    return linger_;
  }

  /// A step of the polling loop (handling events, not waiting for them) that
  /// took this long is a stall: the peers hear nothing from this node
  /// meanwhile, and CAF drops a connection that is silent for its
  /// middleman.connection-timeout. Each stall is counted and logged as a
  /// warning (at most one line every 10 s) that says where the time went:
  /// the thread's CPU time (and its part in the kernel), major and minor
  /// page faults and involuntary context switches since a sample taken at
  /// most 100 ms before the step began, and the call stack seen most in the
  /// step (stall_sampler, ten samples a second once the step passed the
  /// threshold).
  static constexpr std::chrono::milliseconds stall_threshold{500};

  /// Stalls so far, and the longest step measured (polling steps only).
  [[nodiscard]] uint64_t stalls() const noexcept {
    return stalls_.load(std::memory_order_relaxed);
  }
  [[nodiscard]] std::chrono::microseconds longest_step() const noexcept {
    return std::chrono::microseconds{longest_us_.load(std::memory_order_relaxed)};
  }

private:
  void run();
  /// The thread's resource usage, sampled every 100 ms while polling.
  struct usage {
    std::chrono::steady_clock::time_point at{};
    int64_t cpu_us = 0;
    int64_t kernel_us = 0;
    int64_t major_faults = 0;
    int64_t minor_faults = 0;
    int64_t preempted = 0;
  };
  static usage sample_usage();
  void note_step(std::chrono::steady_clock::duration took, const usage& before,
                 stall_sampler& sampler);

  std::chrono::microseconds linger_;
  std::atomic<int> holders_{0};
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> stalls_{0};
  std::atomic<int64_t> longest_us_{0};
  std::chrono::steady_clock::time_point last_stall_log_{};
  caf::actor_system* sys_ = nullptr;
  std::thread thread_;
};

/// Holds `loop` (may be null) for the scope.
class multiplexer_hold {
public:
  explicit multiplexer_hold(multiplexer_loop* loop) noexcept : loop_(loop) {
    if (loop_ != nullptr)
      loop_->hold();
  }
  multiplexer_hold(const multiplexer_hold&) = delete;
  multiplexer_hold& operator=(const multiplexer_hold&) = delete;
  ~multiplexer_hold() {
    if (loop_ != nullptr)
      loop_->release();
  }

private:
  multiplexer_loop* loop_;
};

/// Spins the calling thread for a moment without giving up the core (the
/// CPU's pause hint).
inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

} // namespace gleam::actors
