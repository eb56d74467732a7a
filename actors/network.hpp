#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/expected.hpp>
#include <caf/io/middleman.hpp>
#include <caf/io/middleman_actor.hpp>
#include <caf/openssl/publish.hpp>
#include <caf/openssl/remote_actor.hpp>

#include "actors/tls_peer_names.hpp"
#include "config/tls_config.hpp"

namespace gleam::actors {

/// middleman.connection-timeout of every node and client: a peer from which
/// no whole message came for this long is taken for lost (a host that
/// vanished without a TCP reset), however much of a large one is on its way.
constexpr std::chrono::seconds connection_timeout{2};

/// Loads the network modules into `cfg`: CAF's middleman always and, when
/// `tls.enabled`, caf::openssl::manager with the certificate, key and CA file
/// of `tls` (validated by config::validate_tls before). Every CAF message
/// a peer sends is then bounded by actors/basp_guard.hpp's limit. Call
/// before the actor system is constructed.
void load_network(caf::actor_system_config& cfg, const config::tls_config& tls);

/// The middleman actor that opens connections: the OpenSSL manager's when
/// `tls`, the plain middleman's otherwise. The system must have been built
/// from a config passed through load_network with the same `tls`.
[[nodiscard]] caf::io::middleman_actor network_handle(caf::actor_system& sys, bool tls);

/// Publishes `whom` on `port` (0 = any) at `bind` (nullptr = every
/// interface), over TLS when `tls`, with its typed interface. Returns the
/// port.
template <class Handle>
[[nodiscard]] caf::expected<uint16_t> publish(caf::actor_system& sys, const Handle& whom,
                                              uint16_t port, const char* bind, bool tls) {
  if (tls)
    return caf::openssl::publish(whom, port, bind, true);
  return sys.middleman().publish(whom, port, bind, true);
}

/// Closes the listener of `whom` on `port` opened by publish.
void unpublish(caf::actor_system& sys, const caf::actor_addr& whom, uint16_t port, bool tls);

/// Connects to the actor published at host:port, over TLS when `tls`.
template <class Handle>
[[nodiscard]] caf::expected<Handle> remote_actor(caf::actor_system& sys, const std::string& host,
                                                 uint16_t port, bool tls) {
  if (tls) {
    expect_peer_name(host, port); // the certificate must name `host`
    return caf::openssl::remote_actor<Handle>(sys, host, port);
  }
  return sys.middleman().remote_actor<Handle>(host, port);
}

} // namespace gleam::actors
