#include "actors/multiplexer_loop.hpp"

#include <caf/io/middleman.hpp>
#include <caf/io/network/multiplexer.hpp>

namespace gleam::actors {

multiplexer_loop::multiplexer_loop(caf::actor_system_config& cfg,
                                   std::chrono::microseconds linger)
  : linger_(linger.count() > 0 ? linger : std::chrono::microseconds{0}) {
  if (linger_.count() > 0)
    cfg.set("middleman.manual-multiplexing", true);
}

multiplexer_loop::~multiplexer_loop() {
  stop();
}

void multiplexer_loop::start(caf::actor_system& sys) {
  if (linger_.count() == 0 || thread_.joinable())
    return;
  sys_ = &sys;
  stop_ = false;
  thread_ = std::thread{[this] { run(); }};
}

void multiplexer_loop::stop() {
  if (!thread_.joinable())
    return;
  stop_ = true;
  // Wakes a loop that sleeps in epoll: a posted no-op is an event.
  sys_->middleman().backend().post([] {});
  thread_.join();
}

void multiplexer_loop::run() {
  auto& mpx = sys_->middleman().backend();
  // dispatch() runs inline on the multiplexer's thread: this one now.
  mpx.thread_id(std::this_thread::get_id());
  using clock = std::chrono::steady_clock;
  auto hot_until = clock::now() + linger_;
  while (!stop_.load(std::memory_order_relaxed)) {
    if (holders_.load(std::memory_order_relaxed) > 0 || clock::now() < hot_until) {
      if (mpx.try_run_once())
        hot_until = clock::now() + linger_;
      else
        cpu_relax();
    } else {
      mpx.run_once();
      hot_until = clock::now() + linger_;
    }
  }
}

} // namespace gleam::actors
