// gleamd's node (and worker) process, as tools/gleamd/main.cpp runs it.
//
// Wiring, top to bottom: read the config, block the stop signals, start the
// actor system, start the role actors, publish the node actor on its port,
// wait for SIGINT/SIGTERM, stop everything within the shutdown deadline.
#include <csignal>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>

#include <caf/all.hpp>
#include <caf/io/all.hpp>

#include "actors/cache_shard.hpp"
#include "actors/gpu_server.hpp"
#include "actors/log.hpp"
#include "actors/multiplexer_loop.hpp"
#include "actors/network.hpp"
#include "actors/node.hpp"
#include "actors/scheduler.hpp"
#include "config/error.hpp"
#include "config/node_config.hpp"
#include "executor/weight_cache.hpp"
#include "tools/common/shutdown.hpp"
#include "tools/gleamd/metrics.hpp"
#include "tools/gleamd/node_main.hpp"
#include "tools/gleamd/node_system.hpp"
#include "tools/gleamd/worker.hpp"

namespace gleam::tools {

using actors::log;
using actors::log_level;

namespace {

const char* usage = "usage: gleamd --config-file=FILE\n"
                    "  Starts one Gleam node with the roles named in FILE (see "
                    "deploy/examples/).\n";

std::string config_path(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--config-file=", 0) == 0)
      return arg.substr(14);
    if (arg == "--config-file" && i + 1 < argc)
      return argv[i + 1];
  }
  return "";
}

/// One metrics scrape: the node's status, its weight cache's counters, the
/// scheduler's queue and contention table; a part that does not answer
/// within 2 s is left out.
std::string scrape(caf::actor_system& sys, const actors::node_actor& node,
                   executor::weight_cache* cache, const actors::scheduler_actor& scheduler) {
  constexpr auto timeout = std::chrono::seconds{2};
  caf::scoped_actor self{sys};
  metrics::snapshot s;
  self->request(node, timeout, actors::status_atom::value)
    .receive([&](actors::pb<proto::NodeStatus>& st) { s.node = std::move(st.value); },
             [](caf::error&) {});
  proto::CacheStatsReply cache_stats;
  if (cache != nullptr) {
    cache_stats = cache->stats();
    s.cache = &cache_stats;
  }
  proto::PlacementQueue queue;
  proto::GammaTable gamma;
  if (scheduler) {
    self->request(scheduler, timeout, actors::queue_atom::value)
      .receive(
        [&](actors::pb<proto::PlacementQueue>& q) {
          queue = std::move(q.value);
          s.queue = &queue;
        },
        [](caf::error&) {});
    self->request(scheduler, timeout, actors::gamma_atom::value)
      .receive(
        [&](actors::pb<proto::GammaTable>& g) {
          gamma = std::move(g.value);
          s.gamma = &gamma;
        },
        [](caf::error&) {});
  }
  return metrics::render(s);
}

} // namespace

int run_gleamd(int argc, char** argv, const driver_source& make_driver) {
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      std::fputs(usage, stdout);
      return 0;
    }
  auto path = config_path(argc, argv);
  if (path.empty()) {
    std::fputs(usage, stderr);
    return 2;
  }
  auto cfg = config::load_node_config(path);
  if (!cfg) {
    std::fprintf(stderr, "gleamd: %s\n", config::describe(cfg.error()).c_str());
    return 2;
  }
  // A worker process of a GPU server (isolation = process), started by the
  // node's supervisor: tools/gleamd/worker.cpp.
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--worker") == 0)
      return run_worker(std::move(*cfg), argc, argv, make_driver ? make_driver() : nullptr);
  actors::set_log_tag("gleamd " + cfg->node_id);
  actors::set_log_level(cfg->log_level);
  stop_signals signals; // blocks SIGINT/SIGTERM before CAF starts threads

  caf::actor_system_config sys_cfg;
  configure_node_system(sys_cfg, *cfg);
  // The network runs on a loop that polls for [node] poll after each event
  // and while a GPU server executes, instead of sleeping between them.
  actors::multiplexer_loop network_loop{sys_cfg, cfg->poll};
  int exit_code = 0;
  std::optional<shutdown_watchdog> watchdog;
  // The CUDA driver outlives the actor system (the GPU servers hold it until
  // their actors are destroyed there): its unloading is a step of its own.
  std::shared_ptr<executor::driver_api> driver;
  {
    caf::actor_system sys{sys_cfg};
    network_loop.start(sys);
    actors::node_roles roles;
    actors::gpu_service gpus;
    actors::admission rules{cfg->auth_token, cfg->tenants, cfg->admin_token,
                            cfg->cluster_secret};
    if (cfg->scheduler) {
      roles.scheduler = actors::spawn_scheduler(sys, cfg->down_after, {}, rules);
      if (cfg->cluster_secret.empty())
        log(log_level::warning,
            "no [node] cluster-secret in {}: any process that reaches this scheduler can "
            "register as a node (see SECURITY.md)",
            cfg->source);
      if (cfg->admin_token.empty())
        log(log_level::warning,
            "no [node] admin-token in {}: anyone who reaches this node can drain nodes and "
            "evict or list cached weights (see SECURITY.md)",
            cfg->source);
    }
    // The weight cache: one store per node, shared by its GPU servers and
    // served to peers and the console by the cache_shard actor.
    std::shared_ptr<executor::weight_cache> cache;
    std::shared_ptr<actors::shard_client> cache_peers;
    if (cfg->gpu_server || cfg->cache_shard) {
      executor::weight_cache_options co;
      co.dir = cfg->cache_dir;
      co.disk_capacity = cfg->cache_disk_bytes;
      co.host_capacity = cfg->cache_host_bytes;
      auto opened = executor::weight_cache::open(co);
      if (opened) {
        cache = *opened;
        roles.shard = actors::spawn_cache_shard(sys, cache, rules);
        if (!cfg->cache_peers.empty()) {
          cache_peers = std::make_shared<actors::shard_client>(
            sys, cfg->cache_peers, std::chrono::seconds{10}, cfg->cluster_secret);
          cache->set_peer_fetch(
            [p = cache_peers.get()](const cache_store::chunk_key& k) { return p->fetch(k); });
        }
        auto st = cache->stats();
        log(log_level::info, "weight cache: {} entries, {} MiB, dir '{}', {} peer(s)",
            st.entries(), st.bytes() >> 20, cfg->cache_dir, cfg->cache_peers.size());
      } else {
        log(log_level::warning, "the weight cache could not be opened: {}; this node runs "
                                "without one",
            config::describe(opened.error()));
      }
    }
    if (cache && !cfg->gpu_server)
      roles.board = std::make_shared<actors::telemetry_board>(0);
    if (cfg->gpu_server) {
      auto test_driver = make_driver ? make_driver() : nullptr;
      auto n = actors::count_gpus(*cfg, test_driver);
      roles.board = std::make_shared<actors::telemetry_board>(n ? *n : 0);
      auto started = actors::start_gpu_servers(sys, *cfg, roles.board, cache, &network_loop,
                                               test_driver);
      if (started) {
        gpus = std::move(*started);
        roles.gpus = gpus.servers;
        roles.gpu_infos = gpus.infos;
        roles.host_calls = gpus.host_calls;
        for (const auto& g : gpus.infos)
          log(log_level::info, "serving gpu {}: {} ({} MiB)", g.index(), g.name(),
              g.total_memory() >> 20);
      } else {
        log(log_level::warning,
            "gpu_server role has no GPU to serve: {}. This node runs without GPUs; run "
            "gleamd with the gpu_server role on a host with an NVIDIA GPU and point clients "
            "at it (GLEAM_SERVER=HOST:PORT or the scheduler).",
            config::describe(started.error()));
      }
    }
    if (cache)
      roles.board->set_cache_summary([cache] { return cache->summary(); });
    if (cache_peers && roles.board)
      roles.board->set_peer_fetch_rate(
        [peers = std::weak_ptr<actors::shard_client>{cache_peers}] {
          auto p = peers.lock();
          return p ? p->rate_bytes_per_s() : 0.0;
        });
    auto node = actors::spawn_node(sys, *cfg, roles);
    metrics::server metrics;
    const char* bind = cfg->bind_host.empty() ? nullptr : cfg->bind_host.c_str();
    auto port = actors::publish(sys, node, cfg->port, bind,
                                cfg->tls.enabled);
    if (!port) {
      log(log_level::error, "cannot listen on {}:{}: {} (is another gleamd running? change "
                            "'node.port' in {})",
          cfg->bind_host.empty() ? "*" : cfg->bind_host, cfg->port,
          sys.render(port.error()), cfg->source);
      exit_code = 1;
    } else {
      log(log_level::info, "node '{}' up on port {}{} (roles:{}{}{})", cfg->node_id, *port,
          cfg->tls.enabled ? " with TLS" : "",
          cfg->scheduler ? " scheduler" : "", cfg->gpu_server ? " gpu_server" : "",
          cfg->cache_shard ? " cache_shard" : "");
      if (cfg->metrics_port != 0) {
        auto why = metrics.start(cfg->bind_host, cfg->metrics_port,
                                 [&sys, node, cache, scheduler = roles.scheduler] {
                                   return scrape(sys, node, cache.get(), scheduler);
                                 });
        if (why.empty())
          log(log_level::info, "metrics on http://{}:{}/metrics",
              cfg->bind_host.empty() ? "*" : cfg->bind_host, cfg->metrics_port);
        else
          log(log_level::warning, "no metrics ([node] metrics-port in {}): {}", cfg->source,
              why);
      }
      int sig = signals.wait();
      log(log_level::info, "signal {} received, stopping", sig);
    }
    // Armed here, destroyed only after ~actor_system (declared outside).
    watchdog.emplace(std::chrono::milliseconds{1900});
    watchdog->step("closing the listener");
    metrics.stop();
    if (port)
      actors::unpublish(sys, node.address(), *port,
                        cfg->tls.enabled); // closes the listener early
    caf::anon_send_exit(node, caf::exit_reason::user_shutdown);
    for (auto& g : gpus.servers)
      caf::anon_send_exit(g, caf::exit_reason::user_shutdown);
    if (roles.scheduler)
      caf::anon_send_exit(roles.scheduler, caf::exit_reason::user_shutdown);
    if (roles.shard)
      caf::anon_send_exit(roles.shard, caf::exit_reason::user_shutdown);
    if (cache)
      cache->set_peer_fetch({});
    node = nullptr;
    roles = actors::node_roles{};
    gpus.servers.clear();
    // The actors stop with the network still running (their last messages
    // go out); ~actor_system then runs the network's last events here.
    watchdog->step("stopping the actors");
    sys.await_all_actors_done();
    auto actors_ms = watchdog->step("stopping the network");
    network_loop.stop();
    auto network_ms = watchdog->step("releasing the GPUs");
    driver = gpus.driver;
    gpus = actors::gpu_service{};
    auto gpus_ms = watchdog->step("writing the weight cache to disk");
    cache_peers.reset();
    if (cache)
      cache->wait_persisted();
    auto persist_ms = watchdog->step("closing the weight cache");
    if (cache)
      cache->leave_memory_at_exit(); // the process exits next
    cache.reset();
    auto cache_ms = watchdog->step("closing the actor system");
    log(log_level::info,
        "stopping: actors {} ms, network {} ms, GPUs {} ms, weight cache writes {} ms, "
        "closing it {} ms",
        actors_ms, network_ms, gpus_ms, persist_ms, cache_ms);
  } // ~actor_system waits for the actors; the watchdog bounds the wait
  auto system_ms = watchdog ? watchdog->step("unloading the CUDA driver") : 0;
  driver.reset();
  log(log_level::info, "stopped; the actor system closed in {} ms, the CUDA driver unloaded in {} ms",
      system_ms, watchdog ? watchdog->step("done") : 0);
  return exit_code;
}

} // namespace gleam::tools
