#pragma once

#include <cstddef>
#include <set>
#include <unordered_map>
#include <vector>

#include "placement/latency_model.hpp"
#include "placement/snapshot.hpp"

namespace gleam::placement {

/// A snapshot together with the per-server aggregates every decision needs:
/// each server's timeline (occupancy steps, memory releases), the γ of its
/// GPU type per resource, and its summed GPU occupancy. Building them costs
/// O(Σ running tasks) and is done once per snapshot; when one server
/// changes, `update_server` rebuilds only that server's aggregates. A
/// decision (`place`) reads them and copies only the timelines of the
/// servers it places tasks on, so a one-task decision does no per-server
/// allocation. Plain data, safe to share between threads read-only.
class prepared_snapshot {
public:
  /// The aggregates of one server.
  struct aggregate {
    /// The server's future as the latency model sees it.
    server_timeline timeline;
    /// γ of its GPU type for the GPU and the network.
    double gamma_gpu = 1;
    double gamma_net = 1;
    /// Summed GPU occupancy of its running tasks (all phases).
    double gpu_load = 0;
  };

  prepared_snapshot() = default;

  /// Takes `snap` and builds the aggregates of every server.
  explicit prepared_snapshot(snapshot snap);

  /// The snapshot the aggregates describe.
  const snapshot& snap() const noexcept {
    return snap_;
  }

  /// The aggregates of server `s`; s < snap().servers.size().
  const aggregate& at(server_index s) const noexcept {
    return aggregates_[s];
  }

  /// Replaces server `s` (or appends it when s == snap().servers.size())
  /// and rebuilds its aggregates only.
  void update_server(server_index s, server srv);

  /// The most bytes of `w` any server caches (0 when none): what a server
  /// with peers may fetch over the backbone (see uncached_rate).
  uint64_t peer_cached_bytes(weight_set_id w) const noexcept;

  /// The loads crossing client `c`'s uplink (see client_uplinks), or
  /// nullptr when none do.
  const occupancy_timeline* uplink(client_index c) const noexcept {
    return c < uplinks_.size() ? &uplinks_[c] : nullptr;
  }

  /// The latency model's prediction of `t` on server `s` starting at
  /// `start_s`, against its aggregates, the peers' caches and the loads on
  /// `t`'s client's uplink.
  prediction predict(const task& t, server_index s, double start_s) const;

  /// Removes the last server (the caller keeps ids stable by swapping first).
  void pop_server();

  /// Replaces the γ table (laid out like gpu_types) and every server's γ.
  void set_gamma(std::vector<gamma_row> gamma);

  /// Sets the instant and the round-robin cursor of the next decision.
  void set_clock(double now_s, server_index round_robin_cursor) noexcept {
    snap_.now_s = now_s;
    snap_.round_robin_cursor = round_robin_cursor;
  }

  /// Replaces the GPU type names (call set_gamma afterwards).
  void set_gpu_types(std::vector<std::string> types) {
    snap_.gpu_types = std::move(types);
  }

private:
  aggregate make_aggregate(const server& s) const;
  void hold(const server& s);
  void release(const server& s);
  /// Rebuilds the uplink timelines of the clients hold / release touched.
  void rebuild_uplinks();

  snapshot snap_;
  std::vector<aggregate> aggregates_;
  /// Per weight set, the bytes each server caching it holds.
  std::unordered_map<weight_set_id, std::multiset<uint64_t>> held_;
  /// Per client, the loads crossing its uplink (from every server), their
  /// timeline, and which changed since the last rebuild.
  std::vector<std::vector<occupancy_timeline::interval>> uplink_loads_;
  std::vector<occupancy_timeline> uplinks_;
  std::set<client_index> uplinks_changed_;
};

} // namespace gleam::placement
