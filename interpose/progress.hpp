#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

namespace gleam::interpose {

/// A progress bar for one long transfer, on standard error: bytes done of
/// the total, bytes that travelled, bytes the server had cached, rate and
/// ETA. Prints only when standard error is a terminal and the transfer has
/// run for more than a second; quiet otherwise. Not thread-safe.
class transfer_progress {
public:
  /// A transfer of `total` bytes starting now, drawn on `out` when `tty`.
  transfer_progress(uint64_t total, bool tty, std::FILE* out = stderr);

  /// A transfer of `total` bytes drawn on stderr when isatty(2).
  explicit transfer_progress(uint64_t total);

  /// Ends the line if anything was drawn.
  ~transfer_progress();

  transfer_progress(const transfer_progress&) = delete;
  transfer_progress& operator=(const transfer_progress&) = delete;

  /// Records `sent` more bytes that travelled and `cached` more bytes the
  /// server filled from its cache, and redraws at most 10 times a second.
  void advance(uint64_t sent, uint64_t cached);

  /// The bar's text for the current state (no carriage return), for tests.
  /// `seconds` is the elapsed time.
  static std::string render(uint64_t total, uint64_t sent, uint64_t cached, double seconds);

  /// Whether anything was drawn.
  bool drawn() const {
    return drawn_;
  }

private:
  using clock = std::chrono::steady_clock;
  uint64_t total_;
  uint64_t sent_ = 0;
  uint64_t cached_ = 0;
  bool tty_;
  std::FILE* out_;
  clock::time_point start_;
  clock::time_point last_draw_;
  bool drawn_ = false;
};

} // namespace gleam::interpose
