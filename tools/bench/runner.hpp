#pragma once

#include <ostream>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "tools/bench/bench_env.hpp"
#include "tools/bench/report.hpp"
#include "tools/bench/scenario.hpp"

namespace gleam::tools::bench {

/// Which scenarios to run, over which links, in which modes.
struct bench_request {
  /// Scenario names; "all" means every registered one.
  std::vector<std::string> scenarios;
  /// Link spec texts (parse_link_spec); at least one.
  std::vector<std::string> links;
  /// Modes to run side by side.
  std::vector<mode> modes;
};

/// Runs every (scenario, link, mode) of `req` in one run and returns the
/// raw measurements. Local mode runs once per scenario (it uses no link)
/// and its samples stand for every link, so ratios compare like with like.
/// Prerequisites are checked first and missing ones become skipped rows
/// (never fake numbers). Progress lines go to `progress` when given. Fails
/// with unknown_scenario or the link spec parser's errors before running.
[[nodiscard]] caf::expected<std::vector<measurement>>
run_bench(const registry& reg, const bench_request& req, bench_env& env,
          std::ostream* progress);

} // namespace gleam::tools::bench
