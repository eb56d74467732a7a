#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "placement/snapshot.hpp"

namespace gleam::placement {

/// Predicted latency of one task on one server. All times in seconds.
struct prediction {
  /// Delay from the snapshot instant until the task can start (0 = now;
  /// otherwise the wait for enough free GPU memory).
  double start_s = 0;
  /// Wall time of the load phase (uncached bytes over the link, cached bytes
  /// from the cache tier, one RTT), contention included.
  double load_s = 0;
  /// Wall time of the compute phase, contention included.
  double compute_s = 0;
  /// load_s + compute_s: service time once started.
  double total_s = 0;
  /// Mean network contention factor over the load phase (>= 1).
  double alpha_net = 1;
  /// Mean GPU contention factor over the compute phase (>= 1).
  double alpha_gpu = 1;
  /// Uncontended load and compute times the alphas stretch.
  double solo_load_s = 0;
  double solo_compute_s = 0;
  /// Bytes of the task's weights already cached on the server.
  uint64_t cached_bytes = 0;
  /// Its occupancy of the server's network ingress while it loads:
  /// load_net_occupancy(profile, cached share), 0 when every byte comes from
  /// the server's own cache (such a load is not stretched by other loads).
  double net_occupancy = 0;
  /// Whether its uncached bytes come from a peer's cache (uncached_rate).
  bool from_peer = false;
  /// Its occupancy of its client's uplink while it loads: the share of its
  /// weights crossing it (0 when every byte comes from caches).
  double uplink_occupancy = 0;

  /// start_s + total_s: completion, seconds after the snapshot instant.
  double completion_s() const noexcept {
    return start_s + total_s;
  }
};

/// Contention factor α of every task using a resource at an instant when the
/// occupancies of all the tasks using it, each task's own included, sum to
/// `sum_u`: max(1, γ·Σu). The one definition of α that the latency model,
/// the policies, the γ fit's callers and the simulator's truth share. Below
/// the knee Σu = 1/γ tasks share the resource at no cost, so a task alone
/// with u < 1/γ runs at its solo time; above it every task on the resource
/// is stretched alike. γ = 1 is ideal time-sharing (N saturating copies take
/// N times as long), γ > 1 interference beyond it.
inline double contention(double gamma, double sum_u) noexcept {
  return std::max(1.0, gamma * sum_u);
}

/// Occupancy of the server's network ingress by a load of `weight_bytes` of
/// which `cached_bytes` come from the server's own cache: the profile's
/// network occupancy `u_net` (a load's, all bytes crossing the network)
/// times the share that crosses it. Cached chunks go from the cache tiers
/// (disk, host memory) to the GPU without touching the NIC, so a fully
/// cached load neither slows the loads crossing the network nor is stretched
/// by α_net (a cold stream does slow it, 14-44 % on an H100, through the
/// server's CPU and host path, which the model leaves out: placement/README).
inline double load_net_occupancy(double u_net, uint64_t weight_bytes,
                                 uint64_t cached_bytes) noexcept {
  if (weight_bytes == 0)
    return u_net;
  auto cached = cached_bytes < weight_bytes ? cached_bytes : weight_bytes;
  return u_net * static_cast<double>(weight_bytes - cached) / static_cast<double>(weight_bytes);
}

/// Smallest share of its solo compute time a running task is assumed to
/// have left: one that overran its profile is not about to finish at once.
inline constexpr double min_remaining_compute_fraction = 0.05;

/// Wall seconds a running task needs to finish its compute phase: the solo
/// seconds it has left (`solo_s` − `done_solo_s`, at least
/// `min_remaining_compute_fraction` of `solo_s`) stretched by the contention
/// `alpha` it runs at, contention(γ, Σu) with Σu summing every task on the
/// GPU, its own included: a task alone above the knee (γ·u > 1) is
/// stretched too. The remaining time of a `running_task`.
inline double remaining_compute_s(double solo_s, double done_solo_s, double alpha) noexcept {
  return std::max(solo_s - done_solo_s, min_remaining_compute_fraction * solo_s)
         * std::max(1.0, alpha);
}

/// Solo compute seconds a running task has done, from its progress counter:
/// `launches_done` of the `launches_per_run` its profile expects, times its
/// solo time `solo_s`; negative when either count is unknown (0), so the
/// caller falls back to elapsed time. Counting work done, not time spent,
/// it holds whatever contention the task met so far.
inline double done_solo_from_progress(double solo_s, uint64_t launches_done,
                                      double launches_per_run) noexcept {
  if (launches_done == 0 || !(launches_per_run > 0))
    return -1;
  auto f = static_cast<double>(launches_done) / launches_per_run;
  return (f < 1 ? f : 1) * solo_s;
}

/// Summed occupancy of one shared resource as a step function of time (0 =
/// the snapshot instant), built from the intervals of the tasks using it:
/// what α = contention(γ, Σu) is read from. One per resource of a server
/// (server_timeline), and one per client uplink (a client's loads to every
/// server share its NIC). Cheap to copy.
class occupancy_timeline {
public:
  /// A task using the resource over [begin_s, end_s) with occupancy u.
  struct interval {
    double begin_s;
    double end_s;
    double u;
  };

  /// Adds a task using the resource over [begin_s, end_s) (nothing when the
  /// interval is empty).
  void add(double begin_s, double end_s, double u);

  /// Replaces every interval at once (one rebuild).
  void assign(std::vector<interval> intervals);

  /// Wall seconds a task of occupancy `u` needs to do `work_s` solo-seconds
  /// of work starting at `start_s`: at each instant
  /// α = contention(γ, u + Σu of the intervals).
  double stretch(double start_s, double work_s, double u, double gamma) const;

  /// What a task of occupancy `u` using the resource over [begin_s, end_s)
  /// costs the tasks already on it: Σ over them and the time they overlap
  /// it of (α_with / α_without − 1), α_without = contention(γ, Σu),
  /// α_with = contention(γ, Σu + u). 0 on an idle resource.
  double inflicted(double begin_s, double end_s, double u, double gamma) const;

  /// Σu at time 0.
  double sum_now() const;

  /// The intervals, in the order added.
  const std::vector<interval>& intervals() const noexcept {
    return intervals_;
  }

private:
  struct step {
    double end_s;
    double sum_u;
    uint32_t count;
  };

  void rebuild();

  std::vector<interval> intervals_;
  std::vector<step> steps_;
};

/// γ of a client's uplink: its loads to all servers share it fairly (TCP
/// streams from one NIC), so N full loads each take N times as long.
inline constexpr double uplink_gamma = 1.0;

/// Whether running task `r` of server `s` is loading over its client's
/// uplink (`running_task::uplink_client`, a client `s` has a link to), and
/// if so the interval it does: from now to its load's end.
bool uplink_load(const server& s, const running_task& r, occupancy_timeline::interval& out);

/// The loads crossing each client's uplink, from the running tasks of
/// every server (uplink_load); index = client.
std::vector<occupancy_timeline> client_uplinks(const snapshot& snap);

/// The future of one server as the latency model sees it: a step function of
/// the summed occupancy per resource and the memory releases, built from its
/// running tasks' remaining-time estimates. Tasks placed during a decision are
/// added to it, so later predictions in the same decision see them.
/// Cheap to copy; not thread-safe while being modified.
class server_timeline {
public:
  /// Builds the timeline of `s` at the snapshot instant (time 0).
  explicit server_timeline(const server& s);

  /// Adds a task that starts its load phase at `start_s`, loads until
  /// `start_s + load_s`, then computes until `start_s + total_s`. With
  /// `start_s` > 0 it is a reservation: its memory is taken at `start_s`.
  /// A load of network occupancy 0 (from the server's own cache) is not on
  /// the ingress timeline.
  void add(double start_s, double load_s, double total_s, occupancy occ,
           uint64_t memory_bytes);

  /// Wall seconds a task of occupancy `u` needs to do `work_s` solo-seconds
  /// of work on resource `r` starting at `start_s`: at each instant
  /// α = contention(γ, u + Σu of the tasks on the timeline).
  double stretch(resource r, double start_s, double work_s, double u, double gamma) const;

  /// How much a task of GPU occupancy `u` that computes over
  /// [begin_s, end_s) changes the GPU's total progress rate Σ 1/αᵢ (solo
  /// seconds of work done per second, its own included), at the worst
  /// instant: at begin_s and at each later instant another task starts
  /// computing. With n tasks of summed occupancy Σu computing, that is
  /// (n + 1) / contention(γ, Σu + u) − n / contention(γ, Σu).
  /// 1 / contention(γ, u) on an idle GPU (1 below the knee); 0 when the
  /// GPU is past the knee and `u` equals its tasks' mean occupancy (the
  /// same work, shared by more tasks); below 0 when the task costs its
  /// co-runners more progress than it adds, i.e. co-locating it lowers
  /// throughput.
  double marginal_progress(double begin_s, double end_s, double u, double gamma) const;

  /// What a task of occupancy `u` using resource `r` over [begin_s, end_s)
  /// costs the tasks already on the timeline: the wall seconds by which it
  /// stretches their use of `r`, Σ over co-runners and the time they
  /// overlap it of (α_with / α_without − 1), where α_without =
  /// contention(γ, Σu) and α_with = contention(γ, Σu + u) for the Σu of
  /// the timeline at that instant. 0 on an idle resource.
  double inflicted(resource r, double begin_s, double end_s, double u, double gamma) const;

  /// The first instant after `t_s` at which a task finishes (and releases
  /// its memory); infinity if none.
  double next_release_after(double t_s) const;

  /// Seconds from now until `bytes` of GPU memory are free from then on,
  /// counting the memory tasks release when they finish and the memory
  /// reserved tasks (added with a start after 0) take when they start;
  /// infinity if never.
  double earliest_fit(uint64_t bytes) const;

  /// Summed occupancy of `r` at time 0, over running and added tasks.
  double occupancy_now(resource r) const;

  /// Free GPU memory now, bytes.
  uint64_t free_memory_bytes() const noexcept {
    return free_now_;
  }

  /// Total GPU memory, bytes.
  uint64_t total_memory_bytes() const noexcept {
    return total_;
  }

  /// Running plus added tasks.
  std::size_t task_count() const noexcept {
    return count_;
  }

private:
  /// Σ 1/α change at instant `at_s` (see marginal_progress).
  double marginal_progress_at(double at_s, double u, double gamma) const;

  const occupancy_timeline& of(resource r) const noexcept {
    return resources_[static_cast<std::size_t>(r)];
  }

  std::array<occupancy_timeline, resource_count> resources_;
  /// Memory changes after time 0, sorted by time: +bytes when a task
  /// finishes, -bytes when a reserved task starts.
  std::vector<std::pair<double, int64_t>> memory_;
  uint64_t free_now_ = 0;
  uint64_t total_ = 0;
  std::size_t count_ = 0;
};

/// Predicts `t` on `snap.servers[s]` starting as soon as its memory fits
/// (the model of DESIGN.md "Scheduler"): load time = RTT + uncached bytes
/// over the client's link + cached bytes at the cache fill rate; compute
/// time = the profile's solo time on that GPU type; each stretched by
/// α = contention(γ, Σu) where Σu sums the task's own occupancy and that of
/// the tasks on the server at each instant, with γ from `snap.gamma`.
/// Preconditions: validate(snap) and
/// validate(snap, t) pass, s < snap.servers.size().
prediction predict(const task& t, server_index s, const snapshot& snap);

/// Rate at which a load's uncached bytes reach a server from the client of
/// link `l`: the faster of the link and the server's peer fetch
/// (`peer_rate_bytes_per_s`, server::peer_rate_bytes_per_s) when some server
/// caches `peer_bytes` >= the task's `weight_bytes` of its set.
double uncached_rate(double peer_rate_bytes_per_s, const link& l, uint64_t weight_bytes,
                     uint64_t peer_bytes) noexcept;

/// The most bytes of `w` any server of `snap` caches (0 when none).
uint64_t peer_cached_bytes(const snapshot& snap, weight_set_id w) noexcept;

/// Same as above against a timeline the caller keeps (used by policies),
/// with the start delay given. `gamma_gpu` / `gamma_net` are the server's;
/// `peer_bytes` is the most bytes of the task's weight set any server caches
/// (peer fetch, see uncached_rate; 0 = none); `uplink`, when given, the
/// loads already crossing the task's client's uplink: a load from the
/// client takes the longer of its time through the server's ingress and
/// through that shared uplink (α = contention(uplink_gamma, Σ shares)).
prediction predict(const task& t, const server& s, const server_timeline& tl,
                   double start_s, double gamma_gpu, double gamma_net,
                   uint64_t peer_bytes = 0, const occupancy_timeline* uplink = nullptr);

/// Result of fitting γ for one (GPU type, resource).
struct gamma_estimate {
  /// The fitted γ.
  double gamma = 1;
  /// Observations folded in.
  uint64_t samples = 0;
  /// Observations on the contended side of the knee (γ·Σu > 1).
  uint64_t active_samples = 0;
  /// Root mean square of slowdown − contention(γ, Σu) over all samples.
  double rms_residual = 0;
};

/// Online least-squares fit of slowdown = contention(γ, Σu) = max(1, γ·Σu)
/// from observations (Σu, observed slowdown), Σu being the summed occupancy
/// of the resource, the observed task's own included. Keeps sufficient statistics in `bins` bins of
/// Σu over [0, max_sum_u] (values above fall in the last bin), so memory is
/// constant and a fit costs O(bins · log bins): for each candidate knee the
/// closed-form γ of the contended bins is computed and the candidate with the
/// least total squared error of the full piecewise model wins.
/// Not thread-safe.
class gamma_fit {
public:
  /// Observations needed on the contended side before estimate() answers.
  static constexpr uint64_t min_active_samples = 8;
  /// Fitted contention an observation needs to count towards
  /// `min_active_samples`: samples at α barely above 1 cannot tell γ from
  /// noise (all of them at one Σu, slowdown 1 ± 5 %, are fitted best by a
  /// knee just below that Σu, i.e. any γ up to 1 / Σu).
  static constexpr double min_identifying_alpha = 1.05;

  explicit gamma_fit(double max_sum_u = 8.0, std::size_t bins = 256);

  /// Folds in one observation: summed occupancy `sum_u` of the resource
  /// during the phase, the observed task's own plus its co-runners'
  /// (time-averaged over the phase), and the observed slowdown (phase wall
  /// time / solo time).
  void add(double sum_u, double slowdown);

  /// The current fit, or not_enough_samples while fewer than
  /// `min_active_samples` observations show contention.
  [[nodiscard]] caf::expected<gamma_estimate> estimate() const;

  /// Observations folded in so far.
  uint64_t samples() const noexcept {
    return n_;
  }

private:
  struct bin {
    double n = 0;
    double sx = 0;
    double sxx = 0;
    double sy = 0;
    double syy = 0;
    double sxy = 0;
  };

  double max_sum_u_;
  std::vector<bin> bins_;
  uint64_t n_ = 0;
};

/// One gamma_fit per (GPU type name, resource): what the scheduler feeds from
/// finished runs and reads into `snapshot::gamma`. Not thread-safe.
class contention_calibration {
public:
  /// γ used for a (type, resource) whose fit has not converged yet:
  /// slightly worse than ideal time-sharing (γ = 1), the conservative side
  /// of what one H200 showed (1, 2 and 3 saturating copies fit γ ≈ 1.06,
  /// deploy/contention-check.sh). A task alone with occupancy ≤ 0.9 still
  /// runs at its solo time.
  static constexpr double default_gamma = 1.1;

  /// Folds one observation of `gpu_type` on resource `r`: the summed
  /// occupancy `sum_u`, the observed task's own included, and the slowdown
  /// (see gamma_fit::add).
  void observe(const std::string& gpu_type, resource r, double sum_u, double slowdown);

  /// The fit for (`gpu_type`, `r`); not_enough_samples when none yet.
  [[nodiscard]] caf::expected<gamma_estimate> estimate(const std::string& gpu_type,
                                                       resource r) const;

  /// The fitted γ of (`gpu_type`, `r`), `default_gamma` while not converged.
  double gamma(const std::string& gpu_type, resource r) const;

  /// γ rows laid out like `gpu_types`, `default_gamma` where not converged.
  std::vector<gamma_row> table(const std::vector<std::string>& gpu_types) const;

private:
  std::map<std::string, std::array<gamma_fit, resource_count>> fits_;
};

} // namespace gleam::placement
