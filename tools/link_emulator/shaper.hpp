#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <random>

#include "tools/link_emulator/link_spec.hpp"

namespace gleam::tools::link_emulator {

/// The emulator's clock: CLOCK_MONOTONIC.
using clock_type = std::chrono::steady_clock;

/// A point in time of clock_type.
using time_point = clock_type::time_point;

/// The serialization stage of one link direction, shared by every connection
/// that crosses it: a token bucket at the line rate with a small burst.
/// Pure arithmetic on the times it is given; not thread-safe.
class shaper {
public:
  /// A shaper for `spec`'s rate and burst.
  explicit shaper(const direction_spec& spec);

  /// Admits `bytes` read at `now` and returns when their last bit has left
  /// the sender (never before `now`). When the previous read was saturated
  /// (see saturated()), time the loop lost to scheduling is made up, up to
  /// 50 ms: a real line keeps serializing while its sender has data.
  time_point admit(time_point now, size_t bytes);

  /// Tells the shaper whether the last read took all it was allowed to
  /// (the source had more) or ran the source dry (the line may idle).
  void saturated(bool yes) noexcept {
    saturated_ = yes;
  }

  /// Bytes that may be read at `now` without queueing more than the backlog
  /// limit behind the line; 0 when the reader should wait.
  size_t read_budget(time_point now) const;

  /// When read_budget becomes positive again (`now` if it already is).
  time_point next_read_time(time_point now) const;

  /// Size in bytes of the segments a read is cut into, so that delivery is
  /// smooth at this rate (about 200 µs of line time, 1500 B to 64 KiB).
  size_t segment_bytes() const noexcept {
    return segment_bytes_;
  }

  /// True when the rate is unlimited (admit returns `now`).
  bool unlimited() const noexcept {
    return rate_bps_ == 0;
  }

  /// Line time of `bytes` at this rate.
  std::chrono::nanoseconds line_time(size_t bytes) const;

private:
  uint64_t rate_bps_;
  size_t segment_bytes_;
  std::chrono::nanoseconds burst_time_;
  std::chrono::nanoseconds backlog_limit_;
  time_point next_free_;
  bool saturated_ = false;
};

/// The propagation stage of one connection direction: delay, jitter and
/// loss stalls. Release times never decrease, so bytes are never reordered.
/// Not thread-safe.
class delay_line {
public:
  /// A delay line for `spec`, drawing jitter and losses from `seed`.
  delay_line(const direction_spec& spec, uint64_t seed);

  /// When `bytes` that left the sender at `sent` arrive at the receiver.
  /// Counts a stall in `stalls` when a loss is drawn.
  time_point release(time_point sent, size_t bytes, uint64_t& stalls);

private:
  direction_spec spec_;
  std::mt19937_64 rng_;
  time_point last_release_;
};

} // namespace gleam::tools::link_emulator
