#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>

namespace gleam::actors {

/// Bounds the connections a peer may hold on this process's CAF ports
/// before it has spoken BASP.
///
/// CAF 0.17 keeps an accepted connection open for as long as its peer keeps
/// it: its connection timeout only watches peers that completed BASP's
/// handshake, so a peer that connects and sends nothing (or half a header)
/// holds a socket and its buffers forever, and enough of them exhaust the
/// process's file descriptors, refusing every client after. The guard
/// (listener_guard.cpp, linked into gleamd only) defines accept() and recv()
/// with default visibility, as tls_error_guard.cpp does SSL_read: libcaf_io's
/// calls bind to them. Each accepted connection is pending until its peer
/// sends a BASP message past the handshake (actors/basp_guard.hpp's
/// observer); a connection still pending after `handshake_timeout` is shut
/// down (CAF then closes it), and a new connection is refused at once (its
/// socket closed) while `max_pending` connections, or `max_pending_per_host`
/// from its peer's address, are pending. Connections past the handshake are
/// CAF's (middleman.connection-timeout) and never shut down by the guard,
/// but they count: a new connection is also refused while `max_open`
/// accepted connections (pending or not), or `max_open_per_host` from its
/// peer's address, are open, so that one address cannot take every file
/// descriptor of the process with handshakes it completes.
struct listener_limits {
  std::chrono::milliseconds handshake_timeout{10000};
  size_t max_pending = 1024;
  size_t max_pending_per_host = 64;
  size_t max_open = 4096;
  size_t max_open_per_host = 256;
};

/// Starts guarding with `limits` (again: new limits). Thread-safe.
void guard_listeners(const listener_limits& limits);

/// Stops guarding: connections accepted from now on are not watched, the
/// pending ones are forgotten. Thread-safe.
void unguard_listeners() noexcept;

/// What the guard did so far.
struct listener_guard_stats {
  /// Connections refused at accept (too many pending).
  uint64_t refused = 0;
  /// Connections shut down for not speaking BASP in time.
  uint64_t timed_out = 0;
  /// Connections pending now.
  size_t pending = 0;
  /// Accepted connections open now (pending or past the handshake).
  size_t open = 0;
};
[[nodiscard]] listener_guard_stats listener_stats() noexcept;

/// Whether this process's accept() resolves to the guard.
[[nodiscard]] bool listener_guard_active() noexcept;

} // namespace gleam::actors
