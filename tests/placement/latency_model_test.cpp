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
