#pragma once

#include <cstdint>

namespace gleam::actors {

/// The most payload one BASP message may declare unless a process sets
/// another limit: 16 times the largest message Gleam itself sends (a cache
/// chunk of 16 MiB), well above any module image.
inline constexpr uint64_t default_max_message_bytes = uint64_t{256} << 20;

/// Bounds what a peer on a CAF port can make this process allocate.
///
/// CAF 0.17's BASP reads a 32-byte header, then allocates and reads as many
/// bytes as its payload_len declares (up to 4 GiB), before it looks at any
/// of them: a peer that reaches the port makes the process allocate that
/// much per connection, and its network thread touch every page. CAF checks
/// each header with caf::io::basp::valid() (exported by libcaf_io, called
/// through its PLT) before it asks for the payload. basp_guard.cpp defines
/// that function with default visibility, as tls_error_guard.cpp does
/// SSL_read: the dynamic linker binds libcaf_io's call to Gleam's, which
/// refuses a header declaring more than the limit (CAF then closes the
/// connection, having allocated nothing) and hands every other header to
/// CAF's own check. Plain and TLS connections alike.
///
/// Sets the limit in bytes (at least 1 MiB, Gleam's own largest bulk
/// message; smaller values are raised to it). Thread-safe.
void limit_basp_messages(uint64_t max_bytes) noexcept;

/// The limit in force.
[[nodiscard]] uint64_t basp_message_limit() noexcept;

/// BASP headers this process refused for declaring more than the limit.
[[nodiscard]] uint64_t basp_headers_refused() noexcept;

/// Whether this process's caf::io::basp::valid resolves to the guard (no
/// library loaded before Gleam's took precedence). Thread-safe.
[[nodiscard]] bool basp_guard_active() noexcept;

/// Called on CAF's network thread for each header that passed both checks,
/// with the socket it came from (basp_socket_read: the one that thread read
/// last) and the header's BASP operation (0 and 1: the handshakes).
using basp_header_observer = void (*)(int socket, uint8_t operation) noexcept;

/// Makes `observer` see every accepted header from now on (null: none).
/// actors/listener_guard.hpp uses it to tell peers that spoke BASP from
/// connections that never did.
void observe_basp_headers(basp_header_observer observer) noexcept;

/// Records that the calling thread reads socket `fd` now (CAF's network
/// thread: a plain recv, or SSL_read on a TLS connection). Cheap.
void note_basp_socket_read(int fd) noexcept;

} // namespace gleam::actors
