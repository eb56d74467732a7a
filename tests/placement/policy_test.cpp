#include <catch2/catch.hpp>

#include "placement/policy.hpp"
#include "tests/placement/fixtures.hpp"

using namespace gleam::placement;
using namespace gleam::placement::test;

TEST_CASE("gleam sends a task to the server caching its weights", "[placement]") {
  // A is idle; B caches the weights but already runs a light task.
  auto a = make_server("A", 80, 80);
  auto b = make_server("B", 80, 60);
  b.cached.push_back({7, 16 * gb});
  b.running.push_back(make_running(1, 0.2, 30));
  auto snap = make_snapshot({a, b});
  std::vector<task> queue{make_task(10, 7, 10)};
  auto d = place(snap, queue, policy_kind::gleam);
  REQUIRE(d.assignments.size() == 1);
  CHECK(d.assignments[0].server == 1);
  CHECK(d.assignments[0].predicted.cached_bytes == 16 * gb);
  CHECK(d.assignments[0].runner_up == 0);
  auto text = explain(snap, queue[0], d.assignments[0]);
  CHECK(text.find("placed on B") != std::string::npos);
  CHECK(text.find("16.0 GB cached of 16.0 GB") != std::string::npos);
  CHECK(text.find("next best A") != std::string::npos);
  // Least-loaded ignores the cache and picks the idle A.
  CHECK(place(snap, queue, policy_kind::least_loaded).assignments[0].server == 0);
}

TEST_CASE("gleam waits for a busy cached server rather than reload", "[placement]") {
  auto a = make_server("A", 80, 80);
  auto b = make_server("B", 40, 0);
  b.cached.push_back({7, 16 * gb});
  b.running.push_back(make_running(1, 0.5, 5, 40));
  auto snap = make_snapshot({a, b});
  std::vector<task> queue{make_task(10, 7, 10)};
  auto d = place(snap, queue, policy_kind::gleam);
  const auto& asg = d.assignments[0];
  CHECK(asg.server == no_server);
  CHECK(asg.awaited == 1);
  CHECK(asg.predicted.start_s == Approx(5.0));
  CHECK(d.placed == 0);
  CHECK(explain(snap, queue[0], asg).find("waits for B") != std::string::npos);
}

TEST_CASE("gleam does not co-locate past the throughput knee", "[placement]") {
  // Same weights cached on both; A runs a heavy task for a long time.
  auto a = make_server("A", 141, 121);
  auto b = make_server("B", 141, 141);
  a.cached.push_back({7, 16 * gb});
  b.cached.push_back({7, 16 * gb});
  a.running.push_back(make_running(1, 0.9, 1000));
  auto snap = make_snapshot({a, b});
  snap.gamma = {{1.25, 1.5}};
  std::vector<task> queue{make_task(10, 7, 10, 20, 0.9), make_task(11, 7, 10, 20, 0.9)};
  auto d = place(snap, queue, policy_kind::gleam);
  // Past the knee (1.25 * 0.9 > 1) one such task runs at alpha 1.125 even
  // alone and two at 2.25 each: the GPU's progress stays 1 / 1.125, so a
  // second one adds nothing and stretches both. The first goes to the idle
  // B (8.001 s from its cache, 10 x 1.125 s of compute); the second waits
  // for it to finish.
  CHECK(d.assignments[0].server == 1);
  CHECK(d.assignments[0].predicted.total_s == Approx(8.001 + 11.25));
  CHECK(d.assignments[1].server == no_server);
  CHECK(d.assignments[1].awaited == 1);
  CHECK(d.assignments[1].predicted.start_s == Approx(d.assignments[0].predicted.total_s));
  CHECK(d.placed == 1);
  // Light tasks (u 0.4) pair below the knee (1.25 * 0.8 = 1): both start on
  // B now, their compute free. Both load from B's cache, off the ingress, so
  // neither load slows the other: 8.001 + 10 s each.
  std::vector<task> light{make_task(12, 7, 10, 20, 0.4), make_task(13, 7, 10, 20, 0.4)};
  auto dl = place(snap, light, policy_kind::gleam);
  CHECK(dl.placed == 2);
  CHECK(dl.assignments[0].server == 1);
  CHECK(dl.assignments[1].server == 1);
  CHECK(dl.assignments[1].predicted.completion_s() == Approx(8.001 + 10));
  // Uncached (weights 8 cached nowhere) on B alone, from two clients, the
  // second load shares the ingress with the first's (alpha 1.5 * 1.0 while
  // both load, i.e. for the first's 160.001 s, then alone: 160.001 +
  // 160.001 / 3 s). (From one client their shared uplink would bind first.)
  auto only_b = make_snapshot({b});
  only_b.gamma = snap.gamma;
  only_b.servers[0].links.push_back({100e6, 0.001});
  std::vector<task> cold{make_task(14, 8, 10, 20, 0.4), make_task(15, 8, 10, 20, 0.4)};
  cold[1].client = 1;
  auto dc = place(only_b, cold, policy_kind::gleam);
  REQUIRE(dc.placed == 2);
  CHECK(dc.assignments[1].predicted.load_s == Approx(160.001 + 160.001 / 3));
}

TEST_CASE("memory_fit never places a task where it does not fit", "[placement]") {
  auto snap = make_snapshot({make_server("A", 80, 15), make_server("B", 80, 25),
                             make_server("C", 80, 70)});
  std::vector<task> queue{make_task(1, 1, 10, 20), make_task(2, 2, 10, 20),
                          make_task(3, 3, 10, 20), make_task(4, 4, 10, 20),
                          make_task(5, 5, 10, 20)};
  auto d = place(snap, queue, policy_kind::memory_fit);
  // Best fit: B (25 GB) first, then C three times (70 → 50 → 30 → 10); A never.
  std::vector<server_index> got;
  for (const auto& a : d.assignments)
    got.push_back(a.server);
  CHECK(got == std::vector<server_index>{1, 2, 2, 2, no_server});
  for (auto kind : all_policy_kinds) {
    auto dk = place(snap, queue, kind);
    std::vector<uint64_t> used(3, 0);
    for (const auto& a : dk.assignments)
      if (a.server != no_server)
        used[a.server] += 20 * gb;
    for (std::size_t s = 0; s < 3; ++s)
      CHECK(used[s] <= snap.servers[s].free_memory_bytes);
  }
}

TEST_CASE("round_robin cycles and carries its cursor", "[placement]") {
  auto snap = make_snapshot({make_server("A", 80, 80), make_server("B", 80, 80),
                             make_server("C", 80, 80)});
  snap.round_robin_cursor = 1;
  std::vector<task> queue;
  for (task_id i = 0; i < 4; ++i)
    queue.push_back(make_task(i, i, 10, 20));
  auto d = place(snap, queue, policy_kind::round_robin);
  std::vector<server_index> got;
  for (const auto& a : d.assignments)
    got.push_back(a.server);
  CHECK(got == std::vector<server_index>{1, 2, 0, 1});
  CHECK(d.next_round_robin_cursor == 2);
  // A full server is skipped.
  snap.servers[2].free_memory_bytes = 0;
  snap.round_robin_cursor = 2;
  CHECK(place(snap, {queue[0]}, policy_kind::round_robin).assignments[0].server == 0);
}

TEST_CASE("gleam groups tasks sharing weights onto the same cached server",
          "[placement]") {
  auto a = make_server("A", 141, 141);
  auto b = make_server("B", 141, 141);
  b.cached.push_back({7, 16 * gb});
  a.cached.push_back({8, 16 * gb});
  auto snap = make_snapshot({a, b});
  std::vector<task> queue{make_task(1, 7, 10, 20, 0.3), make_task(2, 8, 10, 20, 0.3),
                          make_task(3, 7, 10, 20, 0.3)};
  auto d = place(snap, queue, policy_kind::gleam);
  CHECK(d.assignments[0].server == 1);
  CHECK(d.assignments[1].server == 0);
  CHECK(d.assignments[2].server == 1);
  CHECK(d.find(3) == &d.assignments[2]);
  CHECK(parse_policy_kind("least_loaded").value() == policy_kind::least_loaded);
  CHECK(!parse_policy_kind("fastest"));
}

TEST_CASE("gleam gives an idle server the waiter that would otherwise finish latest",
          "[placement]") {
  // A caches the weights but is full for 5 s and holds one task at a time;
  // B is idle, without the weights (160 s to load them over the link).
  auto a = make_server("A", 80, 0);
  a.cached.push_back({7, 16 * gb});
  a.running.push_back(make_running(1, 0.5, 5, 80));
  auto b = make_server("B", 80, 80);
  auto snap = make_snapshot({a, b});
  std::vector<task> queue;
  for (task_id i = 0; i < 12; ++i)
    queue.push_back(make_task(10 + i, 7, 10, 80));
  // The first reserves A from 5 s and finishes at 5 + 8 + 10 = 23 s; each
  // other would then start at 23 s and finish at 41 s, but the k-th in line
  // behind the first realistically at 41 + 18 (k - 1) s; on B it finishes
  // at 170 s. The last (k = 11, 221 s) gains most by starting on B now, and
  // B, once busy, takes no more: it does not cache their weights.
  auto d = place(snap, queue, policy_kind::gleam);
  CHECK(d.placed == 1);
  CHECK(d.assignments[11].server == 1);
  CHECK(d.assignments[11].predicted.completion_s() == Approx(170.0).epsilon(0.01));
  for (std::size_t i = 0; i < 11; ++i) {
    CHECK(d.assignments[i].server == no_server);
    CHECK(d.assignments[i].awaited == 0);
  }
  // With a short line nobody gains: all wait for A (the last, k = 4, at
  // 95 s).
  queue.resize(5);
  CHECK(place(snap, queue, policy_kind::gleam).placed == 0);
}

TEST_CASE("gleam charges a task the time it costs its co-runners", "[placement]") {
  // A caches the weights (8 s from its cache) and runs a task of GPU
  // occupancy 0.5 for the next 100 s. B is idle and caches them too, but its
  // cache tier is slower (16 GB at 1.5 GB/s = 10.7 s). Ideal time-sharing
  // (gamma 1).
  auto a = make_server("A", 141, 121);
  a.cached.push_back({7, 16 * gb});
  a.running.push_back(make_running(1, 0.5, 100));
  auto b = make_server("B", 141, 141);
  b.cached.push_back({7, 16 * gb});
  b.cache_fill_rate_bytes_per_s = 1.5e9;
  auto snap = make_snapshot({a, b});
  snap.gamma = {{1.0, 1.5}};
  // A light task (u 0.4) shares A for free (0.5 + 0.4 < 1: alpha 1 for
  // both): done at 18.0 s on A against 20.7 s on B.
  auto light = place(snap, {make_task(10, 7, 10, 20, 0.4)}, policy_kind::gleam);
  REQUIRE(light.placed == 1);
  CHECK(light.assignments[0].server == 0);
  CHECK(light.assignments[0].predicted.completion_s() == Approx(18.001));
  // A heavier one (u 0.7) would still finish first on A (alpha 1.2 for
  // both: done at 8.001 + 12 s), but it would slow the running task by
  // 0.2 s a second for its 12 s of compute: 2.4 s charged, more than the
  // 0.67 s it saves. It goes to B.
  auto heavy_task = make_task(11, 7, 10, 20, 0.7);
  auto heavy = place(snap, {heavy_task}, policy_kind::gleam);
  REQUIRE(heavy.placed == 1);
  CHECK(heavy.assignments[0].server == 1);
  CHECK(heavy.assignments[0].predicted.completion_s() == Approx(20.668).epsilon(0.001));
  CHECK(heavy.assignments[0].runner_up == 0);
  CHECK(heavy.assignments[0].runner_up_completion_s == Approx(20.001));
  auto on_a = predict(heavy_task, 0, snap);
  CHECK(on_a.completion_s() < heavy.assignments[0].predicted.completion_s());
}

TEST_CASE("the first waiting task keeps its place against later ones", "[placement]") {
  // One 80 GB server; a task holds 40 GB for 10 s more.
  auto a = make_server("A", 80, 40);
  a.cached.push_back({1, 16 * gb});
  a.cached.push_back({2, 16 * gb});
  a.running.push_back(make_running(1, 0.5, 10, 40));
  auto snap = make_snapshot({a});
  // The older task needs the whole GPU and waits for 10 s; the younger one
  // would fit now, but its 100 s run would hold 40 GB past the 10 s mark
  // and push the older one back by 100 s. It waits behind it instead.
  std::vector<task> queue{make_task(10, 1, 10, 80), make_task(11, 2, 100, 40, 0.3)};
  auto d = place(snap, queue, policy_kind::gleam);
  CHECK(d.placed == 0);
  CHECK(d.assignments[0].awaited == 0);
  CHECK(d.assignments[0].predicted.start_s == Approx(10.0));
  CHECK(d.assignments[1].awaited == 0);
  CHECK(d.assignments[1].predicted.start_s
        == Approx(d.assignments[0].predicted.completion_s()));
  // Alone, the younger one starts now (0.5 + 0.3: alpha 1.6 for both, the
  // GPU's progress 2 / 1.6 > 1).
  CHECK(place(snap, {queue[1]}, policy_kind::gleam).assignments[0].server == 0);
}

TEST_CASE("a busy server takes a waiter it caches, not one it must load", "[placement]") {
  // A caches sets 7 and 8 and is full for 30 s, then runs two tasks at a
  // time (8 s load, 10 s compute). B runs a light task for 100 s and caches
  // set 8 only, on a slow tier (16 GB at 0.25 GB/s = 64 s). Twelve tasks,
  // sets 7 and 8 in turn: each would rather wait for A (done at 48 s) than
  // start on B (76 s for set 8, 172 s for set 7 over the link: the load,
  // then 10 s at alpha 2 (0.3 + 0.3) = 1.2 next to B's task).
  auto a = make_server("A", 80, 0);
  a.cached.push_back({7, 16 * gb});
  a.cached.push_back({8, 16 * gb});
  a.running.push_back(make_running(1, 0.3, 30, 80));
  auto b = make_server("B", 141, 121);
  b.cached.push_back({8, 16 * gb});
  b.cache_fill_rate_bytes_per_s = 0.25e9;
  b.running.push_back(make_running(2, 0.3, 100));
  auto snap = make_snapshot({a, b});
  std::vector<task> queue;
  for (task_id i = 0; i < 12; ++i)
    queue.push_back(make_task(10 + i, i % 2 == 0 ? 7 : 8, 10, 40, 0.3));
  auto d = place(snap, queue, policy_kind::gleam);
  // The first reserves A; the k-th behind it realistically finishes at
  // 48 + 18 floor(k / 2) s. The last set-8 task (k = 10, 138 s) gains most
  // by starting on B now, its load from B's cache overlapping B's compute;
  // the set-7 ones behind it would gain too, but B would have to load them.
  CHECK(d.placed == 1);
  CHECK(d.assignments[11].server == 1);
  CHECK(d.assignments[11].predicted.cached_bytes == 16 * gb);
  CHECK(d.assignments[11].predicted.completion_s() == Approx(64.001 + 10 * 2 * 0.6));
  for (std::size_t i = 0; i < 11; ++i)
    CHECK(d.assignments[i].awaited == 0);
  // Were B not caching set 8, nothing would start.
  snap.servers[1].cached.clear();
  CHECK(place(snap, queue, policy_kind::gleam).placed == 0);
}

TEST_CASE("gleam sees the loads it places on a client's uplink", "[placement]") {
  // Two idle servers, two tasks of client 0 with weights no server caches:
  // the second load shares the client's uplink with the first.
  auto snap = make_snapshot({make_server("A", 80, 80), make_server("B", 80, 80)});
  std::vector<task> queue{make_task(1, 7), make_task(2, 8)};
  auto d = place(snap, queue, policy_kind::gleam);
  REQUIRE(d.placed == 2);
  const auto& first = d.assignments[0].predicted;
  const auto& second = d.assignments[1].predicted;
  CHECK(first.load_s == Approx(160.001));
  // Half the uplink while the first load lasts, then all of it.
  CHECK(second.load_s == Approx(240.001).epsilon(0.01));
  // Tasks of different clients do not share an uplink.
  queue[1].client = 1;
  for (auto& s : snap.servers)
    s.links.push_back({100e6, 0.001});
  auto apart = place(snap, queue, policy_kind::gleam);
  CHECK(apart.assignments[1].predicted.load_s == Approx(160.001));
  // Nor do they in the per-server mode.
  queue[1].client = 0;
  snap.shared_uplinks = false;
  auto own = place(snap, queue, policy_kind::gleam);
  CHECK(own.assignments[1].predicted.load_s == Approx(160.001));
}
