#pragma once

#include <string>

#include <fmt/core.h>

namespace gleam::actors {

/// Severity of a log line; lines above the process's level are dropped.
enum class log_level { error = 0, warning = 1, info = 2, debug = 3 };

/// Sets the process-wide level ("error", "warning", "info", "debug") and the
/// component tag printed before each line (e.g. "gleamd", "gleam-client").
/// Thread-safe.
void set_log_level(const std::string& level);
void set_log_tag(const std::string& tag);
bool log_enabled(log_level level);

/// Writes one line to stderr: "[tag] level: text". Thread-safe; one write()
/// per line so concurrent lines never interleave.
void write_log(log_level level, const std::string& text);

template <class... Ts>
void log(log_level level, fmt::format_string<Ts...> format, Ts&&... xs) {
  if (log_enabled(level))
    write_log(level, fmt::format(format, std::forward<Ts>(xs)...));
}

} // namespace gleam::actors
