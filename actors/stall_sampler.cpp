#include "actors/stall_sampler.hpp"

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <map>
#include <memory>
#include <vector>

#include <cxxabi.h>
#include <dlfcn.h>
#include <execinfo.h>

#include <fmt/format.h>

namespace gleam::actors {

namespace {

/// The sampler whose watchdog signals now (one at a time, `signal_mtx`).
std::atomic<stall_sampler*> signaled{nullptr};
std::mutex signal_mtx;

int sample_signal() {
  return SIGRTMIN + 5;
}

/// "function (library)" for a code address: the demangled name of the
/// nearest exported symbol, or the address's offset in the library.
std::string describe(void* pc) {
  Dl_info info{};
  if (dladdr(pc, &info) == 0)
    return fmt::format("{}", pc);
  std::string lib = info.dli_fname != nullptr ? info.dli_fname : "?";
  if (auto slash = lib.rfind('/'); slash != std::string::npos)
    lib.erase(0, slash + 1);
  // No exported name: the offset in its file, for addr2line.
  auto offset = static_cast<char*>(pc) - static_cast<char*>(info.dli_fbase);
  std::string name = fmt::format("+{:#x}", offset);
  if (info.dli_sname != nullptr) {
    int status = 0;
    std::unique_ptr<char, decltype(&std::free)> d{
      abi::__cxa_demangle(info.dli_sname, nullptr, nullptr, &status), &std::free};
    name = status == 0 && d ? d.get() : info.dli_sname;
  }
  constexpr size_t longest = 120;
  if (name.size() > longest)
    name = name.substr(0, longest) + "...";
  return fmt::format("{} ({})", name, lib);
}

} // namespace

stall_sampler::stall_sampler(pthread_t target, std::chrono::milliseconds threshold,
                             std::chrono::milliseconds interval)
  : target_(target), threshold_(threshold), interval_(interval) {
  watchdog_ = std::thread{[this] { watch(); }};
}

stall_sampler::~stall_sampler() {
  {
    std::lock_guard<std::mutex> guard{mtx_};
    stop_ = true;
  }
  cv_.notify_all();
  watchdog_.join();
}

void stall_sampler::on_signal(int) {
  int saved = errno;
  auto* s = signaled.load(std::memory_order_acquire);
  if (s != nullptr && s->pending_.load(std::memory_order_acquire)) {
    auto i = s->taken_.load(std::memory_order_relaxed);
    if (i < max_samples) {
      auto& out = s->samples_[i];
      out.depth = backtrace(out.frames.data(), static_cast<int>(max_frames));
      s->taken_.store(i + 1, std::memory_order_release);
    }
    s->pending_.store(false, std::memory_order_release);
  }
  errno = saved;
}

bool stall_sampler::install() {
  if (installed_ != 0)
    return installed_ > 0;
  installed_ = -1;
  struct sigaction old{};
  if (sigaction(sample_signal(), nullptr, &old) != 0)
    return false;
  if (old.sa_handler != SIG_DFL && old.sa_handler != &stall_sampler::on_signal)
    return false; // the app's signal
  // backtrace() loads its unwinder on first use: not in a signal handler.
  std::array<void*, 2> warm{};
  static_cast<void>(backtrace(warm.data(), static_cast<int>(warm.size())));
  struct sigaction sa{};
  sa.sa_handler = &stall_sampler::on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  if (sigaction(sample_signal(), &sa, nullptr) != 0)
    return false;
  installed_ = 1;
  return true;
}

void stall_sampler::watch() {
  std::unique_lock<std::mutex> lock{mtx_};
  while (!cv_.wait_for(lock, interval_, [this] { return stop_; })) {
    auto began = began_ns_.load(std::memory_order_relaxed);
    if (began == 0 || taken_.load(std::memory_order_acquire) >= max_samples)
      continue;
    auto start = std::chrono::steady_clock::time_point{std::chrono::steady_clock::duration{began}};
    if (std::chrono::steady_clock::now() - start < threshold_ || !install())
      continue;
    std::lock_guard<std::mutex> one_at_a_time{signal_mtx};
    pending_.store(true, std::memory_order_release);
    signaled.store(this, std::memory_order_release);
    if (pthread_kill(target_, sample_signal()) == 0) {
      // The handler runs when the target next enters the kernel or is
      // scheduled: wait for it a little, never for long.
      for (int i = 0; i < 1000 && pending_.load(std::memory_order_acquire); ++i)
        std::this_thread::sleep_for(std::chrono::microseconds{100});
    }
    pending_.store(false, std::memory_order_release);
    signaled.store(nullptr, std::memory_order_release);
  }
}

std::string stall_sampler::where() {
  if (installed_ < 0)
    return "no stack samples: the process uses the sampling signal itself";
  auto n = std::min(taken_.load(std::memory_order_acquire), max_samples);
  if (n == 0)
    return {};
  // Frame 0 is the handler, frame 1 the kernel's signal trampoline.
  constexpr int skipped = 2;
  constexpr size_t shown = 24;
  std::map<std::string, size_t> stacks;
  for (size_t i = 0; i < n; ++i) {
    const auto& s = samples_[i];
    std::string stack;
    for (int f = skipped; f < s.depth && static_cast<size_t>(f - skipped) < shown; ++f) {
      // A caller's frame holds a return address: look up the call itself.
      auto* pc = static_cast<char*>(s.frames[static_cast<size_t>(f)]) - (f > skipped ? 1 : 0);
      if (!stack.empty())
        stack += " < ";
      stack += describe(pc);
    }
    ++stacks[stack];
  }
  taken_.store(0, std::memory_order_release);
  auto most = stacks.begin();
  for (auto i = stacks.begin(); i != stacks.end(); ++i)
    if (i->second > most->second)
      most = i;
  return fmt::format("{} of {} stack samples: {}", most->second, n, most->first);
}

} // namespace gleam::actors
