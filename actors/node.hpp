#pragma once

#include <memory>
#include <vector>

#include <caf/actor_system.hpp>

#include "actors/interfaces.hpp"
#include "actors/telemetry_board.hpp"
#include "config/node_config.hpp"

namespace gleam::actors {

class host_call_router;

/// The role actors a node runs, handed to its node actor.
struct node_roles {
  scheduler_actor scheduler;              // invalid unless the scheduler role
  std::vector<gpu_server_actor> gpus;     // one per served GPU
  std::vector<proto::GpuInfo> gpu_infos;  // same order as gpus
  std::shared_ptr<telemetry_board> board; // posted by the gpu servers
  cache_shard_actor shard;                // invalid when the node has no cache
  /// The gpus' host-call routers, same order: a reconnecting client
  /// reattaches to them through the node (host_attach_atom).
  std::vector<std::shared_ptr<host_call_router>> host_calls;
};

/// Spawns the node actor, the entry point published on the node's port. It
/// connects to the scheduler (its own or the configured remote one),
/// registers, sends heartbeats every heartbeat_interval, and reconnects and
/// re-registers when the scheduler stops answering or restarts. The node
/// actor is linked to its role actors: stopping it stops them. The drain
/// state the scheduler answers with goes to the GPU servers.
node_actor spawn_node(caf::actor_system& sys, const config::node_config& cfg, node_roles roles);

/// This node's registration message.
proto::NodeRegister make_registration(const config::node_config& cfg, const node_roles& roles,
                                      uint64_t start_time_ns);

} // namespace gleam::actors
