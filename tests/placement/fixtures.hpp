#pragma once

#include <string>
#include <vector>

#include "placement/snapshot.hpp"

namespace gleam::placement::test {

constexpr uint64_t gb = 1'000'000'000ull;

/// A server of type 0 with `total_gb` GB free and one 100 MB/s client link.
inline server make_server(std::string id, uint64_t total_gb, uint64_t free_gb) {
  server s;
  s.id = std::move(id);
  s.gpu_type = 0;
  s.total_memory_bytes = total_gb * gb;
  s.free_memory_bytes = free_gb * gb;
  s.cache_fill_rate_bytes_per_s = 2e9;
  s.links.push_back({100e6, 0.001});
  return s;
}

/// A task with 16 GB of weights, 20 GB of memory, 10 s solo compute.
inline task make_task(task_id id, weight_set_id w, double compute_s = 10,
                      uint64_t memory_gb = 20, double u_gpu = 0.5) {
  task t;
  t.id = id;
  t.signature = "sig-" + std::to_string(w);
  t.client = 0;
  t.weights = w;
  t.weight_bytes = 16 * gb;
  t.profile.weight_bytes = 16 * gb;
  t.profile.memory_bytes = memory_gb * gb;
  t.profile.compute_s = {compute_s};
  t.profile.occ = {u_gpu, 0.5};
  t.profile.samples = 5;
  return t;
}

/// One GPU type ("H200") with γ 2 for the GPU and 1.5 for the network.
inline snapshot make_snapshot(std::vector<server> servers) {
  snapshot snap;
  snap.gpu_types = {"H200"};
  snap.gamma = {{2.0, 1.5}};
  snap.servers = std::move(servers);
  return snap;
}

inline running_task make_running(task_id id, double u_gpu, double remaining_s,
                                 uint64_t memory_gb = 20) {
  running_task r;
  r.id = id;
  r.weights = 1000 + id;
  r.memory_bytes = memory_gb * gb;
  r.occ = {u_gpu, 0.5};
  r.load_remaining_s = 0;
  r.remaining_s = remaining_s;
  return r;
}

} // namespace gleam::placement::test
