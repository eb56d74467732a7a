#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace gleam::tools {

/// Blocks SIGINT and SIGTERM in the calling thread (and so in every thread
/// started after it, CAF's included) and lets the main thread wait for
/// them synchronously: no signal handler ever runs inside CAF code.
/// Construct before the actor system. Not copyable.
class stop_signals {
public:
  stop_signals();
  stop_signals(const stop_signals&) = delete;
  stop_signals& operator=(const stop_signals&) = delete;

  /// Waits for SIGINT or SIGTERM and returns its number.
  int wait();

  /// Like wait(), but gives up after `timeout`; returns 0 then.
  int wait_for(std::chrono::milliseconds timeout);
};

/// Bounds a shutdown: if not destroyed within `deadline`, writes a line to
/// stderr naming the step it was in and ends the process with _exit(0)
/// (CAF 0.17's actor_system destructor blocks while actors are still
/// referenced, e.g. by remote peers; the node has already stopped serving
/// by then). Not copyable.
class shutdown_watchdog {
public:
  explicit shutdown_watchdog(std::chrono::milliseconds deadline);
  ~shutdown_watchdog();
  shutdown_watchdog(const shutdown_watchdog&) = delete;
  shutdown_watchdog& operator=(const shutdown_watchdog&) = delete;

  /// Names the step the shutdown enters now (a string literal: it is read
  /// by the watchdog's thread). Returns the milliseconds since the previous
  /// step began, for the caller's log.
  long step(const char* name);

private:
  std::mutex mtx_;
  std::condition_variable cv_;
  bool done_ = false;
  const char* step_ = "start";
  std::chrono::steady_clock::time_point step_began_ = std::chrono::steady_clock::now();
  std::thread thread_;
};

} // namespace gleam::tools
