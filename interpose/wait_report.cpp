#include "interpose/wait_report.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace gleam::interpose {

namespace {

struct wait_totals {
  uint64_t count = 0;
  std::chrono::steady_clock::duration waited{};
  /// The same waits by the op queued just before the waiting one.
  std::map<std::string, wait_totals, std::less<>> after;

  void add(std::chrono::steady_clock::duration d) {
    ++count;
    waited += d;
  }
};

struct wait_table {
  std::mutex mtx;
  std::map<std::string, wait_totals, std::less<>> by_reason;
  /// Synchronizing calls answered without a round trip, by reason.
  std::map<std::string, uint64_t, std::less<>> local;
};

/// Never destroyed: the report runs from atexit, after static destructors
/// of other translation units may have run.
wait_table& table() {
  static auto* t = new wait_table;
  return *t;
}

using wait_rows = std::vector<std::pair<std::string, const wait_totals*>>;

/// The rows of `m`, most time first.
wait_rows by_time(const std::map<std::string, wait_totals, std::less<>>& m) {
  wait_rows rows;
  for (const auto& [reason, w] : m)
    rows.emplace_back(reason, &w);
  std::sort(rows.begin(), rows.end(),
            [](const auto& a, const auto& b) { return a.second->waited > b.second->waited; });
  return rows;
}

void print_report() {
  auto& t = table();
  std::lock_guard<std::mutex> guard{t.mtx};
  uint64_t count = 0;
  std::chrono::steady_clock::duration waited{};
  for (const auto& [reason, w] : t.by_reason) {
    count += w.count;
    waited += w.waited;
  }
  auto seconds = [](std::chrono::steady_clock::duration d) {
    return std::chrono::duration<double>(d).count();
  };
  std::fprintf(stderr, "gleam wait report: %llu waits, %.6f s\n",
               static_cast<unsigned long long>(count), seconds(waited));
  for (const auto& [reason, w] : by_time(t.by_reason)) {
    std::fprintf(stderr, "gleam wait    %s %llu %.6f\n", reason.c_str(),
                 static_cast<unsigned long long>(w->count), seconds(w->waited));
    for (const auto& [previous, p] : by_time(w->after))
      std::fprintf(stderr, "gleam wait      after %s %llu %.6f\n", previous.c_str(),
                   static_cast<unsigned long long>(p->count), seconds(p->waited));
  }
  for (const auto& [reason, n] : t.local)
    std::fprintf(stderr, "gleam local   %s %llu\n", reason.c_str(),
                 static_cast<unsigned long long>(n));
  std::fflush(stderr);
}

/// The totals of `reason` in `m`, created at first use.
wait_totals& entry(std::map<std::string, wait_totals, std::less<>>& m, std::string_view reason) {
  auto i = m.find(reason);
  if (i == m.end())
    i = m.emplace(std::string{reason}, wait_totals{}).first;
  return i->second;
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
    entry(t.by_reason, reason).add(waited);
  } catch (...) {
    // Out of memory while counting: the report misses this wait, the app
    // goes on (a diagnostic never fails a CUDA call).
  }
}

void note_wait(std::string_view reason, std::string_view previous,
               std::chrono::steady_clock::duration waited) noexcept {
  if (!wait_report_enabled())
    return;
  try {
    auto& t = table();
    std::lock_guard<std::mutex> guard{t.mtx};
    auto& w = entry(t.by_reason, reason);
    w.add(waited);
    entry(w.after, previous).add(waited);
  } catch (...) {
    // As above: a diagnostic never fails a CUDA call.
  }
}

void note_answered_locally(std::string_view reason) noexcept {
  if (!wait_report_enabled())
    return;
  try {
    auto& t = table();
    std::lock_guard<std::mutex> guard{t.mtx};
    auto i = t.local.find(reason);
    if (i == t.local.end())
      i = t.local.emplace(std::string{reason}, 0).first;
    ++i->second;
  } catch (...) {
    // As above: a diagnostic never fails a CUDA call.
  }
}

} // namespace gleam::interpose
