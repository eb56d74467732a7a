#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <caf/expected.hpp>

#include "placement/latency_model.hpp"
#include "placement/prepared_snapshot.hpp"
#include "placement/snapshot.hpp"

namespace gleam::placement {

/// The placement policies; `gleam` is the contention- and cache-aware one,
/// the others are the baselines it is measured against.
enum class policy_kind : uint8_t {
  /// Two phases: group tasks by weight set (cache affinity), then place each
  /// task of each group where its predicted completion (start delay + load +
  /// compute, contention included) plus the time it costs its co-runners
  /// (their compute and loads stretched by it) is least, at the earliest
  /// start where co-locating it does not lower the GPU's progress rate;
  /// a task whose best server is not free yet waits for it, and the first
  /// such task reserves its place there. Then work conservation: each server
  /// that can start a waiter now takes the one that gains most by starting
  /// there, judging each waiter's real completion by its place in its
  /// server's line; a server already holding tasks only takes waiters whose
  /// weights it caches and that add throughput to it.
  gleam,
  /// Next server after the cursor on which the task fits now.
  round_robin,
  /// The server with the least summed GPU occupancy on which the task fits.
  least_loaded,
  /// Best fit: the server with the least free memory that still fits.
  memory_fit,
};

/// "gleam", "round_robin", "least_loaded" or "memory_fit".
std::string_view to_string(policy_kind x);

/// Parses the names of to_string; invalid_argument otherwise.
[[nodiscard]] caf::expected<policy_kind> parse_policy_kind(std::string_view name);

/// All policies, gleam first.
inline constexpr policy_kind all_policy_kinds[] = {
  policy_kind::gleam, policy_kind::round_robin, policy_kind::least_loaded,
  policy_kind::memory_fit};

/// The decision for one queued task.
struct assignment {
  /// The task.
  task_id task = 0;
  /// Where it runs now; `no_server` = it waits in the queue.
  server_index server = no_server;
  /// For a waiting task under gleam: the server it waits for (else no_server).
  server_index awaited = no_server;
  /// The latency model's prediction on `server` (or on `awaited`).
  prediction predicted;
  /// The second-best server under gleam (by its objective, completion plus
  /// the cost to co-runners) and its predicted completion there, s.
  server_index runner_up = no_server;
  double runner_up_completion_s = 0;
};

/// The outcome of one placement round.
struct decision {
  /// One entry per queued task, in queue order.
  std::vector<assignment> assignments;
  /// Cursor for the next round-robin decision (copy into the next snapshot).
  server_index next_round_robin_cursor = 0;
  /// Tasks placed now (server != no_server).
  std::size_t placed = 0;

  /// The entry of task `id`, or nullptr; O(n).
  const assignment* find(task_id id) const;
};

/// Decides where each task of `queue` runs, in queue order, each seeing the
/// ones placed before it. Pure: same inputs, same decision. Never places a
/// task on a server without enough free GPU memory for its profile.
/// Preconditions: validate(snap) and validate(snap, t) for each t pass.
/// Cost: O(|queue| · |servers|) cheap evaluations, plus building the
/// per-server aggregates (O(Σ running tasks)); keep a prepared_snapshot and
/// use the overload below to pay that once, not per decision.
decision place(const snapshot& snap, const std::vector<task>& queue, policy_kind kind);

/// Same over prepared aggregates: copies only the timelines of servers it
/// places (or reserves) tasks on, so one decision for one task over 1000 servers costs a
/// few tens of microseconds.
decision place(const prepared_snapshot& prep, const std::vector<task>& queue,
               policy_kind kind);

/// One line for the console on why `a` (the entry of `t`) came out as it did,
/// e.g. "task 7 placed on gpu-3: load 8.0 s (16.0 GB cached of 16.0 GB),
/// compute 21.0 s x alpha 1.30 (net alpha 1.00), total 29.0 s; next best
/// gpu-5 at 140.2 s".
std::string explain(const snapshot& snap, const task& t, const assignment& a);

} // namespace gleam::placement
