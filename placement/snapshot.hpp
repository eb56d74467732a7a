#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <caf/error.hpp>

#include "placement/task_profile.hpp"

namespace gleam::placement {

/// Identifies a set of model weights (all chunks a task uploads together).
using weight_set_id = uint64_t;

/// Identifies a task for the lifetime of the scheduler.
using task_id = uint64_t;

/// Index into `snapshot::gpu_types`.
using gpu_type_index = uint16_t;

/// Index into each server's `links` (one entry per known client).
using client_index = uint32_t;

/// No client (a load that does not cross a client's uplink, or unknown).
inline constexpr client_index no_client = std::numeric_limits<client_index>::max();

/// Index into `snapshot::servers`; `no_server` means "wait".
using server_index = uint32_t;

/// The "not placed yet" server index.
inline constexpr server_index no_server = std::numeric_limits<server_index>::max();

/// The measured path between one client and one server.
struct link {
  /// Sustained transfer rate, bytes per second.
  double rate_bytes_per_s = 125e6;
  /// Round-trip time, seconds.
  double rtt_s = 0.001;
};

/// A task already running on a server.
struct running_task {
  /// Scheduler-wide task id.
  task_id id = 0;
  /// The weights it uses.
  weight_set_id weights = 0;
  /// GPU memory it holds until it finishes, bytes.
  uint64_t memory_bytes = 0;
  /// Its occupancy of each resource while it uses it; of the network, its
  /// load's (load_net_occupancy: 0 when the load comes from the server's
  /// own cache).
  occupancy occ;
  /// Estimated seconds from now until its load phase ends (0 once computing).
  double load_remaining_s = 0;
  /// The client whose uplink its load's uncached bytes cross (a client's
  /// loads to every server share its NIC), and its occupancy of that uplink:
  /// the share of its weights crossing it, 0..1. no_client when its load is
  /// done, comes from caches, or the client is unknown.
  client_index uplink_client = no_client;
  double uplink_occupancy = 0;
  /// Estimated wall seconds from now until it finishes, contention
  /// included (load_remaining_s + remaining_compute_s(...), see
  /// latency_model.hpp); >= load_remaining_s.
  double remaining_s = 0;
};

/// How much of one weight set a server already caches.
struct cached_weights {
  /// The weight set.
  weight_set_id weights = 0;
  /// Bytes of it present in the server's cache tiers.
  uint64_t bytes = 0;
};

/// One GPU (one gpu_server actor) as the scheduler sees it.
struct server {
  /// Display name, e.g. "gpu-3" or "node-a/0".
  std::string id;
  /// Its GPU type, an index into `snapshot::gpu_types`.
  gpu_type_index gpu_type = 0;
  /// Device memory, bytes.
  uint64_t total_memory_bytes = 0;
  /// Device memory not held by running tasks, bytes.
  uint64_t free_memory_bytes = 0;
  /// Rate at which cached chunks reach the GPU (slowest tier holding
  /// them, e.g. disk), bytes per second.
  double cache_fill_rate_bytes_per_s = 2e9;
  /// Tasks running now.
  std::vector<running_task> running;
  /// Cached weight sets, sorted by `weights` ascending, unique.
  std::vector<cached_weights> cached;
  /// The link to each client, indexed by `client_index`.
  std::vector<link> links;
  /// Rate at which it fetches chunks it misses from the caches of peer
  /// servers over the wired backbone ([cache] peers), bytes per second; 0
  /// when it has no peers. A load whose whole weight set some server caches
  /// takes its uncached bytes at the faster of this and the client's link.
  double peer_rate_bytes_per_s = 0;

  /// Bytes of `w` this server caches (0 when none); O(log n).
  uint64_t cached_bytes(weight_set_id w) const noexcept;
};

/// Contention factor γ per GPU type and resource, as fitted (see gamma_fit).
using gamma_row = std::array<double, resource_count>;

/// A task waiting for placement.
struct task {
  /// Scheduler-wide task id.
  task_id id = 0;
  /// Program + arguments hash (or the user's GLEAM_TASK label).
  std::string signature;
  /// The client that submits it (index into each server's `links`).
  client_index client = 0;
  /// Its weights.
  weight_set_id weights = 0;
  /// Size of its weights, bytes (announced by the client).
  uint64_t weight_bytes = 0;
  /// What the scheduler knows about this kind of task, with `compute_s`
  /// laid out like `snapshot::gpu_types` (profile_store::resolve).
  task_profile profile;
};

/// An immutable view of the cluster at one instant; policies are pure
/// functions of it. Plain data, safe to share between threads read-only.
struct snapshot {
  /// The instant it describes, seconds on the scheduler's clock.
  double now_s = 0;
  /// GPU type names, e.g. {"H200", "A100-80G"}.
  std::vector<std::string> gpu_types;
  /// The servers.
  std::vector<server> servers;
  /// γ per GPU type (indexed like gpu_types) and resource.
  std::vector<gamma_row> gamma;
  /// Where round-robin starts looking (state carried between decisions).
  server_index round_robin_cursor = 0;
  /// Whether a client's loads to different servers share its uplink (true
  /// on a LAN: one NIC or Wi-Fi link per client); false models a link of
  /// its own per (client, server) pair (the simulator's per-server mode).
  bool shared_uplinks = true;

  /// γ of `type` for `r`; 1 when the table has no row for it.
  double gamma_of(gpu_type_index type, resource r) const noexcept {
    return type < gamma.size() ? gamma[type][static_cast<std::size_t>(r)] : 1.0;
  }
};

/// Checks the invariants policies rely on; a non-empty error says which
/// server or field is wrong.
[[nodiscard]] caf::error validate(const snapshot& snap);

/// Checks that `t` only refers to clients and GPU types that `snap` has.
[[nodiscard]] caf::error validate(const snapshot& snap, const task& t);

} // namespace gleam::placement
