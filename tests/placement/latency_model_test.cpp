#include <catch2/catch.hpp>

#include "placement/error.hpp"
#include "placement/latency_model.hpp"
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

TEST_CASE("contention stretches compute while co-runners last", "[placement]") {
  auto s = make_server("a", 80, 60);
  s.cached.push_back({7, 16 * gb});
  // A co-runner of occupancy 0.75 for the next 20 s: alpha = 2 * 0.75 = 1.5.
  s.running.push_back(make_running(1, 0.75, 20));
  auto snap = make_snapshot({s});
  auto t = make_task(2, 7, 10);
  auto p = predict(t, 0, snap);
  // Load 8.001 s (no network co-runner); compute starts at 8.001 s, does
  // 11.999 / 1.5 s of work until the co-runner ends at 20 s, the rest alone.
  CHECK(p.load_s == Approx(8.001));
  CHECK(p.compute_s == Approx(11.999 + (10 - 11.999 / 1.5)));
  CHECK(p.alpha_gpu > 1.0);
  CHECK(p.alpha_gpu < 1.5);
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

TEST_CASE("marginal progress is exact per co-runner and sees later starts",
          "[placement]") {
  auto s = make_server("a", 141, 101);
  // Two co-runners computing for 100 s: u 0.2 and 0.5, gamma 2.
  s.running.push_back(make_running(1, 0.2, 100));
  s.running.push_back(make_running(2, 0.5, 100));
  server_timeline tl{s};
  // Now: alphas 1 (2 * 0.5) and 1 (2 * 0.2), rate 2. With a task of
  // u 0.3: its alpha 1.4, theirs 1.6 and 1.0: rate 1/1.4 + 1/1.6 + 1.
  auto expected = 1 / 1.4 + 1 / 1.6 + 1.0 - 2.0;
  CHECK(tl.marginal_progress(0, 10, 0.3, 2.0) == Approx(expected));
  // An idle GPU gains a whole task.
  CHECK(server_timeline{make_server("b", 80, 80)}.marginal_progress(0, 10, 0.9, 3.0)
        == Approx(1.0));
  // A third co-runner that starts computing at 5 s makes the window
  // [0, 10) worse than its first instant.
  tl.add(0, 5, 50, {0.5, 0.5}, 20 * gb);
  CHECK(tl.marginal_progress(0, 4, 0.3, 2.0) == Approx(expected));
  CHECK(tl.marginal_progress(0, 10, 0.3, 2.0) < expected - 0.1);
}

TEST_CASE("inflicted counts the stretch of each co-runner", "[placement]") {
  auto s = make_server("a", 141, 121);
  s.running.push_back(make_running(1, 0.5, 100));
  server_timeline tl{s};
  // A task of u 0.8 computing over [8, 18): the co-runner's alpha goes
  // from 1 to 2 * 0.8 = 1.6, so it loses 0.6 s per second of overlap.
  CHECK(tl.inflicted(resource::gpu, 8, 18, 0.8, 2.0) == Approx(6.0));
  // Below the knee (2 * 0.5 = 1) co-locating costs it nothing.
  CHECK(tl.inflicted(resource::gpu, 8, 18, 0.5, 2.0) == Approx(0.0));
  // Only the overlap counts.
  CHECK(tl.inflicted(resource::gpu, 95, 130, 0.8, 2.0) == Approx(0.6 * 5));
  // Nobody loads: a load costs nobody anything.
  CHECK(tl.inflicted(resource::network, 0, 8, 1.0, 2.0) == 0);
}
