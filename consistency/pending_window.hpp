#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include <caf/expected.hpp>

namespace gleam::consistency {

/// The outcome of one op as its batch reply reports it.
struct op_status {
  /// The op's sequence number in its session.
  uint64_t seq = 0;
  /// CUresult of the op; 0 is success.
  int32_t status = 0;
  /// Human-readable detail from the server when status != 0.
  std::string error;
};

/// What reconciling one batch reply gives to the caller that waits for it.
struct reconciled {
  /// The first failing status among the batch's owned ops (those whose caller
  /// waits for their result, see pending_window::sent); 0 when all succeeded
  /// or the batch had none.
  int32_t owned_status = 0;
  /// Detail of owned_status.
  std::string owned_error;
  /// Ops of the batch that got no result (the server stopped the batch after
  /// a sticky error, or lost the session).
  size_t missing = 0;
};

/// The client-side window of batches in flight and the reconciliation of
/// the errors of asynchronous (error-code-only) ops, after DESIGN.md
/// "Consistency": at most `capacity` batches are in flight; replies are
/// reconciled strictly in the order the batches were sent; an error of an
/// async op is kept as the deferred error and handed out exactly once
/// (take_deferred); a sticky error (CUDA's context-corrupting ones) latches
/// for the rest of the session.
///
/// Which error is deferred: the first non-sticky failure of an async op in
/// program order that has not been taken yet; later ones are counted in
/// superseded() and their text is kept only in the log of the caller. This
/// matches CUDA, where the launch that failed returned the error and later
/// successful calls do not repeat it.
///
/// A plain value class: not thread-safe, the caller serializes access (the
/// interposer does under its client lock). Status codes are CUresult values.
class pending_window {
public:
  /// Classifies a CUresult as sticky (the context is unusable afterwards).
  using sticky_predicate = bool (*)(int32_t status);

  /// CUDA_ERROR_UNKNOWN: the status given to ops whose result never came
  /// while no sticky error explains it.
  static constexpr int32_t lost_status = 999;

  /// A window of `capacity` batches (at least 1); `is_sticky` must not be null.
  pending_window(size_t capacity, sticky_predicate is_sticky);

  /// The most batches in flight at once.
  size_t capacity() const noexcept {
    return capacity_;
  }

  /// Batches sent and not yet reconciled.
  size_t in_flight() const noexcept {
    return flight_.size();
  }

  /// Whether another batch may be sent now.
  bool has_room() const noexcept {
    return flight_.size() < capacity_;
  }

  /// Registers a batch about to be sent, holding the ops [first_seq,
  /// last_seq] of the session. Ops with seq >= owned_from have a caller that
  /// waits for their status (a synchronous call); the others are async and
  /// their errors become deferred errors. owned_from = 0 means "none owned".
  /// Returns the batch's id. Errors: window_full when !has_room();
  /// malformed_reply when the range is empty or does not follow the previous
  /// batch's.
  [[nodiscard]] caf::expected<uint64_t> sent(uint64_t first_seq, uint64_t last_seq,
                                             uint64_t owned_from);

  /// Id of the oldest batch in flight (the next reply to reconcile); 0 when
  /// none is in flight.
  uint64_t oldest() const noexcept {
    return flight_.empty() ? 0 : flight_.front().id;
  }

  /// Reconciles the reply of batch `id`, which must be the oldest in flight:
  /// `results` are the ops it executed, in seq order. Latches a sticky error,
  /// records the first failing async op as deferred, and reports the owned
  /// ops' outcome. Errors: out_of_order when `id` is not the oldest;
  /// malformed_reply when a result lies outside the batch or seqs do not
  /// increase (the batch stays in flight in both cases).
  [[nodiscard]] caf::expected<reconciled> completed(uint64_t id,
                                                    const std::vector<op_status>& results);

  /// Forgets every batch in flight (the session is lost and no reply will
  /// come); returns how many there were.
  size_t abandon() noexcept;

  /// The deferred error, handed out once: returns it and clears it; 0 when
  /// there is none. `detail`, when not null, receives its text.
  int32_t take_deferred(std::string* detail = nullptr);

  /// The deferred error without clearing it; 0 when there is none.
  int32_t peek_deferred() const noexcept {
    return deferred_;
  }

  /// The latched sticky error; 0 while there is none.
  int32_t sticky() const noexcept {
    return sticky_;
  }

  /// Async failures that came while an earlier deferred error was still
  /// untaken (not delivered on their own).
  uint64_t superseded() const noexcept {
    return superseded_;
  }

private:
  struct batch {
    uint64_t id = 0;
    uint64_t first_seq = 0;
    uint64_t last_seq = 0;
    uint64_t owned_from = 0;
  };

  void fail_async(int32_t status, const std::string& detail);

  size_t capacity_;
  sticky_predicate is_sticky_;
  std::deque<batch> flight_;
  uint64_t next_id_ = 1;
  uint64_t last_sent_seq_ = 0;
  int32_t deferred_ = 0;
  std::string deferred_detail_;
  int32_t sticky_ = 0;
  uint64_t superseded_ = 0;
};

} // namespace gleam::consistency
