// The cuRAND surface: curand.spec names exactly the vendor's exports, each
// in one class, every one remoted; the built libcurand.so.10 exports
// exactly those names with the vendor's symbol version and SONAME; the
// generated lists follow the spec; what is answered at the call (local
// properties, unknown handles) needs no server.
#include "tests/interpose/library_spec.hpp"
#include "tests/support/files.hpp"
#include "tests/support/gpu_probe.hpp"

#include <catch2/catch.hpp>
#include <curand.h>
#include <dlfcn.h>

#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace {

using gleam::test::spec::names_of;
using gleam::test::spec::read_spec;

constexpr const char* version = "libcurand.so.10";
const std::string vendor = "/usr/local/cuda/lib64/libcurand.so.10";

std::string built() {
  return gleam::test::build_path("lib/libcurand.so.10");
}

} // namespace

TEST_CASE("curand.spec names every vendor export once, each remoted",
          "[interpose][spec][curand]") {
  auto spec = read_spec("curand");
  auto names = gleam::test::spec::committed_names(version);
  // libcurand.so.10 of CUDA 13.0 exports 27 functions.
  CHECK(names.size() == 27);
  CHECK(names_of(spec) == std::set<std::string>(names.begin(), names.end()));
  CHECK(spec.size() == names.size());
  std::set<std::string> ids;
  for (const auto& e : spec) {
    INFO(e.name);
    REQUIRE(e.classes.size() == 1);
    const auto& cls = e.classes.front();
    // The whole host API is remoted: nothing unsupported.
    CHECK((cls == "manual" || cls == "generated"));
    CHECK((e.call == "async" || e.call == "local" || e.call == "sync"));
    if (cls == "generated")
      CHECK_FALSE(e.id.empty());
    if (!e.id.empty())
      CHECK(ids.insert(e.id).second);
  }
}

TEST_CASE("the committed cuRAND name list matches the installed vendor library",
          "[interpose][spec][curand]") {
  gleam::test::spec::check_vendor_list(vendor, version);
}

TEST_CASE("the generated cuRAND name lists follow the spec", "[interpose][spec][curand]") {
  gleam::test::spec::check_generated_lists("curand");
}

TEST_CASE("the built libcurand.so.10 exports exactly the spec's names, versioned",
          "[interpose][library][curand]") {
  gleam::test::spec::check_built_exports("curand", version);
}

TEST_CASE("cuRAND calls answered at the call need no server", "[interpose][library][curand]") {
  auto* lib = dlopen(built().c_str(), RTLD_NOW | RTLD_LOCAL);
  INFO("dlopen: " << (lib ? "" : dlerror()));
  REQUIRE(lib != nullptr);
#define GLEAM_CURAND(name)                                                     \
  auto name = reinterpret_cast<decltype(&::name)>(dlsym(lib, #name));          \
  REQUIRE(name != nullptr)
  GLEAM_CURAND(curandGetProperty);
  GLEAM_CURAND(curandGenerateUniform);
  GLEAM_CURAND(curandSetPseudoRandomGeneratorSeed);
  GLEAM_CURAND(curandDestroyGenerator);
  GLEAM_CURAND(curandCreateGenerator);
  GLEAM_CURAND(curandDestroyDistribution);
  GLEAM_CURAND(curandGeneratePoisson);
#undef GLEAM_CURAND
  int major = -1, minor = -1, patch = -1;
  CHECK(curandGetProperty(MAJOR_VERSION, &major) == CURAND_STATUS_SUCCESS);
  CHECK(curandGetProperty(MINOR_VERSION, &minor) == CURAND_STATUS_SUCCESS);
  CHECK(curandGetProperty(PATCH_LEVEL, &patch) == CURAND_STATUS_SUCCESS);
  CHECK(major == CURAND_VER_MAJOR);
  CHECK(minor == CURAND_VER_MINOR);
  CHECK(patch == CURAND_VER_PATCH);
  CHECK(curandGetProperty(static_cast<libraryPropertyType>(7), &major)
        == CURAND_STATUS_OUT_OF_RANGE);
  // A handle that is not ours (or none) is NOT_INITIALIZED before any
  // other check, and nothing is sent.
  float out[4];
  CHECK(curandGenerateUniform(nullptr, out, 4) == CURAND_STATUS_NOT_INITIALIZED);
  int not_a_generator[16] = {};
  auto foreign = reinterpret_cast<curandGenerator_t>(not_a_generator);
  CHECK(curandSetPseudoRandomGeneratorSeed(foreign, 1) == CURAND_STATUS_NOT_INITIALIZED);
  CHECK(curandDestroyGenerator(foreign) == CURAND_STATUS_NOT_INITIALIZED);
  unsigned int counts[4];
  CHECK(curandGeneratePoisson(foreign, counts, 4, -1.0) == CURAND_STATUS_NOT_INITIALIZED);
  CHECK(curandCreateGenerator(nullptr, CURAND_RNG_PSEUDO_DEFAULT) == CURAND_STATUS_NOT_INITIALIZED);
  CHECK(curandDestroyDistribution(nullptr) == CURAND_STATUS_NOT_INITIALIZED);

  // Where the vendor library is installed, the local answers are its answers.
  if (auto* v = dlopen(vendor.c_str(), RTLD_NOW | RTLD_LOCAL)) {
    auto property = reinterpret_cast<decltype(&::curandGetProperty)>(dlsym(v, "curandGetProperty"));
    REQUIRE(property != nullptr);
    for (auto type : {MAJOR_VERSION, MINOR_VERSION, PATCH_LEVEL}) {
      int ours = -1, theirs = -2;
      CHECK(curandGetProperty(type, &ours) == CURAND_STATUS_SUCCESS);
      CHECK(property(type, &theirs) == CURAND_STATUS_SUCCESS);
      CHECK(ours == theirs);
    }
    dlclose(v);
  }
  dlclose(lib);
}

TEST_CASE("a cuRAND program binds to our library and fails cleanly without a server",
          "[interpose][library][curand]") {
  // The first call that needs the server (curandGetVersion) says the
  // library could not be initialized.
  gleam::test::spec::check_program_binds(
    "curand_host", version, "curandGetVersion",
    "curandGetVersion(&v) failed: curandStatus_t "
      + std::to_string(CURAND_STATUS_INITIALIZATION_FAILED));
}

TEST_CASE("the generator checks the annotations of generated library calls",
          "[interpose][spec][curand]") {
  auto dir = gleam::test::build_path("tests/interpose_spec_test.d");
  std::string ignored;
  REQUIRE(gleam::test::run_command("mkdir -p '" + dir + "'", ignored) == 0);
  auto spec = dir + "/curand.spec";
  auto refused = [&](const std::string& entry) {
    std::ofstream{spec} << "handle curandGenerator_t object curandGenerator_st destroy "
                           "curandDestroyGenerator stream curandSetStream\n"
                        << "fn f\n  header curand.h\n  returns curandStatus_t\n"
                           "  class generated\n  id 1\n"
                        << entry << "end\n";
    std::string out;
    auto rc = gleam::test::run_command(
      "python3 '" + gleam::test::source_path("interpose/gen/generate.py") + "' --library curand"
        + " --spec '" + spec + "' 2>&1",
      out);
    CHECK(rc != 0);
    return out;
  };
  CHECK_THAT(refused("  call async\n  param curandGenerator_t g\n  param cudaStream_t s\n"),
             Catch::Contains("a stream of a generated entry is marked '| stream'"));
  CHECK_THAT(refused("  call async\n  param curandGenerator_t g | destroys\n"),
             Catch::Contains("names curandDestroyGenerator as its destroy function"));
  CHECK_THAT(refused("  call async\n  param int *v | out host 1\n"),
             Catch::Contains("with host outputs: 'call sync'"));
  CHECK_THAT(refused("  call async\n  param float *p | out dev_or_host n\n  param size_t n\n"),
             Catch::Contains("'dev_or_host' follows the entry's object handle"));
  CHECK_THAT(refused("  call sync\n  param curandGenerator_t *g | in handle\n"),
             Catch::Contains("is an output"));
  CHECK_THAT(refused("  call async\n  param curandGenerator_t g\n  param float *p | out dev\n"),
             Catch::Contains("needs the extent"));
}
