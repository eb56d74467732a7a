#include "tools/gleamd/worker.hpp"

#include <sys/prctl.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include <caf/all.hpp>
#include <caf/io/all.hpp>

#include "actors/gpu_server.hpp"
#include "actors/log.hpp"
#include "actors/multiplexer_loop.hpp"
#include "actors/network.hpp"
#include "actors/node.hpp"
#include "actors/op_watchdog.hpp"
#include "actors/telemetry_board.hpp"
#include "actors/worker_control.hpp"
#include "config/error.hpp"
#include "tools/common/shutdown.hpp"
#include "tools/gleamd/node_system.hpp"

namespace gleam::tools {

namespace {

using actors::log;
using actors::log_level;

/// The control socket the supervisor hands every worker.
constexpr int control_fd = 3;

/// The value of `--NAME=VALUE` among `argv`, or "".
std::string flag(int argc, char** argv, const char* name) {
  std::string prefix = std::string{"--"} + name + "=";
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], prefix.c_str(), prefix.size()) == 0)
      return argv[i] + prefix.size();
  return "";
}

} // namespace

int run_worker(config::node_config cfg, int argc, char** argv,
               std::shared_ptr<executor::driver_api> driver) {
  // The worker lives no longer than its supervisor.
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  auto parent_alive = ::getppid() != 1;
  const char* key = std::getenv("GLEAM_WORKER_KEY");
  auto gpu = flag(argc, argv, "worker-gpu");
  auto first = flag(argc, argv, "worker-first-session");
  if (key == nullptr || std::strlen(key) < 32 || gpu.empty() || first.empty() || !parent_alive) {
    std::fprintf(stderr, "gleamd --worker: this mode is started by gleamd itself for "
                         "[gpu_server] isolation = \"process\"; run gleamd --config-file=FILE\n");
    return 2;
  }
  cfg.worker.active = true;
  cfg.worker.key = key;
  ::unsetenv("GLEAM_WORKER_KEY");
  cfg.worker.first_session = std::strtoull(first.c_str(), nullptr, 10);
  if (auto ledger = flag(argc, argv, "worker-ledger-fd"); !ledger.empty())
    cfg.worker.ledger_fd = std::atoi(ledger.c_str());
  cfg.devices = {std::atoi(gpu.c_str())};
  cfg.scheduler = false;
  cfg.cache_shard = false;
  cfg.gpu_server = true;
  cfg.scheduler_host.clear();
  cfg.port = 0;
  cfg.metrics_port = 0;
  actors::set_log_tag("gleamd " + cfg.node_id + " worker " + std::to_string(::getpid()));
  actors::set_log_level(cfg.log_level);
  stop_signals signals;
  caf::actor_system_config sys_cfg;
  configure_node_system(sys_cfg, cfg);
  actors::multiplexer_loop network_loop{sys_cfg, cfg.poll};
  caf::actor_system sys{sys_cfg};
  network_loop.start(sys);
  // The board collects what the GPU server measured about the session,
  // which the supervisor passes on to the scheduler.
  auto board = std::make_shared<actors::telemetry_board>(1);
  auto started = actors::start_gpu_servers(sys, cfg, board, nullptr, &network_loop,
                                            std::move(driver));
  if (!started) {
    log(log_level::error, "cannot serve gpu {}: {}", gpu, config::describe(started.error()));
    std::_Exit(1);
  }
  actors::node_roles roles;
  roles.gpus = started->servers;
  roles.gpu_infos = started->infos;
  roles.host_calls = started->host_calls;
  auto node = actors::spawn_node(sys, cfg, roles);
  const char* bind = cfg.bind_host.empty() ? nullptr : cfg.bind_host.c_str();
  auto port = actors::publish(sys, node, 0, bind, cfg.tls.enabled);
  if (!port) {
    log(log_level::error, "cannot listen: {}", sys.render(port.error()));
    std::_Exit(1);
  }
  if (cfg.max_op.count() > 0)
    actors::start_op_watchdog(cfg.max_op);
  // The supervisor's requests; when it hangs up, the worker stops.
  std::thread control{[&sys, p = *port, server = started->servers.front()] {
    actors::serve_supervisor(sys, control_fd, p, server);
    ::kill(::getpid(), SIGTERM);
  }};
  control.detach();
  signals.wait();
  // The session ended (or the supervisor ends the worker): its measurements
  // go to the supervisor first.
  if (auto ended = board->take_ended(); !ended.empty())
    static_cast<void>(actors::notify_supervisor(control_fd, ended));
  // The session's end (or the supervisor's) stops the worker: its GPU
  // server frees what the session held and releases the context; the rest
  // goes with the process.
  shutdown_watchdog watchdog{std::chrono::milliseconds{1900}};
  watchdog.step("stopping the worker's GPU server");
  actors::unpublish(sys, node.address(), *port, cfg.tls.enabled);
  {
    caf::scoped_actor self{sys};
    auto server = started->servers.front();
    self->monitor(server);
    caf::anon_send_exit(server, caf::exit_reason::user_shutdown);
    self->receive([](const caf::down_msg&) {},
                  caf::after(std::chrono::milliseconds{1500}) >> [] {});
  }
  // Nothing else of the worker needs an orderly end: its peers see the
  // connections close with the process.
  std::fflush(stderr);
  std::_Exit(0);
}

} // namespace gleam::tools
