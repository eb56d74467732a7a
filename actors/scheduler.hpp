#pragma once

#include <chrono>

#include <caf/actor_system.hpp>

#include "actors/auth.hpp"
#include "actors/interfaces.hpp"
#include "actors/placement_service.hpp"

namespace gleam::actors {

/// Spawns the scheduler actor: keeps the membership (actors/membership.hpp),
/// marks nodes down after `down_after` without a heartbeat (CAF 0.17 does not
/// fail anything when a peer dies, so liveness is ours), and places tasks
/// with the placement library (actors/placement_service.hpp): a request the
/// policy holds back waits in the scheduler's queue and is answered when a
/// server frees up (or after `opts.max_wait`).
///
/// A placement request's token names its tenant through `rules` (the
/// scheduler node's [node] auth-token and tenants, checked by `tenant_of`
/// as a gpu_server checks a session's): cache affinity counts only the
/// chunks that tenant may use, and the console's queue and explain name it.
/// A token that names no tenant is refused with error_code::unauthorized.
///
/// Maintenance: a drained node (drain_atom, from the console) gets no new
/// placements; its registration and heartbeat replies carry the drain state,
/// which the node passes to its GPU servers (they refuse new sessions and end
/// those still open past the deadline). The state is kept across the node's
/// restarts until it is undrained.
scheduler_actor spawn_scheduler(caf::actor_system& sys, std::chrono::milliseconds down_after,
                                placement_options opts = {}, admission rules = {});

} // namespace gleam::actors
