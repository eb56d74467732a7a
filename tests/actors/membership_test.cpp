#include <catch2/catch.hpp>

#include "actors/membership.hpp"

using namespace gleam;
using namespace std::chrono_literals;
using clock_type = actors::membership::clock;

namespace {

proto::NodeRegister gpu_node(const std::string& id, uint32_t gpus, uint64_t mem) {
  proto::NodeRegister reg;
  reg.set_node_id(id);
  reg.add_roles(proto::ROLE_GPU_SERVER);
  reg.set_data_host("10.0.0." + std::to_string(id.size()));
  reg.set_data_port(4751);
  for (uint32_t i = 0; i < gpus; ++i) {
    auto* g = reg.add_gpus();
    g->set_index(i);
    g->set_total_memory(mem);
  }
  return reg;
}

proto::Heartbeat beat(const std::string& id, std::vector<uint32_t> sessions_per_gpu) {
  proto::Heartbeat hb;
  hb.set_node_id(id);
  for (uint32_t i = 0; i < sessions_per_gpu.size(); ++i) {
    auto* g = hb.mutable_telemetry()->add_gpus();
    g->set_index(i);
    g->set_sessions(sessions_per_gpu[i]);
  }
  return hb;
}

} // namespace

TEST_CASE("a silent node is marked down after down_after, and back up on a heartbeat",
          "[actors][membership]") {
  actors::membership m{2000ms};
  auto t0 = clock_type::now();
  m.on_register(gpu_node("a", 1, 1 << 30), t0);
  m.on_register(gpu_node("b", 1, 1 << 30), t0);
  CHECK(m.sweep(t0 + 1500ms).empty());
  REQUIRE(m.on_heartbeat(beat("b", {0}), t0 + 1500ms));
  auto down = m.sweep(t0 + 2100ms);
  REQUIRE(down == std::vector<std::string>{"a"});
  auto v = m.view(t0 + 2100ms);
  REQUIRE(v.nodes_size() == 2);
  CHECK_FALSE(v.nodes(0).up());
  CHECK(v.nodes(0).last_heartbeat_age_ms() == 2100);
  CHECK(v.nodes(1).up());
  CHECK(m.up_count() == 1);
  // Swept once, reported once.
  CHECK(m.sweep(t0 + 3600ms) == std::vector<std::string>{"b"});
  CHECK(m.sweep(t0 + 4000ms).empty());
  REQUIRE(m.on_heartbeat(beat("a", {0}), t0 + 4000ms));
  CHECK(m.up_count() == 1);
}

TEST_CASE("heartbeats from unknown nodes are refused so they re-register",
          "[actors][membership]") {
  actors::membership m{2000ms};
  CHECK_FALSE(m.on_heartbeat(beat("ghost", {}), clock_type::now()));
}

TEST_CASE("placement picks the up GPU with the fewest sessions", "[actors][membership]") {
  actors::membership m{2000ms};
  auto t0 = clock_type::now();
  m.on_register(gpu_node("a", 2, 80ull << 30), t0);
  m.on_register(gpu_node("bb", 1, 80ull << 30), t0);
  m.on_heartbeat(beat("a", {3, 1}), t0);
  m.on_heartbeat(beat("bb", {2}), t0);
  auto r = m.place(proto::PlacementRequest{});
  REQUIRE(r.ok());
  CHECK(r.node_id() == "a");
  CHECK(r.gpu_index() == 1);
  CHECK(r.data_port() == 4751);
  // Once a goes down, only bb is left.
  m.sweep(t0 + 10s);
  m.on_heartbeat(beat("bb", {2}), t0 + 10s);
  r = m.place(proto::PlacementRequest{});
  REQUIRE(r.ok());
  CHECK(r.node_id() == "bb");
}

TEST_CASE("placement explains why nothing fits", "[actors][membership]") {
  actors::membership m{2000ms};
  auto r = m.place(proto::PlacementRequest{});
  CHECK_FALSE(r.ok());
  CHECK_THAT(r.error(), Catch::Contains("no GPU server has registered"));
  m.on_register(gpu_node("cpu-only", 0, 0), clock_type::now());
  r = m.place(proto::PlacementRequest{});
  CHECK_FALSE(r.ok());
  CHECK_THAT(r.error(), Catch::Contains("no GPU server is up"));
}

TEST_CASE("a drained node is skipped by placement and shown drained until undrained",
          "[actors][membership][drain]") {
  actors::membership m{2000ms};
  auto t0 = clock_type::now();
  m.on_register(gpu_node("a", 1, 80ull << 30), t0);
  m.on_register(gpu_node("bb", 1, 80ull << 30), t0);
  m.on_heartbeat(beat("a", {0}), t0);
  m.on_heartbeat(beat("bb", {5}), t0);
  proto::DrainState on;
  on.set_draining(true);
  on.set_deadline_unix_ms(42);
  CHECK_FALSE(m.set_drain("ghost", on));
  REQUIRE(m.set_drain("a", on));
  // a has fewer sessions but is drained.
  auto r = m.place(proto::PlacementRequest{});
  REQUIRE(r.ok());
  CHECK(r.node_id() == "bb");
  proto::NodeStatus status;
  REQUIRE(m.status_of("a", t0, status));
  CHECK(status.up());
  CHECK(status.drain().draining());
  CHECK(status.drain().deadline_unix_ms() == 42);
  // A restart keeps the drain.
  m.on_register(gpu_node("a", 1, 80ull << 30), t0 + 1s);
  CHECK(m.drain_of("a").draining());
  REQUIRE(m.set_drain("bb", on));
  r = m.place(proto::PlacementRequest{});
  CHECK_FALSE(r.ok());
  CHECK_THAT(r.error(), Catch::Contains("draining"));
  REQUIRE(m.set_drain("a", proto::DrainState{}));
  CHECK_FALSE(m.drain_of("a").draining());
  CHECK(m.drain_of("a").deadline_unix_ms() == 0);
  r = m.place(proto::PlacementRequest{});
  REQUIRE(r.ok());
  CHECK(r.node_id() == "a");
}
