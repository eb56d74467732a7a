#include "executor/driver_api.hpp"

#include <catch2/catch.hpp>

#include <caf/message.hpp>

#include <sys/stat.h>

#include "executor/error.hpp"
#include "tests/support/gpu_probe.hpp"

using gleam::executor::driver_api;
using gleam::executor::error_category;
using gleam::executor::error_code;

namespace {

bool file_exists(const char* path) {
  struct stat st;
  return stat(path, &st) == 0;
}

std::string message_of(const caf::error& err) {
  REQUIRE(err.context().match_elements<std::string>());
  return err.context().get_as<std::string>(0);
}

} // namespace

TEST_CASE("driver_api::load names the missing library and what to do",
          "[executor][driver_api]") {
  auto api = driver_api::load("libgleam-no-such-driver.so.1");
  REQUIRE_FALSE(api);
  const auto& err = api.error();
  CHECK(err.category() == error_category);
  CHECK(err.code() == static_cast<uint8_t>(error_code::no_driver));
  auto msg = message_of(err);
  CHECK_THAT(msg, Catch::Contains("no CUDA driver on this machine"));
  CHECK_THAT(msg, Catch::Contains("libgleam-no-such-driver.so.1"));
  CHECK_THAT(msg, Catch::Contains("driver >= 580"));
}

TEST_CASE("driver_api::load of libcuda.so.1 matches the machine",
          "[executor][driver_api]") {
  auto api = driver_api::load();
  if (gleam::test::gpu_unavailable_reason().empty()) {
    REQUIRE(api);
    CHECK((*api)->cuMemAlloc != nullptr);
    CHECK((*api)->cuLaunchKernelEx != nullptr);
    CHECK((*api)->cuFuncGetParamInfo != nullptr);
    int version = 0;
    REQUIRE((*api)->cuDriverGetVersion(&version) == CUDA_SUCCESS);
    CHECK(version >= 13000);
  } else {
    REQUIRE_FALSE(api);
    CHECK(api.error().category() == error_category);
    auto code = api.error().code();
    CHECK((code == static_cast<uint8_t>(error_code::no_driver)
           || code == static_cast<uint8_t>(error_code::driver_call_failed)));
    CHECK_THAT(message_of(api.error()), Catch::Contains("libcuda.so.1")
                                          || Catch::Contains("cuInit"));
  }
}

TEST_CASE("driver_api::load of the toolkit's link stub says it is no driver",
          "[executor][driver_api]") {
  const char* stub = "/usr/local/cuda/lib64/stubs/libcuda.so";
  if (!file_exists(stub)) {
    WARN("no CUDA stub library at " << stub << "; nothing to check");
    return;
  }
  auto api = driver_api::load(stub);
  REQUIRE_FALSE(api);
  CHECK(api.error().code() == static_cast<uint8_t>(error_code::no_driver));
  CHECK_THAT(message_of(api.error()), Catch::Contains("link stub"));
}

TEST_CASE("a default driver_api has no entry points", "[executor][driver_api]") {
  driver_api api;
  CHECK(api.cuInit == nullptr);
  CHECK(api.cuMemAlloc == nullptr);
  CHECK(api.describe(CUDA_ERROR_INVALID_VALUE) == "CUresult 1");
}

TEST_CASE("executor error codes have names", "[executor][error]") {
  using gleam::executor::to_string;
  CHECK(to_string(error_code::no_driver) == "no_driver");
  CHECK(to_string(error_code::unknown_session) == "unknown_session");
  auto err = gleam::executor::make_error(error_code::no_such_device);
  CHECK(err.code() == static_cast<uint8_t>(error_code::no_such_device));
  CHECK(err.category() == caf::atom("gleam_exec"));
}
