#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "placement/policy.hpp"
#include "placement/sim/workload.hpp"

namespace gleam::placement::sim {

/// The simulated cluster: servers, their links and cache tiers.
struct cluster_config {
  /// Number of servers of each GPU type, aligned with `sim_config::gpu_types`.
  std::vector<uint32_t> servers_per_type = {8, 12, 12};
  /// Cache capacity per server (its share of the disk tier), bytes; LRU by
  /// weight set.
  uint64_t cache_capacity_bytes = 64'000'000'000ull;
  /// Cache tier → GPU rate, bytes per second.
  double cache_fill_rate_bytes_per_s = 2e9;
  /// Even clients are on wired 1 GbE, odd ones on Wi-Fi: rate (bytes/s), RTT (s).
  double wired_rate_bytes_per_s = 125e6;
  double wired_rtt_s = 0.0005;
  double wifi_rate_bytes_per_s = 60e6;
  double wifi_rtt_s = 0.003;
  /// Rate multiplier for servers in the far rack (odd server indexes).
  double far_rack_factor = 0.8;
  /// Whether a client's loads to all servers share its uplink (its NIC or
  /// Wi-Fi), as on a real LAN: a load crossing it runs at its link's rate
  /// over max(1, Σ share crossing) of the client's loads under way (and no
  /// faster than the server's ingress allows). False gives each
  /// (client, server) pair a link of its own, the simulator before: 8
  /// clients could then push more bytes than their NICs carry.
  bool shared_uplinks = true;
  /// Peer fetch over the wired backbone ([cache] peers on every node),
  /// bytes per second; 0 = off, as gleamd without peers. A load whose whole
  /// weight set another server caches takes its uncached bytes at the faster
  /// of this and the client's link (the serving peer's egress is not
  /// modelled: fetches from one peer do not slow each other).
  double peer_rate_bytes_per_s = 0;
};

/// Everything one simulation run depends on.
struct sim_config {
  /// The trace (seed, size, rate, clients, noise).
  trace_config trace;
  /// The cluster.
  cluster_config cluster;
  /// GPU and task types of the workload.
  std::vector<gpu_type_spec> gpu_types = default_gpu_types();
  std::vector<task_type_spec> task_types = default_task_types();
  /// Queued tasks the scheduler looks at per decision (oldest first).
  std::size_t lookahead = 256;
  /// The model (γ and profiles) learns from tasks that arrive in the first
  /// `fit_fraction` of the trace and is frozen afterwards; predictions for
  /// later tasks are the held-out evaluation.
  double fit_fraction = 0.5;
  /// Completed tasks between two refits of the γ table.
  std::size_t refit_every = 16;
  /// Random co-located mixes the frozen model is validated on afterwards.
  std::size_t holdout_mixes = 300;
};

/// Planted versus fitted γ for one (GPU type, resource).
struct gamma_row_report {
  std::string gpu_type;
  resource res = resource::gpu;
  double planted = 1;
  /// The fit, when it converged (else `converged` is false and `fitted`
  /// holds the default the scheduler used).
  double fitted = 1;
  bool converged = false;
  uint64_t samples = 0;
  uint64_t active_samples = 0;
  double rms_residual = 0;
};

/// How one GPU type's servers spent the run (fractions of servers × makespan).
struct gpu_usage {
  std::string gpu_type;
  /// At least one task in its compute phase.
  double computing = 0;
  /// Tasks present but all loading weights: memory held, SMs idle.
  double loading_only = 0;
  /// No task at all.
  double idle = 0;
  /// Mean number of tasks computing together while computing.
  double mean_co_computing = 0;
  /// Tasks completed on this type, per task type (indexed like task_types).
  std::vector<std::size_t> tasks_by_type;
};

/// Outcome of one simulated run. Times in seconds.
struct sim_report {
  policy_kind policy = policy_kind::gleam;
  std::size_t tasks = 0;
  std::size_t completed = 0;
  /// completed / makespan, tasks per second.
  double throughput_tasks_per_s = 0;
  /// Arrival to completion.
  double mean_latency_s = 0;
  double p99_latency_s = 0;
  /// Arrival to start.
  double mean_queue_s = 0;
  /// First arrival to last completion.
  double makespan_s = 0;
  /// Median absolute error of the predicted service time (load + compute)
  /// for tasks arriving after the fit window, %, and their count.
  double heldout_median_abs_pct = 0;
  std::size_t heldout_samples = 0;
  /// Same on random held-out co-located mixes run on a fresh server.
  double mix_median_abs_pct = 0;
  std::size_t mix_samples = 0;
  /// Bytes that crossed client links, and the fraction of weight bytes
  /// served from a server cache instead.
  double network_bytes = 0;
  double cache_hit_fraction = 0;
  /// γ per GPU type and resource.
  std::vector<gamma_row_report> gammas;
  /// Where the GPU time went, per GPU type.
  std::vector<gpu_usage> usage;
};

/// An upper bound of the throughput any policy can reach on `cfg.trace`,
/// tasks per second (completed tasks over first arrival to last
/// completion). On a GPU of planted γ, tasks of occupancies uᵢ computing
/// together progress at 1/α each, α = max(1, γ·Σu), so they use at most
/// Σu / α ≤ 1/γ occupancy-seconds per second; a task needs u times its solo
/// time of them on the GPU type it runs on. The bound gives every task zero
/// load time, ignores memory, lets work split across types and GPUs
/// freely, and takes the shortest makespan that this allows: the largest,
/// over the tasks arriving from each arrival on (sampled at 64 points), of
/// that arrival plus the least time the cluster needs for their work (a
/// linear programme over the split of each task type across GPU types,
/// solved through its dual: any prices give a valid bound; a refined grid
/// over them gets within ~0.1 % of the optimum), and of each task's arrival
/// plus its best solo time.
double throughput_bound(const sim_config& cfg);

/// Runs `cfg.trace` through the cluster under `policy`. Deterministic: the
/// same config gives the same report, bit for bit.
sim_report simulate(const sim_config& cfg, policy_kind policy);

/// True when every field of `a` and `b` is identical.
bool same_report(const sim_report& a, const sim_report& b);

/// A text table of `reports` (one row per policy) followed by the γ table
/// of the first report.
std::string format_reports(const std::vector<sim_report>& reports);

} // namespace gleam::placement::sim
