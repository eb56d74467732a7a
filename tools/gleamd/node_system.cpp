#include "tools/gleamd/node_system.hpp"

#include <chrono>

#include "actors/basp_guard.hpp"
#include "actors/listener_guard.hpp"
#include "actors/network.hpp"
#include "actors/type_registry.hpp"

namespace gleam::tools {

void configure_node_system(caf::actor_system_config& sys_cfg, const config::node_config& cfg) {
  actors::add_message_types(sys_cfg);
  actors::load_network(sys_cfg, cfg.tls);
  actors::limit_basp_messages(cfg.max_message_bytes);
  // Peers that connect and never speak BASP hold no socket for long.
  actors::guard_listeners(actors::listener_limits{});
  // Clients take a silent connection for a lost server after 2 s
  // (interpose/runtime.cpp); BASP heartbeats keep an idle one alive.
  sys_cfg.set("middleman.heartbeat-interval", caf::timespan{std::chrono::milliseconds{200}});
  // A client silent for 2 s (it heartbeats every 500 ms) lost its link: its
  // session waits [gpu_server] session-grace for a resume, and the client's
  // new connection is not refused as a duplicate of the dead one.
  sys_cfg.set("middleman.connection-timeout", caf::timespan{actors::connection_timeout});
  sys_cfg.set("scheduler.max-threads", static_cast<size_t>(cfg.threads));
  // Incoming messages are deserialized on the middleman's thread, not handed
  // to a BASP worker: one thread hop less per client round trip (halves the
  // CAF overhead of a sync call on loopback, tools/bench/README.md).
  sys_cfg.set("middleman.workers", size_t{0});
  sys_cfg.set("logger.file-verbosity", caf::atom("quiet"));
  sys_cfg.set("logger.console-verbosity", caf::atom("quiet"));
}

} // namespace gleam::tools
