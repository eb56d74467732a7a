#pragma once

#include <cstdint>
#include <string>

#include <caf/actor.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include "actors/atoms.hpp"
#include "actors/pb.hpp"
#include "actors/proto/control.pb.h"
#include "actors/proto/ops.pb.h"

namespace gleam::actors {

/// One per GPU. Owns the sessions on its device and executes their ops in
/// issue order (see executor/executor.hpp).
using gpu_server_actor = caf::typed_actor<
  // Opens a session; the reply names the devices the client will see and
  // carries the session's secret. A resume must carry that secret.
  caf::replies_to<open_atom, pb<proto::OpenSession>>::with<pb<proto::SessionOpened>>,
  // Executes a batch of ops of one session; one result per op. A batch
  // whose session_secret is not its session's is refused (session_unknown,
  // the same answer as for an unknown session) and nothing in it runs.
  caf::replies_to<pb<proto::OpBatch>>::with<pb<proto::BatchReply>>,
  // Ends a session and frees everything it holds (true). A close whose
  // secret is not the session's is refused like a batch.
  caf::replies_to<close_atom, pb<proto::CloseSession>>::with<bool>,
  // Sessions and GPU state, for telemetry and the console.
  caf::replies_to<status_atom>::with<pb<proto::NodeStatus>>,
  // The node's maintenance state, from its scheduler: while draining, new
  // sessions are refused (resumes go on); past the deadline the sessions
  // still open are ended.
  caf::reacts_to<drain_atom, pb<proto::DrainState>>,
  // gleam-console "session kill ID" (through the node, which checks the
  // admin token): ends the session at once; false when it is not open here.
  caf::replies_to<kill_atom, uint64_t>::with<bool>,
  // Internal timer: a session whose client vanished expires after the
  // grace period unless the client came back.
  caf::reacts_to<tick_atom, uint64_t>>;

/// The cluster's scheduler: membership, health and placement.
using scheduler_actor = caf::typed_actor<
  // A node joins (or rejoins after a restart).
  caf::replies_to<register_atom, pb<proto::NodeRegister>>::with<pb<proto::NodeRegistered>>,
  // Periodic liveness + telemetry from a node; the ack measures the RTT.
  caf::replies_to<heartbeat_atom, pb<proto::Heartbeat>>::with<pb<proto::HeartbeatAck>>,
  // Picks a GPU server for a client task.
  caf::replies_to<place_atom, pb<proto::PlacementRequest>>::with<pb<proto::PlacementReply>>,
  // The cluster view for the console.
  caf::replies_to<view_atom>::with<pb<proto::ClusterView>>,
  // The latency model's view of one task (console "placement explain").
  caf::replies_to<explain_atom, pb<proto::PlacementExplain>>::with<
    pb<proto::PlacementExplanation>>,
  // Fitted contention factors per GPU type and resource (console "gamma").
  caf::replies_to<gamma_atom>::with<pb<proto::GammaTable>>,
  // Requests waiting for a server (console "queue").
  caf::replies_to<queue_atom>::with<pb<proto::PlacementQueue>>,
  // Drains or undrains a node (console "drain" / "undrain"): no new
  // placements on it while draining; the reply is the node as the view
  // shows it.
  caf::replies_to<drain_atom, pb<proto::DrainRequest>>::with<pb<proto::NodeStatus>>,
  // Internal timer: sweeps nodes whose heartbeats stopped.
  caf::reacts_to<tick_atom>>;

/// A node's weight cache as peers and the console see it: runs the cache
/// ops that need no GPU (CacheGet, CacheStats, CacheList, CacheEvict) on
/// the node's store, one OpResult per op. See actors/cache_shard.hpp.
using cache_shard_actor = caf::typed_actor<
  caf::replies_to<pb<proto::OpBatch>>::with<pb<proto::BatchReply>>>;

/// Published on each node's port: the entry point through which clients,
/// peers and the console reach the node's role actors.
using node_actor = caf::typed_actor<
  caf::replies_to<get_scheduler_atom>::with<scheduler_actor>,
  caf::replies_to<get_gpu_atom, uint32_t>::with<gpu_server_actor>,
  // The node's weight cache (gpu_server or cache_shard role with a store).
  caf::replies_to<get_shard_atom>::with<cache_shard_actor>,
  caf::replies_to<status_atom>::with<pb<proto::NodeStatus>>,
  // (gpu, session, its secret, the client's new proxy): a reconnecting
  // client of `session` takes back the host calls of its graphs
  // (actors/host_call_router.hpp); false unless the secret is the session's.
  caf::replies_to<host_attach_atom, uint32_t, uint64_t, std::string, caf::actor>::with<bool>,
  // gleam-console "session kill NODE ID": (session, admin token) ends the
  // session on whichever of the node's GPUs has it (true), false when none
  // does; refused (unauthorized) without the node's admin token.
  caf::replies_to<kill_atom, uint64_t, std::string>::with<bool>,
  // Internal timer: (re)connects to the scheduler, registers, heartbeats.
  caf::reacts_to<tick_atom>>;

} // namespace gleam::actors
