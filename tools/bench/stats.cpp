#include "tools/bench/stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace gleam::tools::bench {

double percentile(std::vector<double> samples, double q) {
  if (samples.empty())
    return 0;
  std::sort(samples.begin(), samples.end());
  double pos = std::clamp(q, 0.0, 1.0) * static_cast<double>(samples.size() - 1);
  auto lo = static_cast<size_t>(std::floor(pos));
  auto hi = std::min(lo + 1, samples.size() - 1);
  double frac = pos - static_cast<double>(lo);
  return samples[lo] + (samples[hi] - samples[lo]) * frac;
}

summary summarize(const std::vector<double>& samples) {
  summary s;
  s.n = samples.size();
  if (samples.empty())
    return s;
  s.median = percentile(samples, 0.5);
  s.p10 = percentile(samples, 0.1);
  s.p90 = percentile(samples, 0.9);
  s.mean = std::accumulate(samples.begin(), samples.end(), 0.0)
           / static_cast<double>(samples.size());
  auto [lo, hi] = std::minmax_element(samples.begin(), samples.end());
  s.min = *lo;
  s.max = *hi;
  return s;
}

} // namespace gleam::tools::bench
