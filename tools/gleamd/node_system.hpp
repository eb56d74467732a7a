#pragma once

#include <caf/actor_system_config.hpp>

#include "config/node_config.hpp"

namespace gleam::tools {

/// The actor system settings of a gleamd process, node or worker: message
/// types, the network (TLS) and its guards, heartbeats and timeouts,
/// threads. The caller adds the polling network loop.
void configure_node_system(caf::actor_system_config& sys_cfg, const config::node_config& cfg);

} // namespace gleam::tools
