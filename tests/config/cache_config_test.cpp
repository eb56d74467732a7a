// The weight cache's settings: [cache] peers on nodes, cache-threshold and
// cache-chunk on clients.
#include <catch2/catch.hpp>

#include <cstring>

#include "config/client_config.hpp"
#include "config/error.hpp"
#include "config/node_config.hpp"

using namespace gleam::config;

namespace {

const char* no_env(const char*) {
  return nullptr;
}

const char* chunk_env(const char* name) {
  if (std::strcmp(name, "GLEAM_CACHE_CHUNK") == 0)
    return "4MiB";
  if (std::strcmp(name, "GLEAM_CACHE_THRESHOLD") == 0)
    return "256KiB";
  return nullptr;
}

const char* huge_chunk_env(const char* name) {
  return std::strcmp(name, "GLEAM_CACHE_CHUNK") == 0 ? "64MiB" : nullptr;
}

} // namespace

TEST_CASE("node configs name cache peers as host:port", "[config][cache]") {
  auto cfg = parse_node_config("[node]\nid = \"a\"\nroles = [\"all\"]\n[cache]\ndir = \"/tmp/x\"\n\n"
                               "peers = [\"10.0.0.8:4751\", \"gpu2:4752\"]\n",
                               "t.conf");
  REQUIRE(cfg);
  REQUIRE(cfg->cache_peers.size() == 2);
  CHECK(cfg->cache_peers[0] == std::pair<std::string, uint16_t>{"10.0.0.8", 4751});
  CHECK(cfg->cache_peers[1] == std::pair<std::string, uint16_t>{"gpu2", 4752});
  auto bad = parse_node_config("[node]\nid = \"a\"\nroles = [\"all\"]\n[cache]\ndir = \"/tmp/x\"\n\n"
                               "peers = [\"nohost\"]\n",
                               "t.conf");
  REQUIRE_FALSE(bad);
  CHECK_THAT(describe(bad.error()), Catch::Contains("cache.peers"));
}

TEST_CASE("clients default to 1 MiB threshold and 16 MiB chunks", "[config][cache]") {
  auto cfg = parse_client_config("", "", no_env);
  REQUIRE(cfg);
  CHECK(cfg->cache_threshold == uint64_t{1} << 20);
  CHECK(cfg->cache_chunk == uint64_t{16} << 20);
  auto env = parse_client_config("", "", chunk_env);
  REQUIRE(env);
  CHECK(env->cache_chunk == uint64_t{4} << 20);
  CHECK(env->cache_threshold == uint64_t{256} << 10);
  auto file = parse_client_config("[client]\ncache-chunk = 1MiB\ncache-threshold = 2MiB\n",
                                  "c.conf", no_env);
  REQUIRE(file);
  CHECK(file->cache_chunk == uint64_t{1} << 20);
  CHECK(file->cache_threshold == uint64_t{2} << 20);
  auto huge = parse_client_config("", "", huge_chunk_env);
  REQUIRE_FALSE(huge);
  CHECK_THAT(describe(huge.error()), Catch::Contains("4KiB..16MiB"));
}
