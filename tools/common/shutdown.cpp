#include "tools/common/shutdown.hpp"

#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <csignal>
#include <ctime>

namespace gleam::tools {

namespace {

sigset_t stop_set() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  return set;
}

} // namespace

stop_signals::stop_signals() {
  auto set = stop_set();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

int stop_signals::wait() {
  auto set = stop_set();
  int sig = 0;
  while (sigwait(&set, &sig) != 0) {
  }
  return sig;
}

int stop_signals::wait_for(std::chrono::milliseconds timeout) {
  auto set = stop_set();
  timespec ts{};
  ts.tv_sec = static_cast<time_t>(timeout.count() / 1000);
  ts.tv_nsec = static_cast<long>((timeout.count() % 1000) * 1000000);
  int sig = sigtimedwait(&set, nullptr, &ts);
  return sig > 0 ? sig : 0;
}

shutdown_watchdog::shutdown_watchdog(std::chrono::milliseconds deadline) {
  thread_ = std::thread([this, deadline] {
    std::unique_lock<std::mutex> guard{mtx_};
    if (!cv_.wait_for(guard, deadline, [this] { return done_; })) {
      char msg[160];
      auto in_step = std::chrono::duration_cast<std::chrono::milliseconds>(
                       std::chrono::steady_clock::now() - step_began_)
                       .count();
      int n = std::snprintf(msg, sizeof(msg),
                            "shutdown took longer than its deadline (%lld ms) in step '%s' "
                            "(%ld ms in it); exiting now\n",
                            static_cast<long long>(deadline.count()), step_, in_step);
      if (n > 0) {
        auto rc = ::write(STDERR_FILENO, msg, std::min<std::size_t>(n, sizeof(msg) - 1));
        static_cast<void>(rc); // nothing left to report a failed write to
      }
      _exit(0);
    }
  });
}

long shutdown_watchdog::step(const char* name) {
  std::lock_guard<std::mutex> guard{mtx_};
  auto now = std::chrono::steady_clock::now();
  auto took = std::chrono::duration_cast<std::chrono::milliseconds>(now - step_began_).count();
  step_ = name;
  step_began_ = now;
  return static_cast<long>(took);
}

shutdown_watchdog::~shutdown_watchdog() {
  {
    std::lock_guard<std::mutex> guard{mtx_};
    done_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

} // namespace gleam::tools
