#pragma once

#include <chrono>
#include <cstdint>
#include <map>

namespace gleam::actors {

/// The grace periods of sessions whose client is gone (gpu_server): a
/// session is orphaned when its client's connection drops, back when the
/// client resumes it, and expires when it stayed orphaned for the whole
/// grace period. Each orphaning arms a timer; a timer armed by an earlier
/// orphaning that fires while the session is orphaned again (a link that
/// drops, resumes and drops) is stale and expires nothing.
class session_grace {
public:
  using clock = std::chrono::steady_clock;

  explicit session_grace(std::chrono::milliseconds grace) : grace_(grace) {
  }

  /// The client of `id` is gone at `now`; arm a timer for grace() from now.
  void gone(uint64_t id, clock::time_point now) {
    since_[id] = now;
  }

  /// The session is resumed or closed: no timer expires it.
  void back(uint64_t id) {
    since_.erase(id);
  }

  [[nodiscard]] bool orphaned(uint64_t id) const {
    return since_.count(id) != 0;
  }

  /// A timer for `id` fired at `now`: true (and forgotten) when the session
  /// has been orphaned for the whole grace period, false for a stale timer.
  bool expire(uint64_t id, clock::time_point now) {
    auto i = since_.find(id);
    if (i == since_.end() || now - i->second < grace_)
      return false;
    since_.erase(i);
    return true;
  }

  [[nodiscard]] std::chrono::milliseconds grace() const {
    return grace_;
  }

private:
  std::chrono::milliseconds grace_;
  std::map<uint64_t, clock::time_point> since_;
};

} // namespace gleam::actors
