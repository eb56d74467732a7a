// placement_bench: cost of one placement decision on a large synthetic
// cluster (default 1000 GPUs, 10k queued tasks) per policy.
//   placement_bench [servers] [queued_tasks]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "placement/policy.hpp"
#include "placement/sim/workload.hpp"

using namespace gleam::placement;

namespace {

snapshot make_cluster(std::size_t n, uint32_t clients, sim::rng& gen) {
  auto types = sim::default_gpu_types();
  auto tasks = sim::default_task_types();
  snapshot snap;
  for (const auto& t : types) {
    snap.gpu_types.push_back(t.name);
    snap.gamma.push_back({t.gamma_gpu, t.gamma_net});
  }
  for (std::size_t i = 0; i < n; ++i) {
    server s;
    s.id = "gpu-" + std::to_string(i);
    s.gpu_type = static_cast<gpu_type_index>(i % types.size());
    s.total_memory_bytes = types[s.gpu_type].memory_bytes;
    s.free_memory_bytes = s.total_memory_bytes;
    for (uint32_t c = 0; c < clients; ++c)
      s.links.push_back({c % 2 == 0 ? 125e6 : 60e6, c % 2 == 0 ? 0.0005 : 0.003});
    auto running = gen.next() % 4;
    for (uint64_t k = 0; k < running; ++k) {
      auto ty = static_cast<uint32_t>(gen.next() % tasks.size());
      if (s.free_memory_bytes < tasks[ty].memory_bytes)
        break;
      running_task r;
      r.id = i * 10 + k;
      r.weights = sim::weights_of(ty, 0);
      r.memory_bytes = tasks[ty].memory_bytes;
      r.occ = {tasks[ty].gpu_occupancy, tasks[ty].net_occupancy};
      r.load_remaining_s = gen.uniform() < 0.3 ? 50 * gen.uniform() : 0;
      if (r.load_remaining_s > 0) {
        // Its bytes cross one client's uplink (~30 loads per client).
        r.uplink_client = static_cast<client_index>(gen.next() % clients);
        r.uplink_occupancy = 1;
      }
      r.remaining_s = r.load_remaining_s + 100 * gen.uniform();
      s.free_memory_bytes -= r.memory_bytes;
      s.running.push_back(r);
    }
    for (uint32_t ty = 0; ty < tasks.size(); ++ty)
      for (uint32_t v = 0; v < tasks[ty].variants; ++v)
        if (gen.uniform() < 0.15)
          s.cached.push_back({sim::weights_of(ty, v), tasks[ty].weight_bytes});
    snap.servers.push_back(std::move(s));
  }
  return snap;
}

std::vector<task> make_queue(std::size_t n, const snapshot& snap, uint32_t clients,
                             uint64_t seed) {
  auto types = sim::default_task_types();
  auto trace = sim::generate_trace({seed, n, 10.0, clients, 0.05}, types);
  std::vector<task> out;
  for (const auto& tt : trace) {
    const auto& ty = types[tt.type];
    task t;
    t.id = tt.id;
    t.signature = sim::signature_of(ty, tt.variant);
    t.client = tt.client;
    t.weights = sim::weights_of(tt.type, tt.variant);
    t.weight_bytes = ty.weight_bytes;
    t.profile.weight_bytes = ty.weight_bytes;
    t.profile.memory_bytes = ty.memory_bytes;
    t.profile.occ = {ty.gpu_occupancy, ty.net_occupancy};
    t.profile.samples = 10;
    for (const auto& g : sim::default_gpu_types())
      t.profile.compute_s.push_back(ty.compute_s_on(g));
    out.push_back(std::move(t));
  }
  (void) snap;
  return out;
}

} // namespace

int main(int argc, char** argv) {
  std::size_t servers = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1000;
  std::size_t queued = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 10000;
  constexpr uint32_t clients = 16;
  sim::rng gen{42};
  auto snap = make_cluster(servers, clients, gen);
  auto queue = make_queue(queued, snap, clients, 7);
  if (auto err = validate(snap)) {
    std::fprintf(stderr, "invalid synthetic snapshot\n");
    return 1;
  }
  using clock = std::chrono::steady_clock;
  auto t_prep0 = clock::now();
  prepared_snapshot prep{snap};
  auto t_prep1 = clock::now();
  // Incremental update: one server's telemetry changed (a task finished).
  constexpr int update_reps = 1000;
  auto t_up0 = clock::now();
  for (int rep = 0; rep < update_reps; ++rep) {
    auto i = static_cast<server_index>((rep * 7919) % servers);
    prep.update_server(i, prep.snap().servers[i]);
  }
  auto t_up1 = clock::now();
  std::printf("placement_bench: %zu GPUs, %zu queued tasks\n", servers, queued);
  std::printf("prepare snapshot (all servers): %.1f us; update one server: %.2f us\n",
              std::chrono::duration<double, std::micro>(t_prep1 - t_prep0).count(),
              std::chrono::duration<double, std::micro>(t_up1 - t_up0).count() / update_reps);
  std::printf("%-13s %14s %14s %16s %16s %8s\n", "policy", "full queue ms", "us per task",
              "head decision", "median/p99 us", "placed");
  for (auto kind : all_policy_kinds) {
    double best_ms = 1e300;
    std::size_t placed = 0;
    for (int rep = 0; rep < 3; ++rep) {
      auto t0 = clock::now();
      auto d = place(prep, queue, kind);
      auto t1 = clock::now();
      best_ms = std::min(best_ms, std::chrono::duration<double, std::milli>(t1 - t0).count());
      placed = d.placed;
    }
    // One decision for the task at the head of the queue, each time a
    // different one of the first 1000 queued tasks (types, clients, caches
    // vary), on the prepared snapshot.
    constexpr std::size_t single_reps = 1000;
    std::vector<double> us;
    us.reserve(single_reps);
    std::size_t sink = 0;
    std::vector<task> head(1);
    for (std::size_t rep = 0; rep < single_reps; ++rep) {
      head[0] = queue[rep % queue.size()];
      auto t0 = clock::now();
      sink += place(prep, head, kind).placed;
      auto t1 = clock::now();
      us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
    }
    double mean = 0;
    for (auto x : us)
      mean += x;
    mean /= static_cast<double>(us.size());
    std::sort(us.begin(), us.end());
    std::printf("%-13s %14.1f %14.2f %13.1f us %7.1f/%-7.1f %8zu%s\n",
                std::string{to_string(kind)}.c_str(), best_ms,
                1000.0 * best_ms / static_cast<double>(queue.size()), mean,
                us[us.size() / 2], us[us.size() * 99 / 100], placed,
                sink == 0 ? " (none placed)" : "");
  }
  return 0;
}
