#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include <caf/expected.hpp>

namespace gleam::tools::link_emulator {

/// How the extra delay of each segment is drawn around the base delay.
enum class jitter_distribution : uint8_t {
  /// Uniform in [delay - jitter, delay + jitter].
  uniform,
  /// Normal with mean delay and standard deviation jitter.
  normal,
};

/// Shaping of one direction of the emulated link. Plain value, copyable.
struct direction_spec {
  /// Line rate in bits per second; 0 means unlimited.
  uint64_t rate_bps = 0;
  /// Token bucket depth in bytes; 0 picks a small default (two segments).
  uint64_t burst_bytes = 0;
  /// One-way propagation delay.
  std::chrono::nanoseconds delay{0};
  /// Jitter amplitude (uniform half-width or normal standard deviation).
  /// Jitter never reorders bytes within one TCP stream.
  std::chrono::nanoseconds jitter{0};
  /// Distribution of the jitter.
  jitter_distribution distribution = jitter_distribution::uniform;
  /// Probability that a 1500-byte packet is lost, in [0, 1). A loss shows as
  /// a stall of the whole connection direction (what TCP does).
  double loss = 0;
  /// How long one loss stalls the connection direction.
  std::chrono::nanoseconds stall{std::chrono::milliseconds{200}};
};

/// A parsed link specification: the text it came from and the shaping of
/// both directions, which are independent.
struct link_spec {
  /// The specification as given, e.g. "1gbit,0.5ms" or "wifi".
  std::string text;
  /// Client to target.
  direction_spec up;
  /// Target to client.
  direction_spec down;
};

/// Parses a link specification. Grammar: `DIR` or `DIR/DIR` (up/down), where
/// DIR is a comma-separated list of items:
///   a rate (`1gbit`, `300mbit`, `10mbit`, `50mbyte`, `unlimited`),
///   a delay (`0.5ms`, `3ms`, `250us`), a second bare time is the jitter,
///   `jitter=1ms` (or `jitter 1ms`), `dist=uniform|normal`,
///   `loss=0.1%` (or 0.001), `stall=200ms`, `burst=64kib`,
///   or a preset: `wifi` (300mbit,3ms,jitter 1ms), `1gbe` (1gbit,0.5ms),
///   `unlimited` / `none` (no shaping). Later items override earlier ones.
/// Errors (code bad_spec, bad_rate, bad_duration, bad_value) name the item,
/// the whole spec and an example of a valid item.
[[nodiscard]] caf::expected<link_spec> parse_link_spec(const std::string& text);

/// Parses a rate such as "1gbit" or "50mbyte" into bits per second.
[[nodiscard]] caf::expected<uint64_t> parse_rate(const std::string& text);

/// Parses a duration such as "0.5ms", "3s", "250us" or "100ns".
[[nodiscard]] caf::expected<std::chrono::nanoseconds>
parse_duration(const std::string& text);

/// Parses a byte size such as "64kib", "1mb" or "1500".
[[nodiscard]] caf::expected<uint64_t> parse_size(const std::string& text);

/// Renders a rate in bits per second compactly, e.g. "1gbit", "300mbit",
/// "unlimited".
std::string format_rate(uint64_t rate_bps);

/// Renders a duration compactly, e.g. "0.5ms", "3s", "250us".
std::string format_duration(std::chrono::nanoseconds d);

/// Renders one direction as a spec string that parse_link_spec accepts.
std::string to_string(const direction_spec& d);

} // namespace gleam::tools::link_emulator
