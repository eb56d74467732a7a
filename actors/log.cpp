#include "actors/log.hpp"

#include <unistd.h>

#include <atomic>
#include <mutex>

namespace gleam::actors {

namespace {

std::atomic<int> current_level{static_cast<int>(log_level::info)};
std::mutex tag_mtx;
std::string current_tag = "gleam";

const char* level_name(log_level level) {
  switch (level) {
    case log_level::error:
      return "error";
    case log_level::warning:
      return "warning";
    case log_level::info:
      return "info";
    case log_level::debug:
      return "debug";
  }
  return "?";
}

} // namespace

void set_log_level(const std::string& level) {
  log_level x = log_level::info;
  if (level == "error")
    x = log_level::error;
  else if (level == "warning")
    x = log_level::warning;
  else if (level == "debug")
    x = log_level::debug;
  current_level = static_cast<int>(x);
}

void set_log_tag(const std::string& tag) {
  std::lock_guard<std::mutex> guard{tag_mtx};
  current_tag = tag;
}

bool log_enabled(log_level level) {
  return static_cast<int>(level) <= current_level.load(std::memory_order_relaxed);
}

void write_log(log_level level, const std::string& text) {
  std::string line;
  {
    std::lock_guard<std::mutex> guard{tag_mtx};
    line = "[" + current_tag + "] " + level_name(level) + ": " + text + "\n";
  }
  auto rc = ::write(STDERR_FILENO, line.data(), line.size());
  static_cast<void>(rc); // a failed log write has nowhere to be reported
}

} // namespace gleam::actors
