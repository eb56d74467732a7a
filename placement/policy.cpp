#include "placement/policy.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <unordered_map>

#include "placement/error.hpp"

namespace gleam::placement {

namespace {

constexpr double infinity = std::numeric_limits<double>::infinity();

constexpr uint32_t no_slot = std::numeric_limits<uint32_t>::max();

/// Least change of the GPU's progress rate Σ 1/αᵢ (server_timeline::
/// marginal_progress) for work conservation to start a waiting task on a
/// server already holding tasks: a task moved off the server it waits for
/// must add at least this share of a solo task's progress there, a margin
/// against the error of the occupancy and remaining-time estimates.
constexpr double fill_min_progress = 0.3;

/// Least change of the GPU's progress rate for the gleam policy to admit a
/// task next to others: it must raise it, beyond rounding. Past the knee a
/// task of the co-runners' mean occupancy leaves the rate unchanged (the
/// same work, shared by one more task; floating point computes a tiny value
/// of either sign): co-locating it would only stretch everyone, and the
/// later tasks' predictions, so it waits for a release instead. Admitting
/// such ties was tried: on seeds 1-12 it gained ~2 % throughput and raised
/// the held-out tasks' median prediction error from ~8 % to ~13 %.
constexpr double admit_min_progress = 1e-9;

/// Per-server state a decision keeps while it places tasks one by one: the
/// prepared aggregates, overlaid by private copies of the servers this
/// decision placed tasks on (copy on first write, so a decision that places
/// k tasks copies at most k timelines).
class cluster_state {
public:
  explicit cluster_state(const prepared_snapshot& prep) : prep_(prep) {
  }

  const server_timeline& timeline(server_index s) const {
    auto k = slot_of(s);
    return k == no_slot ? prep_.at(s).timeline : own_[k].timeline;
  }

  double gpu_load(server_index s) const {
    auto k = slot_of(s);
    return k == no_slot ? prep_.at(s).gpu_load : own_[k].gpu_load;
  }

  double gamma_gpu(server_index s) const {
    return prep_.at(s).gamma_gpu;
  }

  double gamma_net(server_index s) const {
    return prep_.at(s).gamma_net;
  }

  bool fits_now(server_index s, const task& t) const {
    return timeline(s).free_memory_bytes() >= t.profile.memory_bytes;
  }

  /// The loads crossing client `c`'s uplink, those this decision placed
  /// included; nullptr when none.
  const occupancy_timeline* uplink(client_index c) const {
    if (!prep_.snap().shared_uplinks)
      return nullptr;
    auto i = own_uplinks_.find(c);
    return i != own_uplinks_.end() ? &i->second : prep_.uplink(c);
  }

  /// Prediction of `t` on server `s` starting at `start_s`.
  prediction predict_at(server_index s, const task& t, double start_s) const {
    return predict(t, prep_.snap().servers[s], timeline(s), start_s, gamma_gpu(s),
                   gamma_net(s), prep_.peer_cached_bytes(t.weights), uplink(t.client));
  }

  prediction predict_now(server_index s, const task& t) const {
    return predict_at(s, t, 0);
  }

  /// The most bytes of `w` any server caches (peer fetch).
  uint64_t peer_bytes(weight_set_id w) const {
    return prep_.peer_cached_bytes(w);
  }

  /// Adds `t` to server `s` as predicted: running from now when
  /// p.start_s is 0, else reserved from p.start_s on.
  void commit(server_index s, const task& t, const prediction& p) {
    auto& e = own(s);
    auto occ = t.profile.occ;
    occ.network = p.net_occupancy;
    e.timeline.add(p.start_s, p.load_s, p.total_s, occ, t.profile.memory_bytes);
    if (p.start_s <= 0)
      e.gpu_load += t.profile.occ.gpu;
    if (p.uplink_occupancy > 0 && prep_.snap().shared_uplinks) {
      auto i = own_uplinks_.find(t.client);
      if (i == own_uplinks_.end()) {
        const auto* base = prep_.uplink(t.client);
        i = own_uplinks_.emplace(t.client, base ? *base : occupancy_timeline{}).first;
      }
      i->second.add(p.start_s, p.start_s + p.load_s, p.uplink_occupancy);
    }
  }

  /// Predicted completion of `t` on server `s` (seconds from now, p as
  /// predicted there) plus the time it costs the tasks already there or
  /// reserved: their compute stretched while it computes, their loads
  /// while it loads; and the loads its client has under way to any server,
  /// which share its uplink.
  double objective(server_index s, const task& t, const prediction& p) const {
    const auto& tl = timeline(s);
    auto compute_from = p.start_s + p.load_s;
    auto cost = p.completion_s()
                + tl.inflicted(resource::gpu, compute_from, p.start_s + p.total_s,
                               t.profile.occ.gpu, gamma_gpu(s))
                + tl.inflicted(resource::network, p.start_s, compute_from, p.net_occupancy,
                               gamma_net(s));
    if (const auto* up = uplink(t.client); up && p.uplink_occupancy > 0)
      cost += up->inflicted(p.start_s, compute_from, p.uplink_occupancy, uplink_gamma);
    return cost;
  }

  /// Change of server `s`'s GPU progress rate if `t`, predicted as `p`,
  /// joins it (server_timeline::marginal_progress over its compute phase).
  double marginal_progress(server_index s, const task& t, const prediction& p) const {
    return timeline(s).marginal_progress(p.start_s + p.load_s, p.start_s + p.total_s,
                                         t.profile.occ.gpu, gamma_gpu(s));
  }

private:
  struct entry {
    server_timeline timeline;
    double gpu_load;
  };

  uint32_t slot_of(server_index s) const {
    return slot_.empty() ? no_slot : slot_[s];
  }

  entry& own(server_index s) {
    if (slot_.empty())
      slot_.assign(prep_.snap().servers.size(), no_slot);
    if (slot_[s] == no_slot) {
      slot_[s] = static_cast<uint32_t>(own_.size());
      own_.push_back({prep_.at(s).timeline, prep_.at(s).gpu_load});
    }
    return own_[slot_[s]];
  }

  const prepared_snapshot& prep_;
  std::vector<uint32_t> slot_;
  std::vector<entry> own_;
  std::unordered_map<client_index, occupancy_timeline> own_uplinks_;
};

void place_now(cluster_state& cs, const task& t, server_index s, assignment& a,
               decision& d) {
  a.server = s;
  a.predicted = cs.predict_now(s, t);
  cs.commit(s, t, a.predicted);
  ++d.placed;
}

void round_robin(const snapshot& snap, const std::vector<task>& queue, cluster_state& cs,
                 decision& d) {
  auto n = static_cast<server_index>(snap.servers.size());
  auto cursor = n == 0 ? 0 : snap.round_robin_cursor % n;
  for (std::size_t i = 0; i < queue.size(); ++i) {
    for (server_index k = 0; k < n; ++k) {
      auto s = (cursor + k) % n;
      if (cs.fits_now(s, queue[i])) {
        place_now(cs, queue[i], s, d.assignments[i], d);
        cursor = (s + 1) % n;
        break;
      }
    }
  }
  d.next_round_robin_cursor = cursor;
}

template <class Better>
void pick_fitting(const snapshot& snap, const std::vector<task>& queue, cluster_state& cs,
                  decision& d, Better better) {
  auto n = static_cast<server_index>(snap.servers.size());
  for (std::size_t i = 0; i < queue.size(); ++i) {
    auto best = no_server;
    for (server_index s = 0; s < n; ++s)
      if (cs.fits_now(s, queue[i]) && (best == no_server || better(s, best)))
        best = s;
    if (best != no_server)
      place_now(cs, queue[i], best, d.assignments[i], d);
  }
}

/// Work conservation for gleam: a waiting task's predicted start assumes it
/// gets its awaited server first, but the k-th unreserved waiter of a server
/// (queue order) realistically completes about k / c service times later, c
/// being how many such tasks fit in the server's memory at once. Each server
/// that can start a waiting task now takes the one that gains most by
/// starting there instead (realistic completion minus gleam's objective
/// there), if any gains. A server holding no task takes any such waiter; a
/// server already holding tasks only one whose weights it caches (its load
/// then overlaps the others' compute and evicts nothing) and that adds at
/// least `fill_min_progress` to its GPU's progress rate.
void fill(const snapshot& snap, const std::vector<task>& queue, cluster_state& cs,
          decision& d, std::size_t reserved) {
  auto n = static_cast<server_index>(snap.servers.size());
  std::vector<std::size_t> waiting;
  for (std::size_t i = 0; i < queue.size(); ++i)
    if (d.assignments[i].awaited != no_server)
      waiting.push_back(i);
  if (waiting.empty())
    return;
  std::vector<double> realistic(queue.size(), 0);
  std::unordered_map<server_index, uint32_t> rank;
  for (auto i : waiting) {
    const auto& a = d.assignments[i];
    realistic[i] = a.predicted.completion_s();
    // The reserved waiter's prediction already holds its place in line, and
    // the others' predictions already wait behind it.
    if (i == reserved)
      continue;
    auto k = rank[a.awaited]++;
    // As many run at once as fit in its memory (an optimistic bound).
    auto fit = std::max<uint64_t>(1, cs.timeline(a.awaited).total_memory_bytes()
                                         / std::max<uint64_t>(1, queue[i].profile.memory_bytes));
    realistic[i] += static_cast<double>(k / fit) * a.predicted.total_s;
  }
  for (server_index s = 0; s < n; ++s) {
    const auto& tl = cs.timeline(s);
    auto empty = tl.free_memory_bytes() >= tl.total_memory_bytes();
    auto pick = queue.size();
    double gain = 0;
    prediction pick_p;
    for (auto i : waiting) {
      const auto& t = queue[i];
      // It must fit now and until it ends, around the reserved waiter.
      if (d.assignments[i].awaited == no_server
          || tl.earliest_fit(t.profile.memory_bytes) != 0)
        continue;
      auto bytes = t.weight_bytes != 0 ? t.weight_bytes : t.profile.weight_bytes;
      if (!empty && snap.servers[s].cached_bytes(t.weights) < bytes)
        continue;
      auto p = cs.predict_now(s, t);
      if (!empty && cs.marginal_progress(s, t, p) < fill_min_progress)
        continue;
      auto g = realistic[i] - cs.objective(s, t, p);
      if (g > gain) {
        gain = g;
        pick = i;
        pick_p = p;
      }
    }
    if (pick == queue.size())
      continue;
    auto& a = d.assignments[pick];
    a.awaited = no_server;
    a.server = s;
    a.predicted = pick_p;
    cs.commit(s, queue[pick], pick_p);
    ++d.placed;
  }
}

void gleam_two_phase(const snapshot& snap, const std::vector<task>& queue,
                     cluster_state& cs, decision& d) {
  // Phase 1: group by weight set, groups in order of their first task.
  std::unordered_map<weight_set_id, std::size_t> group_of;
  std::vector<std::vector<std::size_t>> groups;
  for (std::size_t i = 0; i < queue.size(); ++i) {
    auto [it, added] = group_of.emplace(queue[i].weights, groups.size());
    if (added)
      groups.emplace_back();
    groups[it->second].push_back(i);
  }
  // Phase 2: each task of each group where it completes first, counting
  // what it costs the tasks it shares the server with.
  auto n = static_cast<server_index>(snap.servers.size());
  auto reserved = queue.size();
  for (const auto& group : groups) {
    for (auto i : group) {
      const auto& t = queue[i];
      auto& a = d.assignments[i];
      auto best = no_server;
      auto best_done = infinity;
      prediction best_p;
      auto second = no_server;
      auto second_done = infinity;
      auto second_completion = infinity;
      auto bytes = t.weight_bytes != 0 ? t.weight_bytes : t.profile.weight_bytes;
      auto peer = cs.peer_bytes(t.weights);
      for (server_index s = 0; s < n; ++s) {
        const auto& srv = snap.servers[s];
        const auto& tl = cs.timeline(s);
        auto start = tl.earliest_fit(t.profile.memory_bytes);
        if (!(start < second_done))
          continue;
        // Lower bound without contention: skip servers that cannot win.
        auto cached = std::min(srv.cached_bytes(t.weights), bytes);
        const auto& l = t.client < srv.links.size() ? srv.links[t.client] : link{};
        auto rate = uncached_rate(srv.peer_rate_bytes_per_s, l, bytes, peer);
        auto bound = start + l.rtt_s + static_cast<double>(bytes - cached) / rate
                     + static_cast<double>(cached) / srv.cache_fill_rate_bytes_per_s
                     + t.profile.compute_s[srv.gpu_type];
        if (!(bound < second_done))
          continue;
        // The earliest start at which co-locating it does not lower the
        // GPU's progress rate over its compute phase.
        prediction p;
        bool admitted = false;
        while (start < second_done) {
          p = cs.predict_at(s, t, start);
          if (cs.marginal_progress(s, t, p) >= admit_min_progress) {
            admitted = true;
            break;
          }
          start = tl.next_release_after(start);
        }
        if (!admitted)
          continue;
        // Its own completion plus what it costs its co-runners.
        auto done = cs.objective(s, t, p);
        // Ties go to the server free now, then to the lower index.
        bool wins = done < best_done
                    || (done == best_done && start == 0 && best_p.start_s > 0);
        if (wins) {
          second = best;
          second_done = best_done;
          second_completion = best_p.completion_s();
          best = s;
          best_done = done;
          best_p = p;
        } else if (done < second_done) {
          second = s;
          second_done = done;
          second_completion = p.completion_s();
        }
      }
      a.runner_up = second;
      a.runner_up_completion_s = second_completion;
      if (best == no_server)
        continue;
      a.predicted = best_p;
      if (best_p.start_s > 0) {
        a.awaited = best;
        // The first task that waits (the oldest group's) reserves its
        // place, so that later tasks are placed around it, not ahead of it
        // for ever.
        if (reserved == queue.size()) {
          reserved = i;
          cs.commit(best, t, best_p);
        }
        continue;
      }
      a.server = best;
      cs.commit(best, t, best_p);
      ++d.placed;
    }
  }
  fill(snap, queue, cs, d, reserved);
}

std::string gb(uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f GB", static_cast<double>(bytes) / 1e9);
  return buf;
}

std::string secs(double s) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f s", s);
  return buf;
}

std::string fixed2(double x) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.2f", x);
  return buf;
}

} // namespace

std::string_view to_string(policy_kind x) {
  switch (x) {
    case policy_kind::gleam:
      return "gleam";
    case policy_kind::round_robin:
      return "round_robin";
    case policy_kind::least_loaded:
      return "least_loaded";
    case policy_kind::memory_fit:
      return "memory_fit";
  }
  return "unknown";
}

caf::expected<policy_kind> parse_policy_kind(std::string_view name) {
  for (auto k : all_policy_kinds)
    if (to_string(k) == name)
      return k;
  return make_error(error_code::invalid_argument,
                    "unknown policy '" + std::string{name}
                      + "': use gleam, round_robin, least_loaded or memory_fit");
}

const assignment* decision::find(task_id id) const {
  for (const auto& a : assignments)
    if (a.task == id)
      return &a;
  return nullptr;
}

decision place(const snapshot& snap, const std::vector<task>& queue, policy_kind kind) {
  return place(prepared_snapshot{snap}, queue, kind);
}

decision place(const prepared_snapshot& prep, const std::vector<task>& queue,
               policy_kind kind) {
  const auto& snap = prep.snap();
  decision d;
  d.assignments.resize(queue.size());
  for (std::size_t i = 0; i < queue.size(); ++i)
    d.assignments[i].task = queue[i].id;
  d.next_round_robin_cursor = snap.round_robin_cursor;
  cluster_state cs{prep};
  switch (kind) {
    case policy_kind::gleam:
      gleam_two_phase(snap, queue, cs, d);
      break;
    case policy_kind::round_robin:
      round_robin(snap, queue, cs, d);
      break;
    case policy_kind::least_loaded:
      pick_fitting(snap, queue, cs, d, [&](server_index a, server_index b) {
        auto la = cs.gpu_load(a);
        auto lb = cs.gpu_load(b);
        if (la != lb)
          return la < lb;
        return cs.timeline(a).task_count() < cs.timeline(b).task_count();
      });
      break;
    case policy_kind::memory_fit:
      pick_fitting(snap, queue, cs, d, [&](server_index a, server_index b) {
        return cs.timeline(a).free_memory_bytes() < cs.timeline(b).free_memory_bytes();
      });
      break;
  }
  return d;
}

std::string explain(const snapshot& snap, const task& t, const assignment& a) {
  auto name = [&](server_index s) {
    return s < snap.servers.size() ? snap.servers[s].id : std::string{"?"};
  };
  auto bytes = t.weight_bytes != 0 ? t.weight_bytes : t.profile.weight_bytes;
  const auto& p = a.predicted;
  auto model = [&] {
    return "load " + secs(p.load_s) + " (" + gb(p.cached_bytes) + " cached of " + gb(bytes)
           + (p.from_peer ? ", the rest from a peer's cache" : "")
           + "), compute " + secs(p.solo_compute_s) + " x alpha " + fixed2(p.alpha_gpu)
           + " (net alpha " + fixed2(p.alpha_net) + "), total " + secs(p.total_s);
  };
  auto runner_up = [&] {
    if (a.runner_up == no_server)
      return std::string{};
    return "; next best " + name(a.runner_up) + " at " + secs(a.runner_up_completion_s);
  };
  auto head = "task " + std::to_string(t.id);
  if (t.profile.samples == 0)
    head += " (unknown signature, default profile)";
  if (a.server != no_server)
    return head + " placed on " + name(a.server) + ": " + model() + runner_up();
  if (a.awaited != no_server)
    return head + " waits for " + name(a.awaited) + " (can start in " + secs(p.start_s)
           + "): then " + model() + ", done in " + secs(p.completion_s()) + runner_up();
  uint64_t largest = 0;
  for (const auto& s : snap.servers)
    largest = std::max(largest, s.free_memory_bytes);
  return head + " waits: needs " + gb(t.profile.memory_bytes)
         + " of GPU memory, the most free on any server is " + gb(largest);
}

} // namespace gleam::placement
