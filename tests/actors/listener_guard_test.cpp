// Peers that connect to a CAF port and never speak BASP (silent, or half a
// header) are bounded in number and time; connections that did speak are
// never touched (actors/listener_guard.hpp).
#include <catch2/catch.hpp>

#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include <caf/all.hpp>
#include <caf/io/all.hpp>

#include "actors/listener_guard.hpp"
#include "actors/network.hpp"
#include "tests/support/raw_peers.hpp"

using namespace gleam;
using namespace gleam::test;
using namespace std::chrono_literals;

namespace {

/// Guards this process's listeners with `limits` for the scope.
struct guarded_scope {
  explicit guarded_scope(const actors::listener_limits& limits) {
    actors::guard_listeners(limits);
  }
  ~guarded_scope() {
    actors::unguard_listeners();
  }
};

} // namespace

TEST_CASE("connections that never speak BASP are refused past the limits and closed after "
          "the handshake timeout; a client that spoke goes on",
          "[actors][security]") {
  REQUIRE(actors::listener_guard_active());
  actors::listener_limits limits;
  limits.handshake_timeout = 1500ms;
  limits.max_pending = 100;
  limits.max_pending_per_host = 8;
  guarded_scope guard{limits};
  auto before = actors::listener_stats();
  published_echo server;
  REQUIRE(server.port);
  auto port = *server.port;

  plain_system_config client_cfg;
  caf::actor_system client{client_cfg};
  auto remote = actors::remote_actor<caf::actor>(client, "127.0.0.1", port, false);
  REQUIRE(remote);
  caf::scoped_actor self{client};
  auto ask = [&](int x) { return ask_echo(self, *remote, x); };
  CHECK(ask(1) == std::optional<int>{2});

  // Eight peers from this address hold connections without a word (four
  // silent, four with half a header): the ninth is refused at once.
  std::vector<int> idle;
  for (int i = 0; i < 8; ++i) {
    int fd = dial(port);
    REQUIRE(fd >= 0);
    if (i % 2 == 1) {
      const char half[10] = {};
      REQUIRE(send(fd, half, sizeof(half), MSG_NOSIGNAL) == 10);
    }
    idle.push_back(fd);
  }
  // Accepting runs on CAF's network thread: wait until it took all eight.
  for (int i = 0; i < 100 && actors::listener_stats().pending < 8; ++i)
    std::this_thread::sleep_for(10ms);
  CHECK(actors::listener_stats().pending == 8);
  int ninth = dial(port);
  REQUIRE(ninth >= 0);
  CHECK(closed_by_peer(ninth, 1000ms));
  close(ninth);
  CHECK(actors::listener_stats().refused - before.refused == 1);
  // The client that spoke BASP is not one of them.
  CHECK(ask(2) == std::optional<int>{3});

  // Past the handshake timeout, each idle connection is closed.
  auto t0 = std::chrono::steady_clock::now();
  int closed = 0;
  for (int fd : idle) {
    closed += closed_by_peer(fd, 4000ms) ? 1 : 0;
    close(fd);
  }
  CHECK(closed == 8);
  CHECK(std::chrono::steady_clock::now() - t0 >= 1000ms);
  CHECK(actors::listener_stats().timed_out - before.timed_out == 8);
  CHECK(actors::listener_stats().pending == 0);

  // Well past the timeout, the client's connection still serves, and a new
  // client connects.
  CHECK(ask(3) == std::optional<int>{4});
  caf::actor_system late{client_cfg};
  auto again = actors::remote_actor<caf::actor>(late, "127.0.0.1", port, false);
  REQUIRE(again);
  caf::scoped_actor late_self{late};
  CHECK(ask_echo(late_self, *again, 10) == std::optional<int>{11});
}

TEST_CASE("an address holding its limit of open connections gets no more until one closes",
          "[actors][security]") {
  REQUIRE(actors::listener_guard_active());
  actors::listener_limits limits;
  limits.max_open_per_host = 2;
  guarded_scope guard{limits};
  auto before = actors::listener_stats();
  published_echo server;
  REQUIRE(server.port);
  auto port = *server.port;

  // Two clients that completed the handshake hold the address's two slots.
  plain_system_config cfg;
  auto first = std::make_unique<caf::actor_system>(cfg);
  caf::actor_system second{cfg};
  auto a = actors::remote_actor<caf::actor>(*first, "127.0.0.1", port, false);
  auto b = actors::remote_actor<caf::actor>(second, "127.0.0.1", port, false);
  REQUIRE(a);
  REQUIRE(b);
  caf::scoped_actor self_b{second};
  CHECK(ask_echo(self_b, *b, 1) == std::optional<int>{2});
  CHECK(actors::listener_stats().open == 2);

  // A third connection from the address is refused at once.
  int third = dial(port);
  REQUIRE(third >= 0);
  CHECK(closed_by_peer(third, 1000ms));
  close(third);
  CHECK(actors::listener_stats().refused - before.refused == 1);
  CHECK(ask_echo(self_b, *b, 2) == std::optional<int>{3});

  // Once the first client is gone, a new client gets its slot.
  first.reset();
  for (int i = 0; i < 200 && actors::listener_stats().open > 1; ++i)
    std::this_thread::sleep_for(10ms);
  caf::actor_system late{cfg};
  auto c = actors::remote_actor<caf::actor>(late, "127.0.0.1", port, false);
  REQUIRE(c);
  caf::scoped_actor self_c{late};
  CHECK(ask_echo(self_c, *c, 5) == std::optional<int>{6});
}
