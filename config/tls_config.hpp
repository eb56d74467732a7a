#pragma once

#include <string>

#include <caf/error.hpp>

namespace gleam::config {

/// TLS between Gleam processes ([tls] section of node and client configs,
/// GLEAM_TLS* for clients). When enabled, all three files are mandatory:
/// CAF 0.17's OpenSSL module would otherwise fall back to anonymous,
/// unauthenticated TLS, so a config that enables TLS without them is refused.
struct tls_config {
  /// [tls] enabled / GLEAM_TLS=on.
  bool enabled = false;
  /// PEM certificate of this process ([tls] certificate / GLEAM_TLS_CERT).
  std::string certificate;
  /// PEM private key of `certificate` ([tls] key / GLEAM_TLS_KEY).
  std::string key;
  /// PEM CA bundle that peers' certificates must chain to
  /// ([tls] ca-file / GLEAM_TLS_CA).
  std::string ca_file;
};

/// Checks that an enabled TLS config names a certificate, key and CA file
/// that exist and are readable. `where_of(key)` renders the location of a
/// key ("file:line: key 'tls.key'" or "environment variable GLEAM_TLS_KEY")
/// for the message. Returns an empty error when TLS is off or complete.
template <class WhereOf>
[[nodiscard]] caf::error validate_tls(const tls_config& tls, WhereOf&& where_of);

/// Untemplated core of validate_tls: `where_*` are the rendered locations.
[[nodiscard]] caf::error validate_tls(const tls_config& tls, const std::string& where_enabled,
                                      const std::string& where_certificate,
                                      const std::string& where_key,
                                      const std::string& where_ca_file);

template <class WhereOf>
caf::error validate_tls(const tls_config& tls, WhereOf&& where_of) {
  if (!tls.enabled)
    return {};
  return validate_tls(tls, where_of("enabled"), where_of("certificate"), where_of("key"),
                      where_of("ca-file"));
}

} // namespace gleam::config
