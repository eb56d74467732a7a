#pragma once

// Peers of a CAF port for tests of what a hostile peer can do to it: plain
// TCP connections that speak as much (or as little) BASP as a test wants,
// next to well-behaved CAF actor systems.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <optional>

#include <caf/all.hpp>
#include <caf/io/all.hpp>

#include "actors/network.hpp"

namespace gleam::test {

/// An actor system with CAF's middleman (plain TCP), quiet.
struct plain_system_config : caf::actor_system_config {
  plain_system_config() {
    actors::load_network(*this, config::tls_config{});
    set("logger.file-verbosity", caf::atom("quiet"));
    set("logger.console-verbosity", caf::atom("quiet"));
  }
};

/// Stops `actor` at scope exit, so that its system can shut down.
struct stop_at_exit {
  caf::actor actor;
  ~stop_at_exit() {
    caf::anon_send_exit(actor, caf::exit_reason::user_shutdown);
  }
};

/// An actor of `sys` that answers x with x + 1: what the tests publish.
inline caf::actor spawn_echo(caf::actor_system& sys) {
  return sys.spawn([]() -> caf::behavior { return {[](int x) { return x + 1; }}; });
}

/// The echo actor `remote`'s answer to `x` through `self`, within 5 s; none
/// on an error or timeout.
inline std::optional<int> ask_echo(caf::scoped_actor& self, const caf::actor& remote, int x) {
  std::optional<int> answer;
  self->request(remote, std::chrono::seconds{5}, x)
    .receive([&](int y) { answer = y; }, [](caf::error&) {});
  return answer;
}

/// An echo actor (spawn_echo) published on 127.0.0.1 by an actor system of
/// its own, plain TCP; `port` holds the port, or why it has none.
struct published_echo {
  plain_system_config cfg;
  caf::actor_system sys{cfg};
  caf::actor echo = spawn_echo(sys);
  stop_at_exit stop{echo};
  caf::expected<uint16_t> port = actors::publish(sys, echo, 0, "127.0.0.1", false);
};

/// A TCP connection to 127.0.0.1:port; -1 on failure.
inline int dial(uint16_t port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0)
    return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

/// Whether the peer closed `fd` within `timeout`; what it sends before
/// (the server's own handshake) is read and dropped.
inline bool closed_by_peer(int fd, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  char buf[4096];
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 20) <= 0)
      continue;
    if (recv(fd, buf, sizeof(buf), 0) <= 0)
      return true;
  }
  return false;
}

} // namespace gleam::test
