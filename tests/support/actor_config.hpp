#pragma once

#include <caf/actor_system_config.hpp>
#include <caf/atom.hpp>
#include <caf/io/middleman.hpp>

#include "actors/type_registry.hpp"

namespace gleam::test {

/// An actor system config for a test process that talks to gleam nodes over
/// the network: gleam's message types, the middleman, CAF's logger silent.
inline void network_test_config(caf::actor_system_config& cfg) {
  actors::add_message_types(cfg);
  cfg.load<caf::io::middleman>();
  cfg.set("logger.file-verbosity", caf::atom("quiet"));
  cfg.set("logger.console-verbosity", caf::atom("quiet"));
}

} // namespace gleam::test
