#include <catch2/catch.hpp>

#include "placement/error.hpp"
#include "placement/latency_model.hpp"
#include "placement/prepared_snapshot.hpp"
#include "tests/placement/fixtures.hpp"

using namespace gleam::placement;
using namespace gleam::placement::test;

TEST_CASE("an idle server: load over the link plus solo compute", "[placement]") {
  auto snap = make_snapshot({make_server("a", 80, 80)});
  auto t = make_task(1, 7, 10);
  auto p = predict(t, 0, snap);
  // 16 GB at 100 MB/s + 1 ms RTT; compute 10 s alone.
  CHECK(p.start_s == 0);
  CHECK(p.load_s == Approx(160.001));
  CHECK(p.compute_s == Approx(10.0));
  CHECK(p.total_s == Approx(170.001));
  CHECK(p.alpha_gpu == Approx(1.0));
  CHECK(p.cached_bytes == 0);
}

TEST_CASE("cached bytes come from the cache tier", "[placement]") {
  auto s = make_server("a", 80, 80);
  s.cached.push_back({7, 12 * gb});
  auto snap = make_snapshot({s});
  auto p = predict(make_task(1, 7, 10), 0, snap);
  CHECK(p.cached_bytes == 12 * gb);
  // 4 GB over the link (40 s) + 12 GB at 2 GB/s (6 s) + RTT.
  CHECK(p.load_s == Approx(46.001));
}

TEST_CASE("a load from the server's cache stays off its network ingress", "[placement]") {
  // Weights 7 cached, 8 not; a running task loads 40 s more over the link.
  auto s = make_server("a", 80, 60);
  s.cached.push_back({7, 16 * gb});
  auto loading = make_running(1, 0.5, 60);
  loading.load_remaining_s = 40;
  s.running.push_back(loading);
  auto snap = make_snapshot({s});
  // The cached load is not slowed by the network load (alpha_net 1) and
  // occupies no ingress.
  auto cached = predict(make_task(2, 7, 10), 0, snap);
  CHECK(cached.load_s == Approx(8.001));
  CHECK(cached.alpha_net == Approx(1.0));
  CHECK(cached.net_occupancy == 0);
  // The uncached one shares the ingress: alpha 1.5 * (0.5 + 0.5) for 40 s.
  auto cold = predict(make_task(3, 8, 10), 0, snap);
  CHECK(cold.net_occupancy == Approx(0.5));
  CHECK(cold.load_s == Approx(40 + (160.001 - 40 / 1.5)));
  // A cached load on the timeline leaves the ingress to the others: the cold
  // load's prediction is unchanged; a load crossing the network inflicts
  // nothing on the cached one alone.
  server_timeline tl{snap.servers[0]};
  tl.add(0, cached.load_s, cached.total_s, {0.5, cached.net_occupancy}, 20 * gb);
  auto after = predict(make_task(3, 8, 10), snap.servers[0], tl, 0, 2.0, 1.5);
  CHECK(after.load_s == Approx(cold.load_s));
  server_timeline idle{make_server("b", 80, 80)};
  idle.add(0, cached.load_s, cached.total_s, {0.5, cached.net_occupancy}, 20 * gb);
  CHECK(idle.inflicted(resource::network, 0, 8.001, 0.5, 1.5) == 0);
  // Partly cached: the occupancy scales with the bytes crossing the network.
  CHECK(load_net_occupancy(0.5, 16 * gb, 12 * gb) == Approx(0.125));
  CHECK(load_net_occupancy(0.5, 16 * gb, 20 * gb) == 0);
}

TEST_CASE("a server with peers fetches a set another server caches over the backbone",
          "[placement]") {
  // B caches weights 7 whole and 12 GB of weights 8; A caches neither.
  auto a = make_server("A", 80, 80);
  auto b = make_server("B", 80, 80);
  b.cached.push_back({7, 16 * gb});
  b.cached.push_back({8, 12 * gb});
  auto snap = make_snapshot({a, b});
  // Without peers A loads over the client's 100 MB/s link.
  CHECK(predict(make_task(1, 7, 10), 0, snap).load_s == Approx(160.001));
  // With peers at 500 MB/s the 16 GB come from B's cache.
  snap.servers[0].peer_rate_bytes_per_s = 500e6;
  CHECK(predict(make_task(1, 7, 10), 0, snap).load_s == Approx(32.001));
  // A set no server caches whole still crosses the client's link, and a
  // backbone slower than the link is not used.
  CHECK(predict(make_task(2, 8, 10), 0, snap).load_s == Approx(160.001));
  snap.servers[0].peer_rate_bytes_per_s = 50e6;
  CHECK(predict(make_task(1, 7, 10), 0, snap).load_s == Approx(160.001));
  // The prepared snapshot tracks the holdings as servers change.
  snap.servers[0].peer_rate_bytes_per_s = 500e6;
  prepared_snapshot prep{snap};
  CHECK(prep.peer_cached_bytes(7) == 16 * gb);
  CHECK(prep.peer_cached_bytes(8) == 12 * gb);
  CHECK(prep.peer_cached_bytes(9) == 0);
  auto b_evicted = snap.servers[1];
  b_evicted.cached.clear();
  prep.update_server(1, b_evicted);
  CHECK(prep.peer_cached_bytes(7) == 0);
  auto a_filled = snap.servers[0];
  a_filled.cached.push_back({7, 16 * gb});
  prep.update_server(0, a_filled);
  CHECK(prep.peer_cached_bytes(7) == 16 * gb);
  prep.pop_server(); // B
  CHECK(prep.peer_cached_bytes(7) == 16 * gb);
}

TEST_CASE("contention stretches compute while co-runners last", "[placement]") {
  auto s = make_server("a", 80, 60);
  s.cached.push_back({7, 16 * gb});
  // A co-runner of occupancy 0.75 for the next 20 s; the task's own is 0.5:
  // alpha = 2 * (0.75 + 0.5) = 2.5 while both compute.
  s.running.push_back(make_running(1, 0.75, 20));
  auto snap = make_snapshot({s});
  auto t = make_task(2, 7, 10);
  auto p = predict(t, 0, snap);
  // Load 8.001 s (no network co-runner; alone max(1, 1.5 * 0.5) = 1);
  // compute starts at 8.001 s, does 11.999 / 2.5 s of work until the
  // co-runner ends at 20 s, the rest alone (max(1, 2 * 0.5) = 1).
  CHECK(p.load_s == Approx(8.001));
  CHECK(p.alpha_net == Approx(1.0));
  CHECK(p.compute_s == Approx(11.999 + (10 - 11.999 / 2.5)));
  CHECK(p.alpha_gpu == Approx((11.999 + (10 - 11.999 / 2.5)) / 10));
}

TEST_CASE("alpha sums every task's occupancy, the task's own included", "[placement]") {
  // The H200 falsifier: identical copies of occupancy 0.91, gamma 1.06.
  // One copy: 1.06 * 0.91 = 0.9646 < 1, its solo time; two: 1.06 * 1.82 =
  // 1.9292 each; three: 1.06 * 2.73 = 2.8938 each.
  CHECK(contention(1.06, 0.91) == 1.0);
  CHECK(contention(1.06, 2 * 0.91) == Approx(1.9292));
  CHECK(contention(1.06, 3 * 0.91) == Approx(2.8938));
  auto s = make_server("a", 141, 141);
  s.cached.push_back({7, 16 * gb});
  auto t = make_task(9, 7, 8.18, 20, 0.91);
  auto compute_with = [&](std::size_t copies) {
    auto srv = s;
    for (std::size_t i = 0; i < copies; ++i)
      srv.running.push_back(make_running(i + 1, 0.91, 1000));
    auto snap = make_snapshot({srv});
    snap.gamma = {{1.06, 1.5}};
    return predict(t, 0, snap).compute_s;
  };
  CHECK(compute_with(0) == Approx(8.18));
  CHECK(compute_with(1) == Approx(8.18 * 1.9292));
  CHECK(compute_with(2) == Approx(8.18 * 2.8938));
  // A task alone above the knee is stretched by its own occupancy:
  // u 1 with gamma 1.1 runs at 1.1 x its unit time.
  auto snap = make_snapshot({s});
  snap.gamma = {{1.1, 1.5}};
  CHECK(predict(make_task(10, 7, 10, 20, 1.0), 0, snap).compute_s == Approx(11.0));
}

TEST_CASE("a full server predicts a start when memory frees", "[placement]") {
  auto s = make_server("a", 40, 10);
  s.running.push_back(make_running(1, 0.5, 30, 30));
  auto snap = make_snapshot({s});
  auto p = predict(make_task(2, 7, 10), 0, snap);
  CHECK(p.start_s == Approx(30.0));
}

TEST_CASE("snapshot validation names the broken field", "[placement]") {
  auto bad = make_server("gpu-9", 40, 50);
  auto snap = make_snapshot({bad});
  auto err = validate(snap);
  REQUIRE(err);
  CHECK(err.code() == static_cast<uint8_t>(error_code::invalid_snapshot));
  CHECK(err.context().get_as<std::string>(0).find("gpu-9") != std::string::npos);
  auto ok = make_snapshot({make_server("a", 40, 40)});
  CHECK(!validate(ok));
  auto t = make_task(1, 1);
  t.client = 3;
  auto terr = validate(ok, t);
  REQUIRE(terr);
  CHECK(terr.code() == static_cast<uint8_t>(error_code::invalid_task));
}

TEST_CASE("a reservation takes its memory when it starts", "[placement]") {
  // 80 GB; a running task holds 60 GB until 30 s.
  auto s = make_server("a", 80, 20);
  s.running.push_back(make_running(1, 0.5, 30, 60));
  server_timeline tl{s};
  CHECK(tl.earliest_fit(40 * gb) == Approx(30.0));
  // A task reserved from 30 s to 50 s takes 50 GB when it starts: 40 GB are
  // then free only once it ends, while 20 GB stay free throughout.
  tl.add(30, 5, 20, {0.5, 0.5}, 50 * gb);
  CHECK(tl.free_memory_bytes() == 20 * gb);
  CHECK(tl.earliest_fit(40 * gb) == Approx(50.0));
  CHECK(tl.earliest_fit(20 * gb) == 0);
  CHECK(tl.next_release_after(0) == Approx(30.0));
  CHECK(tl.next_release_after(30) == Approx(50.0));
}

TEST_CASE("marginal progress counts every task and sees later starts", "[placement]") {
  auto s = make_server("a", 141, 101);
  // Two co-runners computing for 100 s: u 0.2 and 0.5, gamma 2.
  s.running.push_back(make_running(1, 0.2, 100));
  s.running.push_back(make_running(2, 0.5, 100));
  server_timeline tl{s};
  // Now: both at alpha 2 * 0.7 = 1.4, rate 2 / 1.4. With a task of u 0.3
  // all three run at alpha 2 * 1.0 = 2: rate 3 / 2.
  auto expected = 3 / 2.0 - 2 / 1.4;
  CHECK(tl.marginal_progress(0, 10, 0.3, 2.0) == Approx(expected));
  // An idle GPU gains a whole task below the knee, 1 / alpha above it.
  server_timeline idle{make_server("b", 80, 80)};
  CHECK(idle.marginal_progress(0, 10, 0.3, 3.0) == Approx(1.0));
  CHECK(idle.marginal_progress(0, 10, 0.9, 3.0) == Approx(1 / 2.7));
  // Past the knee a task of the mean occupancy (0.35) adds nothing: the
  // same work, shared by one more task.
  CHECK(tl.marginal_progress(0, 10, 0.35, 2.0) == Approx(0.0).margin(1e-12));
  // A third co-runner of u 0.1 that starts computing at 5 s lowers the
  // mean occupancy below 0.3: from then on the task costs progress
  // (4 / (2 * 1.1) - 3 / (2 * 0.8) < 0), which [0, 10) sees and [0, 4)
  // does not.
  tl.add(0, 5, 50, {0.1, 0.5}, 20 * gb);
  CHECK(tl.marginal_progress(0, 4, 0.3, 2.0) == Approx(expected));
  CHECK(tl.marginal_progress(0, 10, 0.3, 2.0) == Approx(4 / 2.2 - 3 / 1.6));
  CHECK(tl.marginal_progress(0, 10, 0.3, 2.0) < 0);
}

TEST_CASE("inflicted counts the stretch of each co-runner", "[placement]") {
  auto s = make_server("a", 141, 121);
  s.running.push_back(make_running(1, 0.3, 100));
  server_timeline tl{s};
  // A task of u 0.8 computing over [8, 18): the co-runner's alpha goes
  // from max(1, 2 * 0.3) = 1 to 2 * 1.1 = 2.2, so it loses 1.2 s per second
  // of overlap.
  CHECK(tl.inflicted(resource::gpu, 8, 18, 0.8, 2.0) == Approx(12.0));
  // Below the knee (2 * (0.3 + 0.2) = 1) co-locating costs it nothing.
  CHECK(tl.inflicted(resource::gpu, 8, 18, 0.2, 2.0) == Approx(0.0));
  // Only the overlap counts.
  CHECK(tl.inflicted(resource::gpu, 95, 130, 0.8, 2.0) == Approx(1.2 * 5));
  // Nobody loads: a load costs nobody anything.
  CHECK(tl.inflicted(resource::network, 0, 8, 1.0, 2.0) == 0);
  // Every co-runner pays, past the knee too: two of u 0.6 run at alpha 2.4
  // for 3 s, and a task of u 0.4 brings both to 3.2; then the first alone
  // goes from 1.2 to 2.0.
  auto busy = make_server("b", 141, 101);
  busy.running.push_back(make_running(1, 0.6, 100));
  busy.running.push_back(make_running(2, 0.6, 3));
  server_timeline tb{busy};
  CHECK(tb.inflicted(resource::gpu, 0, 10, 0.4, 2.0)
        == Approx(2 * 3 * (3.2 / 2.4 - 1) + 7 * (2.0 / 1.2 - 1)));
}

TEST_CASE("a client's loads to every server share its uplink", "[placement]") {
  // Client 0 is sending B a whole weight set for 80 s more; A is idle and
  // caches weights 9. Both servers have a 100 MB/s link to clients 0 and 1.
  auto a = make_server("A", 80, 80);
  auto b = make_server("B", 80, 60);
  for (auto* s : {&a, &b})
    s->links.push_back({100e6, 0.001});
  a.cached.push_back({9, 16 * gb});
  auto r = make_running(1, 0.5, 90);
  r.load_remaining_s = 80;
  r.uplink_client = 0;
  r.uplink_occupancy = 1;
  b.running.push_back(r);
  auto snap = make_snapshot({a, b});
  // 16 GB over client 0's uplink: half its rate for 80 s (40 s of work),
  // then the rest alone: 80 + 120.001 s, not 160.001 s.
  auto p = predict(make_task(10, 7), 0, snap);
  CHECK(p.uplink_occupancy == 1);
  CHECK(p.load_s == Approx(200.001));
  CHECK(p.alpha_net == Approx(200.001 / 160.001));
  // Client 1's uplink is free; a cached set does not cross the uplink.
  auto other = make_task(11, 7);
  other.client = 1;
  CHECK(predict(other, 0, snap).load_s == Approx(160.001));
  auto cached = predict(make_task(12, 9), 0, snap);
  CHECK(cached.uplink_occupancy == 0);
  CHECK(cached.load_s == Approx(8.001));
  // A link of its own per server (the simulator's per-server mode).
  snap.shared_uplinks = false;
  CHECK(predict(make_task(10, 7), 0, snap).load_s == Approx(160.001));
  snap.shared_uplinks = true;
  // The prepared snapshot keeps each client's uplink as servers change.
  prepared_snapshot prep{snap};
  REQUIRE(prep.uplink(0) != nullptr);
  CHECK(prep.uplink(0)->sum_now() == 1);
  CHECK(prep.uplink(0)->stretch(0, 160.001, 1, uplink_gamma) == Approx(200.001));
  auto b_done = snap.servers[1];
  b_done.running[0].load_remaining_s = 0;
  prep.update_server(1, b_done);
  CHECK(prep.uplink(0)->sum_now() == 0);
  prep.update_server(1, snap.servers[1]);
  CHECK(prep.uplink(0)->sum_now() == 1);
  prep.pop_server(); // B
  CHECK(prep.uplink(0)->sum_now() == 0);
  // A client index beyond the server's links is ignored, not read past.
  auto stray = snap;
  stray.servers[1].running[0].uplink_client = 7;
  CHECK(client_uplinks(stray).empty());
  CHECK(prepared_snapshot{stray}.uplink(7) == nullptr);
}
