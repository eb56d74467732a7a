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

  /// The telemetry of every GPU of this node, with the cache summary.
  proto::Telemetry telemetry() const;

  /// Every open session on this node.
  std::vector<proto::SessionSummary> sessions() const;

private:
  mutable std::mutex mtx_;
  std::vector<proto::GpuTelemetry> gpus_;
  std::vector<std::vector<proto::SessionSummary>> sessions_;
  std::function<proto::CacheSummary()> cache_summary_;
};

} // namespace gleam::actors
