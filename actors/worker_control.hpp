#pragma once

#include <cstdint>
#include <vector>

#include <caf/actor_system.hpp>

#include "actors/interfaces.hpp"
#include "actors/proto/control.pb.h"

namespace gleam::actors {

/// The worker's side of the control channel to its supervisor
/// (actors/worker_link.hpp): says `port` (where the worker listens), then
/// answers each WorkerRequest on `fd` by asking `server` (this worker's GPU
/// server): an open as the supervisor sent it, a status within 1 s (a
/// server busy longer, e.g. in a long kernel, gets an empty status: the
/// supervisor keeps the last). Returns when the supervisor hangs up (it
/// ended, or ends this worker) or the channel breaks. Blocks the calling
/// thread throughout.
void serve_supervisor(caf::actor_system& sys, int fd, uint16_t port, gpu_server_actor server);

/// Sends the supervisor, unasked, the measurements of this worker's
/// sessions that ended (a WorkerReply notice, between serve_supervisor's
/// answers, never inside one). False when the channel is closed.
bool notify_supervisor(int fd, const std::vector<proto::SessionEnded>& ended);

} // namespace gleam::actors
