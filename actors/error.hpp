#pragma once

#include <cstdint>
#include <string>

#include <caf/error.hpp>

namespace gleam::actors {

/// Errors of the actor layer. Each carries a message saying what to do.
enum class error_code : uint8_t {
  unknown_node = 1,   // a heartbeat from a node the scheduler does not know
  no_such_gpu,        // a gpu index this node does not serve
  not_a_scheduler,    // asked a node without the scheduler role
  connect_failed,     // could not reach a node
  timeout,            // a peer did not answer in time
  no_gpu_server,      // placement found nothing
  session_unknown,
  no_cache,           // a node without a weight cache
  unauthorized,       // OpenSession without the server's auth token
  no_host_function,   // a host call names a function the client never registered
  draining,           // a new session on a node drained for maintenance
  worker_failed,      // a session's worker process could not start or answer
  session_ended,      // the server ended the session (its worker died, an admin killed it, ...)
};

const char* to_string(error_code x);

/// A CAF error of category "gleam_act" carrying `what` as its context.
caf::error make_error(error_code code, std::string what);

/// The refusal a GPU server gives a new session while node `node_id` is
/// drained (error_code::draining), saying where to go instead.
caf::error draining_error(const std::string& node_id);

} // namespace gleam::actors
