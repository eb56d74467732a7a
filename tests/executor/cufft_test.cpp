// cuFFT's LibraryCall ops in the executor, on the CPU: the generic runner
// over a fake driver (host memory as device memory, fake_device.hpp) and a
// fake cuFFT (tests/support/fake_cufft.hpp) whose executions write values
// computed from their input; the plan-shape extents of
// wire/fft_geometry.hpp; the loader against the installed library.
#include "executor/cufft_api.hpp"
#include "executor/executor.hpp"

#include <catch2/catch.hpp>

#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "executor/cufft_function_ids.hpp"
#include "tests/executor/fake_device.hpp"
#include "tests/support/fake_cufft.hpp"
#include "tests/support/gpu_probe.hpp"
#include "wire/fft_geometry.hpp"
#include "wire/library_args.hpp"

namespace proto = gleam::proto;
namespace ids = gleam::generated::cufft_ids;
namespace fft = gleam::wire::fft;
using gleam::executor::cufft_api;
using gleam::test::fake_cufft;

namespace {

/// The fake device with the fake cuFFT attached.
struct fake_gpu : gleam::test::fake_executor {
  cufft_api cufft;

  fake_gpu() {
    fake_cufft() = gleam::test::fake_cufft_log{};
    gleam::test::install_fake_cufft(cufft);
    exec->use_library(cufft);
  }

  proto::OpResult call(uint32_t id, gleam::wire::arg_packer& args) {
    return run([&](proto::Op& op) {
      auto* c = op.mutable_library_call();
      c->set_library(proto::LibraryCall::CUFFT);
      c->set_function(id);
      c->set_args(args.take());
    });
  }

  proto::OpResult create(uint64_t id) {
    gleam::wire::arg_packer p;
    p.value(id);
    return call(ids::cufftCreate, p);
  }

  /// cufftMakePlan1d (or, with `create`, cufftPlan1d) of plan `id`.
  proto::OpResult plan1d(uint64_t id, int nx, cufftType type, int batch, bool create = false) {
    gleam::wire::arg_packer p;
    p.value(id);
    fft::geometry g;
    g.rank = 1;
    g.n[0] = nx;
    g.type = type;
    g.batch = batch;
    fft::pack(p, g);
    return call(create ? ids::cufftPlan1d : ids::cufftMakePlan1d, p);
  }

  proto::OpResult exec_c2c(uint64_t id, uint64_t in, uint64_t out, int direction) {
    gleam::wire::arg_packer p;
    p.value(id);
    p.value(in);
    p.value(out);
    p.value(direction);
    return call(ids::cufftExecC2C, p);
  }

  proto::OpResult work_area(uint64_t id, uint64_t area) {
    gleam::wire::arg_packer p;
    p.value(id);
    p.value(area);
    return call(ids::cufftSetWorkArea, p);
  }

  proto::OpResult destroy(uint64_t id) {
    gleam::wire::arg_packer p;
    p.value(id);
    return call(ids::cufftDestroy, p);
  }
};

constexpr uint64_t plan_id = 7;

cufftComplex* complex_at(uint64_t p) {
  return reinterpret_cast<cufftComplex*>(static_cast<uintptr_t>(p));
}

uint64_t work_size_of(const proto::OpResult& r) {
  REQUIRE(r.library_outputs().data_size() == 1);
  const auto& bytes = r.library_outputs().data(0);
  REQUIRE(bytes.size() == sizeof(uint64_t));
  uint64_t v = 0;
  std::memcpy(&v, bytes.data(), sizeof(v));
  return v;
}

} // namespace

TEST_CASE("a cuFFT plan made by LibraryCalls transforms the session's memory",
          "[executor][cufft]") {
  fake_gpu g;
  auto created = g.create(plan_id);
  INFO(created.error());
  REQUIRE(created.blas_status() == CUFFT_SUCCESS);
  // The library's first plan is 0: the session's table still knows it.
  REQUIRE(fake_cufft().plans.count(0) == 1);
  auto made = g.plan1d(plan_id, 8, CUFFT_C2C, 2);
  INFO(made.error());
  REQUIRE(made.blas_status() == CUFFT_SUCCESS);
  CHECK(work_size_of(made) == gleam::test::fake_cufft_work(8));
  auto in = g.alloc(16 * sizeof(cufftComplex));
  auto out = g.alloc(16 * sizeof(cufftComplex));
  for (int i = 0; i < 16; ++i)
    complex_at(in)[i] = cufftComplex{static_cast<float>(i), static_cast<float>(-i)};
  auto ran = g.exec_c2c(plan_id, in, out, CUFFT_FORWARD);
  INFO(ran.error());
  REQUIRE(ran.blas_status() == CUFFT_SUCCESS);
  for (int i = 0; i < 16; ++i) {
    CHECK(complex_at(out)[i].x == 2.0f * static_cast<float>(i));
    CHECK(complex_at(out)[i].y == -2.0f * static_cast<float>(i));
  }
  // In place: one buffer of the plan's size.
  REQUIRE(g.exec_c2c(plan_id, in, in, CUFFT_INVERSE).blas_status() == CUFFT_SUCCESS);
  CHECK(complex_at(in)[5].x == 15.0f);
  // The work area must hold the plan's work size.
  auto area = g.alloc(gleam::test::fake_cufft_work(8));
  REQUIRE(g.work_area(plan_id, area).blas_status() == CUFFT_SUCCESS);
  CHECK(fake_cufft().plans[0].work_area == reinterpret_cast<void*>(static_cast<uintptr_t>(area)));
  REQUIRE(g.destroy(plan_id).blas_status() == CUFFT_SUCCESS);
  CHECK(fake_cufft().plans.empty());
}

TEST_CASE("cuFFT calls outside the plan's shape or the session's plans reach no library",
          "[executor][cufft]") {
  fake_gpu g;
  REQUIRE(g.plan1d(plan_id, 8, CUFFT_C2C, 2, true).blas_status() == CUFFT_SUCCESS);
  auto in = g.alloc(16 * sizeof(cufftComplex));
  SECTION("an output smaller than the plan's") {
    auto small = g.alloc(15 * sizeof(cufftComplex));
    auto r = g.exec_c2c(plan_id, in, small, CUFFT_FORWARD);
    CHECK(r.blas_status() == CUFFT_INVALID_VALUE);
    CHECK(r.error().find("output") != std::string::npos);
    CHECK(fake_cufft().executions == 0);
  }
  SECTION("an input that is no allocation of the session") {
    auto out = g.alloc(16 * sizeof(cufftComplex));
    auto r = g.exec_c2c(plan_id, in + 8, out, CUFFT_FORWARD);
    CHECK(r.blas_status() == CUFFT_INVALID_VALUE);
    CHECK(r.error().find("input") != std::string::npos);
    CHECK(fake_cufft().executions == 0);
  }
  SECTION("a work area smaller than the plan's work size") {
    auto area = g.alloc(gleam::test::fake_cufft_work(8) - 1);
    CHECK(g.work_area(plan_id, area).blas_status() == CUFFT_INVALID_VALUE);
    CHECK(fake_cufft().plans.begin()->second.work_area == nullptr);
  }
  SECTION("a plan the session does not hold") {
    auto r = g.exec_c2c(plan_id + 1, in, in, CUFFT_FORWARD);
    CHECK(r.blas_status() == CUFFT_INVALID_PLAN);
    CHECK(fake_cufft().executions == 0);
  }
  SECTION("a plan created but not made has no shape to run") {
    REQUIRE(g.create(plan_id + 2).blas_status() == CUFFT_SUCCESS);
    CHECK(g.exec_c2c(plan_id + 2, in, in, CUFFT_FORWARD).blas_status() == CUFFT_INVALID_PLAN);
    CHECK(fake_cufft().executions == 0);
  }
  SECTION("a plan id already in use") {
    CHECK(g.create(plan_id).blas_status() == CUFFT_INVALID_VALUE);
    CHECK(fake_cufft().plans.size() == 1);
  }
  SECTION("the vendor's own refusal comes back as its status") {
    REQUIRE(g.create(plan_id + 3).blas_status() == CUFFT_SUCCESS);
    auto r = g.plan1d(plan_id + 3, 1, CUFFT_C2C, 1);
    CHECK(r.blas_status() == CUFFT_INVALID_SIZE);
    CHECK(r.error().find("CUFFT_INVALID_SIZE") != std::string::npos);
  }
}

TEST_CASE("a session's end destroys the cuFFT plans it left", "[executor][cufft]") {
  {
    fake_gpu g;
    REQUIRE(g.plan1d(plan_id, 8, CUFFT_R2C, 1, true).blas_status() == CUFFT_SUCCESS);
    REQUIRE(g.create(plan_id + 1).blas_status() == CUFFT_SUCCESS);
    REQUIRE(fake_cufft().plans.size() == 2);
    g.exec->close_session(g.session);
    CHECK(fake_cufft().plans.empty());
  }
}

TEST_CASE("a cuFFT plan's shape decides the bytes its executions touch", "[wire][cufft]") {
  fft::geometry g;
  g.rank = 1;
  g.n[0] = 8;
  g.batch = 3;
  SECTION("basic layouts: contiguous transforms, Hermitian halves for real transforms") {
    g.type = CUFFT_C2C;
    CHECK(fft::bytes(g, true) == 8 * 3 * 8);
    CHECK(fft::bytes(g, false) == 8 * 3 * 8);
    g.type = CUFFT_R2C;
    CHECK(fft::bytes(g, true) == 8 * 3 * 4);
    CHECK(fft::bytes(g, false) == 5 * 3 * 8);
    g.type = CUFFT_Z2D;
    CHECK(fft::bytes(g, true) == 5 * 3 * 16);
    CHECK(fft::bytes(g, false) == 8 * 3 * 8);
  }
  SECTION("2-D") {
    g.rank = 2;
    g.n[1] = 6;
    g.type = CUFFT_D2Z;
    CHECK(fft::bytes(g, true) == 8 * 6 * 3 * 8);
    CHECK(fft::bytes(g, false) == 8 * 4 * 3 * 16);
  }
  SECTION("advanced layouts: the last element's offset decides") {
    g.type = CUFFT_C2C;
    g.in_embedded = g.out_embedded = true;
    g.istride = 2, g.idist = 20;
    g.ostride = 1, g.odist = 8;
    // (batch - 1) * dist + (n - 1) * stride + 1 elements.
    CHECK(fft::bytes(g, true) == (2 * 20 + 7 * 2 + 1) * 8);
    CHECK(fft::bytes(g, false) == (2 * 8 + 7 + 1) * 8);
    g.rank = 2;
    g.n[1] = 4;
    g.inembed[1] = 5;
    g.onembed[1] = 4;
    CHECK(fft::bytes(g, true) == (2 * 20 + (7 * 5 + 3) * 2 + 1) * 8);
    g.inembed[1] = 3; // smaller than the dimension it embeds
    CHECK(fft::bytes(g, true) == gleam::wire::extents::invalid_extent);
  }
  SECTION("Xt plans by cudaDataType") {
    g.type = 0;
    g.input_type = CUDA_R_16F;
    g.output_type = CUDA_C_16F;
    g.execution_type = CUDA_C_16F;
    CHECK(fft::bytes(g, true) == 8 * 3 * 2);
    CHECK(fft::bytes(g, false) == 5 * 3 * 4);
  }
  SECTION("impossible shapes span more than any allocation") {
    g.type = CUFFT_C2C;
    g.n[0] = 0;
    CHECK(fft::bytes(g, true) == gleam::wire::extents::invalid_extent);
    g.n[0] = 8;
    g.batch = 0;
    CHECK(fft::bytes(g, false) == gleam::wire::extents::invalid_extent);
    g.batch = 1;
    g.type = 0x7f;
    CHECK(fft::bytes(g, true) == gleam::wire::extents::invalid_extent);
  }
}

TEST_CASE("cufft_api loads the vendor's cuFFT and refuses Gleam's own", "[executor][cufft]") {
  if (!std::ifstream{"/usr/local/cuda/lib64/libcufft.so.12"}.good()) {
    WARN("no vendor libcufft.so.12 to load; skipped");
    return;
  }
  auto api = cufft_api::load("/usr/local/cuda/lib64");
  REQUIRE(api);
  CHECK((*api)->cufftPlan1d != nullptr);
  CHECK((*api)->cufftXtExec != nullptr);
  auto own = cufft_api::load(gleam::test::build_path("lib"));
  CHECK_FALSE(own);
}
