#include <catch2/catch.hpp>

#include <limits>

#include "actors/placement_service.hpp"

#include "cache_store/hash.hpp"
#include "executor/weight_cache.hpp"

using namespace gleam;
using actors::placement_service;

namespace {

constexpr uint64_t s = 1'000'000'000ull;
constexpr uint64_t gb = 1'000'000'000ull;

/// A node with one GPU of `total_gb` and the given open sessions.
proto::NodeStatus node(const std::string& id, uint64_t total_gb,
                       std::vector<proto::SessionSummary> running = {}, bool up = true) {
  proto::NodeStatus n;
  n.set_node_id(id);
  n.set_up(up);
  n.set_rtt_ms(1.0);
  n.set_data_host("10.0.0." + std::to_string(id.size()));
  n.set_data_port(4750);
  auto* g = n.add_gpus();
  g->set_index(0);
  g->set_name("NVIDIA H200");
  g->set_total_memory(total_gb * gb);
  auto* t = n.mutable_telemetry()->add_gpus();
  t->set_index(0);
  t->set_sessions(static_cast<uint32_t>(running.size()));
  for (auto& r : running)
    *t->add_running() = r;
  return n;
}

proto::SessionSummary session(uint64_t id, const std::string& sig, uint64_t allocated,
                              uint64_t first_launch_ns) {
  proto::SessionSummary x;
  x.set_session(id);
  x.set_task_signature(sig);
  x.set_allocated_bytes(allocated);
  x.set_first_launch_time_ns(first_launch_ns);
  return x;
}

proto::PlacementRequest request(const std::string& sig) {
  proto::PlacementRequest r;
  r.set_client_id("client");
  r.set_task_signature(sig);
  return r;
}

/// A finished run of `sig` on node `n`: `load_s` then `compute_s`, with
/// `others` co-runners of signature `other` over the whole compute phase.
proto::SessionEnded ended(const std::string& sig, double load_s, double compute_s,
                          int others = 0, const std::string& other = "",
                          uint64_t memory = 2 * gb, double busy = 1.0) {
  proto::SessionEnded e;
  e.set_task_signature(sig);
  e.set_gpu_index(0);
  e.set_gpu_name("NVIDIA H200");
  e.set_duration_ns(static_cast<uint64_t>((load_s + compute_s) * s));
  e.set_load_ns(static_cast<uint64_t>(load_s * s));
  e.set_uploaded_bytes(static_cast<uint64_t>(load_s * 125e6));
  e.set_peak_allocated_bytes(memory);
  // busy 1: a GPU-bound task, occupancy 1.
  e.set_busy_ns(static_cast<uint64_t>(busy * static_cast<double>(e.duration_ns())));
  for (int i = 0; i < others; ++i) {
    auto* c = e.add_co_runners();
    c->set_task_signature(other);
    c->set_compute_overlap_ns(static_cast<uint64_t>(compute_s * s));
  }
  return e;
}

} // namespace

TEST_CASE("placement_service refuses clearly when no GPU is up", "[actors][placement]") {
  placement_service ps;
  auto now = placement_service::clock::now();
  auto id = ps.submit(request("t"), "", now);
  auto out = ps.dispatch(now, 0);
  REQUIRE(out.size() == 1);
  CHECK(out[0].id == id);
  CHECK_FALSE(out[0].reply.ok());
  CHECK_THAT(out[0].reply.error(), Catch::Contains("no GPU server has registered"));
  ps.on_node(node("a", 80, {}, false), 0);
  ps.submit(request("t"), "", now);
  out = ps.dispatch(now, 0);
  REQUIRE(out.size() == 1);
  CHECK_THAT(out[0].reply.error(), Catch::Contains("no GPU server is up"));
}

TEST_CASE("placement_service learns a profile, fits gamma, and queues instead of "
          "oversubscribing",
          "[actors][placement]") {
  placement_service ps;
  ps.on_node(node("a", 80), 0);
  ps.on_node(node("bb", 80), 0);
  // An unknown task gets the conservative default and a server.
  auto now = placement_service::clock::now();
  ps.submit(request("mm"), "", now);
  auto first = ps.dispatch(now, 0);
  REQUIRE(first.size() == 1);
  CHECK(first[0].reply.ok());
  CHECK_THAT(first[0].reply.explanation(), Catch::Contains("unknown signature"));
  auto x = ps.explain("mm", 0, 0);
  CHECK_FALSE(x.known());
  CHECK(x.gpu_occupancy() == 1.0);

  // Solo runs teach the profile: 2 s load, 11 s compute, 2 GB. The task
  // occupies the whole GPU (u 1), so under the prior gamma 1.1 it runs at
  // alpha 1.1 even alone: the profile keeps its 10 s at alpha 1.
  for (int i = 0; i < 3; ++i)
    ps.on_session_ended("a", ended("mm", 2, 11));
  x = ps.explain("mm", 0, 0);
  CHECK(x.known());
  CHECK(x.samples() == 3);
  REQUIRE(x.compute_s_size() == 1);
  CHECK(x.compute_s(0) == Approx(10.0));
  CHECK(x.gpu_occupancy() == 1.0);
  CHECK(x.memory_bytes() == 2 * gb);
  // A task alone above the knee (γ·u > 1) is stretched by its own
  // occupancy, so its runs cannot tell γ: the fit reads a lighter task.
  // "ll" occupies half the GPU (u 0.5): alone it runs at its solo 10 s.
  for (int i = 0; i < 3; ++i)
    ps.on_session_ended("a", ended("ll", 2, 10, 0, "", 2 * gb, 0.5));
  // Contended runs with gamma 1.1: with k co-runners "ll" the GPU holds
  // Σu = 0.5 (1 + k), which slows the compute phase to 1.1 · 0.5 (1 + k) x
  // 10 s. The modelled alpha of each shared run is exactly that, so the
  // solo time stays 10 s, and the fit finds gamma on every one of them.
  for (int i = 0; i < 12; ++i) {
    int k = 1 + i % 3;
    ps.on_session_ended("a", ended("ll", 2, 10 * 1.1 * 0.5 * (1 + k), k, "ll", 2 * gb, 0.5));
  }
  auto g = ps.gamma();
  REQUIRE(g.entries_size() == 2);
  CHECK(g.entries(0).gpu_type() == "NVIDIA H200");
  CHECK(g.entries(0).resource() == "gpu");
  CHECK(g.entries(0).converged());
  CHECK(g.entries(0).gamma() == Approx(1.1));
  CHECK(g.entries(0).active_samples() == 12);
  CHECK(g.entries(0).rms_residual() == Approx(0.0).margin(1e-6));
  CHECK_FALSE(g.entries(1).converged()); // no contended loads seen
  CHECK(ps.explain("ll", 0, 0).compute_s(0) == Approx(10.0));
  CHECK(ps.explain("mm", 0, 0).compute_s(0) == Approx(10.0));

  // A shared run teaches the solo time through its modelled alpha: 26.4 s
  // next to one other copy (alpha 2.2) is 12 s of solo work, folded in as
  // the fourth sample of the running mean: 10 + (12 - 10) / 4.
  ps.on_session_ended("a", ended("mm", 2, 26.4, 1, "mm"));
  CHECK(ps.explain("mm", 0, 0).compute_s(0) == Approx(10.5));
  // It is no observation of gamma: "mm" never ran alone below the knee, so
  // the fit has no solo time to compare it with.
  auto gamma = 1.1;
  CHECK(ps.gamma().entries(0).gamma() == Approx(gamma));

  // Both GPUs run one "mm" each (10.5 more solo seconds, 11.55 s at alpha
  // gamma: u 1 is above the knee). A second copy
  // would leave the GPU's progress unchanged (2 / (2 gamma) = 1 / gamma)
  // but stretch both: done at ~18.4 s and costing the other ~9.4 s (27.8 s
  // in all), against done at ~25.3 s by waiting for it; so a new task waits.
  ps.on_node(node("a", 80, {session(1, "mm", 2 * gb, 1)}), 1);
  ps.on_node(node("bb", 80, {session(2, "mm", 2 * gb, 1)}), 1);
  auto t0 = placement_service::clock::now();
  auto id = ps.submit(request("mm"), "", t0);
  CHECK(ps.dispatch(t0, 1).empty());
  auto q = ps.queue(t0);
  REQUIRE(q.tasks_size() == 1);
  CHECK(q.tasks(0).placement_id() == id);
  CHECK_FALSE(q.tasks(0).awaited_server().empty());
  auto why = ps.explain(std::to_string(id), 0, 1);
  CHECK_THAT(why.summary(), Catch::Contains("waits for"));
  // GPU bb's session ends: the queued task goes there.
  ps.on_node(node("bb", 80), 2);
  auto placed = ps.dispatch(t0, 2);
  REQUIRE(placed.size() == 1);
  CHECK(placed[0].id == id);
  CHECK(placed[0].reply.ok());
  CHECK(placed[0].reply.node_id() == "bb");
  CHECK(placed[0].reply.data_port() == 4750);
  // Alone: 2 s of load (0.001 s RTT and 250 MB at the learned 250 MB /
  // 1.999 s) at the prior network alpha 1.1 (a load fills the ingress,
  // occupancy 1), then 10.5 s of compute at alpha gamma.
  CHECK(placed[0].reply.predicted_seconds() == Approx(1.1 * 2.0 + 10.5 * gamma).epsilon(0.001));
  CHECK(ps.queue(t0).tasks_size() == 0);
  // The first placement was matched to the "mm" session its GPU reported;
  // the new one is not a session yet.
  CHECK(ps.queue(t0).pending_sessions() == 1);
}

TEST_CASE("placement_service places a request that waited too long", "[actors][placement]") {
  actors::placement_options opts;
  opts.max_wait = std::chrono::milliseconds{100};
  placement_service ps{opts};
  for (int i = 0; i < 3; ++i)
    ps.on_session_ended("a", ended("mm", 1, 10));
  ps.on_node(node("a", 80, {session(1, "mm", 79 * gb, 1)}), 1);
  auto t0 = placement_service::clock::now();
  ps.submit(request("mm"), "", t0);
  CHECK(ps.dispatch(t0, 1).empty()); // 79 of 80 GB held: waits
  auto later = ps.dispatch(t0 + std::chrono::milliseconds{150}, 1);
  REQUIRE(later.size() == 1);
  CHECK(later[0].reply.ok());
  CHECK_THAT(later[0].reply.explanation(), Catch::Contains("placed after waiting"));
}

namespace {

namespace cs = gleam::cache_store;

/// `n` chunks of 64 KiB (distinct per `seed`).
std::vector<std::string> chunks(int seed, int n) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) {
    std::string c(64 << 10, '\0');
    for (size_t j = 0; j < c.size(); ++j)
      c[j] = static_cast<char>((seed * 131 + i * 31 + j * 7) & 0xFF);
    out.push_back(std::move(c));
  }
  return out;
}

cs::chunk_key key_of(const std::string& c, cs::chunk_key::algo algo) {
  return cs::hash_chunk(algo, c.data(), c.size());
}

/// A request for 16 GB of weights whose chunk keys are those of `cs`.
proto::PlacementRequest keyed_request(const std::vector<std::string>& cs_,
                                      cs::chunk_key::algo algo) {
  auto r = request("llm");
  r.set_weight_bytes(16 * gb);
  for (const auto& c : cs_)
    r.add_chunk_keys(key_of(c, algo).to_binary());
  return r;
}

/// A weight cache in host memory only, whose summary a node's telemetry
/// reports.
std::shared_ptr<gleam::executor::weight_cache> memory_cache() {
  gleam::executor::weight_cache_options opts;
  opts.host_capacity = 64ull << 20;
  auto cache = gleam::executor::weight_cache::open(opts);
  REQUIRE(cache);
  return *cache;
}

} // namespace

TEST_CASE("cache affinity counts only the chunks the request's tenant may use",
          "[actors][placement][tenant]") {
  // Node "b" caches alice's weights under XXH3 keys and bob's under
  // SHA-256 keys, as its telemetry reports them; node "a" caches nothing.
  auto cache = memory_cache();
  auto alices = chunks(1, 4);
  auto bobs = chunks(2, 4);
  for (const auto& c : alices)
    cache->accept_upload(key_of(c, cs::chunk_key::algo::xxh3_128), c.data(), c.size(),
                            "alice");
  for (const auto& c : bobs)
    cache->accept_upload(key_of(c, cs::chunk_key::algo::sha256), c.data(), c.size(), "bob");
  auto b = node("b", 80);
  *b.mutable_telemetry()->mutable_cache() = cache->summary();
  auto place = [&](const proto::PlacementRequest& r, const std::string& tenant) {
    placement_service ps;
    ps.on_node(node("a", 80), 0);
    ps.on_node(b, 0);
    auto now = placement_service::clock::now();
    ps.submit(r, tenant, now);
    auto out = ps.dispatch(now, 0);
    REQUIRE(out.size() == 1);
    REQUIRE(out[0].reply.ok());
    return out[0].reply;
  };
  auto xxh3 = keyed_request(alices, cs::chunk_key::algo::xxh3_128);
  SECTION("alice's own XXH3 chunks draw her task to b") {
    auto r = place(xxh3, "alice");
    CHECK(r.node_id() == "b");
    CHECK_THAT(r.explanation(), Catch::Contains("(16.0 GB cached of 16.0 GB)"));
  }
  SECTION("bob's request for the same XXH3 keys finds nothing cached for him") {
    auto r = place(xxh3, "bob");
    CHECK_THAT(r.explanation(), Catch::Contains("(0.0 GB cached of 16.0 GB)"));
    CHECK(actors::weight_set_of(xxh3, "alice") != actors::weight_set_of(xxh3, "bob"));
  }
  SECTION("SHA-256 chunks count for every tenant") {
    auto sha = keyed_request(bobs, cs::chunk_key::algo::sha256);
    for (std::string tenant : {"bob", "carol", ""}) {
      auto r = place(sha, tenant);
      CHECK(r.node_id() == "b");
      CHECK_THAT(r.explanation(), Catch::Contains("(16.0 GB cached of 16.0 GB)"));
    }
    CHECK(actors::weight_set_of(sha, "bob") == actors::weight_set_of(sha, "carol"));
  }
  SECTION("cached bytes scale with the share of the set's keys held") {
    auto half = alices;
    half.resize(2);
    auto others = chunks(3, 2);
    half.insert(half.end(), others.begin(), others.end());
    actors::keyed_weights set;
    set.id = 7;
    set.tenant = "alice";
    set.bytes = 16 * gb;
    for (const auto& c : half)
      set.keys.push_back(key_of(c, cs::chunk_key::algo::xxh3_128));
    auto cached = actors::cached_weight_sets(b.telemetry().cache(), {set});
    REQUIRE(cached.size() == 1);
    CHECK(cached[0].weights == 7);
    CHECK(cached[0].bytes == 8 * gb);
    set.tenant = "bob";
    CHECK(actors::cached_weight_sets(b.telemetry().cache(), {set}).empty());
  }
}

TEST_CASE("a task's second run finds the servers caching its first run's weights",
          "[actors][placement][tenant]") {
  // The client asks before it has hashed anything: its request names no
  // chunk keys. The first run's record carries a sample of them.
  auto cache = memory_cache();
  auto weights = chunks(4, 4);
  for (const auto& c : weights)
    cache->accept_upload(key_of(c, cs::chunk_key::algo::xxh3_128), c.data(), c.size(),
                            "alice");
  auto b = node("b", 80);
  *b.mutable_telemetry()->mutable_cache() = cache->summary();
  placement_service ps;
  ps.on_node(node("a", 80), 0);
  ps.on_node(b, 0);
  auto run = ended("llama", 10, 20);
  run.set_tenant("alice");
  run.set_weight_bytes(16 * gb);
  for (const auto& c : weights)
    run.add_chunk_keys_sample(key_of(c, cs::chunk_key::algo::xxh3_128).to_binary());
  auto place = [&](const std::string& tenant) {
    auto now = placement_service::clock::now();
    ps.submit(request("llama"), tenant, now);
    auto out = ps.dispatch(now, 0);
    REQUIRE(out.size() == 1);
    REQUIRE(out[0].reply.ok());
    return out[0].reply;
  };
  SECTION("before any run, nothing is known cached") {
    CHECK_THAT(place("alice").explanation(), Catch::Contains("(0.0 GB cached"));
  }
  SECTION("after alice's run, her request goes where her weights are") {
    ps.on_session_ended("b", run);
    auto r = place("alice");
    CHECK(r.node_id() == "b");
    CHECK_THAT(r.explanation(), Catch::Contains("(16.0 GB cached of 16.0 GB)"));
  }
  SECTION("bob's run of the same signature learns nothing from alice's") {
    ps.on_session_ended("b", run);
    CHECK_THAT(place("bob").explanation(), Catch::Contains("(0.0 GB cached of 16.0 GB)"));
  }
  SECTION("a run counts its weights, cached ones included, in the profile") {
    run.set_uploaded_bytes(1 << 20); // almost everything came from the cache
    ps.on_session_ended("b", run);
    CHECK(ps.profile_of("llama", 0).weight_bytes == 16 * gb);
  }
}

TEST_CASE("the queue and explain name each task's tenant", "[actors][placement][tenant]") {
  placement_service ps;
  // One GPU, nearly full: requests wait.
  ps.on_node(node("a", 80, {session(1, "big", 79 * gb, 1)}), 1);
  auto now = placement_service::clock::now();
  auto alice = ps.submit(request("mm"), "alice", now);
  auto unnamed = ps.submit(request("mm"), "", now);
  CHECK(ps.dispatch(now, 1).empty());
  auto q = ps.queue(now);
  REQUIRE(q.tasks_size() == 2);
  CHECK(q.tasks(0).placement_id() == alice);
  CHECK(q.tasks(0).tenant() == "alice");
  CHECK(q.tasks(1).placement_id() == unnamed);
  CHECK(q.tasks(1).tenant().empty());
  CHECK(ps.explain(std::to_string(alice), 0, 1).tenant() == "alice");
  CHECK(ps.explain(std::to_string(unnamed), 0, 1).tenant().empty());
}

TEST_CASE("placement_service stretches a running task's remaining time by its contention",
          "[actors][placement]") {
  placement_service ps;
  ps.on_node(node("a", 80), 0);
  // "big" occupies the whole GPU (u 1) and holds 60 GB: under the prior
  // gamma 1.1 it runs at alpha 1.1 even alone, 10 s of solo compute in 11 s.
  for (int i = 0; i < 3; ++i)
    ps.on_session_ended("a", ended("big", 2, 11, 0, "", 60 * gb));
  REQUIRE(ps.explain("big", 0, 0).compute_s(0) == Approx(10.0));
  // One copy has just started computing; a second does not fit beside it
  // and waits for its memory: 10 s of solo work at alpha 1.1, not 10 s.
  ps.on_node(node("a", 80, {session(1, "big", 60 * gb, 1)}), 1);
  auto t0 = placement_service::clock::now();
  ps.submit(request("big"), "", t0);
  CHECK(ps.dispatch(t0, 1).empty());
  auto q = ps.queue(t0);
  REQUIRE(q.tasks_size() == 1);
  CHECK(q.tasks(0).predicted_start_s() == Approx(11.0));
}

TEST_CASE("a node with cache peers loads a set cached elsewhere at its measured peer rate",
          "[actors][placement]") {
  // Node "b" caches alice's weights but is too small for the task; node "a"
  // caches nothing, so the task goes to a and its weights come over the
  // client's link (125 MB/s by default) or, when a reports a measured
  // peer-fetch rate, from b's cache over the backbone.
  auto cache = memory_cache();
  auto alices = chunks(1, 4);
  for (const auto& c : alices)
    cache->accept_upload(key_of(c, cs::chunk_key::algo::xxh3_128), c.data(), c.size(),
                         "alice");
  auto b = node("b", 10);
  *b.mutable_telemetry()->mutable_cache() = cache->summary();
  auto place = [&](double peer_rate) {
    auto a = node("a", 80);
    a.mutable_telemetry()->set_peer_fetch_rate(peer_rate);
    placement_service ps;
    ps.on_node(a, 0);
    ps.on_node(b, 0);
    auto now = placement_service::clock::now();
    ps.submit(keyed_request(alices, cs::chunk_key::algo::xxh3_128), "alice", now);
    auto out = ps.dispatch(now, 0);
    REQUIRE(out.size() == 1);
    REQUIRE(out[0].reply.ok());
    CHECK(out[0].reply.node_id() == "a");
    return out[0].reply.explanation();
  };
  // 16 GB at 125 MB/s (128 s), or at 1 GB/s from b (16 s); the default
  // profile's load saturates the ingress (occupancy 1), so alone it runs at
  // α = 1.1 (the prior γ): 140.8 s and 17.6 s.
  CHECK_THAT(place(0), Catch::Contains("load 140.8 s (0.0 GB cached of 16.0 GB)"));
  CHECK_THAT(place(1e9), Catch::Contains("load 17.6 s (0.0 GB cached of 16.0 GB, the rest "
                                         "from a peer's cache)"));
  CHECK_THAT(place(0), !Catch::Contains("peer"));
  // A rate below the link's is not used; a malformed one counts as none.
  CHECK_THAT(place(50e6), Catch::Contains("load 140.8 s"));
  CHECK_THAT(place(-1), Catch::Contains("load 140.8 s"));
  CHECK_THAT(place(std::numeric_limits<double>::quiet_NaN()), Catch::Contains("load 140.8 s"));
}

TEST_CASE("a running task's remaining time comes from its launches so far", "[actors][placement]") {
  // "dec" computes 20 s alone (occupancy 0.5, below the knee) in 200
  // launches and holds 60 GB, so a second copy waits for the first, which
  // has computed for 1 s of wall time.
  auto wait_for = [](uint64_t launches) {
    placement_service ps;
    ps.on_node(node("a", 80), 0);
    for (int i = 0; i < 3; ++i) {
      auto run = ended("dec", 2, 20, 0, "", 60 * gb, 0.5);
      run.set_kernel_launches(200);
      ps.on_session_ended("a", run);
    }
    REQUIRE(ps.profile_of("dec", 0).launches == Approx(200.0));
    CHECK(ps.explain("dec", 0, 0).launches() == Approx(200.0)); // the console shows it
    auto running = session(1, "dec", 60 * gb, 1 * s);
    running.set_kernel_launches(launches);
    ps.on_node(node("a", 80, {running}), 2 * s);
    auto t0 = placement_service::clock::now();
    ps.submit(request("dec"), "", t0);
    CHECK(ps.dispatch(t0, 2 * s).empty());
    auto q = ps.queue(t0);
    REQUIRE(q.tasks_size() == 1);
    return q.tasks(0).predicted_start_s();
  };
  // 150 of 200 launches done (a copy that ran faster than its wall time
  // says, e.g. it began alone): a quarter of 20 s is left.
  CHECK(wait_for(150) == Approx(5.0));
  // Nothing counted: the elapsed time is all there is, 19 s left.
  CHECK(wait_for(0) == Approx(19.0));
}

TEST_CASE("apps on one host share its uplink in the model", "[actors][placement]") {
  // "big" uploads 16 GB (128 s at the default 125 MB/s link). One copy from
  // laptop:7 is loading on a, nothing uploaded yet; b is idle.
  auto place_from = [](const std::string& client, uint64_t first_launch_ns) {
    placement_service ps;
    ps.on_node(node("a", 80), 0);
    ps.on_node(node("b", 80), 0);
    for (int i = 0; i < 3; ++i)
      ps.on_session_ended("a", ended("big", 128, 10, 0, "", 20 * gb, 0.5));
    auto loading = session(1, "big", 20 * gb, first_launch_ns);
    loading.set_client_id("laptop:7");
    ps.on_node(node("a", 80, {loading}), 1);
    auto t0 = placement_service::clock::now();
    auto req = request("x");
    req.set_client_id(client);
    req.set_weight_bytes(16 * gb);
    ps.submit(req, "", t0);
    auto out = ps.dispatch(t0, 1);
    REQUIRE(out.size() == 1);
    REQUIRE(out[0].reply.ok());
    // While a loads, b (whose ingress is free) takes it; after, either.
    if (first_launch_ns == 0)
      CHECK(out[0].reply.node_id() == "b");
    return out[0].reply.explanation();
  };
  // Another app of the laptop: its 128.001 s load gets half the uplink
  // while the other's 128.001 s last, then all of it: 192.0 s, not the
  // 140.8 s (prior net alpha 1.1) of an app on another host.
  CHECK_THAT(place_from("laptop:9", 0), Catch::Contains("load 192.0 s"));
  CHECK_THAT(place_from("desk:3", 0), Catch::Contains("load 140.8 s"));
  // Once the laptop's other app computes, its uplink is free again.
  CHECK_THAT(place_from("laptop:9", 1), Catch::Contains("load 140.8 s"));
}

TEST_CASE("each client host's link rate is learned from its own uploads",
          "[actors][placement]") {
  // A wired desktop and a Wi-Fi laptop each uploaded 3 GB alone to a: the
  // desktop at 125 MB/s, the laptop at 30 MB/s. One server-wide rate would
  // mix the two; each host keeps its own, on servers it never used too.
  auto load_of = [](const std::string& client) {
    placement_service ps;
    ps.on_node(node("a", 80), 0);
    ps.on_node(node("b", 80), 0);
    auto alone = [&](const std::string& from, double rate) {
      auto e = ended("big", 0, 10, 0, "", 20 * gb, 0.5);
      e.set_client_id(from);
      e.set_uploaded_bytes(3 * gb);
      e.set_load_ns(static_cast<uint64_t>((0.001 + 3e9 / rate) * s));
      e.set_duration_ns(e.load_ns() + 10 * s);
      ps.on_session_ended("a", e);
    };
    for (int i = 0; i < 3; ++i) {
      alone("desk:1", 125e6);
      alone("laptop:2", 30e6);
    }
    ps.on_node(node("a", 80), 1);
    ps.on_node(node("b", 80), 1);
    auto t0 = placement_service::clock::now();
    auto req = request("x");
    req.set_client_id(client);
    req.set_weight_bytes(16 * gb);
    ps.submit(req, "", t0);
    auto out = ps.dispatch(t0, 1);
    REQUIRE(out.size() == 1);
    REQUIRE(out[0].reply.ok());
    return out[0].reply.explanation();
  };
  // 16 GB at 30 MB/s, stretched by the prior network α 1.1: 586.7 s, on
  // a (measured) or b (the laptop's best, b having measured no one).
  CHECK_THAT(load_of("laptop:9"), Catch::Contains("load 586.7 s"));
  // At 125 MB/s: 140.8 s.
  CHECK_THAT(load_of("desk:4"), Catch::Contains("load 140.8 s"));
  // A host never measured gets the best a server took from anyone (a:
  // 125 MB/s) or the default (b: 125 MB/s); not the mix of the two hosts.
  CHECK_THAT(load_of("new:5"), Catch::Contains("load 140.8 s"));
}
