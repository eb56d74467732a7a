#include <catch2/catch.hpp>

#include <algorithm>
#include <mutex>
#include <random>

#include "tests/tools/loopback.hpp"
#include "tools/link_emulator/error.hpp"
#include "tools/link_emulator/link_emulator.hpp"

using namespace gleam::tools::link_emulator;
using namespace std::chrono_literals;
using gleam::test::connect_to;
using gleam::test::loopback_server;
using gleam::test::recv_all;
using gleam::test::send_all;
using gleam::test::wait_readable;

namespace {

std::unique_ptr<link_emulator> make_link(uint16_t target, const std::string& spec,
                                         emulator_config cfg = {}) {
  auto parsed = parse_link_spec(spec);
  REQUIRE(parsed);
  cfg.target_port = target;
  cfg.link = *parsed;
  auto em = link_emulator::create(cfg);
  REQUIRE(em);
  (*em)->start();
  return std::move(*em);
}

std::vector<char> random_bytes(size_t n, uint64_t seed) {
  std::vector<char> v(n);
  std::mt19937_64 rng(seed);
  for (size_t i = 0; i + 8 <= n; i += 8) {
    uint64_t x = rng();
    std::memcpy(v.data() + i, &x, 8);
  }
  return v;
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

} // namespace

TEST_CASE("32 MB of random bytes cross the link intact in both directions") {
  loopback_server server(gleam::test::echo);
  // Jitter and loss stalls must not reorder or lose bytes.
  auto em = make_link(server.port(), "unlimited,0.2ms,jitter=0.2ms,loss=0.01%,stall=5ms");
  int fd = connect_to(em->port());
  REQUIRE(fd >= 0);
  auto data = random_bytes(32 << 20, 1);
  std::thread writer([&] {
    send_all(fd, data.data(), data.size());
    shutdown(fd, SHUT_WR);
  });
  std::vector<char> back(data.size());
  bool ok = recv_all(fd, back.data(), back.size());
  writer.join();
  char extra;
  CHECK(recv(fd, &extra, 1, 0) == 0);
  close(fd);
  REQUIRE(ok);
  CHECK(back == data);
  auto st = em->stats();
  CHECK(st.bytes_up == data.size());
  CHECK(st.bytes_down == data.size());
}

TEST_CASE("a configured rate is held approximately in each direction") {
  // Rates are taken from the sender's first byte to the receiver's last, so
  // a loaded machine's scheduling hiccups cannot inflate them.
  std::atomic<uint64_t> got{0};
  std::chrono::steady_clock::time_point last_byte;
  loopback_server sink([&](int fd) {
    std::vector<char> buf(1 << 16);
    uint64_t total = 0;
    for (;;) {
      ssize_t k = recv(fd, buf.data(), buf.size(), 0);
      if (k <= 0)
        break;
      total += static_cast<uint64_t>(k);
      last_byte = std::chrono::steady_clock::now();
    }
    got = total;
  });
  // 50 Mbit/s up, 25 Mbit/s down; 2.5 MB up takes ~0.4 s.
  auto em = make_link(sink.port(), "50mbit,1ms/25mbit,1ms");
  int fd = connect_to(em->port());
  REQUIRE(fd >= 0);
  auto data = random_bytes(2'500'000, 2);
  auto start = std::chrono::steady_clock::now();
  REQUIRE(send_all(fd, data.data(), data.size()));
  shutdown(fd, SHUT_WR);
  char c;
  CHECK(recv(fd, &c, 1, 0) == 0);
  close(fd);
  for (int i = 0; i < 500 && got == 0; ++i)
    std::this_thread::sleep_for(10ms);
  REQUIRE(got == data.size());
  double up_bps = static_cast<double>(got) * 8
                  / std::chrono::duration<double>(last_byte - start).count();
  CHECK(up_bps == Approx(50e6).epsilon(0.15));

  loopback_server source([&](int fd) {
    auto bytes = random_bytes(1'250'000, 3);
    send_all(fd, bytes.data(), bytes.size());
  });
  auto down = make_link(source.port(), "50mbit,1ms/25mbit,1ms");
  auto down_start = std::chrono::steady_clock::now();
  int dfd = connect_to(down->port());
  REQUIRE(dfd >= 0);
  std::vector<char> buf(1 << 16);
  uint64_t total = 0;
  for (;;) {
    ssize_t k = recv(dfd, buf.data(), buf.size(), 0);
    if (k <= 0)
      break;
    total += static_cast<uint64_t>(k);
  }
  double down_bps = static_cast<double>(total) * 8 / seconds_since(down_start);
  close(dfd);
  REQUIRE(total == 1'250'000);
  CHECK(down_bps == Approx(25e6).epsilon(0.15));
}

TEST_CASE("connections crossing one link share its rate evenly") {
  // Two apps of one host upload at once through its uplink: like TCP flows
  // on a real line, each gets about half, so both finish near the time the
  // pair's bytes take at the full rate; the older one must not go first.
  std::mutex m;
  std::vector<std::chrono::steady_clock::time_point> finished;
  loopback_server sink([&](int fd) {
    std::vector<char> buf(1 << 16);
    for (;;)
      if (recv(fd, buf.data(), buf.size(), 0) <= 0)
        break;
    std::lock_guard<std::mutex> lock(m);
    finished.push_back(std::chrono::steady_clock::now());
  });
  // 20 Mbit/s: 1.5 MB each, 3 MB in all take ~1.2 s.
  auto em = make_link(sink.port(), "20mbit,1ms");
  int fds[2] = {connect_to(em->port()), connect_to(em->port())};
  REQUIRE(fds[0] >= 0);
  REQUIRE(fds[1] >= 0);
  auto data = random_bytes(1'500'000, 4);
  auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> senders;
  for (int fd : fds)
    senders.emplace_back([&, fd] {
      send_all(fd, data.data(), data.size());
      shutdown(fd, SHUT_WR);
      char c;
      (void) recv(fd, &c, 1, 0);
      close(fd);
    });
  for (auto& t : senders)
    t.join();
  for (int i = 0; i < 500; ++i) {
    {
      std::lock_guard<std::mutex> lock(m);
      if (finished.size() == 2)
        break;
    }
    std::this_thread::sleep_for(10ms);
  }
  std::lock_guard<std::mutex> lock(m);
  REQUIRE(finished.size() == 2);
  std::sort(finished.begin(), finished.end());
  double first = std::chrono::duration<double>(finished[0] - start).count();
  double second = std::chrono::duration<double>(finished[1] - start).count();
  INFO("first finished at " << first << " s, second at " << second << " s");
  CHECK(second == Approx(3e6 * 8 / 20e6).epsilon(0.2));
  CHECK(first >= 0.8 * second);
}

TEST_CASE("a configured delay shows as RTT of at least twice the delay") {
  loopback_server server(gleam::test::echo);
  auto em = make_link(server.port(), "unlimited,5ms/unlimited,2ms");
  int fd = connect_to(em->port());
  REQUIRE(fd >= 0);
  char msg[64] = {};
  for (int i = 0; i < 5; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    REQUIRE(send_all(fd, msg, sizeof(msg)));
    REQUIRE(recv_all(fd, msg, sizeof(msg)));
    CHECK(seconds_since(t0) >= 0.007);
  }
  close(fd);
}

TEST_CASE("a hold cut delivers nothing until restored, then every byte") {
  loopback_server server(gleam::test::echo);
  emulator_config cfg;
  cfg.control_port = 0;
  auto em = make_link(server.port(), "unlimited", cfg);
  int fd = connect_to(em->port());
  REQUIRE(fd >= 0);
  auto warm = random_bytes(4096, 4);
  std::vector<char> back(warm.size());
  REQUIRE(send_all(fd, warm.data(), warm.size()));
  REQUIRE(recv_all(fd, back.data(), back.size()));
  CHECK(back == warm);

  int ctl = connect_to(em->control_port());
  REQUIRE(ctl >= 0);
  std::string cmd = "cut\n";
  REQUIRE(send_all(ctl, cmd.data(), cmd.size()));
  char reply[64] = {};
  REQUIRE(recv(ctl, reply, sizeof(reply) - 1, 0) > 0);
  CHECK(std::string(reply) == "ok cut\n");
  CHECK(em->stats().cut);

  auto during = random_bytes(100'000, 5);
  REQUIRE(send_all(fd, during.data(), during.size()));
  CHECK(wait_readable(fd, 300) == -1);
  // New connections are held too, not refused.
  int late = connect_to(em->port());
  REQUIRE(late >= 0);
  REQUIRE(send_all(late, "ping", 4));
  CHECK(wait_readable(late, 100) == -1);

  cmd = "stats\n";
  REQUIRE(send_all(ctl, cmd.data(), cmd.size()));
  std::string line;
  while (line.empty() || line.back() != '\n') {
    char ch;
    REQUIRE(recv(ctl, &ch, 1, 0) == 1);
    line += ch;
  }
  CHECK(line.rfind("stats bytes_up=4096 bytes_down=4096 ", 0) == 0);
  CHECK(line.find(" cut=1") != std::string::npos);

  cmd = "restore\n";
  REQUIRE(send_all(ctl, cmd.data(), cmd.size()));
  std::vector<char> after(during.size());
  REQUIRE(recv_all(fd, after.data(), after.size()));
  CHECK(after == during);
  char pong[4];
  REQUIRE(recv_all(late, pong, 4));
  CHECK(std::string(pong, 4) == "ping");
  CHECK(!em->stats().cut);
  CHECK(em->stats().cuts == 1);
  close(late);
  close(fd);
  close(ctl);
}

TEST_CASE("a timed cut restores itself without closing connections") {
  loopback_server server(gleam::test::echo);
  auto em = make_link(server.port(), "unlimited");
  int fd = connect_to(em->port());
  REQUIRE(fd >= 0);
  REQUIRE(send_all(fd, "a", 1));
  char c;
  REQUIRE(recv_all(fd, &c, 1));
  em->cut(800ms, cut_mode::hold);
  for (int i = 0; i < 100 && !em->stats().cut; ++i)
    std::this_thread::sleep_for(5ms);
  REQUIRE(send_all(fd, "b", 1));
  CHECK(wait_readable(fd, 200) == -1);
  REQUIRE(recv_all(fd, &c, 1));
  CHECK(c == 'b');
  CHECK(!em->stats().cut);
  close(fd);
}

TEST_CASE("a scripted cut holds bytes of connections made during it") {
  loopback_server server(gleam::test::echo);
  emulator_config cfg;
  cfg.cut_at = 0ms;
  cfg.cut_for = 1s;
  auto em = make_link(server.port(), "unlimited", cfg);
  int fd = connect_to(em->port());
  REQUIRE(fd >= 0);
  REQUIRE(send_all(fd, "xyz", 3));
  CHECK(wait_readable(fd, 300) == -1);
  char buf[3];
  REQUIRE(recv_all(fd, buf, 3));
  CHECK(std::string(buf, 3) == "xyz");
  CHECK(em->stats().cuts == 1);
  close(fd);
}

TEST_CASE("a reset cut closes connections and refuses new ones until restored") {
  loopback_server server(gleam::test::echo);
  auto em = make_link(server.port(), "unlimited");
  int fd = connect_to(em->port());
  REQUIRE(fd >= 0);
  REQUIRE(send_all(fd, "a", 1));
  char c;
  REQUIRE(recv_all(fd, &c, 1));
  em->cut(0ns, cut_mode::reset);
  // The open connection ends (reset or EOF).
  CHECK(wait_readable(fd, 2000) == 0);
  close(fd);
  // A new one is accepted and reset at once.
  int refused = connect_to(em->port());
  if (refused >= 0) {
    CHECK(wait_readable(refused, 2000) == 0);
    close(refused);
  }
  em->restore();
  for (int i = 0; i < 100 && em->stats().cut; ++i)
    std::this_thread::sleep_for(5ms);
  int again = connect_to(em->port());
  REQUIRE(again >= 0);
  REQUIRE(send_all(again, "b", 1));
  REQUIRE(recv_all(again, &c, 1));
  CHECK(c == 'b');
  close(again);
}

TEST_CASE("the control socket rejects unknown commands with usage") {
  loopback_server server(gleam::test::echo);
  emulator_config cfg;
  cfg.control_port = 0;
  auto em = make_link(server.port(), "unlimited", cfg);
  int ctl = connect_to(em->control_port());
  REQUIRE(ctl >= 0);
  std::string cmd = "explode\n";
  REQUIRE(send_all(ctl, cmd.data(), cmd.size()));
  char reply[256] = {};
  REQUIRE(recv(ctl, reply, sizeof(reply) - 1, 0) > 0);
  CHECK(std::string(reply)
        == "error unknown command 'explode': use cut [DURATION] [hold|reset], restore, "
           "or stats\n");
  close(ctl);
}

TEST_CASE("an unreachable listen address is an error naming it") {
  emulator_config cfg;
  cfg.listen_host = "256.1.1.1";
  cfg.target_port = 1;
  auto em = link_emulator::create(cfg);
  REQUIRE(!em);
  CHECK(describe(em.error()).find("256.1.1.1") != std::string::npos);
}
