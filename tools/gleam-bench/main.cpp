// gleam-bench: runs named scenarios in local, naive and full mode over
// emulated links and prints medians and ratios measured in one run.

#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "tools/bench/bench_env.hpp"
#include "tools/bench/error.hpp"
#include "tools/bench/options.hpp"
#include "tools/bench/report.hpp"
#include "tools/bench/runner.hpp"
#include "tools/bench/scenarios.hpp"

#if defined(GLEAM_BENCH_HAVE_SIM) && __has_include("placement/sim/run_sim.hpp")
#  include "placement/sim/run_sim.hpp"
#  define GLEAM_BENCH_SIM 1
#endif

namespace bench = gleam::tools::bench;

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "sim") == 0) {
#ifdef GLEAM_BENCH_SIM
    bool ok = false;
    std::fputs(gleam::placement::sim::run_sim_cli(argc - 1, argv + 1, &ok).c_str(), stdout);
    return ok ? 0 : 2;
#else
    std::fprintf(stderr, "gleam-bench sim: the cluster simulator is not built yet\n");
    return 2;
#endif
  }
  auto opts = bench::parse_bench_options(std::vector<std::string>(argv + 1, argv + argc),
                                         bench::default_build_dir());
  if (!opts) {
    std::fprintf(stderr, "gleam-bench: %s\n", bench::describe(opts.error()).c_str());
    return 2;
  }
  if (opts->help) {
    std::fputs(bench::bench_usage().c_str(), stdout);
    return 0;
  }
  bench::registry reg;
  bench::register_builtin_scenarios(reg);
  if (opts->list) {
    std::fputs(bench::list_scenarios(reg).c_str(), stdout);
    return 0;
  }
  std::string mkdir = "mkdir -p '" + opts->settings.work_dir + "'";
  if (std::system(mkdir.c_str()) != 0) {
    std::fprintf(stderr, "gleam-bench: cannot create --work-dir '%s': choose a writable one\n",
                 opts->settings.work_dir.c_str());
    return 1;
  }
  bench::bench_env env(opts->settings);
  auto ms = bench::run_bench(reg, opts->request, env, &std::cerr);
  if (!ms) {
    std::fprintf(stderr, "gleam-bench: %s\n", bench::describe(ms.error()).c_str());
    return 2;
  }
  auto rows = bench::build_rows(*ms);
  std::fputs(bench::format_table(rows).c_str(), stdout);
  if (!opts->out_dir.empty()) {
    if (auto err = bench::write_outputs(rows, opts->out_dir)) {
      std::fprintf(stderr, "gleam-bench: %s\n", bench::describe(err).c_str());
      return 1;
    }
    std::printf("wrote %s/results.csv and %s/results.json\n", opts->out_dir.c_str(),
                opts->out_dir.c_str());
  }
  if (opts->plot) {
    auto pngs = bench::write_plots(rows, opts->out_dir);
    if (!pngs) {
      std::fprintf(stderr, "gleam-bench: %s\n", bench::describe(pngs.error()).c_str());
      return 1;
    }
    for (auto& p : *pngs)
      std::printf("wrote %s\n", p.c_str());
  }
  return 0;
}
