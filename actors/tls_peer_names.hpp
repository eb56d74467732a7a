#pragma once

#include <cstdint>
#include <string>

namespace gleam::actors {

/// Checks the name in a TLS server's certificate, not only its CA.
///
/// CAF 0.17's OpenSSL module verifies that the peer's certificate chains to
/// the `[tls] ca-file` and nothing else: any certificate of the CA would do
/// for any host. Before a TLS connection to `host`:`port` (remote_actor in
/// network.hpp), the expected name is recorded for every address `host`
/// resolves to; tls_peer_names.cpp defines SSL_connect (as
/// tls_error_guard.cpp defines SSL_read; libcaf_openssl's call binds to it),
/// which hands that name to OpenSSL's verification (a DNS name checked
/// against the certificate's subject alternative names, or its common name
/// when it has none; an IP address against its IP entries) before the
/// handshake. A certificate that does not name the host fails the
/// handshake, and the mismatch is logged with both names.
void expect_peer_name(const std::string& host, uint16_t port);

} // namespace gleam::actors
