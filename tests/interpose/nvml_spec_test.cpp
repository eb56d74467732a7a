// The NVML surface: nvml.spec names exactly the exports of
// libnvidia-ml.so.1.symbols, each in one class; the built libnvidia-ml.so.1
// exports exactly those names, unversioned like the vendor's, with its
// SONAME; the coverage is printed; what is answered at the call
// (initialization state, foreign handles, read-only refusals, error
// strings) needs no server.
#include "tests/interpose/library_spec.hpp"
#include "tests/support/files.hpp"

#include <catch2/catch.hpp>
#include <dlfcn.h>

#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "wire/nvml.h"

namespace {

using gleam::test::lines_of;
using gleam::test::read_file;
using gleam::test::spec::names_of;
using gleam::test::spec::read_spec;

std::vector<std::string> committed_names() {
  return lines_of(
    read_file(gleam::test::source_path("interpose/spec/libnvidia-ml.so.1.symbols")));
}

std::string built() {
  return gleam::test::build_path("lib/libnvidia-ml.so.1");
}

/// A refusal of a function that would change the GPU (the spec's reason).
bool refused(const gleam::test::spec::entry& e) {
  return e.reason.find("read-only") != std::string::npos;
}

} // namespace

TEST_CASE("nvml.spec names every NVML export once, each in one class",
          "[interpose][spec][nvml]") {
  auto spec = read_spec("nvml");
  auto names = committed_names();
  CHECK(names_of(spec) == std::set<std::string>(names.begin(), names.end()));
  CHECK(spec.size() == names.size());
  std::set<std::string> ids;
  std::map<std::string, int> count;
  std::vector<std::string> unsupported;
  for (const auto& e : spec) {
    INFO(e.name);
    REQUIRE(e.classes.size() == 1);
    const auto& cls = e.classes.front();
    CHECK((cls == "manual" || cls == "generated" || cls == "unsupported"));
    if (cls == "generated")
      CHECK_FALSE(e.id.empty());
    if (!e.id.empty())
      CHECK(ids.insert(e.id).second);
    if (cls == "unsupported")
      CHECK_FALSE(e.reason.empty());
    ++count[cls == "unsupported" && refused(e) ? "refused" : cls];
    if (cls == "unsupported" && !refused(e))
      unsupported.push_back(e.name);
  }
  // Every setter is refused with NVML_ERROR_NO_PERMISSION, never pretended.
  for (const auto* name : {"nvmlDeviceSetComputeMode", "nvmlDeviceSetPersistenceMode",
                           "nvmlDeviceResetApplicationsClocks", "nvmlDeviceClearEccErrorCounts",
                           "nvmlEventSetCreate", "nvmlDeviceSetPowerManagementLimit"})
    for (const auto& e : spec)
      if (e.name == name) {
        INFO(name);
        CHECK(refused(e));
      }
  auto real = count["generated"] + count["manual"];
  auto total = static_cast<int>(spec.size());
  std::string top;
  for (size_t i = 0; i < unsupported.size() && i < 10; ++i)
    top += (i ? ", " : "") + unsupported[i];
  WARN("NVML coverage: " << real << " of " << total << " exports remoted ("
                         << count["generated"] << " generated, " << count["manual"]
                         << " manual), " << count["refused"]
                         << " refused as read-only (NVML_ERROR_NO_PERMISSION), "
                         << count["unsupported"] << " unsupported; first unsupported: " << top);
  CHECK(real + count["refused"] + count["unsupported"] == total);
}

TEST_CASE("the built libnvidia-ml.so.1 exports exactly the spec's names, unversioned",
          "[interpose][library][nvml]") {
  std::string out;
  REQUIRE(gleam::test::run_command("nm -D --defined-only '" + built() + "'", out) == 0);
  std::set<std::string> exported;
  for (const auto& line : lines_of(out)) {
    auto type = line.size() > 17 ? line.substr(17, 1) : std::string{};
    auto name = line.size() > 19 ? line.substr(19) : std::string{};
    INFO(line);
    if (type == "T")
      CHECK(exported.insert(name).second);
    else
      CHECK(type == "A"); // nothing but functions (and no version nodes of ours)
  }
  CHECK(exported == names_of(read_spec("nvml")));
  REQUIRE(gleam::test::run_command("readelf -d '" + built() + "'", out) == 0);
  CHECK(out.find("Library soname: [libnvidia-ml.so.1]") != std::string::npos);
}

TEST_CASE("NVML calls answered at the call need no server", "[interpose][library][nvml]") {
  auto* lib = dlopen(built().c_str(), RTLD_NOW | RTLD_LOCAL);
  INFO("dlopen: " << (lib ? "" : dlerror()));
  REQUIRE(lib != nullptr);
  using get_count = nvmlReturn_t (*)(unsigned int*);
  using get_name = nvmlReturn_t (*)(nvmlDevice_t, char*, unsigned int);
  using set_mode = nvmlReturn_t (*)(nvmlDevice_t, nvmlComputeMode_t);
  using no_args = nvmlReturn_t (*)();
  using error_string = const char* (*)(nvmlReturn_t);
  auto count = reinterpret_cast<get_count>(dlsym(lib, "nvmlDeviceGetCount_v2"));
  auto name = reinterpret_cast<get_name>(dlsym(lib, "nvmlDeviceGetName"));
  auto set = reinterpret_cast<set_mode>(dlsym(lib, "nvmlDeviceSetComputeMode"));
  auto init = reinterpret_cast<no_args>(dlsym(lib, "nvmlInit_v2"));
  auto shutdown = reinterpret_cast<no_args>(dlsym(lib, "nvmlShutdown"));
  auto text = reinterpret_cast<error_string>(dlsym(lib, "nvmlErrorString"));
  REQUIRE((count && name && set && init && shutdown && text));
  // Before nvmlInit: NVML_ERROR_UNINITIALIZED, whatever the arguments.
  unsigned int n = 7;
  CHECK(count(&n) == NVML_ERROR_UNINITIALIZED);
  CHECK(n == 7);
  char buffer[96];
  CHECK(name(nullptr, buffer, sizeof(buffer)) == NVML_ERROR_UNINITIALIZED);
  CHECK(shutdown() == NVML_ERROR_UNINITIALIZED);
  // Setters are refused at the call: nothing reaches a server.
  CHECK(set(nullptr, NVML_COMPUTEMODE_PROHIBITED) == NVML_ERROR_NO_PERMISSION);
  CHECK(std::string(text(NVML_ERROR_UNINITIALIZED)) == "Uninitialized");
  CHECK(std::string(text(NVML_ERROR_NO_PERMISSION)) == "Insufficient Permissions");
  // No server (port 1 of the loopback refuses at once): the vendor's answer
  // without a driver, and still uninitialized.
  ::setenv("GLEAM_SERVER", "127.0.0.1:1", 1);
  CHECK(init() == NVML_ERROR_DRIVER_NOT_LOADED);
  CHECK(count(&n) == NVML_ERROR_UNINITIALIZED);
  ::unsetenv("GLEAM_SERVER");
  dlclose(lib);
}
