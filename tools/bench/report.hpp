#pragma once

#include <optional>
#include <string>
#include <vector>

#include <caf/error.hpp>

#include "tools/bench/scenario.hpp"
#include "tools/bench/stats.hpp"

namespace gleam::tools::bench {

/// Raw samples of one metric of one (scenario, link, mode), or a skip.
struct measurement {
  /// Scenario name.
  std::string scenario;
  /// Link spec text.
  std::string link;
  /// Mode the samples were taken in.
  mode run_mode = mode::local;
  /// Metric name.
  std::string metric;
  /// Unit of the samples.
  std::string unit;
  /// One sample per repetition.
  std::vector<double> samples;
  /// Non-empty when not measured: why.
  std::string skipped;
};

/// One line of the report: a measurement's summary and its ratios to the
/// local and naive medians of the same scenario, metric and link, measured
/// in the same run.
struct row {
  /// Scenario name.
  std::string scenario;
  /// Metric name.
  std::string metric;
  /// Unit.
  std::string unit;
  /// Link spec text.
  std::string link;
  /// Mode.
  mode run_mode = mode::local;
  /// Order statistics of the samples.
  summary stats;
  /// The raw samples.
  std::vector<double> samples;
  /// median / local median; absent without a local measurement.
  std::optional<double> vs_local;
  /// median / naive median; absent without a naive measurement.
  std::optional<double> vs_naive;
  /// Non-empty when not measured: why.
  std::string skipped;
};

/// Turns measurements into rows, computing ratios within the same run.
std::vector<row> build_rows(const std::vector<measurement>& ms);

/// Flattens a scenario_result into measurements for (scenario, link, mode).
std::vector<measurement> to_measurements(const std::string& scenario,
                                         const std::string& link, mode m,
                                         const scenario_result& r);

/// The printed table, one header line and one line per row: columns
/// scenario, metric, link, mode, n, median, p10, p90, unit, vs local,
/// vs naive; skipped rows say "skipped: <why>".
std::string format_table(const std::vector<row>& rows);

/// CSV with header
/// scenario,metric,unit,link,mode,n,median,p10,p90,mean,vs_local,vs_naive,skipped
std::string to_csv(const std::vector<row>& rows);

/// JSON: {"tool":"gleam-bench","rows":[{...,"samples":[...]}]}.
std::string to_json(const std::vector<row>& rows);

/// Writes results.csv and results.json into `dir` (created if missing).
[[nodiscard]] caf::error write_outputs(const std::vector<row>& rows, const std::string& dir);

/// Writes one PNG bar chart per (scenario, metric) with measured rows into
/// `dir` with gnuplot (medians per link and mode, p10-p90 error bars), and
/// returns the paths written. Fails with plot_failed when gnuplot is missing
/// or fails.
[[nodiscard]] caf::expected<std::vector<std::string>>
write_plots(const std::vector<row>& rows, const std::string& dir);

} // namespace gleam::tools::bench
