#include "actors/op_watchdog.hpp"

#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <thread>

#include "actors/log.hpp"
#include "actors/worker_link.hpp"

namespace gleam::actors {

namespace {

/// When the batch executing now started (steady clock, ns); 0: none runs.
std::atomic<int64_t> started_ns{0};

/// Set once start_op_watchdog ran: only then are batches timed (the
/// GPU server of shared mode does not read the clock per batch).
std::atomic<bool> armed{false};

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
           std::chrono::steady_clock::now().time_since_epoch())
    .count();
}

} // namespace

void op_watchdog_begin() noexcept {
  if (armed.load(std::memory_order_relaxed))
    started_ns.store(now_ns(), std::memory_order_relaxed);
}

void op_watchdog_end() noexcept {
  started_ns.store(0, std::memory_order_relaxed);
}

void start_op_watchdog(std::chrono::milliseconds limit) {
  armed = true;
  auto limit_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(limit).count();
  // Checks ten times within the limit, at most every 100 ms: a session
  // overruns it by at most a tenth of it (or 100 ms).
  auto period = std::min(std::chrono::milliseconds{100}, std::max(limit / 10, std::chrono::milliseconds{1}));
  std::thread{[limit_ns, period, limit] {
    for (;;) {
      std::this_thread::sleep_for(period);
      auto s = started_ns.load(std::memory_order_relaxed);
      if (s != 0 && now_ns() - s > limit_ns) {
        log(log_level::warning,
            "an op of this worker's session ran longer than [gpu_server] max-op-seconds ({} s): "
            "ending the session with its worker process",
            std::chrono::duration_cast<std::chrono::seconds>(limit).count());
        // The GPU work cannot be interrupted in order: the process ends,
        // and the driver frees its context.
        ::_exit(worker_exit_op_timeout);
      }
    }
  }}.detach();
}

} // namespace gleam::actors
