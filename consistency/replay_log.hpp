#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <utility>

namespace gleam::consistency {

/// The server's half of replay after a reconnect (DESIGN.md "Consistency"):
/// the replies of the last batches of a session whose arrival the client
/// has not confirmed yet, by the seq of their batch's last op. A client that
/// lost its link re-sends every batch it holds no reply for; the server
/// skips the ops it executed already and answers such a batch with the
/// reply recorded here, so that a sync call in flight is answered once, with
/// its original result. The client confirms with each batch
/// (OpBatch.replied_through) the replies it holds.
///
/// At most `capacity` replies are kept (a client holds no more batches in
/// flight: [client] max-pending-batch is at most default_capacity); the
/// oldest goes first. A plain value class: not thread-safe.
template <class Reply>
class replay_log {
public:
  static constexpr size_t default_capacity = 16;

  explicit replay_log(size_t capacity = default_capacity) : capacity_(capacity) {
  }

  /// The client holds every reply of batches through `seq`: forgets them.
  void confirmed_through(uint64_t seq) {
    while (!entries_.empty() && entries_.front().first <= seq)
      entries_.pop_front();
  }

  /// Keeps `reply`, the reply of the batch whose last op has seq `last_seq`
  /// (seqs grow from batch to batch).
  void record(uint64_t last_seq, Reply reply) {
    if (!entries_.empty() && entries_.back().first >= last_seq)
      return; // a replay's answer, already recorded
    entries_.emplace_back(last_seq, std::move(reply));
    while (entries_.size() > capacity_)
      entries_.pop_front();
  }

  /// The reply recorded for the batch ending at `last_seq`, or null.
  [[nodiscard]] const Reply* find(uint64_t last_seq) const {
    for (const auto& e : entries_)
      if (e.first == last_seq)
        return &e.second;
    return nullptr;
  }

  /// Replies kept.
  [[nodiscard]] size_t size() const noexcept {
    return entries_.size();
  }

private:
  size_t capacity_;
  std::deque<std::pair<uint64_t, Reply>> entries_;
};

} // namespace gleam::consistency
