#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "placement/sim/workload.hpp"
#include "placement/latency_model.hpp"
#include "placement/task_profile.hpp"

using namespace gleam::placement;

namespace {

run_record solo_run(std::string type, double wall_s) {
  run_record r;
  r.gpu_type = std::move(type);
  r.weight_bytes = 16'000'000'000ull;
  r.memory_bytes = 24'000'000'000ull;
  r.compute_wall_s = wall_s;
  r.occ = {0.45, 0.5};
  return r;
}

} // namespace

TEST_CASE("an unknown signature gets the conservative default", "[placement]") {
  profile_store store;
  auto p = store.resolve("never-seen", {"H200", "L40S"}, 10'000'000'000ull);
  CHECK(p.samples == 0);
  CHECK(p.weight_bytes == 10'000'000'000ull);
  CHECK(p.memory_bytes == 2 * 10'000'000'000ull + default_extra_memory_bytes);
  CHECK(p.compute_s == std::vector<double>{default_compute_s, default_compute_s});
  CHECK(p.occ.gpu == 1.0);
  CHECK(p.occ.network == 1.0);
  auto no_hint = store.resolve("never-seen", {"H200"}, 0);
  CHECK(no_hint.weight_bytes == default_weight_bytes);
}

TEST_CASE("profiles learn a running mean, then an exponential one", "[placement]") {
  profile_store store{0.5};
  store.observe("llama", solo_run("H200", 40));
  store.observe("llama", solo_run("H200", 44));
  auto p = store.resolve("llama", {"H200"}, 0);
  CHECK(p.samples == 2);
  CHECK(p.compute_s[0] == Approx(42.0));
  CHECK(p.weight_bytes == 16'000'000'000ull);
  CHECK(p.memory_bytes == 24'000'000'000ull);
  CHECK(p.occ.gpu == Approx(0.45));
  // Third sample: weight max(0.5, 1/3) = 0.5.
  store.observe("llama", solo_run("H200", 50));
  CHECK(store.resolve("llama", {"H200"}, 0).compute_s[0] == Approx(46.0));
}

TEST_CASE("profiles learn a task's launches per run, its progress counter", "[placement]") {
  profile_store store;
  CHECK(store.resolve("llama", {"H200"}, 0).launches == 0); // unknown
  auto run = solo_run("H200", 40);
  run.launches = 500;
  store.observe("llama", run);
  run.launches = 0; // a run whose server did not count: no sample
  store.observe("llama", run);
  run.launches = 520;
  store.observe("llama", run);
  CHECK(store.resolve("llama", {"H200"}, 0).launches == Approx(510.0));
  // Half the launches done: half the solo time is done, whatever the
  // wall time was; none counted or no count known: unknown (-1).
  CHECK(done_solo_from_progress(40, 255, 510) == Approx(20.0));
  CHECK(done_solo_from_progress(40, 600, 510) == Approx(40.0));
  CHECK(done_solo_from_progress(40, 0, 510) < 0);
  CHECK(done_solo_from_progress(40, 255, 0) < 0);
}

TEST_CASE("shared runs of unknown contention do not move the solo compute time",
          "[placement]") {
  profile_store store;
  store.observe("llama", solo_run("H200", 40));
  auto shared = solo_run("H200", 90);
  shared.shared_gpu = true;
  store.observe("llama", shared);
  CHECK(store.resolve("llama", {"H200"}, 0).compute_s[0] == Approx(40.0));
  CHECK(store.resolve("llama", {"H200"}, 0).samples == 2);
}

TEST_CASE("an unseen GPU type is extrapolated from other signatures", "[placement]") {
  profile_store store;
  store.observe("whisper", solo_run("H200", 3));
  store.observe("whisper", solo_run("L40S", 12)); // L40S is 4x slower here
  store.observe("llama", solo_run("H200", 40));
  auto p = store.resolve("llama", {"H200", "L40S", "B200"}, 0);
  CHECK(p.compute_s[0] == Approx(40.0));
  CHECK(p.compute_s[1] == Approx(160.0));
  // No signature relates B200 to anything: slowest known x the margin.
  CHECK(p.compute_s[2] == Approx(40.0 * unknown_gpu_type_factor));
  CHECK(store.solo_compute_s("llama", "L40S") == 0);
  CHECK(store.solo_compute_s("llama", "H200") == Approx(40.0));
}

TEST_CASE("profiles learn solo times from shared runs by dividing out contention",
          "[placement]") {
  // A planted solo time of 40 s on an H200 with gamma 2.2. Every run shares
  // the GPU with co-runners of summed occupancy 0..1.5 and takes
  // max(1, 2.2 Σu) times as long, with 3 % noise; the model predicts that
  // contention with the same gamma.
  constexpr double solo = 40;
  constexpr double gamma = 2.2;
  sim::rng gen{17};
  profile_store learned;
  profile_store raw;
  double mean_slowdown = 0;
  constexpr int runs = 400;
  for (int i = 0; i < runs; ++i) {
    auto alpha = std::max(1.0, gamma * 1.5 * gen.uniform());
    auto run = solo_run("H200", solo * alpha * std::exp(0.03 * gen.normal()));
    run.shared_gpu = true;
    raw.observe("llama", run); // contention unknown: ignored
    run.alpha_gpu = alpha;
    run.alpha_modelled = true;
    learned.observe("llama", run);
    mean_slowdown += alpha / runs;
  }
  // The runs were 1.9x their solo time on average, yet the profile holds
  // the solo time (EMA of 20 % over 3 % noise: within 3 %).
  CHECK(mean_slowdown > 1.5);
  CHECK(learned.resolve("llama", {"H200"}, 0).compute_s[0] == Approx(solo).epsilon(0.03));
  // Neither learned a reference for the γ fit: no run was alone.
  CHECK(learned.solo_compute_s("llama", "H200") == 0);
  CHECK(raw.solo_compute_s("llama", "H200") == 0);
  CHECK(raw.resolve("llama", {"H200"}, 0).compute_s[0] == default_compute_s);
  CHECK(raw.resolve("llama", {"H200"}, 0).samples == runs);
}
