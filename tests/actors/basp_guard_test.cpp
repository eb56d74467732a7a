// A peer that reaches a CAF port declares a huge payload in a 32-byte BASP
// header: the process must refuse it before allocating anything, close that
// connection, and go on serving the others (actors/basp_guard.hpp).
#include <catch2/catch.hpp>

#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <caf/all.hpp>
#include <caf/io/all.hpp>
#include <caf/io/basp/version.hpp>

#include "actors/basp_guard.hpp"
#include "actors/network.hpp"
#include "tests/support/raw_peers.hpp"

using namespace gleam;
using namespace gleam::test;
using namespace std::chrono_literals;

namespace {

/// This process's resident set in bytes (VmRSS).
uint64_t resident_bytes() {
  std::ifstream status{"/proc/self/status"};
  std::string key;
  while (status >> key) {
    if (key == "VmRSS:") {
      uint64_t kib = 0;
      status >> kib;
      return kib << 10;
    }
    std::getline(status, key);
  }
  return 0;
}

void put_be(unsigned char* at, uint64_t v, int bytes) {
  for (int i = bytes - 1; i >= 0; --i, v >>= 8)
    at[i] = static_cast<unsigned char>(v & 0xff);
}

/// A BASP header as CAF 0.17 writes it (network byte order): a server
/// handshake of BASP's version, declaring `payload` bytes to follow, which
/// CAF's own check accepts.
std::vector<unsigned char> handshake_header(uint32_t payload) {
  std::vector<unsigned char> h(32, 0);
  h[0] = 0x00; // server_handshake
  put_be(&h[4], payload, 4);
  put_be(&h[8], caf::io::basp::version, 8);
  return h;
}

} // namespace

TEST_CASE("a CAF header declaring more than the message limit is refused before any "
          "allocation, and the port serves other peers meanwhile",
          "[actors][security]") {
  // libcaf_io's check of each header binds to the guard in this binary.
  REQUIRE(actors::basp_guard_active());
  REQUIRE(actors::basp_message_limit() == actors::default_max_message_bytes);
  published_echo server;
  REQUIRE(server.port);
  auto port = *server.port;
  plain_system_config client_cfg;
  caf::actor_system client{client_cfg};
  auto remote = actors::remote_actor<caf::actor>(client, "127.0.0.1", port, false);
  REQUIRE(remote);

  // A well-behaved client's round trips go on while 100 peers each declare
  // a 3 GiB message.
  std::atomic<bool> attacking{true};
  std::vector<double> waits_ms;
  int answered = 0, asked = 0;
  std::thread honest{[&] {
    caf::scoped_actor self{client};
    while (attacking.load()) {
      auto t0 = std::chrono::steady_clock::now();
      ++asked;
      self->request(*remote, 5s, asked).receive(
        [&](int y) {
          if (y == asked + 1)
            ++answered;
        },
        [](caf::error&) {});
      waits_ms.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
          .count());
    }
  }};
  auto before = resident_bytes();
  auto refused_before = actors::basp_headers_refused();
  std::vector<int> peers;
  auto header = handshake_header(3u << 30);
  for (int i = 0; i < 100; ++i) {
    int fd = dial(port);
    REQUIRE(fd >= 0);
    REQUIRE(send(fd, header.data(), header.size(), MSG_NOSIGNAL)
            == static_cast<ssize_t>(header.size()));
    peers.push_back(fd);
  }
  int closed = 0;
  for (int fd : peers) {
    closed += closed_by_peer(fd, 5s) ? 1 : 0;
    close(fd);
  }
  auto after = resident_bytes();
  std::this_thread::sleep_for(200ms);
  attacking = false;
  honest.join();

  CHECK(closed == 100);
  CHECK(actors::basp_headers_refused() - refused_before == 100);
  INFO("resident set before " << (before >> 20) << " MiB, after " << (after >> 20) << " MiB");
  CHECK(after < before + (uint64_t{64} << 20));
  CHECK(asked > 0);
  CHECK(answered == asked);
  std::sort(waits_ms.begin(), waits_ms.end());
  if (!waits_ms.empty())
    std::printf("basp guard: %zu round trips during the attack, p50 %.3f ms, p99 %.3f ms, "
                "max %.3f ms; resident set +%.1f MiB\n",
                waits_ms.size(), waits_ms[waits_ms.size() / 2],
                waits_ms[std::min(waits_ms.size() - 1, waits_ms.size() * 99 / 100)],
                waits_ms.back(),
                static_cast<double>(after > before ? after - before : 0) / (1 << 20));
}

TEST_CASE("the message limit never drops below Gleam's own largest message",
          "[actors][security]") {
  auto was = actors::basp_message_limit();
  actors::limit_basp_messages(1000);
  CHECK(actors::basp_message_limit() == uint64_t{1} << 20);
  actors::limit_basp_messages(uint64_t{64} << 20);
  CHECK(actors::basp_message_limit() == uint64_t{64} << 20);
  actors::limit_basp_messages(was);
}
