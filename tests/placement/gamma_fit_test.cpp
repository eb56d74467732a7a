#include <catch2/catch.hpp>

#include <cmath>

#include "placement/error.hpp"
#include "placement/latency_model.hpp"
#include "placement/sim/workload.hpp"

using namespace gleam::placement;

namespace {

/// 2000 observations, Σu uniform in [0, 3], slowdown = max(1, γ·Σu) with
/// 5 % log-normal noise.
gamma_fit planted(double gamma, uint64_t seed, std::size_t n = 2000, double sigma = 0.05) {
  sim::rng gen{seed};
  gamma_fit fit;
  for (std::size_t i = 0; i < n; ++i) {
    auto x = 3.0 * gen.uniform();
    auto y = std::max(1.0, gamma * x) * std::exp(sigma * gen.normal());
    fit.add(x, y);
  }
  return fit;
}

} // namespace

// Tolerance: with 5 % noise and ≥ 1300 contended points the standard error of
// γ is about 0.05 · γ / sqrt(1300) ≈ 0.3 % of γ; Σu bins of width 1/32 blur
// the knee by at most one bin. 2 % is several standard errors plus the
// binning, tight enough to catch a fit that ignores the max(1, ·) knee
// (which lands ~10 % low on this data).
TEST_CASE("gamma_fit recovers a planted gamma from noisy data", "[placement]") {
  for (auto gamma : {1.3, 2.2, 2.8}) {
    for (uint64_t seed : {1u, 2u, 3u}) {
      auto est = planted(gamma, seed).estimate();
      REQUIRE(est);
      CHECK(est->gamma == Approx(gamma).epsilon(0.02));
      CHECK(est->samples == 2000);
      // Points beyond the knee 1/γ: at least (3 − 1/1.3) / 3 ≈ 74 %.
      CHECK(est->active_samples > 1300);
      // The residual is the noise: about 5 % of a slowdown near 2-5.
      CHECK(est->rms_residual > 0.02);
      CHECK(est->rms_residual < 0.3);
    }
  }
}

TEST_CASE("gamma_fit without contended samples says so", "[placement]") {
  gamma_fit fit;
  for (int i = 0; i < 50; ++i)
    fit.add(0.01 * i, 1.0);
  auto est = fit.estimate();
  REQUIRE(!est);
  CHECK(est.error().code() == static_cast<uint8_t>(error_code::not_enough_samples));
}

TEST_CASE("contention_calibration keeps one fit per GPU type and resource",
          "[placement]") {
  contention_calibration cal;
  sim::rng gen{9};
  for (int i = 0; i < 500; ++i) {
    auto x = 2.0 * gen.uniform();
    cal.observe("H200", resource::gpu, x, std::max(1.0, 2.0 * x));
    cal.observe("L40S", resource::network, x, std::max(1.0, 1.5 * x));
  }
  auto table = cal.table({"H200", "L40S", "A100"});
  REQUIRE(table.size() == 3);
  CHECK(table[0][0] == Approx(2.0).epsilon(0.01));
  CHECK(table[0][1] == contention_calibration::default_gamma);
  CHECK(table[1][1] == Approx(1.5).epsilon(0.01));
  CHECK(table[2][0] == contention_calibration::default_gamma);
  CHECK(!cal.estimate("A100", resource::gpu));
}
