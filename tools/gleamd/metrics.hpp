#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>

#include "actors/proto/control.pb.h"
#include "actors/proto/ops.pb.h"

/// gleamd's metrics in Prometheus text format (version 0.0.4), served on
/// [node] metrics-port to HTTP GET /metrics.
namespace gleam::tools::metrics {

/// What one scrape reports; null members are roles the node lacks.
struct snapshot {
  proto::NodeStatus node;                       // GPUs, their telemetry, sessions
  const proto::CacheStatsReply* cache = nullptr;
  const proto::PlacementQueue* queue = nullptr; // scheduler role
  const proto::GammaTable* gamma = nullptr;     // scheduler role
};

/// The Prometheus text of `s`: gleam_node_*, gleam_gpu_*, gleam_session_*,
/// gleam_cache_*, gleam_scheduler_* families, labelled by node (and GPU,
/// session, tier, GPU type). Thread-safe.
std::string render(const snapshot& s);

/// A minimal HTTP/1.0 server on one thread: GET /metrics answers
/// `scrape()`'s text, anything else 404; one connection at a time, each
/// closed after its answer, a request that does not arrive within 2 s
/// dropped. Not copyable; stop() (or the destructor) joins the thread.
class server {
public:
  server() = default;
  server(const server&) = delete;
  server& operator=(const server&) = delete;
  ~server();

  /// Listens on `host` ("" = every interface) and `port`; an empty
  /// string, or why it cannot listen.
  std::string start(const std::string& host, uint16_t port, std::function<std::string()> scrape);

  /// Closes the listener and joins the thread (idempotent).
  void stop();

private:
  void serve();

  int listener_ = -1;
  std::atomic<bool> stopping_{false};
  std::function<std::string()> scrape_;
  std::thread thread_;
};

} // namespace gleam::tools::metrics
