// The built libcudart.so.13 (and lib/driver/libcuda.so.1) against the
// GPU-less fake server (interpose_features_probe, features_probe.cpp):
// extended launches with every attribute kind.
#include <catch2/catch.hpp>

#include <cuda.h>

#include <map>
#include <sstream>
#include <string>

#include "tests/interpose_runtime/fake_server_process.hpp"

namespace {

using gleam::test::fake_server;

/// key -> value of the probe's "key=value" lines.
std::map<std::string, std::string> parse(const std::string& out) {
  std::map<std::string, std::string> kv;
  std::istringstream in{out};
  for (std::string line; std::getline(in, line);)
    if (auto eq = line.find('='); eq != std::string::npos)
      kv[line.substr(0, eq)] = line.substr(eq + 1);
  return kv;
}

std::string features(fake_server& server, const std::string& scenario,
                     const std::string& env = "") {
  return server.probe(scenario, env, 0, "tests/interpose_features_probe");
}

} // namespace

TEST_CASE("cudaLaunchKernelExC forwards every launch attribute", "[interpose][launch]") {
  fake_server server;
  for (std::string env : {"", "GLEAM_ASYNC=off"}) {
    INFO("env " << env);
    auto kv = parse(features(server, "launch_ex", env));
    CHECK(kv["setup"] == "cudaSuccess");
    CHECK(kv["launch_all"] == "cudaSuccess");
    CHECK(kv["launch_unknown_id"] == "cudaErrorInvalidValue");
    CHECK(kv["launch_unknown_event"] == "cudaErrorInvalidResourceHandle");
    CHECK(kv["launch_null_attrs"] == "cudaErrorInvalidValue");
    CHECK(kv["get_kernel"] == "cudaSuccess");
    CHECK(kv["cu_launch"] == "0");
    CHECK(kv["cu_launch_unknown_id"] == std::to_string(CUDA_ERROR_INVALID_VALUE));
    CHECK(kv["sync"] == "cudaSuccess");
    // What the server got: the attributes in the app's order, the event as
    // the client's handle, the window at the client's buffer.
    auto stats = server.stats();
    auto event = kv["event"];
    auto buffer = kv["buffer"];
    std::string expected = "launch k 6:0,0,0,1,0,0,0,0,0,0 4:2,1,1,0,0,0,0,0,0,0 7:0,0,0,0,"
                           + event + ",0,1,0,0,0 12:0,0,0,0," + event
                           + ",0,0,0,0,0 8:0,0,0,-2,0,0,0,0,0,0 1:0,0,0,0,0,0,0," + buffer
                           + ",4096,0 9:0,0,0,0,0,0,0,0,0,1 0:0,0,0,0,0,0,0,0,0,0\n";
    CHECK_THAT(stats, Catch::Contains(expected));
    // The driver's launch: one attribute, through the same op.
    CHECK_THAT(stats, Catch::Contains("launch k 6:0,0,0,1,0,0,0,0,0,0\n"));
    // Refused launches sent nothing: exactly the two good ones arrived.
    size_t launches = 0;
    for (auto at = stats.find("\nlaunch "); at != std::string::npos;
         at = stats.find("\nlaunch ", at + 1))
      ++launches;
    CHECK(launches == 2);
  }
}
