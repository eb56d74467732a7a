#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "placement/snapshot.hpp"

namespace gleam::placement::sim {

/// A GPU model of the simulated cluster and its hidden contention truth.
struct gpu_type_spec {
  /// Name, e.g. "H200".
  std::string name;
  /// Device memory, bytes.
  uint64_t memory_bytes = 0;
  /// Compute-bound time multiplier relative to an H200 (peak FLOPs ratio).
  double flops_factor = 1;
  /// Memory-bound time multiplier relative to an H200 (bandwidth ratio).
  double bandwidth_factor = 1;
  /// Planted γ of the truth model for the GPU and for the ingress.
  double gamma_gpu = 1;
  double gamma_net = 1;
};

/// A task type of the workload mix.
struct task_type_spec {
  /// Name, e.g. "llama-8B".
  std::string name;
  /// Model weights uploaded per run, bytes.
  uint64_t weight_bytes = 0;
  /// GPU memory held while running (weights + activations / KV), bytes.
  uint64_t memory_bytes = 0;
  /// Solo compute seconds on an H200.
  double h200_compute_s = 0;
  /// Share of the compute time that scales with FLOPs (the rest scales
  /// with memory bandwidth), 0..1.
  double compute_bound_fraction = 0.5;
  /// Occupancy while it runs alone: GPU during compute, ingress during load.
  double gpu_occupancy = 0.5;
  double net_occupancy = 0.5;
  /// Distinct weight sets of this type (fine-tunes), each its own signature.
  uint32_t variants = 1;
  /// Relative arrival frequency in the mix.
  double mix_weight = 1;
  /// Kernel and graph launches per run (decode steps, denoising steps), made
  /// evenly over the compute phase: the progress counter a gpu_server
  /// reports of a running task.
  uint32_t launches = 100;

  /// Solo compute seconds of this type on `gpu`.
  double compute_s_on(const gpu_type_spec& gpu) const {
    return h200_compute_s
           * (compute_bound_fraction * gpu.flops_factor
              + (1 - compute_bound_fraction) * gpu.bandwidth_factor);
  }
};

/// H200, A100-80G, L40S with planted γ (see README.md for the numbers).
std::vector<gpu_type_spec> default_gpu_types();

/// llama-8B, llava-7B, whisper, sd3-class (see README.md for the numbers).
std::vector<task_type_spec> default_task_types();

/// One task of a trace.
struct trace_task {
  /// Task id, 0-based in arrival order.
  task_id id = 0;
  /// Arrival time, seconds after the trace starts.
  double arrival_s = 0;
  /// Index into the task type list and variant of that type.
  uint32_t type = 0;
  uint32_t variant = 0;
  /// Submitting client.
  client_index client = 0;
  /// Hidden multiplicative noise on this task's solo compute and load times.
  double compute_noise = 1;
  double load_noise = 1;
};

/// Parameters of a generated trace.
struct trace_config {
  /// Seed of the generator; same seed, same trace.
  uint64_t seed = 1;
  /// Number of tasks.
  std::size_t tasks = 2000;
  /// Poisson arrival rate, tasks per second.
  double arrival_rate_per_s = 1.5;
  /// Number of clients tasks come from (uniformly).
  uint32_t clients = 8;
  /// Log-normal σ of the per-task compute noise (load noise uses σ / 2).
  double noise_sigma = 0.05;
};

/// Poisson arrivals, types drawn by mix weight, variants and clients
/// uniformly; deterministic for a fixed seed on every platform (own
/// generator arithmetic, no std:: distributions).
std::vector<trace_task> generate_trace(const trace_config& cfg,
                                       const std::vector<task_type_spec>& types);

/// The signature of a task type variant, e.g. "llama-8B/v2".
std::string signature_of(const task_type_spec& type, uint32_t variant);

/// The weight set id of a task type variant (distinct per type and variant).
weight_set_id weights_of(uint32_t type, uint32_t variant);

/// A small portable random generator (splitmix64) with the draws the
/// simulator needs. Deterministic for a seed.
class rng {
public:
  explicit rng(uint64_t seed) : state_(seed) {
  }

  /// Next 64 random bits.
  uint64_t next();

  /// Uniform in [0, 1).
  double uniform();

  /// Standard normal (Box-Muller).
  double normal();

  /// Exponential with rate `rate` (mean 1 / rate).
  double exponential(double rate);

private:
  uint64_t state_;
};

} // namespace gleam::placement::sim
