#include <catch2/catch.hpp>

#include <cmath>

#include "placement/error.hpp"
#include "placement/latency_model.hpp"
#include "placement/sim/workload.hpp"

using namespace gleam::placement;

namespace {

/// 2000 observed phases: a task of occupancy u uniform in [0.2, 1] with 0-3
/// co-runners of occupancy uniform in [0.2, 1]; the regressor is their sum,
/// the task's own included, and the slowdown max(1, γ·Σu) with 5 %
/// log-normal noise.
gamma_fit planted(double gamma, uint64_t seed, std::size_t n = 2000, double sigma = 0.05) {
  sim::rng gen{seed};
  gamma_fit fit;
  for (std::size_t i = 0; i < n; ++i) {
    auto sum_u = 0.2 + 0.8 * gen.uniform();
    for (auto k = gen.next() % 4; k > 0; --k)
      sum_u += 0.2 + 0.8 * gen.uniform();
    auto y = contention(gamma, sum_u) * std::exp(sigma * gen.normal());
    fit.add(sum_u, y);
  }
  return fit;
}

} // namespace

// Tolerance: with 5 % noise and ≥ 1300 contended points the standard error of
// γ is about 0.05 · γ / sqrt(1300) ≈ 0.3 % of γ; Σu bins of width 1/32 blur
// the knee by at most one bin. 2 % is several standard errors plus the
// binning.
TEST_CASE("gamma_fit recovers a planted gamma from noisy data", "[placement]") {
  for (auto gamma : {1.0, 1.06, 1.3}) {
    for (uint64_t seed : {1u, 2u, 3u}) {
      auto est = planted(gamma, seed).estimate();
      REQUIRE(est);
      CHECK(est->gamma == Approx(gamma).epsilon(0.02));
      CHECK(est->samples == 2000);
      // Points beyond the knee 1/γ: the three quarters with co-runners
      // and a share of those without (at γ 1.3, u above 0.77).
      CHECK(est->active_samples > 1300);
      // The residual is the noise: about 5 % of a slowdown near 1-4.
      CHECK(est->rms_residual > 0.02);
      CHECK(est->rms_residual < 0.3);
    }
  }
}

// The H200 falsifier (deploy/contention-check.sh): copies of occupancy 0.91,
// solo 8.18 s, two at once 15.76 s each, three 23.57 s each. Fitted on the
// pairs, α = max(1, γ·Σu) with the copy's own occupancy in Σu predicts the
// triples within 0.4 %; the co-runners-only regressor (Σu = 0.91 for a
// pair) gives γ 2.12 and predicts them 34 % long.
TEST_CASE("gamma fitted on pairs predicts three copies", "[placement]") {
  constexpr double u = 0.91;
  constexpr double solo = 8.18;
  gamma_fit fit;
  for (int i = 0; i < 3; ++i)
    fit.add(u, 1.0);
  for (int i = 0; i < 8; ++i)
    fit.add(2 * u, 15.76 / solo);
  auto est = fit.estimate();
  REQUIRE(est);
  CHECK(est->gamma == Approx(15.76 / solo / (2 * u)));
  CHECK(est->gamma == Approx(1.059).epsilon(0.001));
  CHECK(est->active_samples == 8);
  CHECK(est->rms_residual == Approx(0.0).margin(1e-6));
  auto triple = solo * contention(est->gamma, 3 * u);
  CHECK(triple == Approx(23.57).epsilon(0.004));
  CHECK(solo * contention(est->gamma, u) == solo);
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
    auto x = 3.0 * gen.uniform();
    cal.observe("H200", resource::gpu, x, contention(1.06, x));
    cal.observe("L40S", resource::network, x, contention(1.2, x));
  }
  auto table = cal.table({"H200", "L40S", "A100"});
  REQUIRE(table.size() == 3);
  CHECK(table[0][0] == Approx(1.06).epsilon(0.01));
  CHECK(table[0][1] == contention_calibration::default_gamma);
  CHECK(table[1][1] == Approx(1.2).epsilon(0.01));
  CHECK(table[2][0] == contention_calibration::default_gamma);
  CHECK(!cal.estimate("A100", resource::gpu));
  CHECK(cal.gamma("H200", resource::gpu) == table[0][0]);
  CHECK(cal.gamma("A100", resource::network) == 1.1);
}
