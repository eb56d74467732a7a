// gleam-run --doctor against no server, the fake GPU server with a wrong and
// a right token, and with a program that imports a function Gleam refuses:
// what it says and its exit status (0 only when a run would work).
#include "tests/interpose_runtime/fake_server.hpp"
#include "wire/protocol.hpp"

#include <catch2/catch.hpp>

#include <fstream>
#include <string>

namespace {

using gleam::test::build_path;

/// `gleam-run --doctor [-- program]` with `env`; its output and status.
int doctor(const std::string& env, const std::string& program, std::string& out) {
  auto cmd = env + " timeout 120 " + build_path("bin/gleam-run") + " --doctor"
             + (program.empty() ? "" : " -- " + program) + " 2>&1";
  return gleam::test::run_command(cmd, out);
}

} // namespace

TEST_CASE("a server of another protocol, or on an older driver, is one clear error",
          "[doctor][version]") {
  std::string out;
  SECTION("a newer server") {
    gleam::test::fake_server server{{"--protocol", "99"}};
    CHECK(doctor("GLEAM_SERVER=127.0.0.1:" + std::to_string(server.port()), "", out) != 0);
    INFO(out);
    CHECK(out.find("this client speaks Gleam protocol "
                   + std::to_string(gleam::wire::protocol_version)
                   + " and the server 99: upgrade Gleam on the client")
          != std::string::npos);
  }
  SECTION("an older server") {
    gleam::test::fake_server server{{"--protocol", "1"}};
    CHECK(doctor("GLEAM_SERVER=127.0.0.1:" + std::to_string(server.port()), "", out) != 0);
    INFO(out);
    CHECK(out.find("and the server 1: upgrade gleamd on the GPU host") != std::string::npos);
  }
  SECTION("a driver older than the client's runtime") {
    gleam::test::fake_server server{{"--driver", "12080"}};
    CHECK(doctor("GLEAM_SERVER=127.0.0.1:" + std::to_string(server.port()), "", out) != 0);
    INFO(out);
    CHECK(out.find("the server's CUDA driver (12.8) is older than CUDA 13.0") != std::string::npos);
  }
}

TEST_CASE("gleam-run --doctor: no server, a wrong token, a good server, refused imports",
          "[doctor]") {
  std::string out;
  SECTION("no server answers: says so, fails") {
    CHECK(doctor("GLEAM_SERVER=127.0.0.1:1", "", out) != 0);
    INFO(out);
    CHECK(out.find("ok    Gleam's libraries in") != std::string::npos);
    CHECK(out.find("FAIL  no GPU session through Gleam") != std::string::npos);
    CHECK(out.find("no Gleam server answered") != std::string::npos);
    CHECK(out.find("a run would fail") != std::string::npos);
  }
  gleam::test::fake_server server{{"--token", "right"}};
  auto at = "GLEAM_SERVER=127.0.0.1:" + std::to_string(server.port());
  SECTION("a wrong token: names the token setting, fails") {
    CHECK(doctor(at + " GLEAM_TOKEN=wrong", "", out) != 0);
    INFO(out);
    CHECK(out.find("refused this client's token: set GLEAM_TOKEN") != std::string::npos);
  }
  SECTION("a good server: the GPU and the link, succeeds") {
    CHECK(doctor(at + " GLEAM_TOKEN=right", "", out) == 0);
    INFO(out);
    CHECK(out.find("ok    server: Gleam fake GPU") != std::string::npos);
    CHECK(out.find("a round trip") != std::string::npos);
    CHECK(out.find("doctor: a run would work") != std::string::npos);
  }
  SECTION("a program importing a refused function: names it; the run still works") {
    CHECK(doctor(at + " GLEAM_TOKEN=right", build_path("tests/doctor_imports"), out) == 0);
    INFO(out);
    CHECK(out.find("ok    loads libcudart.so.13: Gleam stands in for it") != std::string::npos);
    // cudaCreateChannelDesc and cudaMallocArray (CUDA arrays, textures).
    CHECK(out.find("warn  libcudart.so.13: the program imports 2 function(s) Gleam does not "
                   "remote")
          != std::string::npos);
    CHECK(out.find("cudaCreateChannelDesc, cudaMallocArray;") != std::string::npos);
    CHECK(out.find("cudaMalloc,") == std::string::npos);
  }
  SECTION("a program with the static runtime: reaches Gleam through libcuda.so.1") {
    auto program = build_path("tests/programs/memory_alloc_static");
    if (!std::ifstream{program}) {
      WARN("the CUDA test programs were not built (no nvcc)");
      return;
    }
    CHECK(doctor(at + " GLEAM_TOKEN=right", program, out) == 0);
    INFO(out);
    CHECK(out.find("ok    links the CUDA runtime statically") != std::string::npos);
    CHECK(out.find("doctor: a run would work") != std::string::npos);
  }
  SECTION("a program that is not there: fails") {
    CHECK(doctor(at + " GLEAM_TOKEN=right", "/nonexistent/program", out) != 0);
    INFO(out);
    CHECK(out.find("FAIL  program '/nonexistent/program' not found") != std::string::npos);
  }
}
