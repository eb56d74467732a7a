#pragma once

#include <caf/actor_system_config.hpp>

namespace gleam::actors {

/// Registers every message type that crosses node boundaries, in one place.
/// Call on each actor_system_config before constructing the actor system;
/// every node and every client must register the same set.
void add_message_types(caf::actor_system_config& cfg);

} // namespace gleam::actors
