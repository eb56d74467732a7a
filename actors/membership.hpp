#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "actors/proto/control.pb.h"

namespace gleam::actors {

/// The scheduler's knowledge of the cluster: which nodes registered, when
/// each was last heard from, and their telemetry. Pure logic, no actors:
/// the scheduler actor feeds it events with explicit timestamps, so tests
/// drive it with a fake clock. Not thread-safe (one actor owns it).
class membership {
public:
  using clock = std::chrono::steady_clock;

  explicit membership(std::chrono::milliseconds down_after);

  /// Why registration `reg` may not take its node id now, "" when it may:
  /// a node that is up (heard from within down_after) keeps its id against
  /// a registration naming another address; with `no_replays`, a
  /// registration older than the one known (a replay) is refused too.
  std::string refuse_register(const proto::NodeRegister& reg, clock::time_point now,
                              bool no_replays) const;

  /// A node (re)joins. A restart (new start_time_ns) replaces the old entry.
  void on_register(const proto::NodeRegister& reg, clock::time_point now);

  /// Whether heartbeat `hb` is newer than every heartbeat accepted from its
  /// node since it registered (a replayed one is not); false when unknown.
  bool fresh_heartbeat(const proto::Heartbeat& hb) const;

  /// Records a heartbeat; false if the node is unknown (it must register).
  bool on_heartbeat(const proto::Heartbeat& hb, clock::time_point now);

  /// Drains (or, with state.draining false, undrains) node `node_id`:
  /// placement skips a draining node. The state outlives the node's
  /// restarts (a drained host is restarted for maintenance) until undrained.
  /// False when the node never registered.
  bool set_drain(const std::string& node_id, const proto::DrainState& state);

  /// The maintenance state of `node_id` (not draining when unknown).
  proto::DrainState drain_of(const std::string& node_id) const;

  /// Records a measured round-trip time of the node's control link.
  void on_rtt(const std::string& node_id, std::chrono::microseconds rtt);

  /// Marks nodes silent for longer than down_after as down; returns the ids
  /// that went down in this call.
  std::vector<std::string> sweep(clock::time_point now);

  /// The cluster as the console shows it.
  proto::ClusterView view(clock::time_point now) const;

  /// One node of view(); false when `node_id` never registered.
  bool status_of(const std::string& node_id, clock::time_point now,
                 proto::NodeStatus& out) const;

  /// Whether `node_id` registered.
  bool knows(const std::string& node_id) const {
    return nodes_.count(node_id) != 0;
  }

  /// Ids of every registered node.
  std::vector<std::string> node_ids() const;

  /// Picks the up GPU of a node not draining with the fewest sessions
  /// (ties: most free memory, then node id); a reply with ok=false says why
  /// nothing fits.
  proto::PlacementReply place(const proto::PlacementRequest& req) const;

  /// Number of nodes that are up.
  size_t up_count() const;

private:
  struct node_state {
    proto::NodeRegister reg;
    proto::Telemetry telemetry;
    clock::time_point last_seen;
    double rtt_ms = 0;
    bool up = true;
    proto::DrainState drain;
    uint64_t last_seq = 0; // of the newest heartbeat since it registered
  };

  std::chrono::milliseconds down_after_;
  std::map<std::string, node_state> nodes_;
};

} // namespace gleam::actors
