#pragma once

#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "tools/bench/runner.hpp"
#include "tools/bench/scenario.hpp"

namespace gleam::tools::bench {

/// The command line of gleam-bench, parsed.
struct bench_options {
  /// --list: print the scenarios and exit.
  bool list = false;
  /// --help.
  bool help = false;
  /// --plot: write PNG charts into the --out directory.
  bool plot = false;
  /// --out DIR: write results.csv and results.json there; empty: none.
  std::string out_dir;
  /// What to run.
  bench_request request;
  /// Settings shared by the scenarios.
  bench_settings settings;
};

/// Usage text of gleam-bench.
std::string bench_usage();

/// The --list text: one line per scenario with its description.
std::string list_scenarios(const registry& reg);

/// Parses gleam-bench's arguments (without argv[0]); `build_dir` is the
/// default build tree (the parent of the binary's bin/). Errors
/// (bad_argument) name the option and value.
[[nodiscard]] caf::expected<bench_options>
parse_bench_options(const std::vector<std::string>& args, const std::string& build_dir);

/// The build tree of the running binary: the parent of the folder holding
/// /proc/self/exe ("." when unknown).
std::string default_build_dir();

} // namespace gleam::tools::bench
