#include "consistency/pending_window.hpp"

#include <algorithm>
#include <string>

#include "consistency/error.hpp"

namespace gleam::consistency {

pending_window::pending_window(size_t capacity, sticky_predicate is_sticky)
  : capacity_(std::max<size_t>(capacity, 1)), is_sticky_(is_sticky) {
}

caf::expected<uint64_t> pending_window::sent(uint64_t first_seq, uint64_t last_seq,
                                             uint64_t owned_from) {
  if (!has_room())
    return make_error(error_code::window_full,
                      "a batch was sent while " + std::to_string(capacity_)
                        + " batches were in flight: reconcile the oldest reply first");
  if (first_seq == 0 || last_seq < first_seq || first_seq <= last_sent_seq_)
    return make_error(error_code::malformed_reply,
                      "batch ops [" + std::to_string(first_seq) + ", "
                        + std::to_string(last_seq) + "] do not follow seq "
                        + std::to_string(last_sent_seq_));
  last_sent_seq_ = last_seq;
  flight_.push_back({next_id_, first_seq, last_seq, owned_from});
  return next_id_++;
}

void pending_window::fail_async(int32_t status, const std::string& detail) {
  if (is_sticky_(status)) {
    if (sticky_ == 0)
      sticky_ = status;
    return;
  }
  if (deferred_ != 0) {
    ++superseded_;
    return;
  }
  deferred_ = status;
  deferred_detail_ = detail;
}

caf::expected<reconciled> pending_window::completed(uint64_t id,
                                                    const std::vector<op_status>& results) {
  if (flight_.empty() || flight_.front().id != id)
    return make_error(error_code::out_of_order,
                      "reply for batch " + std::to_string(id) + " while the oldest in flight is "
                        + std::to_string(oldest()));
  const auto b = flight_.front();
  uint64_t prev = 0;
  for (const auto& r : results)
    if (r.seq < b.first_seq || r.seq > b.last_seq || r.seq <= prev)
      return make_error(error_code::malformed_reply,
                        "result for op " + std::to_string(r.seq) + " in the reply of batch "
                          + std::to_string(id) + " holding ops ["
                          + std::to_string(b.first_seq) + ", " + std::to_string(b.last_seq)
                          + "]");
    else
      prev = r.seq;
  flight_.pop_front();
  reconciled out;
  auto owned = [&](uint64_t seq) { return b.owned_from != 0 && seq >= b.owned_from; };
  for (const auto& r : results) {
    if (r.status == 0)
      continue;
    if (owned(r.seq)) {
      if (is_sticky_(r.status) && sticky_ == 0)
        sticky_ = r.status;
      if (out.owned_status == 0) {
        out.owned_status = r.status;
        out.owned_error = r.error;
      }
    } else {
      fail_async(r.status, r.error);
    }
  }
  // Ops without a result: explained by a sticky error, or lost.
  size_t total = static_cast<size_t>(b.last_seq - b.first_seq + 1);
  out.missing = total - std::min(total, results.size());
  if (out.missing > 0) {
    auto status = sticky_ != 0 ? sticky_ : lost_status;
    bool owned_missing = false;
    bool async_missing = false;
    size_t k = 0;
    for (uint64_t seq = b.first_seq; seq <= b.last_seq; ++seq) {
      if (k < results.size() && results[k].seq == seq) {
        ++k;
        continue;
      }
      (owned(seq) ? owned_missing : async_missing) = true;
    }
    std::string why = "the server answered " + std::to_string(results.size()) + " of "
                      + std::to_string(total) + " ops of the batch";
    if (owned_missing && out.owned_status == 0) {
      out.owned_status = status;
      out.owned_error = why;
    }
    if (async_missing && sticky_ == 0)
      fail_async(status, why);
  }
  return out;
}

size_t pending_window::abandon() noexcept {
  auto n = flight_.size();
  flight_.clear();
  return n;
}

int32_t pending_window::take_deferred(std::string* detail) {
  auto x = deferred_;
  if (detail != nullptr)
    *detail = std::move(deferred_detail_);
  deferred_ = 0;
  deferred_detail_.clear();
  return x;
}

} // namespace gleam::consistency
