// TLS connections of one process share CAF's multiplexer thread and, with it,
// OpenSSL's error queue: a peer whose handshake fails must not close the
// healthy connections (actors/tls_error_guard.hpp).
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdlib>
#include <future>
#include <optional>
#include <string>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <caf/all.hpp>
#include <caf/io/all.hpp>

#include "actors/network.hpp"
#include "actors/tls_error_guard.hpp"
#include "tests/support/raw_peers.hpp"
#include "tests/support/tls_material.hpp"

using namespace gleam;
using namespace std::chrono_literals;

namespace {

std::string temp_dir() {
  char tmpl[] = "/tmp/gleam-tls-guard-test-XXXXXX";
  return mkdtemp(tmpl);
}

/// A TLS-enabled actor system config over the test certificates in `dir`.
struct tls_system_config : caf::actor_system_config {
  explicit tls_system_config(const std::string& dir) {
    config::tls_config tls;
    tls.enabled = true;
    tls.certificate = dir + "/node.pem";
    tls.key = dir + "/node.key";
    tls.ca_file = dir + "/ca.pem";
    actors::load_network(*this, tls);
    set("logger.file-verbosity", caf::atom("quiet"));
    set("logger.console-verbosity", caf::atom("quiet"));
  }
};

/// Leaves an error in the OpenSSL error queue of `sys`'s multiplexer thread,
/// as a failed handshake (a plaintext peer: "wrong version number") or a
/// dropped peer ("unexpected eof") does there, and waits until it did.
void leave_openssl_error(caf::actor_system& sys) {
  std::promise<void> done;
  sys.middleman().backend().post([&] {
    ERR_raise(ERR_LIB_SSL, SSL_R_WRONG_VERSION_NUMBER);
    done.set_value();
  });
  done.get_future().wait();
}

/// An echo actor published over TLS on 127.0.0.1 with the test
/// certificates (which name IP 127.0.0.1 only), and a TLS client system.
struct tls_echo {
  std::string dir = temp_dir();
  bool certificates = test::make_test_certificates(dir);
  tls_system_config server_cfg{dir};
  caf::actor_system server{server_cfg};
  caf::actor echo = test::spawn_echo(server);
  test::stop_at_exit stop_echo{echo};
  caf::expected<uint16_t> port = actors::publish(server, echo, 0, "127.0.0.1", true);
  tls_system_config client_cfg{dir};
  caf::actor_system client{client_cfg};
};

} // namespace

TEST_CASE("a failed TLS handshake leaves the other TLS connections of the process open",
          "[actors][tls]") {
  // libcaf_openssl's SSL_read and SSL_write bind to the guard in this binary.
  REQUIRE(actors::tls_error_guard_active());
  tls_echo t;
  REQUIRE(t.certificates);
  REQUIRE(t.port);
  auto remote = actors::remote_actor<caf::actor>(t.client, "127.0.0.1", *t.port, true);
  REQUIRE(remote);
  caf::scoped_actor self{t.client};
  auto ask = [&](int x) { return test::ask_echo(self, *remote, x); };
  CHECK(ask(1) == std::optional<int>{2});
  // The server's network thread now holds another connection's error ...
  leave_openssl_error(t.server);
  // ... and still serves the healthy connection: each exchange ends with a
  // read that finds no more data, which must not count as a TLS error.
  CHECK(ask(2) == std::optional<int>{3});
  CHECK(ask(3) == std::optional<int>{4});
}

TEST_CASE("a TLS server whose certificate does not name the host the client dialed is refused",
          "[actors][tls]") {
  tls_echo t;
  REQUIRE(t.certificates);
  REQUIRE(t.port);
  // "localhost" reaches the same server, but the certificate (IP 127.0.0.1
  // only, no DNS name) does not name it.
  auto wrong = actors::remote_actor<caf::actor>(t.client, "localhost", *t.port, true);
  CHECK_FALSE(wrong);
  // The address the certificate names is accepted, and serves.
  auto right = actors::remote_actor<caf::actor>(t.client, "127.0.0.1", *t.port, true);
  REQUIRE(right);
  caf::scoped_actor self{t.client};
  CHECK(test::ask_echo(self, *right, 7) == std::optional<int>{8});
}
