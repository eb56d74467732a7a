// The one Catch2 main of every gleam test binary. A run that selects [gpu]
// tests on a machine without a usable GPU exits with 77, which CTest reports
// as skipped, after saying why and what to do.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdio>
#include <string>

#include "tests/support/gpu_probe.hpp"

int main(int argc, char** argv) {
  bool gpu_selected = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.find("[gpu]") != std::string::npos && arg.find("~[gpu]") == std::string::npos)
      gpu_selected = true;
  }
  if (gpu_selected) {
    auto why = gleam::test::gpu_unavailable_reason();
    if (!why.empty()) {
      std::printf("SKIPPED [gpu] tests: %s\n"
                  "Run them on a machine with an NVIDIA GPU: ctest -L gpu\n",
                  why.c_str());
      return 77;
    }
  }
  return Catch::Session().run(argc, argv);
}
