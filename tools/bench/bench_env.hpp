#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <caf/expected.hpp>

#include "tools/bench/process.hpp"
#include "tools/bench/scenario.hpp"
#include "tools/link_emulator/link_emulator.hpp"

namespace gleam::tools::bench {

/// What a run needs from this machine, and the remote wiring: a gleamd
/// (started here from build/bin/gleamd --config-file=F, or given with
/// --server HOST:PORT) and, per link spec, an in-process gleam-link between
/// the client and gleamd's port. Programs in remote modes run through
/// build/bin/gleam-run with GLEAM_SERVER=127.0.0.1:<link port>.
/// Owns what it starts and stops it in its destructor. Not thread-safe.
class bench_env {
public:
  /// An environment for `settings`; starts nothing yet.
  explicit bench_env(bench_settings settings);

  bench_env(const bench_env&) = delete;
  bench_env& operator=(const bench_env&) = delete;

  /// Stops the link emulators and a gleamd started here.
  ~bench_env();

  /// The settings.
  const bench_settings& settings() const noexcept {
    return settings_;
  }

  /// build/bench/<name>.
  std::string program_path(const std::string& name) const;

  /// build/bin/gleam-run.
  std::string gleam_run_path() const;

  /// build/bin/gleamd.
  std::string gleamd_path() const;

  /// Why a scenario running `programs` on a GPU cannot run in mode `m` here,
  /// e.g. "needs a GPU (no libcuda.so.1)" or "gleam-run not built"; empty
  /// when it can.
  std::string missing(mode m, const std::vector<std::string>& programs) const;

  /// The environment for a program in remote mode `m` over `link`: starts
  /// gleamd (once) and a link emulator for `link` (once per spec).
  [[nodiscard]] caf::expected<env_list> prepare(mode m,
                                                const link_emulator::link_spec& link);

private:
  caf::error ensure_server();

  bench_settings settings_;
  std::optional<process> gleamd_;
  std::string server_host_;
  uint16_t server_port_ = 0;
  std::map<std::string, std::unique_ptr<link_emulator::link_emulator>> links_;
};

/// True when libcuda.so.1 can be loaded here.
bool has_cuda_driver();

/// Runs bench program `name` (build/bench/<name>) with `args` in ctx's mode:
/// directly for local, through gleam-run with ctx.env otherwise. Returns its
/// result lines; fails with process_failed (naming the program, its exit
/// code and its log file) when it exits non-zero.
[[nodiscard]] caf::expected<std::vector<std::pair<std::string, double>>>
run_program(const run_context& ctx, const std::string& name,
            const std::vector<std::string>& args);

} // namespace gleam::tools::bench
