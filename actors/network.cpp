#include "actors/network.hpp"

#include <chrono>
#include <set>

#include <caf/io/middleman.hpp>
#include <caf/openssl/all.hpp>
#include <caf/scoped_actor.hpp>

#include "actors/basp_guard.hpp"
#include "actors/log.hpp"
#include "actors/tls_error_guard.hpp"

namespace gleam::actors {

void load_network(caf::actor_system_config& cfg, const config::tls_config& tls) {
  cfg.load<caf::io::middleman>();
  if (!basp_guard_active())
    log(log_level::warning,
        "this process resolves caf::io::basp::valid to a library loaded before gleam's, so a "
        "peer can make it allocate the payload length it declares (up to 4 GiB) per "
        "connection");
  if (!tls.enabled)
    return;
  if (!tls_error_guard_active())
    log(log_level::warning,
        "TLS: this process resolves SSL_read to a library loaded before gleam's, so one failed "
        "TLS connection may close the others (CAF 0.17.6 leaves OpenSSL's error queue "
        "uncleared); load gleam first (LD_PRELOAD=libgleam_interpose.so) if connections drop");
  cfg.load<caf::openssl::manager>();
  cfg.openssl_certificate = tls.certificate;
  cfg.openssl_key = tls.key;
  cfg.openssl_cafile = tls.ca_file;
}

caf::io::middleman_actor network_handle(caf::actor_system& sys, bool tls) {
  if (tls)
    return sys.openssl_manager().actor_handle();
  return sys.middleman().actor_handle();
}

void unpublish(caf::actor_system& sys, const caf::actor_addr& whom, uint16_t port, bool tls) {
  // Through the middleman actor: caf::openssl::unpublish of CAF 0.17 does
  // not compile.
  caf::scoped_actor self{sys};
  self->request(network_handle(sys, tls), std::chrono::seconds{1}, caf::unpublish_atom::value,
                whom, port)
    .receive([] {}, [](caf::error&) {});
}

} // namespace gleam::actors
