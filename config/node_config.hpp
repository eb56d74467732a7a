#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <caf/expected.hpp>

#include "config/tls_config.hpp"

namespace gleam::config {

/// Configuration of one gleamd node, from a config file such as
/// deploy/examples/all-in-one.conf. Durations in milliseconds, sizes in bytes.
struct node_config {
  std::string source;            // path of the file it came from
  std::string node_id;           // [node] id: unique in the cluster
  bool scheduler = false;        // [node] roles contains "scheduler" (or "all")
  bool gpu_server = false;       // ... "gpu_server"
  bool cache_shard = false;      // ... "cache_shard"
  std::string bind_host;         // [node] bind: "" = every interface
  uint16_t port = 4750;          // [node] port: the node's one CAF port
  /// [node] metrics-port: Prometheus text on HTTP GET /metrics (on the
  /// bind address); 0 = off.
  uint16_t metrics_port = 0;
  std::string advertise_host;    // [node] advertise: how others reach it
  std::string scheduler_host;    // [node] scheduler: HOST:PORT, unless own role
  uint16_t scheduler_port = 0;
  std::chrono::milliseconds heartbeat_interval{500}; // [node] heartbeat-interval
  std::chrono::milliseconds down_after{2000};        // [node] down-after
  uint32_t threads = 2;          // [node] threads: CAF scheduler workers
  /// [node] poll: how long the network thread and each GPU server poll for
  /// the next message after one, instead of sleeping (actors/multiplexer_loop.hpp);
  /// 0 = they sleep at once, as CAF's threads do.
  std::chrono::microseconds poll{2000};
  std::vector<int> devices;      // [gpu_server] devices: empty = all
  std::chrono::milliseconds session_grace{30000};    // [gpu_server] session-grace
  /// [gpu_server] isolation: how the sessions of a GPU share it.
  ///   process: each session runs in a worker process of its own (its own
  ///            CUDA context, address space, threads and crash domain;
  ///            actors/session_supervisor.hpp);
  ///   shared:  every session of a GPU in gleamd's one context and thread
  ///            (kernels of different sessions may run concurrently).
  enum class isolation_mode { process, shared };
  isolation_mode isolation = isolation_mode::shared;
  /// [gpu_server] spare-workers: worker processes kept started (context
  /// made) per GPU under isolation = process, so that opening a session
  /// waits for none.
  uint32_t spare_workers = 1;
  /// [gpu_server] max-op-seconds: under isolation = process, a session one
  /// of whose ops (a kernel, a synchronize, a host function) runs longer is
  /// ended with its worker; 0 = no limit.
  std::chrono::milliseconds max_op{0};
  /// [gpu_server] session-memory: device memory one session may hold
  /// (cudaMalloc, pitched, VMM and stream-ordered allocations); past it an
  /// allocation fails with cudaErrorMemoryAllocation naming the quota.
  /// 0 = no quota.
  uint64_t session_memory_bytes = 0;
  /// [gpu_server] tenant-memory = ["NAME:SIZE", ...]: device memory the
  /// sessions of tenant NAME may hold together on one GPU; and
  /// guaranteed-memory = ["NAME:SIZE", ...]: device memory of each GPU that
  /// other tenants may not take while NAME does not use it. NAME is a tenant
  /// of [node] tenants. (tenant, bytes) pairs.
  std::vector<std::pair<std::string, uint64_t>> tenant_memory;
  std::vector<std::pair<std::string, uint64_t>> guaranteed_memory;
  /// Set by gleamd only in a worker process (never from the file): the
  /// worker's key (OpenSession.auth_token of the supervisor's opens) and
  /// the first session id it hands out.
  struct worker_settings {
    bool active = false;
    std::string key;
    uint64_t first_session = 1;
    /// The inherited descriptor of the GPU's tenants' memory table
    /// (executor/memory_ledger.hpp); -1: none.
    int ledger_fd = -1;
  } worker;
  std::string cache_dir;         // [cache] dir
  uint64_t cache_disk_bytes = 64ull << 30;  // [cache] disk-capacity
  uint64_t cache_host_bytes = 8ull << 30;   // [cache] host-capacity
  uint64_t cache_gpu_bytes = 0;             // [cache] gpu-capacity
  /// Peer nodes whose cache shards a miss asks before the client, as
  /// (host, node port); [cache] peers = ["host:port", ...].
  std::vector<std::pair<std::string, uint16_t>> cache_peers;
  std::string log_level = "info";           // [node] log-level
  /// [node] max-message: the most payload one CAF message from a peer may
  /// declare; a larger one is refused before anything is allocated for it
  /// and its connection closed (actors/basp_guard.hpp). At least 16 MiB
  /// (a cache chunk).
  uint64_t max_message_bytes = uint64_t{256} << 20;
  /// [node] auth-token: clients must present it in OpenSession; "" = none.
  std::string auth_token;
  /// [node] tenants = ["NAME:TOKEN", ...]: a client presenting TOKEN is
  /// tenant NAME. With tenants, a session (gpu_server role) and a placement
  /// request (scheduler role) need one of their tokens (or the auth-token,
  /// for the unnamed tenant ""), and the weight cache shares a chunk across
  /// tenants only under a SHA-256 key. (tenant, token) pairs.
  std::vector<std::pair<std::string, std::string>> tenants;
  /// [node] admin-token: the console's drain/undrain, cache evict and cache
  /// ls must present it (gleam-console --token / GLEAM_ADMIN_TOKEN); "" =
  /// not required. Never one of the client tokens above.
  std::string admin_token;
  /// [node] cluster-secret: shared by every node of the cluster (at least 16
  /// characters); registrations, heartbeats and peer cache reads prove it,
  /// and a scheduler with one refuses nodes without; "" = not required.
  std::string cluster_secret;
  /// [tls]: certificates for every connection of this node.
  tls_config tls;
};

/// Parses and validates a node config; errors name the file, key and problem.
[[nodiscard]] caf::expected<node_config> parse_node_config(const std::string& text,
                                                           const std::string& origin);

/// Reads and validates the node config file at `path`.
[[nodiscard]] caf::expected<node_config> load_node_config(const std::string& path);

} // namespace gleam::config
