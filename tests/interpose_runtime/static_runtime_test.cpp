// Programs linked with the static CUDA runtime (plain nvcc's default) run
// through gleam-run against the fake GPU server: their own cudart reaches
// Gleam only through libcuda.so.1 (cuGetProcAddress, cuGetExportTable, the
// library API), and must print what the shared-runtime build of the same
// source prints through Gleam.
#include "tests/interpose_runtime/fake_server.hpp"

#include <fstream>
#include <string>

namespace {

using gleam::test::build_path;
using gleam::test::fake_server;
using gleam::test::run_command;

} // namespace

TEST_CASE("a static-runtime program prints what its shared-runtime build prints through Gleam",
          "[interpose_runtime][static]") {
  if (!std::ifstream{build_path("tests/programs/device_props_static")}) {
    WARN("the CUDA test programs were not built (no nvcc): nothing to run");
    return;
  }
  fake_server server;
  auto run = build_path("bin/gleam-run") + " --server 127.0.0.1:" + std::to_string(server.port())
             + " -- ";
  // Programs whose output does not depend on kernels running (the fake
  // server does not execute them).
  for (const char* name : {"device_props", "memory_alloc", "memset_kinds", "multithread"}) {
    std::string shared_out, static_out;
    auto shared_rc =
      run_command(run + build_path(std::string{"tests/programs/"} + name) + " 2>&1", shared_out);
    auto static_rc = run_command(
      run + build_path(std::string{"tests/programs/"} + name + "_static") + " 2>&1", static_out);
    INFO(name << "\nshared runtime:\n" << shared_out << "\nstatic runtime:\n" << static_out);
    CHECK(shared_rc == 0);
    CHECK(static_rc == 0);
    CHECK(static_out == shared_out);
  }
}
