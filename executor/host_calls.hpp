#pragma once

#include <cstdint>
#include <string>

namespace gleam::executor {

/// The way back from a session's graph to its client: a host node of a
/// session's graph (cudaGraphAddHostNode, or cudaLaunchHostFunc captured
/// into a graph) names a function that lives in the client process, so the
/// server's node calls `call` and the stream waits until the client ran it.
/// Implemented by actors/host_call_router.hpp; the executor holds one per
/// GPU (executor::set_host_calls). Thread-safe: `call` runs on the driver's
/// callback threads while the executor's thread works on.
class host_call_port {
public:
  virtual ~host_call_port() = default;

  /// Runs the client's host function `callback` of session `session` and
  /// returns once the client ran it, or once the session ended (end).
  /// Waits across a reconnect of the client. Called on the driver's
  /// callback thread, which must not call into the driver.
  virtual void call(uint64_t session, uint64_t callback) = 0;

  /// Moves bytes of the host end of a memcpy node, which lives in the
  /// client as host copy `copy` (its packed bytes): with `to_client`
  /// non-empty writes them at `offset` (device to host), else reads `want`
  /// bytes at `offset` into `*from_client` (host to device). At most
  /// max_message_payload bytes a call. Waits across a reconnect like call;
  /// false when the bytes did not move (the session ended, its client
  /// stayed unreachable, or it knows no such copy). Same threads as call.
  virtual bool copy(uint64_t session, uint64_t copy, uint64_t offset,
                    const std::string& to_client, uint64_t want, std::string* from_client) = 0;

  /// Session `session` ends: every call of it returns now, later ones at
  /// once. The executor calls it before it waits for the session's work.
  virtual void end(uint64_t session) = 0;
};

/// What a server host node's user data points at: one (session, callback)
/// pair, owned by the session (session::host_calls) for the lifetime of
/// every graph that uses it.
struct host_call_target {
  host_call_port* port = nullptr;
  uint64_t session = 0;
  uint64_t callback = 0;
};

/// What the host node of a memcpy node with a host end in the client
/// points at: the client's host copy, the session's pinned staging buffer
/// of `size` bytes the node's memcpy reads (to the device) or writes (to
/// the host). Owned by the session for the lifetime of every graph that
/// uses it.
struct host_copy_target {
  host_call_port* port = nullptr;
  uint64_t session = 0;
  uint64_t copy = 0;
  char* staging = nullptr;
  uint64_t size = 0;
  bool to_device = false;
};

} // namespace gleam::executor
