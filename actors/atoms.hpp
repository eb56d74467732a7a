#pragma once

#include <caf/atom.hpp>

namespace gleam::actors {

// Atoms tag the requests of the typed interfaces in actors/interfaces.hpp.
// CAF 0.17 atoms hold at most 10 characters.

using register_atom = caf::atom_constant<caf::atom("g_register")>;
using heartbeat_atom = caf::atom_constant<caf::atom("g_heartbt")>;
using place_atom = caf::atom_constant<caf::atom("g_place")>;
using view_atom = caf::atom_constant<caf::atom("g_view")>;
using status_atom = caf::atom_constant<caf::atom("g_status")>;
using get_scheduler_atom = caf::atom_constant<caf::atom("g_getsched")>;
using get_gpu_atom = caf::atom_constant<caf::atom("g_getgpu")>;
using open_atom = caf::atom_constant<caf::atom("g_open")>;
using close_atom = caf::atom_constant<caf::atom("g_close")>;
using tick_atom = caf::atom_constant<caf::atom("g_tick")>;
using explain_atom = caf::atom_constant<caf::atom("g_explain")>;
using gamma_atom = caf::atom_constant<caf::atom("g_gamma")>;
using queue_atom = caf::atom_constant<caf::atom("g_queue")>;
using get_shard_atom = caf::atom_constant<caf::atom("g_getshard")>;
/// A GPU server asks a client to run a host function of a graph
/// (actors/host_call_router.hpp).
using host_call_atom = caf::atom_constant<caf::atom("g_hostcall")>;
/// A GPU server moves bytes of a memcpy node's host end, which lives in the
/// client (actors/host_call_router.hpp, host_call_port::copy).
using host_copy_atom = caf::atom_constant<caf::atom("g_hostcopy")>;
/// A reconnecting client hands its new proxy to a GPU's host-call router,
/// through the node actor (which a blocked GPU server does not hold up).
using host_attach_atom = caf::atom_constant<caf::atom("g_hostatt")>;
/// Maintenance: the console drains or undrains a node at the scheduler, and
/// a node passes the state it learns from its scheduler to its GPU servers.
using drain_atom = caf::atom_constant<caf::atom("g_drain")>;
/// The console ends a session at once (gleam-console "session kill ID");
/// under isolation = process its worker process is killed.
using kill_atom = caf::atom_constant<caf::atom("g_kill")>;
/// A GPU server's supervisor and the threads that talk to its worker
/// processes (actors/worker_link.hpp): a worker listens, answered, ended.
using worker_ready_atom = caf::atom_constant<caf::atom("g_wready")>;
using worker_reply_atom = caf::atom_constant<caf::atom("g_wreply")>;
using worker_exit_atom = caf::atom_constant<caf::atom("g_wexit")>;
using worker_notice_atom = caf::atom_constant<caf::atom("g_wnotice")>;

} // namespace gleam::actors
