#include "actors/multiplexer_loop.hpp"

#include <pthread.h>
#include <sys/resource.h>

#include <caf/io/middleman.hpp>
#include <caf/io/network/multiplexer.hpp>

#include "actors/log.hpp"
#include "actors/stall_sampler.hpp"

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

multiplexer_loop::usage multiplexer_loop::sample_usage() {
  usage u;
  u.at = std::chrono::steady_clock::now();
  rusage ru{};
  if (getrusage(RUSAGE_THREAD, &ru) != 0)
    return u;
  auto us = [](const timeval& tv) { return int64_t{tv.tv_sec} * 1000000 + tv.tv_usec; };
  u.cpu_us = us(ru.ru_utime) + us(ru.ru_stime);
  u.kernel_us = us(ru.ru_stime);
  u.major_faults = ru.ru_majflt;
  u.minor_faults = ru.ru_minflt;
  u.preempted = ru.ru_nivcsw;
  return u;
}

void multiplexer_loop::note_step(std::chrono::steady_clock::duration took,
                                 const usage& before, stall_sampler& sampler) {
  auto us = std::chrono::duration_cast<std::chrono::microseconds>(took).count();
  if (us > longest_us_.load(std::memory_order_relaxed))
    longest_us_.store(us, std::memory_order_relaxed);
  if (took < stall_threshold)
    return;
  stalls_.fetch_add(1, std::memory_order_relaxed);
  // Only this thread logs stalls: no lock needed for the rate limit.
  auto now = std::chrono::steady_clock::now();
  if (now - last_stall_log_ < std::chrono::seconds{10}) {
    sampler.discard();
    return;
  }
  last_stall_log_ = now;
  // CPU time near the wall time: the step computed (or copied); far below
  // it: the thread waited (page faults on I/O, or another thread ran).
  auto after = sample_usage();
  auto span_ms = std::chrono::duration_cast<std::chrono::milliseconds>(after.at - before.at);
  log(log_level::warning,
      "the network thread was busy for {} ms in one step ({} such stalls so far; in the "
      "last {} ms it ran {} ms on a CPU ({} ms in the kernel), had {} major and {} minor page "
      "faults and was preempted {} times); a peer drops a connection that stays silent for "
      "its connection timeout; {}",
      us / 1000, stalls(), span_ms.count(), (after.cpu_us - before.cpu_us) / 1000,
      (after.kernel_us - before.kernel_us) / 1000, after.major_faults - before.major_faults,
      after.minor_faults - before.minor_faults, after.preempted - before.preempted,
      sampler.where());
}

void multiplexer_loop::run() {
  // Named for top -H, perf and /proc: the thread every message crosses.
  pthread_setname_np(pthread_self(), "gleam-net");
  auto& mpx = sys_->middleman().backend();
  // dispatch() runs inline on the multiplexer's thread: this one now.
  mpx.thread_id(std::this_thread::get_id());
  using clock = std::chrono::steady_clock;
  auto hot_until = clock::now() + linger_;
  auto sampled = sample_usage();
  // Stacks of steps that run past the stall threshold, ten a second.
  stall_sampler sampler{pthread_self(), stall_threshold, std::chrono::milliseconds{100}};
  while (!stop_.load(std::memory_order_relaxed)) {
    if (holders_.load(std::memory_order_relaxed) > 0 || clock::now() < hot_until) {
      auto t0 = clock::now();
      if (t0 - sampled.at > std::chrono::milliseconds{100})
        sampled = sample_usage();
      sampler.step_began(t0);
      bool handled = mpx.try_run_once();
      sampler.step_ended();
      auto t1 = clock::now();
      note_step(t1 - t0, sampled, sampler);
      if (handled)
        hot_until = t1 + linger_;
      else
        cpu_relax();
    } else {
      mpx.run_once();
      hot_until = clock::now() + linger_;
    }
  }
}

} // namespace gleam::actors
