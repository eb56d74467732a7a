#include "tools/bench/bench_env.hpp"

#include <dlfcn.h>

#include "tools/bench/error.hpp"
#include "tools/link_emulator/error.hpp"
#include "tools/link_emulator/options.hpp"

namespace gleam::tools::bench {

bool has_cuda_driver() {
  void* lib = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (lib == nullptr)
    return false;
  dlclose(lib);
  return true;
}

bench_env::bench_env(bench_settings settings) : settings_(std::move(settings)) {
}

bench_env::~bench_env() {
  links_.clear();
  if (gleamd_)
    stop_process(*gleamd_);
}

std::string bench_env::program_path(const std::string& name) const {
  return settings_.build_dir + "/bench/" + name;
}

std::string bench_env::gleam_run_path() const {
  return settings_.build_dir + "/bin/gleam-run";
}

std::string bench_env::gleamd_path() const {
  return settings_.build_dir + "/bin/gleamd";
}

std::string bench_env::missing(mode m, const std::vector<std::string>& programs) const {
  for (auto& p : programs)
    if (!is_executable(program_path(p)))
      return "bench program '" + p + "' not built (needs nvcc; expected "
             + program_path(p) + ")";
  if (m == mode::local)
    return has_cuda_driver() ? "" : "needs a GPU (no libcuda.so.1)";
  if (!is_executable(gleam_run_path()))
    return "gleam-run not built";
  if (!settings_.server.empty())
    return "";
  if (!is_executable(gleamd_path()))
    return "gleamd not built (or pass --server HOST:PORT)";
  if (!has_cuda_driver())
    return "needs a GPU (no libcuda.so.1)";
  if (settings_.gleamd_config.empty() || settings_.gleamd_port == 0)
    return "starting gleamd needs --gleamd-config F and --gleamd-port P (the port "
           "set in F), or pass --server HOST:PORT";
  return "";
}

caf::error bench_env::ensure_server() {
  if (server_port_ != 0)
    return caf::none;
  if (!settings_.server.empty()) {
    server_host_ = "127.0.0.1";
    namespace le = link_emulator;
    if (auto err = le::parse_host_port(settings_.server, server_host_, server_port_))
      return make_error(error_code::bad_argument,
                        "bad --server: " + le::describe(err));
    return caf::none;
  }
  auto pid_file = settings_.work_dir + "/gleamd.pid";
  stop_pid_file(pid_file);
  auto p = start_process({gleamd_path(), "--config-file=" + settings_.gleamd_config}, {},
                         settings_.work_dir + "/gleamd.log", pid_file);
  if (!p)
    return p.error();
  gleamd_ = *p;
  if (auto err = wait_for_port("127.0.0.1", settings_.gleamd_port, std::chrono::seconds{30}))
    return err;
  server_host_ = "127.0.0.1";
  server_port_ = settings_.gleamd_port;
  return caf::none;
}

caf::expected<env_list> bench_env::prepare(mode m, const link_emulator::link_spec& link) {
  if (auto err = ensure_server())
    return err;
  auto it = links_.find(link.text);
  if (it == links_.end()) {
    link_emulator::emulator_config cfg;
    cfg.target_host = server_host_;
    cfg.target_port = server_port_;
    cfg.link = link;
    auto em = link_emulator::link_emulator::create(cfg);
    if (!em)
      return make_error(error_code::process_failed,
                        "cannot start the link emulator for '" + link.text
                          + "': " + link_emulator::describe(em.error()));
    (*em)->start();
    it = links_.emplace(link.text, std::move(*em)).first;
  }
  env_list env{{"GLEAM_SERVER", "127.0.0.1:" + std::to_string(it->second->port())}};
  if (m == mode::naive) {
    env.emplace_back("GLEAM_ASYNC", "off");
    env.emplace_back("GLEAM_CACHE", "off");
  }
  return env;
}

caf::expected<std::vector<std::pair<std::string, double>>>
run_program(const run_context& ctx, const std::string& name,
            const std::vector<std::string>& args) {
  const auto& s = *ctx.settings;
  std::vector<std::string> argv;
  auto path = s.build_dir + "/bench/" + name;
  if (ctx.run_mode == mode::naive || ctx.run_mode == mode::full) {
    argv.push_back(s.build_dir + "/bin/gleam-run");
    if (!s.client_config.empty()) {
      argv.push_back("--config");
      argv.push_back(s.client_config);
    }
    argv.push_back("--");
  }
  argv.push_back(path);
  argv.insert(argv.end(), args.begin(), args.end());
  auto log = s.work_dir + "/" + name + "." + to_string(ctx.run_mode) + ".log";
  auto r = run_capture(argv, ctx.env, log);
  if (!r)
    return r.error();
  if (r->exit_code != 0)
    return make_error(error_code::process_failed,
                      "bench program '" + name + "' (" + to_string(ctx.run_mode)
                        + " mode) exited with " + std::to_string(r->exit_code)
                        + ": see " + log);
  return parse_result_lines(r->out);
}

} // namespace gleam::tools::bench
