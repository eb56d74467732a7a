#include "tools/link_emulator/shaper.hpp"

#include <algorithm>
#include <cmath>

namespace gleam::tools::link_emulator {

using std::chrono::nanoseconds;

shaper::shaper(const direction_spec& spec)
  : rate_bps_(spec.rate_bps), segment_bytes_(16384), burst_time_(0),
    backlog_limit_(0), next_free_() {
  if (rate_bps_ == 0)
    return;
  auto per_200us = static_cast<size_t>(static_cast<double>(rate_bps_) / 8 * 200e-6);
  segment_bytes_ = std::clamp<size_t>(per_200us, 1500, 65536);
  auto burst = spec.burst_bytes > 0 ? spec.burst_bytes : 2 * segment_bytes_;
  burst_time_ = line_time(burst);
  backlog_limit_ = std::max<nanoseconds>(std::chrono::milliseconds{2},
                                         4 * line_time(segment_bytes_));
}

nanoseconds shaper::line_time(size_t bytes) const {
  if (rate_bps_ == 0)
    return nanoseconds{0};
  return nanoseconds{static_cast<int64_t>(static_cast<double>(bytes) * 8e9
                                          / static_cast<double>(rate_bps_))};
}

time_point shaper::admit(time_point now, size_t bytes) {
  if (rate_bps_ == 0)
    return now;
  auto credit = saturated_ ? std::max<nanoseconds>(burst_time_, std::chrono::milliseconds{50})
                           : burst_time_;
  auto start = std::max(next_free_, now - credit);
  next_free_ = start + line_time(bytes);
  return std::max(now, next_free_);
}

size_t shaper::read_budget(time_point now) const {
  if (rate_bps_ == 0)
    return SIZE_MAX;
  auto backlog = next_free_ - now;
  if (backlog >= backlog_limit_)
    return 0;
  auto room = std::chrono::duration<double>(backlog_limit_ - backlog).count();
  return std::max<size_t>(segment_bytes_,
                          static_cast<size_t>(room * static_cast<double>(rate_bps_) / 8));
}

time_point shaper::next_read_time(time_point now) const {
  if (rate_bps_ == 0)
    return now;
  return std::max(now, next_free_ - backlog_limit_);
}

delay_line::delay_line(const direction_spec& spec, uint64_t seed)
  : spec_(spec), rng_(seed), last_release_() {
}

time_point delay_line::release(time_point sent, size_t bytes, uint64_t& stalls) {
  auto at = sent + spec_.delay;
  if (spec_.jitter.count() > 0) {
    double j = static_cast<double>(spec_.jitter.count());
    double extra = 0;
    if (spec_.distribution == jitter_distribution::normal)
      extra = std::normal_distribution<double>(0, j)(rng_);
    else
      extra = std::uniform_real_distribution<double>(-j, j)(rng_);
    auto total = std::max(0.0, static_cast<double>(spec_.delay.count()) + extra);
    at = sent + nanoseconds{static_cast<int64_t>(total)};
  }
  if (spec_.loss > 0) {
    double p = 1 - std::pow(1 - spec_.loss, static_cast<double>(bytes) / 1500.0);
    if (std::uniform_real_distribution<double>(0, 1)(rng_) < p) {
      at += spec_.stall;
      ++stalls;
    }
  }
  last_release_ = std::max(last_release_, at);
  return last_release_;
}

} // namespace gleam::tools::link_emulator
