#include <catch2/catch.hpp>

#include "placement/sim/run_sim.hpp"
#include "placement/sim/simulator.hpp"

using namespace gleam::placement;
using namespace gleam::placement::sim;

namespace {

/// A small contention-heavy setup: 600 tasks arriving faster than 12 GPUs
/// can serve them, small caches.
sim_config small_config(uint64_t seed) {
  sim_config cfg;
  cfg.trace.seed = seed;
  cfg.trace.tasks = 600;
  cfg.trace.arrival_rate_per_s = 1.0;
  cfg.cluster.servers_per_type = {4, 4, 4};
  cfg.holdout_mixes = 100;
  return cfg;
}

} // namespace

TEST_CASE("the trace generator is deterministic per seed", "[placement]") {
  auto types = default_task_types();
  auto a = generate_trace({5, 200, 2.0, 4, 0.05}, types);
  auto b = generate_trace({5, 200, 2.0, 4, 0.05}, types);
  auto c = generate_trace({6, 200, 2.0, 4, 0.05}, types);
  REQUIRE(a.size() == 200);
  bool same = true;
  bool differs = false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    same = same && a[i].arrival_s == b[i].arrival_s && a[i].type == b[i].type
           && a[i].compute_noise == b[i].compute_noise;
    differs = differs || a[i].arrival_s != c[i].arrival_s;
    if (i > 0)
      CHECK(a[i].arrival_s > a[i - 1].arrival_s);
  }
  CHECK(same);
  CHECK(differs);
  // Mean inter-arrival ≈ 1 / rate.
  CHECK(a.back().arrival_s / 200 == Approx(0.5).epsilon(0.2));
}

TEST_CASE("the simulator is deterministic for a seed", "[placement]") {
  auto cfg = small_config(11);
  auto a = simulate(cfg, policy_kind::gleam);
  auto b = simulate(cfg, policy_kind::gleam);
  CHECK(same_report(a, b));
  CHECK(a.completed == 600);
  auto other = small_config(12);
  CHECK(!same_report(a, simulate(other, policy_kind::gleam)));
}

TEST_CASE("gleam beats the baselines on a contention-heavy trace", "[placement]") {
  auto cfg = small_config(3);
  auto g = simulate(cfg, policy_kind::gleam);
  auto rr = simulate(cfg, policy_kind::round_robin);
  auto ll = simulate(cfg, policy_kind::least_loaded);
  REQUIRE(g.completed == cfg.trace.tasks);
  REQUIRE(rr.completed == cfg.trace.tasks);
  CHECK(g.throughput_tasks_per_s / rr.throughput_tasks_per_s > 1.0);
  CHECK(g.throughput_tasks_per_s / ll.throughput_tasks_per_s > 1.0);
  CHECK(g.network_bytes < rr.network_bytes);
  CHECK(g.mean_latency_s < rr.mean_latency_s);
  // Where the GPU time went: fractions of each type's time add up to 1 and
  // every completed task is counted on the type it ran on.
  REQUIRE(g.usage.size() == cfg.gpu_types.size());
  std::size_t counted = 0;
  for (const auto& u : g.usage) {
    CHECK(u.computing + u.loading_only + u.idle == Approx(1.0));
    CHECK(u.computing > 0);
    for (auto c : u.tasks_by_type)
      counted += c;
  }
  CHECK(counted == g.completed);
}

TEST_CASE("peer fetch over the backbone speeds up loads that missed", "[placement]") {
  // Half the clients are on 60 MB/s Wi-Fi; with peers at 125 MB/s their
  // loads of a weight set cached elsewhere take half as long. Round-robin
  // reloads the most, so it gains the most; every task still completes.
  auto cfg = small_config(5);
  auto peers = cfg;
  peers.cluster.peer_rate_bytes_per_s = 125e6;
  auto rr = simulate(cfg, policy_kind::round_robin);
  auto rr_peers = simulate(peers, policy_kind::round_robin);
  REQUIRE(rr_peers.completed == cfg.trace.tasks);
  CHECK(rr_peers.throughput_tasks_per_s > 1.1 * rr.throughput_tasks_per_s);
  CHECK(rr_peers.mean_latency_s < rr.mean_latency_s);
  // Deterministic too, and the model predicts the peer loads as well as the
  // link loads (held-out error in the same range as without peers).
  auto g_peers = simulate(peers, policy_kind::gleam);
  CHECK(same_report(g_peers, simulate(peers, policy_kind::gleam)));
  CHECK(g_peers.completed == cfg.trace.tasks);
  CHECK(g_peers.heldout_median_abs_pct < 15.0);
  auto parsed = parse_sim_args({"--peer-mbps", "1250"});
  REQUIRE(parsed);
  CHECK(parsed->first.cluster.peer_rate_bytes_per_s == 1250e6);
  CHECK(!parse_sim_args({"--peer-mbps", "-1"}));
}

TEST_CASE("the simulator reports planted and fitted gamma", "[placement]") {
  auto cfg = small_config(4);
  auto rep = simulate(cfg, policy_kind::gleam);
  REQUIRE(rep.gammas.size() == 2 * cfg.gpu_types.size());
  CHECK(rep.gammas[0].gpu_type == "H200");
  CHECK(rep.gammas[0].planted == cfg.gpu_types[0].gamma_gpu);
  for (const auto& g : rep.gammas)
    if (g.converged)
      CHECK(g.fitted == Approx(g.planted).epsilon(0.25));
  // Learned from only 300 tasks here (the full-size run reaches < 5 %).
  CHECK(rep.mix_samples > 100);
  CHECK(rep.mix_median_abs_pct < 20.0);
}

TEST_CASE("run_sim_cli rejects bad options with a clear message", "[placement]") {
  std::vector<std::string> args{"placement_sim", "--tasks", "zero"};
  std::vector<char*> argv;
  for (auto& a : args)
    argv.push_back(a.data());
  bool ok = true;
  auto out = run_sim_cli(static_cast<int>(argv.size()), argv.data(), &ok);
  CHECK(!ok);
  CHECK(out.find("--tasks got 'zero'") != std::string::npos);
  auto parsed = parse_sim_args({"--servers", "1,2,3", "--policy", "gleam", "--seed", "9"});
  REQUIRE(parsed);
  CHECK(parsed->first.cluster.servers_per_type == std::vector<uint32_t>{1, 2, 3});
  CHECK(parsed->first.trace.seed == 9);
  CHECK(parsed->second == std::vector<policy_kind>{policy_kind::gleam});
}

TEST_CASE("the throughput bound holds every policy and is exact for one task type",
          "[placement]") {
  auto cfg = small_config(3);
  auto bound = throughput_bound(cfg);
  for (auto p : {policy_kind::gleam, policy_kind::round_robin, policy_kind::least_loaded})
    CHECK(simulate(cfg, p).throughput_tasks_per_s < bound);
  // 100 tasks of occupancy 0.5 and 10 s on two H200s (γ 1.05), arriving
  // within ~0.1 s, no noise: the GPUs do at most 1/γ occupancy-seconds per
  // second, so the work takes 100 · 0.5 · 10 · 1.05 / 2 s.
  sim_config one;
  one.trace.tasks = 100;
  one.trace.arrival_rate_per_s = 1000;
  one.trace.noise_sigma = 0;
  one.gpu_types = {default_gpu_types()[0]};
  auto type = default_task_types()[0];
  type.h200_compute_s = 10;
  type.gpu_occupancy = 0.5;
  one.task_types = {type};
  one.cluster.servers_per_type = {2};
  CHECK(throughput_bound(one) == Approx(100 / (100 * 0.5 * 10 * 1.05 / 2)).epsilon(0.002));
}

TEST_CASE("clients' uplinks carry no more than their rate", "[placement]") {
  // Four clients on 1 GbE (125 MB/s) and four on Wi-Fi (60 MB/s): 740 MB/s
  // in all. With shared uplinks no policy moves weights faster than that
  // over its run; with a link of its own per (client, server) pair (the
  // simulator before) round-robin's reloads went past it.
  auto cfg = small_config(7);
  cfg.trace.tasks = 400;
  double clients_rate = 0;
  for (uint32_t c = 0; c < cfg.trace.clients; ++c)
    clients_rate += c % 2 == 0 ? cfg.cluster.wired_rate_bytes_per_s
                               : cfg.cluster.wifi_rate_bytes_per_s;
  REQUIRE(cfg.cluster.shared_uplinks);
  std::vector<sim_report> shared;
  for (auto k : all_policy_kinds) {
    shared.push_back(simulate(cfg, k));
    const auto& r = shared.back();
    REQUIRE(r.completed == cfg.trace.tasks);
    CHECK(r.network_bytes / r.makespan_s < clients_rate);
  }
  auto own = cfg;
  own.cluster.shared_uplinks = false;
  auto rr_own = simulate(own, policy_kind::round_robin);
  CHECK(rr_own.network_bytes / rr_own.makespan_s > clients_rate);
  // Sharing slows every policy; gleam, which reloads least and sees the
  // uplinks, stays ahead of the baselines, and its model predicts the
  // shared loads (held-out error in the usual range).
  CHECK(shared[1].throughput_tasks_per_s < rr_own.throughput_tasks_per_s);
  CHECK(shared[0].throughput_tasks_per_s > 1.5 * shared[1].throughput_tasks_per_s);
  CHECK(shared[0].throughput_tasks_per_s > 1.5 * shared[2].throughput_tasks_per_s);
  CHECK(shared[0].heldout_median_abs_pct < 15.0);
  auto parsed = parse_sim_args({"--uplinks", "per-server"});
  REQUIRE(parsed);
  CHECK(!parsed->first.cluster.shared_uplinks);
  CHECK(!parse_sim_args({"--uplinks", "both"}));
}
