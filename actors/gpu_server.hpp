#pragma once

#include <memory>
#include <string>
#include <vector>

#include <caf/actor_system.hpp>
#include <caf/expected.hpp>

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
  /// Each server's way back to its clients for host nodes, same order.
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
[[nodiscard]] caf::expected<gpu_service>
start_gpu_servers(caf::actor_system& sys, const config::node_config& cfg,
                  const std::shared_ptr<telemetry_board>& board,
                  std::shared_ptr<executor::weight_cache> cache = nullptr,
                  multiplexer_loop* loop = nullptr);

/// Whether OpenSession's `given` token admits the client: true when the
/// server has no token ([node] auth-token empty) or `given` equals it. The
/// time taken does not depend on where the strings differ.
[[nodiscard]] bool auth_token_matches(const std::string& expected,
                                      const std::string& given) noexcept;

/// The error OpenSession `req` gets from a server whose token is
/// `expected` (unauthorized, saying whether the token was missing or wrong
/// and what to set), or none when auth_token_matches.
[[nodiscard]] caf::error check_auth_token(const std::string& expected,
                                          const proto::OpenSession& req);

/// The tenant whose session OpenSession `req` opens: with `tenants`
/// ((name, token) pairs, [node] tenants), the one whose token `req` presents,
/// else the unnamed tenant "" if it presents `auth_token` (when set); without
/// tenants, "" when check_auth_token passes. Otherwise the refusal.
[[nodiscard]] caf::expected<std::string>
tenant_of(const std::string& auth_token,
          const std::vector<std::pair<std::string, std::string>>& tenants,
          const proto::OpenSession& req);

/// The number of GPUs `start_gpu_servers` would serve, without starting
/// anything; an error says why there are none (e.g. no driver).
[[nodiscard]] caf::expected<size_t> count_gpus(const config::node_config& cfg);

} // namespace gleam::actors
