// The cuFFT surface: cufft.spec names exactly the vendor's exports, each
// in one class; the built libcufft.so.12 exports exactly those names with
// the vendor's symbol version and SONAME; what is refused at the call (a
// plan the process does not hold, an unsupported function) needs no
// server. Prints the coverage line.
#include "tests/interpose/library_spec.hpp"
#include "tests/support/files.hpp"
#include "tests/support/gpu_probe.hpp"

#include <catch2/catch.hpp>
#include <cufft.h>
#include <cufftXt.h>
#include <dlfcn.h>

#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace {

using gleam::test::lines_of;
using gleam::test::read_file;
using gleam::test::spec::exported_by;
using gleam::test::spec::names_of;
using gleam::test::spec::read_spec;

constexpr const char* version = "libcufft.so.12";
const std::string vendor = "/usr/local/cuda/lib64/libcufft.so.12";

std::vector<std::string> committed_names() {
  return lines_of(read_file(gleam::test::source_path("interpose/spec/libcufft.so.12.symbols")));
}

std::string built() {
  return gleam::test::build_path("lib/libcufft.so.12");
}

} // namespace

TEST_CASE("cufft.spec names every vendor export once", "[interpose][spec][cufft]") {
  auto spec = read_spec("cufft");
  auto names = committed_names();
  // libcufft.so.12 of CUDA 13.0 exports 58 functions.
  CHECK(names.size() == 58);
  CHECK(names_of(spec) == std::set<std::string>(names.begin(), names.end()));
  CHECK(spec.size() == names.size());
  std::map<std::string, int> classes;
  std::set<std::string> ids;
  for (const auto& e : spec) {
    INFO(e.name);
    REQUIRE(e.classes.size() == 1);
    ++classes[e.classes.front()];
    // Everything remoted travels as a LibraryCall of its pinned id.
    if (e.classes.front() != "unsupported")
      CHECK_FALSE(e.id.empty());
    if (!e.id.empty())
      CHECK(ids.insert(e.id).second);
  }
  auto real = classes["generated"] + classes["manual"];
  WARN("cuFFT coverage: " << real << " of " << spec.size() << " exports real ("
                          << classes["generated"] << " generated, " << classes["manual"]
                          << " manual), " << classes["unsupported"] << " unsupported");
  // What stays unsupported is multi-GPU descriptors, callbacks, guru
  // layouts and the vendor's debug entry.
  CHECK(classes["unsupported"] <= 17);
}

TEST_CASE("the committed cuFFT name list matches the installed vendor library",
          "[interpose][spec][cufft]") {
  if (!std::ifstream{vendor}.good()) {
    WARN("no vendor " << vendor << " to compare with; skipped");
    return;
  }
  auto exported = exported_by(vendor, version);
  auto committed = committed_names();
  CHECK(std::set<std::string>(exported.versioned.begin(), exported.versioned.end())
        == std::set<std::string>(committed.begin(), committed.end()));
}

TEST_CASE("the built libcufft.so.12 exports exactly the spec's names, versioned",
          "[interpose][library][cufft]") {
  auto exported = exported_by(built(), version);
  auto names = names_of(read_spec("cufft"));
  std::set<std::string> unique(exported.versioned.begin(), exported.versioned.end());
  CHECK(exported.versioned.size() == unique.size());
  CHECK(unique == names);
  INFO("first unexpected export: " << (exported.other.empty() ? "" : exported.other.front()));
  CHECK(exported.other.empty());
  std::string out;
  REQUIRE(gleam::test::run_command("readelf -d '" + built() + "'", out) == 0);
  CHECK(out.find("Library soname: [libcufft.so.12]") != std::string::npos);
}

TEST_CASE("cuFFT calls refused at the call need no server", "[interpose][library][cufft]") {
  auto* lib = dlopen(built().c_str(), RTLD_NOW | RTLD_LOCAL);
  INFO("dlopen: " << (lib ? "" : dlerror()));
  REQUIRE(lib != nullptr);
#define GLEAM_CUFFT(name)                                                      \
  auto name = reinterpret_cast<decltype(&::name)>(dlsym(lib, #name));          \
  REQUIRE(name != nullptr)
  GLEAM_CUFFT(cufftExecC2C);
  GLEAM_CUFFT(cufftXtExec);
  GLEAM_CUFFT(cufftSetStream);
  GLEAM_CUFFT(cufftDestroy);
  GLEAM_CUFFT(cufftMakePlan1d);
  GLEAM_CUFFT(cufftPlanMany);
  GLEAM_CUFFT(cufftXtSetGPUs);
  GLEAM_CUFFT(cufftXtSetWorkArea);
#undef GLEAM_CUFFT
  // A plan this process never made is CUFFT_INVALID_PLAN, and nothing is
  // sent (there is no server to send it to).
  cufftComplex data[4] = {};
  CHECK(cufftExecC2C(3, data, data, CUFFT_FORWARD) == CUFFT_INVALID_PLAN);
  CHECK(cufftXtExec(0, data, data, CUFFT_INVERSE) == CUFFT_INVALID_PLAN);
  CHECK(cufftSetStream(3, nullptr) == CUFFT_INVALID_PLAN);
  CHECK(cufftDestroy(-1) == CUFFT_INVALID_PLAN);
  size_t work = 0;
  CHECK(cufftMakePlan1d(1, 8, CUFFT_C2C, 1, &work) == CUFFT_INVALID_PLAN);
  // Shapes cuFFT cannot take are refused before a plan is asked for.
  cufftHandle plan = -1;
  int n[4] = {2, 2, 2, 2};
  CHECK(cufftPlanMany(&plan, 4, n, nullptr, 1, 1, nullptr, 1, 1, CUFFT_C2C, 1)
        == CUFFT_INVALID_VALUE);
  CHECK(cufftPlanMany(&plan, 1, nullptr, nullptr, 1, 1, nullptr, 1, 1, CUFFT_C2C, 1)
        == CUFFT_INVALID_VALUE);
  CHECK(plan == -1);
  // Multi-GPU plans are not Gleam's: a defined error, never success.
  int gpus[2] = {0, 1};
  CHECK(cufftXtSetGPUs(0, 2, gpus) == CUFFT_NOT_SUPPORTED);
  dlclose(lib);
}
