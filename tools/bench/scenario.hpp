#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <caf/expected.hpp>

#include "tools/link_emulator/link_spec.hpp"

namespace gleam::tools::bench {

/// How a scenario's program runs.
enum class mode : uint8_t {
  /// Directly on a local GPU, no Gleam.
  local,
  /// Through Gleam with async forwarding and the cache off
  /// (GLEAM_ASYNC=off GLEAM_CACHE=off).
  naive,
  /// Through Gleam with its defaults.
  full,
  /// The scenario has no modes (e.g. `link`); shown as "-".
  none,
};

/// "local", "naive", "full" or "-".
const char* to_string(mode m);

/// Parses a comma-separated mode list such as "local,naive,full".
[[nodiscard]] caf::expected<std::vector<mode>> parse_modes(const std::string& text);

/// Settings shared by every scenario of one gleam-bench run. Plain value.
struct bench_settings {
  /// Build tree holding bin/ (gleam-run, gleamd) and bench/ (programs).
  std::string build_dir;
  /// Scratch directory for pid files, logs and weight files.
  std::string work_dir;
  /// Existing gleamd as HOST:PORT; empty: start build/bin/gleamd here.
  std::string server;
  /// Config file passed to a gleamd started here (--config-file=F).
  std::string gleamd_config;
  /// Port the gleamd started here listens on (as set in gleamd_config).
  uint16_t gleamd_port = 0;
  /// Config file passed to gleam-run (--config F); optional.
  std::string client_config;
  /// Size of the model_load weights, in GiB.
  double model_gib = 1.0;
  /// Repetitions per (scenario, link, mode).
  int reps = 5;
};

/// Everything one scenario run gets. Valid for the duration of the call.
struct run_context {
  /// The mode to run in.
  mode run_mode = mode::local;
  /// The link between client and server (for modes other than local).
  link_emulator::link_spec link;
  /// Repetitions to run.
  int reps = 5;
  /// Shared settings.
  const bench_settings* settings = nullptr;
  /// Environment for the program in a remote mode: GLEAM_SERVER pointing at
  /// the link emulator, plus the mode's switches. Empty for local.
  std::vector<std::pair<std::string, std::string>> env;
};

/// Samples of one metric, one per repetition.
struct metric_samples {
  /// Metric name, e.g. "sync_call_us".
  std::string name;
  /// Unit, e.g. "us", "GB/s", "s".
  std::string unit;
  /// One sample per repetition.
  std::vector<double> samples;
};

/// What one scenario run returns: metrics, or the reason it was skipped.
struct scenario_result {
  /// Metrics measured; empty when skipped.
  std::vector<metric_samples> metrics;
  /// Non-empty when skipped: the reason, e.g. "needs a GPU (no libcuda.so.1)".
  std::string skipped;
  /// Metric names the scenario would have measured (for skipped rows).
  std::vector<std::string> metric_names;

  /// A skipped result with `why`, listing the metrics that were not measured.
  static scenario_result skip(std::string why, std::vector<std::string> names = {});

  /// The metric called `name`, created with `unit` if new.
  metric_samples& metric(const std::string& name, const std::string& unit);
};

/// A named benchmark: given a context, runs ctx.reps repetitions.
struct scenario {
  /// Name used on the command line.
  std::string name;
  /// One line for --list.
  std::string description;
  /// False for scenarios that run once regardless of modes (mode::none).
  bool uses_modes = true;
  /// True for scenarios that run bench programs on a GPU: local mode needs
  /// libcuda.so.1, the other modes gleam-run and a gleamd (see bench_env).
  bool needs_gpu = false;
  /// Bench programs (build/bench/<name>) the body runs.
  std::vector<std::string> programs;
  /// Metrics it reports, for the rows of a skipped run.
  std::vector<std::string> metric_names;
  /// The body. Must not throw; returns skipped results rather than fake
  /// numbers when something it needs is missing.
  std::function<scenario_result(const run_context&)> run;
};

/// The set of scenarios gleam-bench knows. Not thread-safe.
class registry {
public:
  /// Adds `s`, replacing a scenario of the same name.
  void add(scenario s);

  /// The scenario called `name`, or nullptr.
  const scenario* find(const std::string& name) const;

  /// All scenarios in the order they were added.
  const std::vector<scenario>& all() const noexcept {
    return scenarios_;
  }

private:
  std::vector<scenario> scenarios_;
};

} // namespace gleam::tools::bench
