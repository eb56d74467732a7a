#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace gleam::placement {

/// The two resources a task contends for on a server.
enum class resource : uint8_t {
  /// The GPU's SMs and memory bandwidth, during the compute phase.
  gpu = 0,
  /// The server's ingress from clients, during the weight-load phase.
  network = 1,
};

/// Number of `resource` values, for per-resource arrays.
inline constexpr std::size_t resource_count = 2;

/// Fraction of one resource a task uses while it runs alone, in [0, 1]
/// (e.g. SM-active fraction for the GPU, share of the ingress for loads).
struct occupancy {
  /// GPU occupancy during the compute phase, 0..1.
  double gpu = 0;
  /// Network occupancy during the load phase, 0..1.
  double network = 0;
};

/// What the scheduler knows about one kind of task (one task signature).
struct task_profile {
  /// Bytes of model weights the task uploads (before caching).
  uint64_t weight_bytes = 0;
  /// GPU memory the task holds while it runs, weights included, bytes.
  uint64_t memory_bytes = 0;
  /// Solo (uncontended) compute seconds per GPU type, indexed like
  /// `snapshot::gpu_types`.
  std::vector<double> compute_s;
  /// Occupancy of each resource while the task runs alone.
  occupancy occ;
  /// Kernel and graph launches per run (mean), the progress counter a
  /// running task's launches so far are compared with; 0 = unknown.
  double launches = 0;
  /// Finished runs the profile was learned from; 0 = conservative default.
  uint32_t samples = 0;
};

/// Solo seconds assumed for a task never seen before, on every GPU type.
inline constexpr double default_compute_s = 60.0;
/// Extra GPU memory assumed above twice the weights of an unknown task, bytes.
inline constexpr uint64_t default_extra_memory_bytes = 1ull << 30;
/// Weight bytes assumed for an unknown task that announced none.
inline constexpr uint64_t default_weight_bytes = 16ull << 30;

/// The profile used for a signature with no finished run: conservative on
/// purpose so an unknown task is never packed onto a busy GPU by mistake.
/// It occupies the whole GPU and the whole ingress (occupancy 1), computes
/// for `default_compute_s` on every GPU type, and needs twice its weights
/// (the announced `weight_bytes_hint`, or `default_weight_bytes` when 0) plus
/// `default_extra_memory_bytes` of GPU memory, room for activations or a KV
/// cache as large as the model.
task_profile default_profile(uint64_t weight_bytes_hint, std::size_t gpu_type_count);

/// Margin on the slowest known solo time of a signature for a GPU type it
/// never ran on, when no other signature relates the types.
inline constexpr double unknown_gpu_type_factor = 2.0;

/// Telemetry of one finished run, as a gpu_server reports it.
struct run_record {
  /// GPU type name the run used, e.g. "H200".
  std::string gpu_type;
  /// Weight bytes the task uploaded (cached or not).
  uint64_t weight_bytes = 0;
  /// Peak GPU memory of the run, bytes.
  uint64_t memory_bytes = 0;
  /// Wall seconds of the compute phase.
  double compute_wall_s = 0;
  /// Contention slowdown of the compute phase according to the current
  /// latency model (1 when the task ran alone below the knee); the profile
  /// stores `compute_wall_s / alpha_gpu` as the solo time.
  double alpha_gpu = 1;
  /// Whether other tasks shared the GPU during the compute phase.
  bool shared_gpu = false;
  /// Whether `alpha_gpu` is the latency model's contention for this run,
  /// from its co-runners' occupancy under the current γ (e.g. the wall time
  /// over ∫ dt / α(t)). A shared run updates the solo compute time only
  /// then, as `compute_wall_s / alpha_gpu` (solo-equivalent); a shared run
  /// without it holds an unknown contention and does not.
  bool alpha_modelled = false;
  /// Measured occupancy of the run on each resource.
  occupancy occ;
  /// Kernel and graph launches of the run; 0 = not counted.
  uint64_t launches = 0;
};

/// Task profiles keyed by task signature, learned from finished runs.
///
/// Each field is a running mean for the first `1 / ema_weight` samples and
/// an exponential moving average with weight `ema_weight` afterwards, so a
/// profile adapts when a workload drifts. Solo compute time is learned per
/// GPU type from runs that had the GPU to themselves (`shared_gpu` false)
/// and from shared runs whose contention the model predicted
/// (`alpha_modelled`), each de-contended by `alpha_gpu`, so that a busy
/// cluster, where few runs are solo, still learns solo-equivalent times.
/// Those depend on the fitted γ, so the γ fit reads a separate reference,
/// `solo_compute_s`, learned from runs alone below the knee only: a fit fed
/// through the de-contended times confirms whatever γ it holds. Weight
/// bytes, memory and occupancies
/// are learned from every run. A signature never seen gets `default_profile`. A known
/// signature on a GPU type it never ran on gets a known time of it scaled by
/// the mean slowdown between the two types of the other signatures that ran
/// on both; failing that, its slowest known time × `unknown_gpu_type_factor`.
///
/// Not thread-safe: one owner (the scheduler actor or the simulator).
class profile_store {
public:
  /// `ema_weight` in (0, 1]: weight of a new sample once warmed up.
  explicit profile_store(double ema_weight = 0.2);

  /// Folds one finished run of `signature` into its profile.
  void observe(const std::string& signature, const run_record& run);

  /// The profile of `signature` laid out for `gpu_types` (the snapshot's
  /// GPU type list); `weight_bytes_hint` is the task's announced upload size,
  /// used only when the signature is unknown.
  task_profile resolve(const std::string& signature,
                       const std::vector<std::string>& gpu_types,
                       uint64_t weight_bytes_hint) const;

  /// Compute seconds of `signature` on `gpu_type` learned only from runs
  /// that had the GPU to themselves below the knee (`shared_gpu` false,
  /// `alpha_gpu` 1): wall times nothing was divided out of, so they hold no
  /// γ. The reference the γ fit divides observed walls by; 0 when no such
  /// run was observed yet. Predictions use the profile's `compute_s`
  /// instead (`resolve`), which shared runs teach too: dividing observed
  /// walls by that would hand the fit back the γ that de-contended it
  /// (observed slowdowns come out as α under the γ in force, so a wrong γ
  /// never moves).
  double solo_compute_s(const std::string& signature, const std::string& gpu_type) const;

  /// EMA weight of `solo_compute_s` once warmed up: a long memory, since
  /// every γ observation of the signature shares the reference's error
  /// (5 % noise per run: ~0.7 % after 50 runs, against ~1.7 % at 0.2).
  static constexpr double reference_ema_weight = 0.02;

  /// True once at least one run of `signature` was observed.
  bool knows(const std::string& signature) const;

  /// Number of signatures with at least one run.
  std::size_t size() const noexcept {
    return entries_.size();
  }

private:
  struct mean {
    double value = 0;
    uint32_t n = 0;
  };

  struct entry {
    mean weight_bytes;
    mean memory_bytes;
    mean gpu_occ;
    mean net_occ;
    mean launches;
    uint32_t runs = 0;
    std::unordered_map<std::string, mean> compute_s;
    /// Runs alone below the knee only (solo_compute_s).
    std::unordered_map<std::string, mean> alone_s;
  };

  void fold(mean& m, double x) const;
  static void fold(mean& m, double x, double ema_weight);

  double ema_weight_;
  std::unordered_map<std::string, entry> entries_;
};

} // namespace gleam::placement
