#pragma once

#include <functional>
#include <mutex>
#include <vector>

#include "actors/proto/control.pb.h"

namespace gleam::actors {

/// Where gpu_server actors post their current state (GPU telemetry and
/// session summaries) and the node actor reads it for heartbeats and status
/// without messaging a server that may be busy executing ops. Thread-safe.
class telemetry_board {
public:
  explicit telemetry_board(size_t gpus);

  /// Replaces the state of GPU slot `slot` (0-based position on this node).
  void post(size_t slot, proto::GpuTelemetry gpu, std::vector<proto::SessionSummary> sessions);

  /// Installs the source of the node's weight-cache summary (called, without
  /// the board's lock, by every `telemetry()`).
  void set_cache_summary(std::function<proto::CacheSummary()> f);

  /// Installs the source of the measured peer-fetch rate, bytes per second
  /// (called, without the board's lock, by every `telemetry()`).
  void set_peer_fetch_rate(std::function<double()> f);

  /// The telemetry of every GPU of this node, with the cache summary.
  proto::Telemetry telemetry() const;

  /// Every open session on this node.
  std::vector<proto::SessionSummary> sessions() const;

  /// Queues the record of a session that ended, for the next heartbeat;
  /// keeps at most `max_ended` (the oldest are dropped).
  void post_ended(proto::SessionEnded ended);

  /// The records queued since the last call, oldest first; empties the queue.
  std::vector<proto::SessionEnded> take_ended();

  /// Most ended-session records kept between two heartbeats.
  static constexpr size_t max_ended = 1024;

private:
  mutable std::mutex mtx_;
  std::vector<proto::GpuTelemetry> gpus_;
  std::vector<std::vector<proto::SessionSummary>> sessions_;
  std::vector<proto::SessionEnded> ended_;
  std::function<proto::CacheSummary()> cache_summary_;
  std::function<double()> peer_fetch_rate_;
};

} // namespace gleam::actors
