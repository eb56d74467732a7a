#pragma once

#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "placement/sim/simulator.hpp"

namespace gleam::placement::sim {

/// Parses simulator options into a config and the policies to run:
///   --seed N  --tasks N  --rate TASKS_PER_S  --clients N
///   --servers H200,A100,L40S (counts per GPU type)  --cache-gb N
///   --noise SIGMA  --fit-fraction F  --mixes N  --lookahead N
///   --peer-mbps R (peer fetch over the backbone at R MB/s; 0 = off)
///   --policy gleam|round_robin|least_loaded|memory_fit|all (repeatable)
/// `args` excludes the program name. invalid_argument names the bad option.
[[nodiscard]] caf::expected<std::pair<sim_config, std::vector<policy_kind>>>
parse_sim_args(const std::vector<std::string>& args);

/// Usage text of the options above.
std::string sim_usage();

/// Entry point for `placement_sim` and `gleam-bench sim`: parses `argv[1..]`,
/// runs each policy on the same trace, returns the report table (or the
/// error and the usage text; `ok` tells which).
std::string run_sim_cli(int argc, char** argv, bool* ok = nullptr);

} // namespace gleam::placement::sim
