// cuRAND's LibraryCall ops in the executor, on the CPU: the generic runner
// over a fake driver (host memory as device memory, fake_device.hpp) and a
// fake cuRAND (tests/support/fake_curand.hpp) whose generators fill that
// memory with values computed from their seed and offset and log every
// call; the loader against the installed library.
#include "executor/curand_api.hpp"
#include "executor/executor.hpp"

#include <catch2/catch.hpp>

#include <cstring>
#include <string>
#include <vector>

#include "executor/curand_function_ids.hpp"
#include "tests/executor/fake_device.hpp"
#include "tests/support/fake_curand.hpp"
#include "tests/support/gpu_probe.hpp"
#include "wire/curand_tables.hpp"
#include "wire/library_args.hpp"

namespace proto = gleam::proto;
namespace ids = gleam::generated::curand_ids;
using gleam::executor::curand_api;
using gleam::test::fake_curand;
using gleam::test::fake_device;

namespace {

/// The fake device with the fake cuRAND (tests/support/fake_curand.hpp)
/// attached.
struct fake_gpu : gleam::test::fake_executor {
  curand_api curand;

  fake_gpu() {
    fake_curand() = gleam::test::fake_curand_log{};
    gleam::test::install_fake_curand(curand);
    exec->use_library(curand);
  }

  /// A LibraryCall of cuRAND function `id` with `args`; `hold` keeps the
  /// host outputs on the server.
  proto::OpResult call(uint32_t id, gleam::wire::arg_packer& args, uint64_t hold = 0) {
    return run([&](proto::Op& op) {
      auto* c = op.mutable_library_call();
      c->set_library(proto::LibraryCall::CURAND);
      c->set_function(id);
      c->set_args(args.take());
      c->set_hold(hold);
    });
  }

  /// curandCreateGenerator(Host) under client id `id`.
  proto::OpResult create(uint64_t id, curandRngType_t type, bool host = false) {
    gleam::wire::arg_packer p;
    p.value(id);
    p.value(type);
    return call(host ? ids::curandCreateGeneratorHost : ids::curandCreateGenerator, p);
  }

  proto::OpResult seed(uint64_t id, unsigned long long value) {
    gleam::wire::arg_packer p;
    p.value(id);
    p.value(value);
    return call(ids::curandSetPseudoRandomGeneratorSeed, p);
  }

  /// curandGenerateUniform of `n` floats into device address `dst`, or
  /// into host memory when `dst` is 0.
  proto::OpResult uniform(uint64_t id, uint64_t dst, size_t n, uint64_t hold = 0) {
    gleam::wire::arg_packer p;
    p.value(id);
    p.value(uint8_t{dst == 0 ? uint8_t{1} : uint8_t{0}});
    if (dst != 0)
      p.value(dst);
    p.value(n);
    return call(ids::curandGenerateUniform, p, hold);
  }

  proto::OpResult destroy(uint64_t id) {
    gleam::wire::arg_packer p;
    p.value(id);
    return call(ids::curandDestroyGenerator, p);
  }

  proto::OpResult read(uint64_t hold, uint64_t offset, uint64_t size, bool release) {
    return run([&](proto::Op& op) {
      auto* rd = op.mutable_library_output_read();
      rd->set_hold(hold);
      rd->set_offset(offset);
      rd->set_size(size);
      rd->set_release(release);
    });
  }
};

constexpr uint64_t gen_id = 501;

std::vector<float> floats_at(uint64_t p, size_t n) {
  const auto* f = reinterpret_cast<const float*>(static_cast<uintptr_t>(p));
  return {f, f + n};
}

std::vector<float> expected_uniform(unsigned long long seed, unsigned long long offset, size_t n) {
  std::vector<float> out(n);
  for (size_t i = 0; i < n; ++i)
    out[i] = static_cast<float>(static_cast<unsigned int>(seed * 1000 + offset + i)) / 4096.0f;
  return out;
}

} // namespace

TEST_CASE("a cuRAND generator made by a LibraryCall fills the session's memory on the session's "
          "streams",
          "[executor][curand]") {
  fake_gpu g;
  auto created = g.create(gen_id, CURAND_RNG_PSEUDO_XORWOW);
  INFO(created.error());
  REQUIRE(created.blas_status() == CURAND_STATUS_SUCCESS);
  CHECK(fake_curand().generators.size() == 1);
  REQUIRE(g.seed(gen_id, 3).blas_status() == CURAND_STATUS_SUCCESS);
  auto out = g.alloc(16 * 4);
  auto r = g.uniform(gen_id, out, 16);
  REQUIRE(r.blas_status() == CURAND_STATUS_SUCCESS);
  CHECK(r.status() == CUDA_SUCCESS);
  CHECK(floats_at(out, 16) == expected_uniform(3, 0, 16));
  // Never the context's legacy stream (shared by every session): the
  // generator was put on the session's stand-in before it worked.
  REQUIRE(fake_curand().generated_on.size() == 1);
  REQUIRE_FALSE(fake_device().streams.empty());
  CHECK(fake_curand().generated_on[0] == fake_device().streams[0]);

  // curandSetStream to an app stream: the next generation runs there, and
  // the library hears of the stream once.
  REQUIRE(g.run([](proto::Op& op) { op.mutable_stream_create()->set_stream(9); }).status() == 0);
  auto app_stream = fake_device().streams.back();
  gleam::wire::arg_packer set;
  set.value(gen_id);
  set.value(uint64_t{9});
  REQUIRE(g.call(ids::curandSetStream, set).blas_status() == CURAND_STATUS_SUCCESS);
  auto set_streams = fake_curand().set_streams;
  REQUIRE(g.uniform(gen_id, out, 16).blas_status() == CURAND_STATUS_SUCCESS);
  REQUIRE(g.uniform(gen_id, out, 16).blas_status() == CURAND_STATUS_SUCCESS);
  CHECK(fake_curand().generated_on.back() == app_stream);
  CHECK(fake_curand().set_streams == set_streams);
  CHECK(floats_at(out, 16) == expected_uniform(3, 32, 16));
  // An unknown stream is refused.
  gleam::wire::arg_packer bad;
  bad.value(gen_id);
  bad.value(uint64_t{12345});
  auto refused = g.call(ids::curandSetStream, bad);
  CHECK(refused.blas_status() == CURAND_STATUS_OUT_OF_RANGE);
  CHECK(refused.status() == CUDA_ERROR_INVALID_HANDLE);
}

TEST_CASE("cuRAND work on a blocking stream is ordered before later legacy-stream work",
          "[executor][curand]") {
  // As for cuBLAS: the legacy stand-in waits, with an event, for the
  // generation on the app's blocking stream before a later copy.
  fake_gpu g;
  REQUIRE(g.create(gen_id, CURAND_RNG_PSEUDO_PHILOX4_32_10).blas_status() == CURAND_STATUS_SUCCESS);
  REQUIRE(g.run([](proto::Op& op) { op.mutable_stream_create()->set_stream(9); }).status() == 0);
  auto blocking = fake_device().streams.back();
  gleam::wire::arg_packer set;
  set.value(gen_id);
  set.value(uint64_t{9});
  REQUIRE(g.call(ids::curandSetStream, set).blas_status() == CURAND_STATUS_SUCCESS);
  auto out = g.alloc(8 * 4);
  auto read_back = [&] {
    return g.run([&](proto::Op& op) {
      op.mutable_memcpy_dtoh()->set_src(out);
      op.mutable_memcpy_dtoh()->set_size(32);
    });
  };
  // The first legacy-stream work makes the session's stand-in.
  REQUIRE(read_back().status() == CUDA_SUCCESS);
  auto legacy = fake_device().streams.back();
  REQUIRE(legacy != blocking);
  fake_device().records.clear();
  fake_device().waits.clear();
  REQUIRE(g.uniform(gen_id, out, 8).blas_status() == CURAND_STATUS_SUCCESS);
  REQUIRE(read_back().status() == CUDA_SUCCESS);
  bool ordered = false;
  for (const auto& [event, stream] : fake_device().records)
    if (stream == blocking)
      for (const auto& w : fake_device().waits)
        ordered |= w.first == legacy && w.second == event;
  CHECK(ordered);
}

TEST_CASE("cuRAND calls outside the session's memory or handles reach no library",
          "[executor][curand]") {
  fake_gpu g;
  REQUIRE(g.create(gen_id, CURAND_RNG_PSEUDO_XORWOW).blas_status() == CURAND_STATUS_SUCCESS);
  auto out = g.alloc(16 * 4);
  SECTION("a range past its allocation") {
    auto r = g.uniform(gen_id, out, 17);
    CHECK(r.blas_status() == CURAND_STATUS_OUT_OF_RANGE);
    CHECK(r.status() == CUDA_ERROR_INVALID_VALUE);
    CHECK_THAT(r.error(), Catch::Contains("outside this session's allocations"));
    CHECK(fake_curand().generates == 0);
  }
  SECTION("a handle never created, and one destroyed") {
    CHECK(g.uniform(gen_id + 1, out, 4).blas_status() == CURAND_STATUS_NOT_INITIALIZED);
    REQUIRE(g.destroy(gen_id).blas_status() == CURAND_STATUS_SUCCESS);
    CHECK(fake_curand().generators.empty());
    auto r = g.uniform(gen_id, out, 4);
    CHECK(r.blas_status() == CURAND_STATUS_NOT_INITIALIZED);
    CHECK_THAT(r.error(), Catch::Contains("curandGenerator_t 501 is not a handle of this session"));
    CHECK(g.destroy(gen_id).blas_status() == CURAND_STATUS_NOT_INITIALIZED);
    CHECK(fake_curand().generates == 0);
  }
  SECTION("an id in use is not a fresh handle; a refused create leaves nothing") {
    auto again = g.create(gen_id, CURAND_RNG_PSEUDO_XORWOW);
    CHECK(again.blas_status() == CURAND_STATUS_OUT_OF_RANGE);
    CHECK(fake_curand().generators.size() == 1);
    auto refused = g.create(gen_id + 1, CURAND_RNG_TEST);
    CHECK(refused.blas_status() == CURAND_STATUS_TYPE_ERROR);
    CHECK_THAT(refused.error(), Catch::Contains("CURAND_STATUS_TYPE_ERROR"));
    CHECK(g.uniform(gen_id + 1, out, 4).blas_status() == CURAND_STATUS_NOT_INITIALIZED);
  }
  SECTION("host memory for a device generator, arguments that do not unpack, unknown ids") {
    auto r = g.uniform(gen_id, 0, 4);
    CHECK(r.blas_status() == CURAND_STATUS_OUT_OF_RANGE);
    CHECK_THAT(r.error(), Catch::Contains("disagrees"));
    gleam::wire::arg_packer shortened;
    shortened.value(gen_id);
    CHECK(g.call(ids::curandGenerateUniform, shortened).blas_status()
          == CURAND_STATUS_OUT_OF_RANGE);
    gleam::wire::arg_packer none;
    auto unknown = g.call(999, none);
    CHECK(unknown.blas_status() == CURAND_STATUS_ARCH_MISMATCH);
    CHECK_THAT(unknown.error(), Catch::Contains("unknown to this server"));
    CHECK(fake_curand().generates == 0);
  }
  SECTION("a function the server's library lacks") {
    gleam::wire::arg_packer p;
    p.value(gen_id);
    auto r = g.call(ids::curandGenerateSeeds, p);
    CHECK(r.blas_status() == CURAND_STATUS_ARCH_MISMATCH);
    CHECK_THAT(r.error(), Catch::Contains("curandGenerateSeeds is missing"));
  }
  SECTION("the library's own failure is its status, with the name") {
    gleam::wire::arg_packer p;
    p.value(gen_id);
    p.value(uint8_t{0});
    p.value(out);
    p.value(size_t{3});
    p.value(0.0);
    p.value(1.0);
    auto r = g.call(ids::curandGenerateNormalDouble, p);
    CHECK(r.blas_status() == CURAND_STATUS_LENGTH_NOT_MULTIPLE);
    CHECK(r.status() == CUDA_ERROR_INVALID_VALUE);
    CHECK_THAT(r.error(), Catch::Contains("CURAND_STATUS_LENGTH_NOT_MULTIPLE"));
  }
}

TEST_CASE("a host generator's values come back, in pieces when they are many",
          "[executor][curand]") {
  fake_gpu g;
  REQUIRE(g.create(gen_id, CURAND_RNG_PSEUDO_PHILOX4_32_10, true).blas_status()
          == CURAND_STATUS_SUCCESS);
  REQUIRE(g.seed(gen_id, 5).blas_status() == CURAND_STATUS_SUCCESS);
  auto small = g.uniform(gen_id, 0, 10);
  REQUIRE(small.blas_status() == CURAND_STATUS_SUCCESS);
  REQUIRE(small.library_outputs().data_size() == 1);
  std::vector<float> values(10);
  REQUIRE(small.library_outputs().data(0).size() == 40);
  std::memcpy(values.data(), small.library_outputs().data(0).data(), 40);
  CHECK(values == expected_uniform(5, 0, 10));
  // A host generator is never put on a stream.
  CHECK(fake_curand().set_streams == 0);
  // Device memory for a host generator is refused.
  auto out = g.alloc(64);
  CHECK(g.uniform(gen_id, out, 4).blas_status() == CURAND_STATUS_OUT_OF_RANGE);

  // 1000 values kept under hold 77, read in two pieces.
  auto held = g.uniform(gen_id, 0, 1000, 77);
  REQUIRE(held.blas_status() == CURAND_STATUS_SUCCESS);
  CHECK(held.library_outputs().data_size() == 0);
  auto first = g.read(77, 0, 2400, false);
  REQUIRE(first.status() == CUDA_SUCCESS);
  auto second = g.read(77, 2400, 1600, true);
  REQUIRE(second.status() == CUDA_SUCCESS);
  std::string bytes = first.data() + second.data();
  REQUIRE(bytes.size() == 4000);
  std::vector<float> many(1000);
  std::memcpy(many.data(), bytes.data(), bytes.size());
  CHECK(many == expected_uniform(5, 10, 1000));
  // Released with the last piece; a read past the end is refused.
  CHECK(g.read(77, 0, 4, false).status() == CUDA_ERROR_INVALID_VALUE);
  REQUIRE(g.uniform(gen_id, 0, 8, 78).blas_status() == CURAND_STATUS_SUCCESS);
  CHECK(g.read(78, 16, 17, false).status() == CUDA_ERROR_INVALID_VALUE);
  // More than a call may return is refused before anything is allocated.
  auto huge = g.uniform(gen_id, 0, size_t{1} << 40);
  CHECK(huge.blas_status() == CURAND_STATUS_ALLOCATION_FAILED);
}

TEST_CASE("a Poisson distribution is named by its device address; the session's end destroys "
          "what the app left",
          "[executor][curand]") {
  fake_gpu g;
  gleam::wire::arg_packer p;
  p.value(10.0);
  auto made = g.call(ids::curandCreatePoissonDistribution, p);
  REQUIRE(made.blas_status() == CURAND_STATUS_SUCCESS);
  REQUIRE(made.library_outputs().data_size() == 1);
  uint64_t address = 0;
  REQUIRE(made.library_outputs().data(0).size() == sizeof(address));
  std::memcpy(&address, made.library_outputs().data(0).data(), sizeof(address));
  REQUIRE(fake_curand().distributions.size() == 1);
  CHECK(reinterpret_cast<void*>(static_cast<uintptr_t>(address)) == *fake_curand().distributions.begin());
  gleam::wire::arg_packer d;
  d.value(address + 8);
  CHECK(g.call(ids::curandDestroyDistribution, d).blas_status() == CURAND_STATUS_NOT_INITIALIZED);
  gleam::wire::arg_packer ok;
  ok.value(address);
  CHECK(g.call(ids::curandDestroyDistribution, ok).blas_status() == CURAND_STATUS_SUCCESS);
  CHECK(fake_curand().distributions.empty());

  // Left by the app: a generator, a host generator and a distribution.
  REQUIRE(g.create(gen_id, CURAND_RNG_PSEUDO_XORWOW).blas_status() == CURAND_STATUS_SUCCESS);
  REQUIRE(g.create(gen_id + 1, CURAND_RNG_PSEUDO_XORWOW, true).blas_status()
          == CURAND_STATUS_SUCCESS);
  gleam::wire::arg_packer again;
  again.value(4.0);
  REQUIRE(g.call(ids::curandCreatePoissonDistribution, again).blas_status()
          == CURAND_STATUS_SUCCESS);
  REQUIRE(g.uniform(gen_id + 1, 0, 4, 90).blas_status() == CURAND_STATUS_SUCCESS);
  CHECK(fake_curand().generators.size() == 2);
  g.exec->close_session(g.session);
  CHECK(fake_curand().generators.empty());
  CHECK(fake_curand().distributions.empty());
}

TEST_CASE("cuRAND's version and host tables come back as host outputs", "[executor][curand]") {
  fake_gpu g;
  gleam::wire::arg_packer none;
  auto v = g.call(ids::curandGetVersion, none);
  REQUIRE(v.blas_status() == CURAND_STATUS_SUCCESS);
  REQUIRE(v.library_outputs().data_size() == 1);
  int version = 0;
  std::memcpy(&version, v.library_outputs().data(0).data(), sizeof(version));
  CHECK(version == 10400);
  gleam::wire::arg_packer also_none;
  auto t = g.call(ids::curandGetScrambleConstants32, also_none);
  INFO(t.error());
  REQUIRE(t.status() == CUDA_SUCCESS);
  REQUIRE(t.blas_status() == CURAND_STATUS_SUCCESS);
  REQUIRE(t.library_outputs().data_size() == 1);
  REQUIRE(t.library_outputs().data(0).size() == gleam::wire::curand_tables::constants32_bytes);
  unsigned int third = 0;
  std::memcpy(&third, t.library_outputs().data(0).data() + 2 * sizeof(third), sizeof(third));
  CHECK(third == 14);
  // A table this fake lacks is the library's "not supported".
  gleam::wire::arg_packer set;
  set.value(CURAND_DIRECTION_VECTORS_32_JOEKUO6);
  CHECK(g.call(ids::curandGetDirectionVectors32, set).blas_status() == CURAND_STATUS_ARCH_MISMATCH);
}

TEST_CASE("curand_api loads the vendor's cuRAND and refuses Gleam's own", "[executor][curand]") {
  auto own = curand_api::load(gleam::test::build_path("lib"));
  REQUIRE_FALSE(own);
  CHECK_THAT(caf::to_string(own.error()), Catch::Contains("Gleam's interposer"));
  auto missing = curand_api::load("/nonexistent");
  REQUIRE_FALSE(missing);
  CHECK_THAT(caf::to_string(missing.error()), Catch::Contains("GLEAM_CURAND_DIR"));
  std::string ignored;
  if (gleam::test::run_command("test -e /usr/local/cuda/lib64/libcurand.so.10", ignored) != 0) {
    WARN("no vendor cuRAND in /usr/local/cuda/lib64; the loading half is skipped");
    return;
  }
  auto vendor = curand_api::load("/usr/local/cuda/lib64");
  INFO((vendor ? std::string{} : caf::to_string(vendor.error())));
  REQUIRE(vendor);
  CHECK((*vendor)->curandCreateGenerator != nullptr);
  CHECK((*vendor)->curandGetDirectionVectors64 != nullptr);
  int v = 0;
  REQUIRE((*vendor)->curandGetVersion(&v) == CURAND_STATUS_SUCCESS);
  CHECK(v / 1000 == CURAND_VER_MAJOR);
}
