#include <catch2/catch.hpp>

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

TEST_CASE("shared runs do not move the solo compute time", "[placement]") {
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
