#include "interpose/wait_report.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <vector>

namespace gleam::interpose {

namespace {

struct wait_totals {
  uint64_t count = 0;
  std::chrono::steady_clock::duration waited{};
};

struct wait_table {
  std::mutex mtx;
  std::map<std::string_view, wait_totals> by_reason;
};

/// Never destroyed: the report runs from atexit, after static destructors
/// of other translation units may have run.
wait_table& table() {
  static auto* t = new wait_table;
  return *t;
}

void print_report() {
  auto& t = table();
  std::lock_guard<std::mutex> guard{t.mtx};
  std::vector<std::pair<std::string_view, wait_totals>> rows(t.by_reason.begin(),
                                                              t.by_reason.end());
  std::sort(rows.begin(), rows.end(),
            [](const auto& a, const auto& b) { return a.second.waited > b.second.waited; });
  wait_totals all;
  for (const auto& [reason, w] : rows) {
    all.count += w.count;
    all.waited += w.waited;
  }
  auto seconds = [](std::chrono::steady_clock::duration d) {
    return std::chrono::duration<double>(d).count();
  };
  std::fprintf(stderr, "gleam wait report: %llu waits, %.6f s\n",
               static_cast<unsigned long long>(all.count), seconds(all.waited));
  for (const auto& [reason, w] : rows)
    std::fprintf(stderr, "gleam wait    %.*s %llu %.6f\n", static_cast<int>(reason.size()),
                 reason.data(), static_cast<unsigned long long>(w.count), seconds(w.waited));
  std::fflush(stderr);
}

} // namespace

bool wait_report_enabled() noexcept {
  static const bool on = [] {
    const char* v = std::getenv("GLEAM_WAIT_REPORT");
    bool enabled = v != nullptr && std::strcmp(v, "1") == 0;
    if (enabled)
      std::atexit(print_report);
    return enabled;
  }();
  return on;
}

void note_wait(std::string_view reason, std::chrono::steady_clock::duration waited) noexcept {
  if (!wait_report_enabled())
    return;
  try {
    auto& t = table();
    std::lock_guard<std::mutex> guard{t.mtx};
    auto& w = t.by_reason[reason];
    ++w.count;
    w.waited += waited;
  } catch (...) {
    // Out of memory while counting: the report misses this wait, the app
    // goes on (a diagnostic never fails a CUDA call).
  }
}

} // namespace gleam::interpose
