#include "placement/task_profile.hpp"

#include <algorithm>

namespace gleam::placement {

namespace {

/// Slack on α = 1 for floating-point sums (∫ dt / α over a phase).
constexpr double alpha_tolerance = 1e-9;

} // namespace

task_profile default_profile(uint64_t weight_bytes_hint, std::size_t gpu_type_count) {
  task_profile p;
  p.weight_bytes = weight_bytes_hint != 0 ? weight_bytes_hint : default_weight_bytes;
  p.memory_bytes = 2 * p.weight_bytes + default_extra_memory_bytes;
  p.compute_s.assign(gpu_type_count, default_compute_s);
  p.occ.gpu = 1.0;
  p.occ.network = 1.0;
  p.samples = 0;
  return p;
}

profile_store::profile_store(double ema_weight)
  : ema_weight_(std::clamp(ema_weight, 1e-3, 1.0)) {
}

void profile_store::fold(mean& m, double x, double ema_weight) {
  ++m.n;
  auto w = std::max(ema_weight, 1.0 / m.n);
  m.value += w * (x - m.value);
}

void profile_store::fold(mean& m, double x) const {
  fold(m, x, ema_weight_);
}

void profile_store::observe(const std::string& signature, const run_record& run) {
  auto& e = entries_[signature];
  ++e.runs;
  fold(e.weight_bytes, static_cast<double>(run.weight_bytes));
  fold(e.memory_bytes, static_cast<double>(run.memory_bytes));
  fold(e.gpu_occ, run.occ.gpu);
  fold(e.net_occ, run.occ.network);
  if (run.launches > 0)
    fold(e.launches, static_cast<double>(run.launches));
  if ((!run.shared_gpu || run.alpha_modelled) && run.compute_wall_s > 0)
    fold(e.compute_s[run.gpu_type], run.compute_wall_s / std::max(1.0, run.alpha_gpu));
  // The reference of the γ fit: wall times of runs nothing was divided out
  // of, so that it holds no γ.
  if (!run.shared_gpu && run.alpha_gpu <= 1.0 + alpha_tolerance && run.compute_wall_s > 0)
    fold(e.alone_s[run.gpu_type], run.compute_wall_s, reference_ema_weight);
}

task_profile profile_store::resolve(const std::string& signature,
                                    const std::vector<std::string>& gpu_types,
                                    uint64_t weight_bytes_hint) const {
  auto i = entries_.find(signature);
  if (i == entries_.end())
    return default_profile(weight_bytes_hint, gpu_types.size());
  const auto& e = i->second;
  task_profile p;
  p.weight_bytes = static_cast<uint64_t>(e.weight_bytes.value);
  p.memory_bytes = static_cast<uint64_t>(e.memory_bytes.value);
  p.occ.gpu = e.gpu_occ.value;
  p.occ.network = e.net_occ.value;
  p.launches = e.launches.value;
  p.samples = e.runs;
  double slowest = 0;
  for (const auto& [type, m] : e.compute_s)
    slowest = std::max(slowest, m.value);
  p.compute_s.reserve(gpu_types.size());
  for (const auto& type : gpu_types) {
    auto j = e.compute_s.find(type);
    if (j != e.compute_s.end()) {
      p.compute_s.push_back(j->second.value);
      continue;
    }
    // Scale a known type's time by how much slower `type` is than it for
    // the other signatures that ran on both.
    double ratio_sum = 0;
    double base_sum = 0;
    uint32_t pairs = 0;
    for (const auto& [known, m] : e.compute_s) {
      for (const auto& [sig, other] : entries_) {
        auto a = other.compute_s.find(type);
        auto b = other.compute_s.find(known);
        if (&other == &e || a == other.compute_s.end() || b == other.compute_s.end()
            || b->second.value <= 0)
          continue;
        ratio_sum += a->second.value / b->second.value;
        base_sum += m.value;
        ++pairs;
      }
    }
    if (pairs > 0)
      p.compute_s.push_back(ratio_sum / pairs * (base_sum / pairs));
    else if (slowest > 0)
      p.compute_s.push_back(slowest * unknown_gpu_type_factor);
    else
      p.compute_s.push_back(default_compute_s);
  }
  return p;
}

double profile_store::solo_compute_s(const std::string& signature,
                                      const std::string& gpu_type) const {
  auto i = entries_.find(signature);
  if (i == entries_.end())
    return 0;
  auto j = i->second.alone_s.find(gpu_type);
  return j != i->second.alone_s.end() ? j->second.value : 0;
}

bool profile_store::knows(const std::string& signature) const {
  return entries_.count(signature) != 0;
}

} // namespace gleam::placement
