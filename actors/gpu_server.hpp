#pragma once

#include <memory>
#include <string>
#include <vector>

#include <caf/actor_system.hpp>
#include <caf/expected.hpp>

#include "actors/auth.hpp" // auth_token_matches, check_auth_token, tenant_of
#include "actors/interfaces.hpp"
#include "actors/telemetry_board.hpp"
#include "config/node_config.hpp"

namespace gleam::executor {
class driver_api;
class weight_cache;
} // namespace gleam::executor

namespace gleam::actors {

class host_call_router;
class multiplexer_loop;

/// The GPU servers of one node and the driver they share. Keep it alive
/// while the actor system runs; the actors hold references into it.
struct gpu_service {
  std::shared_ptr<executor::driver_api> driver;
  std::vector<gpu_server_actor> servers;
  std::vector<proto::GpuInfo> infos;
  /// Each server's way back to its clients for host nodes, same order (null
  /// for a GPU under process isolation: its workers have their own).
  std::vector<std::shared_ptr<host_call_router>> host_calls;
};

/// Loads the CUDA driver and spawns one gpu_server actor, on its own thread, per
/// configured device (all devices when none are named). Each runs its ops on
/// its own thread, in issue order per session, and posts telemetry to
/// `board` slot i. Errors: no driver on this host, a configured device that
/// does not exist.
/// `cache` (may be null) is the node's weight cache, shared by its servers.
/// `loop` (may be null) is the node's polling network loop: a server holds
/// it while it executes a batch. Each server polls its mailbox for
/// [node] poll after a message before it sleeps.
/// `driver` (may be null: libcuda.so.1 is loaded) is the driver to run on;
/// tests pass a fake one (executor/driver_api.hpp) to run the servers
/// without a GPU.
[[nodiscard]] caf::expected<gpu_service>
start_gpu_servers(caf::actor_system& sys, const config::node_config& cfg,
                  const std::shared_ptr<telemetry_board>& board,
                  std::shared_ptr<executor::weight_cache> cache = nullptr,
                  multiplexer_loop* loop = nullptr,
                  std::shared_ptr<executor::driver_api> driver = nullptr);

/// The number of GPUs `start_gpu_servers` would serve, without starting
/// anything; an error says why there are none (e.g. no driver).
/// `driver` (may be null: libcuda.so.1 is loaded) as for start_gpu_servers.
[[nodiscard]] caf::expected<size_t>
count_gpus(const config::node_config& cfg,
           std::shared_ptr<executor::driver_api> driver = nullptr);

} // namespace gleam::actors
