// The weight cache through real gleamd processes on loopback: the console's
// cache commands, persistence across kill -9, and a chunk fetched from a
// peer node's cache shard instead of from the client.
#include <catch2/catch.hpp>

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <vector>
#include <string>
#include <thread>

#include <caf/all.hpp>
#include <caf/io/all.hpp>

#include "actors/cache_shard.hpp"
#include "actors/type_registry.hpp"
#include "cache_store/error.hpp"
#include "executor/weight_cache.hpp"
#include "tests/support/actor_config.hpp"
#include "tests/support/files.hpp"
#include "tests/support/gpu_probe.hpp"

using namespace std::chrono_literals;
namespace cs = gleam::cache_store;
using gleam::executor::weight_cache;

namespace {

uint16_t free_port() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

std::string temp_dir() {
  char tmpl[] = "/tmp/gleam-cache-test-XXXXXX";
  return mkdtemp(tmpl);
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
}

struct node_process {
  pid_t pid = -1;
  node_process(const std::string& config, const std::string& log) {
    auto bin = gleam::test::build_path("bin/gleamd");
    pid = fork();
    if (pid == 0) {
      freopen(log.c_str(), "w", stderr);
      execl(bin.c_str(), bin.c_str(), ("--config-file=" + config).c_str(), nullptr);
      _exit(127);
    }
  }
  ~node_process() {
    kill9();
  }
  void kill9() {
    if (pid > 0) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
      pid = -1;
    }
  }
};

std::string console(uint16_t port, const std::string& command) {
  std::string out;
  gleam::test::run_command(gleam::test::build_path("bin/gleam-console") + " --scheduler 127.0.0.1:"
                             + std::to_string(port) + " -c '" + command + "' 2>&1",
                           out);
  return out;
}

/// Polls `command` until its output contains `needle` or 15 s pass.
std::string poll(uint16_t port, const std::string& command, const std::string& needle) {
  std::string out;
  for (int i = 0; i < 150; ++i) {
    out = console(port, command);
    if (out.find(needle) != std::string::npos)
      break;
    std::this_thread::sleep_for(100ms);
  }
  return out;
}

std::vector<uint8_t> pattern(uint64_t seed, size_t n) {
  std::vector<uint8_t> out(n);
  std::mt19937_64 rng{seed};
  for (auto& b : out)
    b = static_cast<uint8_t>(rng());
  return out;
}

/// Writes `n` verified chunks of 256 KiB into the store at `dir`; their keys.
std::vector<cs::chunk_key> seed_store(const std::string& dir, int n) {
  gleam::executor::weight_cache_options opts;
  opts.dir = dir;
  auto cache = weight_cache::open(opts);
  REQUIRE(cache);
  std::vector<cs::chunk_key> keys;
  for (int i = 0; i < n; ++i) {
    auto bytes = pattern(static_cast<uint64_t>(i + 1), 256 * 1024);
    auto key = cs::hash_chunk(cs::chunk_key::algo::xxh3_128, bytes.data(), bytes.size());
    REQUIRE((*cache)->verify(key, bytes.data(), bytes.size())
            == weight_cache::verify_outcome::verified);
    keys.push_back(key);
  }
  return keys;
}

std::string node_conf(const std::string& id, uint16_t port, const std::string& dir) {
  return "[node]\nid = \"" + id + "\"\nroles = [\"scheduler\", \"cache_shard\"]\nport = "
         + std::to_string(port) + "\nheartbeat-interval = 100ms\n[cache]\ndir = \"" + dir
         + "\"\n";
}

} // namespace

TEST_CASE("the console shows, lists and evicts cache entries that survive kill -9",
          "[gleamd][cache]") {
  auto dir = temp_dir();
  auto keys = seed_store(dir + "/store", 3);
  auto port = free_port();
  write_file(dir + "/node.conf", node_conf("cache-a", port, dir + "/store"));
  std::string victim = keys[1].to_string();
  {
    node_process node{dir + "/node.conf", dir + "/node.log"};
    auto stats = poll(port, "cache stats", "cache-a");
    INFO(stats);
    REQUIRE(stats.find("cache-a") != std::string::npos);
    CHECK(stats.find("ENTRIES") != std::string::npos);
    auto ls = console(port, "cache ls");
    INFO(ls);
    CHECK(ls.find("(3 entries)") != std::string::npos);
    for (const auto& k : keys)
      CHECK(ls.find(k.to_string()) != std::string::npos);
    CHECK(ls.find("verified") != std::string::npos);
    auto ev = console(port, "cache evict " + victim);
    INFO(ev);
    CHECK(ev.find("evicted 1 entries, 262144 bytes") != std::string::npos);
    CHECK(console(port, "cache evict xxh3:zz").find("error") != std::string::npos);
    CHECK(console(port, "cache frobnicate").find("unknown") != std::string::npos);
    node.kill9(); // no clean shutdown
  }
  node_process again{dir + "/node.conf", dir + "/node2.log"};
  auto ls = poll(port, "cache ls", "entries)");
  INFO(ls);
  CHECK(ls.find("(2 entries)") != std::string::npos);
  CHECK(ls.find(victim) == std::string::npos);
  CHECK(ls.find(keys[0].to_string()) != std::string::npos);
  auto all = console(port, "cache evict --all");
  CHECK(all.find("evicted 2 entries") != std::string::npos);
  CHECK(console(port, "cache ls").find("(0 entries)") != std::string::npos);
}

TEST_CASE("a miss is fetched from a peer node's cache shard, not from the client",
          "[gleamd][cache]") {
  auto dir = temp_dir();
  auto keys = seed_store(dir + "/store", 2);
  auto port = free_port();
  write_file(dir + "/node.conf", node_conf("shard-a", port, dir + "/store"));
  node_process node{dir + "/node.conf", dir + "/node.log"};
  REQUIRE(poll(port, "cache stats", "shard-a").find("shard-a") != std::string::npos);

  // Node B: this process, with an empty store and node A as its peer.
  caf::actor_system_config sys_cfg;
  gleam::test::network_test_config(sys_cfg);
  caf::actor_system sys{sys_cfg};
  auto b = weight_cache::open({});
  REQUIRE(b);
  gleam::actors::shard_client peers{sys, {{"127.0.0.1", port}}, 5s};
  CHECK(peers.rate_bytes_per_s() == 0); // nothing fetched yet
  (*b)->set_peer_fetch([&peers](const cs::chunk_key& k) { return peers.fetch(k); });
  auto expected = pattern(2, 256 * 1024);
  std::vector<uint8_t> got;
  bool from_peer = false;
  auto where = (*b)->fill(
    keys[1],
    [&](const cs::chunk_view& v) -> caf::error {
      auto* p = static_cast<const uint8_t*>(v.data);
      got.assign(p, p + v.size);
      return {};
    },
    &from_peer);
  REQUIRE(where);
  CHECK(from_peer);
  CHECK(got == expected);
  CHECK((*b)->stats().peer_bytes() == expected.size());
  // The fetch of 256 KiB is measured: the rate node B reports to the
  // scheduler for its loads through peers.
  CHECK(peers.rate_bytes_per_s() > 0);
  // Now B holds it itself; a key no peer has is a miss.
  CHECK((*b)->store().contains(keys[1]));
  auto absent = pattern(99, 1000);
  auto miss = (*b)->fill(cs::hash_chunk(cs::chunk_key::algo::xxh3_128, absent.data(), absent.size()),
                         [](const cs::chunk_view&) -> caf::error { return {}; });
  CHECK_FALSE(miss);
  (*b)->set_peer_fetch({});
}

TEST_CASE("listing and evicting need the admin token; only a cluster peer reads a chunk",
          "[gleamd][cache][auth]") {
  auto dir = temp_dir();
  auto keys = seed_store(dir + "/store", 2);
  auto port = free_port();
  const std::string secret = "cluster-secret-for-the-test";
  write_file(dir + "/node.conf",
             "[node]\nid = \"shard-s\"\nroles = [\"scheduler\", \"cache_shard\"]\nport = "
               + std::to_string(port) + "\nheartbeat-interval = 100ms\nauth-token = "
               "\"client-token\"\nadmin-token = \"admin-token-1\"\ncluster-secret = \""
               + secret + "\"\n[cache]\ndir = \"" + dir + "/store\"\n");
  node_process node{dir + "/node.conf", dir + "/node.log"};
  // Read-only statistics need no token.
  REQUIRE(poll(port, "cache stats", "shard-s").find("shard-s") != std::string::npos);
  auto console_with = [&](const std::string& token, const std::string& command) {
    std::string out;
    gleam::test::run_command(gleam::test::build_path("bin/gleam-console") + " --token '" + token
                               + "' --scheduler 127.0.0.1:" + std::to_string(port) + " -c '"
                               + command + "' 2>&1; echo rc=$?",
                             out);
    return out;
  };
  for (std::string token : {"", "client-token"}) {
    INFO("token '" << token << "'");
    auto ev = console_with(token, "cache evict --all");
    INFO(ev);
    CHECK_THAT(ev, Catch::Contains("needs the node's admin token")
                     && Catch::Contains(token.empty() ? "missing" : "wrong")
                     && Catch::EndsWith("rc=1\n"));
    CHECK_THAT(console_with(token, "cache ls"), Catch::Contains("needs the node's admin token"));
    CHECK_THAT(console_with(token, "drain shard-s"),
               Catch::Contains("drain needs the node's admin token"));
  }
  auto ls = console_with("admin-token-1", "cache ls");
  INFO(ls);
  CHECK(ls.find("(2 entries)") != std::string::npos);
  CHECK(ls.find(keys[0].to_string()) != std::string::npos);
  INFO(gleam::test::read_file(dir + "/node.log"));
  CHECK(gleam::test::read_file(dir + "/node.log").find("cache shard refused op") != std::string::npos);

  // A CacheGet straight to the shard: without the cluster's proof it is
  // refused; a peer that proves the secret gets the bytes.
  caf::actor_system_config sys_cfg;
  gleam::test::network_test_config(sys_cfg);
  caf::actor_system sys{sys_cfg};
  auto get = [&](const std::string& peer_secret) {
    gleam::actors::shard_client peer{sys, {{"127.0.0.1", port}}, 5s, peer_secret};
    return peer.fetch(keys[0]);
  };
  CHECK_FALSE(get(""));
  CHECK_FALSE(get("a-secret-of-another-cluster"));
  auto bytes = get(secret);
  REQUIRE(bytes);
  CHECK(*bytes == pattern(1, 256 * 1024));
  // Nothing was evicted along the way.
  CHECK(console_with("admin-token-1", "cache ls").find("(2 entries)") != std::string::npos);
}

namespace {

/// Field `column` (0-based, whitespace-separated) of the `cache stats` row
/// of `node`, as a number; -1 when absent.
long long stats_field(const std::string& table, const std::string& node, size_t column) {
  std::istringstream lines{table};
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(node + " ", 0) != 0)
      continue;
    std::istringstream words{line};
    std::vector<std::string> w;
    for (std::string x; words >> x;)
      w.push_back(x);
    if (column < w.size())
      return std::atoll(w[column].c_str());
  }
  return -1;
}

constexpr size_t received_column = 7;
constexpr size_t verified_column = 4;

} // namespace

TEST_CASE("a second run of a program sends under 1% of its weights, also after kill -9",
          "[gpu][gleamd][cache]") {
  auto dir = temp_dir();
  auto port = free_port();
  write_file(dir + "/node.conf",
             "[node]\nid = \"gpu-cache\"\nroles = [\"all\"]\nport = " + std::to_string(port)
               + "\nadvertise = \"127.0.0.1\"\nheartbeat-interval = 100ms\n[cache]\ndir = \""
               + dir + "/store\"\n");
  auto program = gleam::test::build_path("tests/programs/weights_upload");
  auto run = [&](std::string& out) {
    return gleam::test::run_command("GLEAM_CHECK_NO_DRIVER=1 "
                                      + gleam::test::build_path("bin/gleam-run")
                                      + " --server 127.0.0.1:" + std::to_string(port) + " -- "
                                      + program,
                                    out);
  };
  constexpr long long weights = 256ll << 20;
  std::string first, second, third;
  long long received1 = 0;
  {
    node_process node{dir + "/node.conf", dir + "/node.log"};
    REQUIRE(poll(port, "cache stats", "gpu-cache").find("gpu-cache") != std::string::npos);
    REQUIRE(run(first) == 0);
    auto s1 = console(port, "cache stats");
    INFO(s1);
    received1 = stats_field(s1, "gpu-cache", received_column);
    CHECK(received1 >= weights);
    CHECK(stats_field(s1, "gpu-cache", verified_column) >= 64);
    REQUIRE(run(second) == 0);
    auto s2 = console(port, "cache stats");
    INFO(s2);
    auto received2 = stats_field(s2, "gpu-cache", received_column);
    CHECK(received2 - received1 < weights / 100);
    node.kill9();
  }
  node_process again{dir + "/node.conf", dir + "/node2.log"};
  REQUIRE(poll(port, "cache stats", "gpu-cache").find("gpu-cache") != std::string::npos);
  REQUIRE(run(third) == 0);
  auto s3 = console(port, "cache stats");
  INFO(s3);
  CHECK(stats_field(s3, "gpu-cache", received_column) < weights / 100);
  CHECK(first == second);
  CHECK(first == third);
  CHECK(first.find("checksum weights_upload") != std::string::npos);
}

TEST_CASE("node B fills a program's weights from node A's shard, not from the client",
          "[gpu][gleamd][cache]") {
  auto dir = temp_dir();
  auto port_a = free_port();
  auto port_b = free_port();
  write_file(dir + "/a.conf",
             "[node]\nid = \"node-a\"\nroles = [\"all\"]\nport = " + std::to_string(port_a)
               + "\nadvertise = \"127.0.0.1\"\nheartbeat-interval = 100ms\n[cache]\ndir = \""
               + dir + "/store-a\"\n");
  write_file(dir + "/b.conf",
             "[node]\nid = \"node-b\"\nroles = [\"gpu_server\", \"cache_shard\"]\nport = "
               + std::to_string(port_b) + "\nadvertise = \"127.0.0.1\"\nscheduler = \"127.0.0.1:"
               + std::to_string(port_a) + "\"\nheartbeat-interval = 100ms\n[cache]\ndir = \""
               + dir + "/store-b\"\npeers = [\"127.0.0.1:" + std::to_string(port_a) + "\"]\n");
  auto program = gleam::test::build_path("tests/programs/weights_upload");
  auto run = [&](uint16_t port, std::string& out) {
    return gleam::test::run_command("GLEAM_CHECK_NO_DRIVER=1 "
                                      + gleam::test::build_path("bin/gleam-run")
                                      + " --server 127.0.0.1:" + std::to_string(port) + " -- "
                                      + program,
                                    out);
  };
  constexpr long long weights = 256ll << 20;
  constexpr size_t peer_column = 10;
  node_process a{dir + "/a.conf", dir + "/a.log"};
  REQUIRE(poll(port_a, "cache stats", "node-a").find("node-a") != std::string::npos);
  std::string on_a, on_b;
  REQUIRE(run(port_a, on_a) == 0); // A's cache now holds the weights
  node_process b{dir + "/b.conf", dir + "/b.log"};
  REQUIRE(poll(port_a, "cache stats", "node-b").find("node-b") != std::string::npos);
  REQUIRE(run(port_b, on_b) == 0);
  auto stats = console(port_a, "cache stats");
  INFO(stats);
  CHECK(stats_field(stats, "node-b", received_column) < weights / 100);
  CHECK(stats_field(stats, "node-b", peer_column) >= weights);
  CHECK(on_a == on_b);
}
