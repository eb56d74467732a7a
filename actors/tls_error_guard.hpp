#pragma once

namespace gleam::actors {

/// Keeps one failed TLS connection from closing the healthy ones.
///
/// OpenSSL's SSL_get_error() reads the calling thread's error queue first:
/// when the queue holds an error, an SSL_read that merely ran out of data
/// (SSL_ERROR_WANT_READ) is reported as SSL_ERROR_SSL. OpenSSL therefore
/// requires the queue to be empty before each SSL_read / SSL_write. CAF
/// 0.17.6's OpenSSL module (caf::openssl::session) never empties it, and all
/// connections of a process share the multiplexer's thread: after one
/// handshake fails (a plaintext peer, a port scan, a wrong certificate) or one
/// peer drops its connection (OpenSSL 3 queues "unexpected eof"), the next
/// idle read of every other TLS connection of that process fails and CAF
/// closes it. A gpu_server's registration or a console's reply is lost that
/// way, again after each reconnect while the failing peer keeps retrying.
///
/// tls_error_guard.cpp defines SSL_read and SSL_write with default visibility:
/// the executable (or libgleam_interpose.so) that links gleam_actors exports
/// them, the dynamic linker binds libcaf_openssl's calls to them, and they
/// empty the queue, then call OpenSSL's own. Errors that a call itself raises
/// stay in the queue for SSL_get_error, as OpenSSL documents.
///
/// Returns whether this process's SSL_read resolves to the guard, i.e.
/// whether no library loaded before ours (an app that links libssl itself)
/// took precedence. Thread-safe.
[[nodiscard]] bool tls_error_guard_active() noexcept;

} // namespace gleam::actors
