// NVML's LibraryCall ops in the executor, on the CPU: the generic runner
// over the fake driver (fake_device.hpp) and a fake NVML
// (tests/support/fake_nvml.hpp). The session's GPU is found by its UUID;
// values travel as the library wrote them; only the session's own process
// comes back; a GPU index the session lacks is NVML_ERROR_INVALID_ARGUMENT.
#include "executor/nvml_api.hpp"
#include "executor/executor.hpp"

#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstring>
#include <string>

#include "executor/nvml_function_ids.hpp"
#include "tests/executor/fake_device.hpp"
#include "tests/support/fake_nvml.hpp"
#include "wire/library_args.hpp"

namespace proto = gleam::proto;
namespace ids = gleam::generated::nvml_ids;
using gleam::executor::nvml_api;
using gleam::test::fake_nvml;

namespace {

/// The fake device with the fake NVML attached.
struct fake_gpu : gleam::test::fake_executor {
  nvml_api nvml;

  fake_gpu() {
    fake_nvml() = gleam::test::fake_nvml_state{};
    gleam::test::install_fake_nvml(nvml);
    exec->use_library(nvml);
  }

  proto::OpResult call(uint32_t id, gleam::wire::arg_packer& args) {
    return run([&](proto::Op& op) {
      auto* c = op.mutable_library_call();
      c->set_library(proto::LibraryCall::NVML);
      c->set_function(id);
      c->set_args(args.take());
    });
  }

  /// nvmlDeviceGetName of GPU `index` of the session into `length` bytes.
  proto::OpResult name(uint64_t index, unsigned int length = 96) {
    gleam::wire::arg_packer p;
    p.value(index);
    p.value(length);
    return call(ids::nvmlDeviceGetName, p);
  }

  proto::OpResult memory(uint64_t index) {
    gleam::wire::arg_packer p;
    p.value(index);
    return call(ids::nvmlDeviceGetMemoryInfo, p);
  }
};

std::string text_of(const proto::OpResult& r, int output) {
  const auto& bytes = r.library_outputs().data(output);
  return std::string(bytes.c_str());
}

} // namespace

TEST_CASE("NVML queries of the session's GPU return what the server's NVML reports",
          "[executor][nvml]") {
  fake_gpu g;
  auto r = g.name(0);
  INFO(r.error());
  REQUIRE(r.blas_status() == NVML_SUCCESS);
  REQUIRE(r.library_outputs().data_size() == 1);
  CHECK(text_of(r, 0) == "NVIDIA H100 80GB HBM3");
  auto m = g.memory(0);
  REQUIRE(m.blas_status() == NVML_SUCCESS);
  nvmlMemory_t mem{};
  REQUIRE(m.library_outputs().data(0).size() == sizeof(mem));
  std::memcpy(&mem, m.library_outputs().data(0).data(), sizeof(mem));
  CHECK(mem.total == 85'899'345'920ull);
  CHECK(mem.used == 1'073'741'824ull);
  // The GPU was looked up once for the session, by the UUID CUDA reports.
  CHECK(fake_nvml().lookups == 1);

  SECTION("a versioned struct travels both ways") {
    nvmlMemory_v2_t v2{};
    v2.version = nvmlMemory_v2;
    gleam::wire::arg_packer p;
    p.value(uint64_t{0});
    p.bytes(&v2, sizeof(v2));
    auto r2 = g.call(ids::nvmlDeviceGetMemoryInfo_v2, p);
    REQUIRE(r2.blas_status() == NVML_SUCCESS);
    std::memcpy(&v2, r2.library_outputs().data(0).data(), sizeof(v2));
    CHECK(v2.total == 85'899'345'920ull);
    CHECK(v2.version == nvmlMemory_v2);
  }
  SECTION("a wrong version is the library's own error") {
    nvmlMemory_v2_t v2{};
    v2.version = 1;
    gleam::wire::arg_packer p;
    p.value(uint64_t{0});
    p.bytes(&v2, sizeof(v2));
    CHECK(g.call(ids::nvmlDeviceGetMemoryInfo_v2, p).blas_status() ==
          NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
  }
  SECTION("a short buffer is the library's NVML_ERROR_INSUFFICIENT_SIZE") {
    CHECK(g.name(0, 4).blas_status() == NVML_ERROR_INSUFFICIENT_SIZE);
  }
  SECTION("system queries need no device") {
    gleam::wire::arg_packer p;
    p.value(80u);
    auto v = g.call(ids::nvmlSystemGetDriverVersion, p);
    REQUIRE(v.blas_status() == NVML_SUCCESS);
    CHECK(text_of(v, 0) == "580.82.07");
  }
}

TEST_CASE("an NVML device index the session does not have is NVML_ERROR_INVALID_ARGUMENT",
          "[executor][nvml]") {
  fake_gpu g;
  auto r = g.name(1);
  CHECK(r.blas_status() == NVML_ERROR_INVALID_ARGUMENT);
  CHECK(r.status() == CUDA_ERROR_INVALID_VALUE);
  CHECK(r.library_outputs().data_size() == 0);
  CHECK(fake_nvml().lookups == 0);
}

TEST_CASE("a server NVML that does not find the session's GPU fails the call with its status",
          "[executor][nvml]") {
  fake_gpu g;
  fake_nvml().uuid = "GPU-00000000-0000-0000-0000-000000000000";
  auto r = g.name(0);
  CHECK(r.blas_status() == NVML_ERROR_NOT_FOUND);
  CHECK(r.error().find("GPU-abababab-abab") != std::string::npos);
}

TEST_CASE("NVML process lists hold only the session's process", "[executor][nvml]") {
  fake_gpu g;
  gleam::wire::arg_packer p;
  p.value(uint64_t{0});
  auto r = g.call(ids::nvmlDeviceGetComputeRunningProcesses_v3, p);
  INFO(r.error());
  REQUIRE(r.blas_status() == NVML_SUCCESS);
  REQUIRE(r.library_outputs().data_size() == 2);
  uint32_t count = 0;
  nvmlProcessInfo_t info{};
  std::memcpy(&count, r.library_outputs().data(0).data(), sizeof(count));
  std::memcpy(&info, r.library_outputs().data(1).data(), sizeof(info));
  CHECK(count == 1);
  CHECK(info.pid == static_cast<unsigned int>(::getpid()));
  CHECK(info.usedGpuMemory == 536'870'912ull);
}

TEST_CASE("an NVML function the server's library lacks is NVML_ERROR_NOT_SUPPORTED",
          "[executor][nvml]") {
  fake_gpu g;
  gleam::wire::arg_packer p;
  p.value(uint64_t{0});
  auto r = g.call(ids::nvmlDeviceGetPowerUsage, p);
  CHECK(r.blas_status() == NVML_ERROR_NOT_SUPPORTED);
}
