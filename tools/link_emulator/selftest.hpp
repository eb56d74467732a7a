#pragma once

#include <chrono>
#include <string>

#include <caf/expected.hpp>

#include "tools/link_emulator/link_spec.hpp"

namespace gleam::tools::link_emulator {

/// Knobs of the loopback self-measurement.
struct selftest_options {
  /// Whether to measure the rates (the bulk phases); false: pings only.
  bool bulk = true;
  /// How long each bulk direction runs.
  std::chrono::nanoseconds bulk_duration{std::chrono::seconds{2}};
  /// Start-up time excluded from the rate measurement.
  std::chrono::nanoseconds warmup{std::chrono::milliseconds{250}};
  /// Number of 64-byte ping-pongs for the delay measurement.
  int pings = 1000;
  /// Poll window before deadlines, passed to the emulator.
  std::chrono::nanoseconds spin{std::chrono::microseconds{80}};
};

/// What the self-measurement saw. Rates in bits per second, times in µs.
struct selftest_result {
  /// Configured rate client to target (0 = unlimited).
  double configured_up_bps = 0;
  /// Configured rate target to client.
  double configured_down_bps = 0;
  /// Achieved client-to-target rate, measured at the receiver.
  double up_bps = 0;
  /// Achieved target-to-client rate, measured at the receiver.
  double down_bps = 0;
  /// Configured mean one-way delay ((up + down) / 2).
  double configured_delay_us = 0;
  /// Median of RTT/2 of 64-byte pings through the link.
  double delay_median_us = 0;
  /// 99th percentile of RTT/2 through the link.
  double delay_p99_us = 0;
  /// Median of RTT/2 of the same pings straight to the echo server.
  double direct_median_us = 0;
  /// Emulator loop CPU time over wall time during the bulk phases, percent
  /// of one core.
  double bulk_cpu_percent = 0;
  /// Same, during the ping phase.
  double ping_cpu_percent = 0;
};

/// Runs an echo/sink/source server and a client on loopback through an
/// in-process link_emulator configured with `spec`, and measures the rate in
/// both directions and the one-way delay. Fails with selftest_failed naming
/// the step that failed.
[[nodiscard]] caf::expected<selftest_result>
run_selftest(const link_spec& spec, const selftest_options& opts = {});

/// A human-readable report of `r`, several lines, with errors against the
/// configuration (rate %, delay µs).
std::string to_string(const selftest_result& r);

} // namespace gleam::tools::link_emulator
