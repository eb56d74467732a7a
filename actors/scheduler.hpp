#pragma once

#include <chrono>

#include <caf/actor_system.hpp>

#include "actors/interfaces.hpp"

namespace gleam::actors {

/// Spawns the scheduler actor: keeps the membership (actors/membership.hpp),
/// marks nodes down after `down_after` without a heartbeat (CAF 0.17 does not
/// fail anything when a peer dies, so liveness is ours), answers placement.
scheduler_actor spawn_scheduler(caf::actor_system& sys, std::chrono::milliseconds down_after);

} // namespace gleam::actors
