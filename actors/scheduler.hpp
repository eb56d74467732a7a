#pragma once

#include <chrono>

#include <caf/actor_system.hpp>

#include "actors/interfaces.hpp"
#include "actors/placement_service.hpp"

namespace gleam::actors {

/// Spawns the scheduler actor: keeps the membership (actors/membership.hpp),
/// marks nodes down after `down_after` without a heartbeat (CAF 0.17 does not
/// fail anything when a peer dies, so liveness is ours), and places tasks
/// with the placement library (actors/placement_service.hpp): a request the
/// policy holds back waits in the scheduler's queue and is answered when a
/// server frees up (or after `opts.max_wait`).
scheduler_actor spawn_scheduler(caf::actor_system& sys, std::chrono::milliseconds down_after,
                                placement_options opts = {});

} // namespace gleam::actors
