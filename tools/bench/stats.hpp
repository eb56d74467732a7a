#pragma once

#include <cstddef>
#include <vector>

namespace gleam::tools::bench {

/// Order statistics of a set of samples, in the samples' unit.
struct summary {
  /// Number of samples.
  size_t n = 0;
  /// Median (p50).
  double median = 0;
  /// 10th percentile.
  double p10 = 0;
  /// 90th percentile.
  double p90 = 0;
  /// Arithmetic mean.
  double mean = 0;
  /// Smallest sample.
  double min = 0;
  /// Largest sample.
  double max = 0;
};

/// The q-quantile (q in [0, 1]) of `samples` by linear interpolation between
/// closest ranks; 0 for no samples.
double percentile(std::vector<double> samples, double q);

/// Summary of `samples`; all zero for no samples.
summary summarize(const std::vector<double>& samples);

} // namespace gleam::tools::bench
