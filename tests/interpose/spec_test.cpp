#include "tests/interpose/library_spec.hpp"
#include "tests/support/files.hpp"
#include "tests/support/gpu_probe.hpp"

#include <catch2/catch.hpp>
#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

using gleam::test::lines_of;
using gleam::test::read_file;

using gleam::test::spec::names_of;
using gleam::test::spec::trim;

/// The entries of cudart.spec.
std::vector<gleam::test::spec::entry> read_spec() {
  return gleam::test::spec::read_spec("cudart");
}

/// Names defined by `library` with version `libcudart.so.13`, and everything
/// else `nm -D --defined-only` lists (as "<type> <symbol>").
struct exported_set {
  std::multiset<std::string> versioned;
  /// Gleam's private entry points (version GLEAM_PRIVATE_1).
  std::set<std::string> private_names;
  std::vector<std::string> other;
};

exported_set exported_by(const std::string& library) {
  std::string out;
  auto rc = gleam::test::run_command("nm -D --defined-only '" + library + "'", out);
  REQUIRE(rc == 0);
  exported_set result;
  std::istringstream in{out};
  for (std::string line; std::getline(in, line);) {
    std::istringstream words{line};
    std::string address, type, symbol;
    words >> address >> type >> symbol;
    const std::string tag = "@@libcudart.so.13";
    const std::string private_tag = "@@GLEAM_PRIVATE_1";
    auto tagged = [&](const std::string& t) {
      return type == "T" && symbol.size() > t.size()
             && symbol.compare(symbol.size() - t.size(), t.size(), t) == 0;
    };
    if (tagged(tag))
      result.versioned.insert(symbol.substr(0, symbol.size() - tag.size()));
    else if (tagged(private_tag))
      result.private_names.insert(symbol.substr(0, symbol.size() - private_tag.size()));
    else if (!(type == "A" && (symbol == "libcudart.so.13" || symbol == "GLEAM_PRIVATE_1")))
      result.other.push_back(type + " " + symbol);
  }
  return result;
}

const char* vendor_library = "/usr/local/cuda/lib64/libcudart.so.13";

std::vector<std::string> vendor_names() {
  if (std::ifstream{vendor_library}.good()) {
    auto set = exported_by(vendor_library);
    return {set.versioned.begin(), set.versioned.end()};
  }
  WARN("no vendor " << vendor_library << "; using interpose/spec/libcudart.so.13.symbols");
  return lines_of(read_file(gleam::test::source_path("interpose/spec/libcudart.so.13.symbols")));
}

std::string built_library() {
  return gleam::test::build_path("lib/libcudart.so.13");
}

} // namespace

TEST_CASE("the spec names every vendor export exactly once, each in one class",
          "[interpose][spec]") {
  auto spec = read_spec();
  auto vendor = vendor_names();
  REQUIRE(vendor.size() == 422);
  std::map<std::string, int> seen;
  for (const auto& e : spec)
    ++seen[e.name];
  for (const auto& name : vendor) {
    INFO(name);
    CHECK(seen[name] == 1);
  }
  CHECK(names_of(spec) == std::set<std::string>(vendor.begin(), vendor.end()));
  CHECK(spec.size() == vendor.size());
  for (const auto& e : spec) {
    INFO(e.name);
    REQUIRE(e.classes.size() == 1);
    const auto& cls = e.classes.front();
    CHECK((cls == "manual" || cls == "unsupported" || cls == "generated"));
    if (cls == "unsupported")
      CHECK_FALSE(e.reason.empty());
  }
}

TEST_CASE("the committed name list matches the installed vendor library",
          "[interpose][spec]") {
  if (!std::ifstream{vendor_library}.good()) {
    WARN("no vendor " << vendor_library << " to compare with; skipped");
    return;
  }
  auto committed = lines_of(read_file(gleam::test::source_path("interpose/spec/libcudart.so.13.symbols")));
  auto vendor = vendor_names();
  CHECK(std::set<std::string>(committed.begin(), committed.end())
        == std::set<std::string>(vendor.begin(), vendor.end()));
}

TEST_CASE("the generated name lists follow the spec", "[interpose][spec]") {
  auto spec = read_spec();
  auto symbols = lines_of(read_file(gleam::test::build_path("interpose/cudart_symbols.txt")));
  auto names = names_of(spec);
  CHECK(symbols == std::vector<std::string>(names.begin(), names.end()));
  std::set<std::string> manual;
  for (const auto& e : spec)
    if (e.classes.size() == 1 && e.classes.front() == "manual")
      manual.insert(e.name);
  auto listed = lines_of(read_file(gleam::test::build_path("interpose/cudart_manual.txt")));
  CHECK(listed == std::vector<std::string>(manual.begin(), manual.end()));
  CHECK(manual.count("cudaMalloc") == 1);
  CHECK(manual.count("__cudaLaunchKernel") == 1);
  CHECK(manual.count("cudaGraphAddMemcpyNode") == 1);
  CHECK(manual.count("cudaGraphAddNode") == 0);
}

TEST_CASE("the built libcudart.so.13 exports exactly the spec's names, versioned",
          "[interpose][library]") {
  auto exported = exported_by(built_library());
  auto names = names_of(read_spec());
  std::set<std::string> unique(exported.versioned.begin(), exported.versioned.end());
  CHECK(exported.versioned.size() == unique.size());
  for (const auto& name : names) {
    INFO("missing from the library: " << name);
    CHECK(unique.count(name) == 1);
  }
  for (const auto& name : unique) {
    INFO("exported but not in the spec: " << name);
    CHECK(names.count(name) == 1);
  }
  INFO("first unexpected export: " << (exported.other.empty() ? "" : exported.other.front()));
  CHECK(exported.other.empty());
  // Beyond the vendor's names: exactly the generator's private list.
  auto private_list = lines_of(read_file(gleam::test::build_path("interpose/cudart_private.txt")));
  CHECK(exported.private_names
        == std::set<std::string>(private_list.begin(), private_list.end()));
  CHECK(exported.private_names.count("gleam_private_interface_v1") == 1);
}

TEST_CASE("the built library's SONAME is libcudart.so.13", "[interpose][library]") {
  std::string out;
  REQUIRE(gleam::test::run_command("readelf -d '" + built_library() + "'", out) == 0);
  CHECK(out.find("Library soname: [libcudart.so.13]") != std::string::npos);
}

TEST_CASE("an unsupported function fails with cudaErrorNotSupported", "[interpose][library]") {
  auto* lib = dlopen(built_library().c_str(), RTLD_NOW | RTLD_LOCAL);
  INFO("dlopen: " << (lib ? "" : dlerror()));
  REQUIRE(lib != nullptr);
  auto exec_flags =
    reinterpret_cast<decltype(&cudaGraphExecGetFlags)>(dlsym(lib, "cudaGraphExecGetFlags"));
  auto ipc_handle = reinterpret_cast<decltype(&cudaIpcGetMemHandle)>(dlsym(lib, "cudaIpcGetMemHandle"));
  auto channel_desc = reinterpret_cast<decltype(&cudaCreateChannelDesc)>(dlsym(lib, "cudaCreateChannelDesc"));
  REQUIRE(exec_flags != nullptr);
  REQUIRE(ipc_handle != nullptr);
  REQUIRE(channel_desc != nullptr);

  unsigned long long flags = 77;
  CHECK(exec_flags(nullptr, &flags) == cudaErrorNotSupported);
  CHECK(flags == 77);
  cudaIpcMemHandle_t handle{};
  int local = 0;
  CHECK(ipc_handle(&handle, &local) == cudaErrorNotSupported);
  auto desc = channel_desc(8, 8, 8, 8, cudaChannelFormatKindUnsigned);
  CHECK(desc.f == cudaChannelFormatKindNone);
  CHECK(desc.x == 0);

  auto placeholders = read_file(gleam::test::build_path("interpose/placeholders.txt"));
  if (placeholders.find("runtime") != std::string::npos
      || placeholders.find("manual") != std::string::npos) {
    WARN("this build links placeholders (" << trim(placeholders)
                                           << "); last-error checks skipped");
  } else {
    auto get_last_error = reinterpret_cast<decltype(&cudaGetLastError)>(dlsym(lib, "cudaGetLastError"));
    REQUIRE(get_last_error != nullptr);
    CHECK(exec_flags(nullptr, &flags) == cudaErrorNotSupported);
    CHECK(get_last_error() == cudaErrorNotSupported);
    CHECK(get_last_error() == cudaSuccess);
  }
  dlclose(lib);
}

TEST_CASE("the generator rejects an unsupported entry without a reason", "[interpose][spec]") {
  auto dir = gleam::test::build_path("tests/interpose_spec_test.d");
  std::string ignored;
  REQUIRE(gleam::test::run_command("mkdir -p '" + dir + "'", ignored) == 0);
  auto spec = dir + "/bad.spec";
  std::ofstream{spec} << "fn cudaGraphCreate\n  header cuda_runtime_api.h\n"
                         "  returns cudaError_t\n  class unsupported\n  call sync\n"
                         "  param cudaGraph_t *pGraph | out 1\n  param unsigned int flags\nend\n";
  std::string out;
  auto rc = gleam::test::run_command(
    "python3 '" + gleam::test::source_path("interpose/gen/generate.py") + "' --spec '" + spec
      + "' 2>&1",
    out);
  CHECK(rc != 0);
  CHECK(out.find("bad.spec:1 (cudaGraphCreate): unsupported needs a non-empty 'reason'")
        != std::string::npos);

  std::ofstream{spec} << "fn cudaGraphCreate\n  header cuda_runtime_api.h\n"
                         "  returns cudaError_t\n  class unsupported\n  reason r\n  call sync\n"
                         "  param cudaGraph_t *pGraph\nend\n";
  out.clear();
  rc = gleam::test::run_command("python3 '" + gleam::test::source_path("interpose/gen/generate.py")
                                  + "' --spec '" + spec + "' 2>&1",
                                out);
  CHECK(rc != 0);
  CHECK(out.find("pointer parameter 'cudaGraph_t *pGraph' needs") != std::string::npos);
}

TEST_CASE("coverage of every remoted library: real and unsupported exports",
          "[interpose][spec][coverage]") {
  // Every spec of interpose/spec, in name order: each export in exactly one
  // class, each unsupported one with its reason. The table goes to stdout
  // (ctest -V, or the test binary run by hand).
  std::string listing;
  REQUIRE(gleam::test::run_command(
            "ls '" + gleam::test::source_path("interpose/spec") + "' | grep '\\.spec$'", listing)
          == 0);
  size_t libraries = 0;
  std::printf("%-10s %8s %6s %12s %6s  %s\n", "spec", "exports", "real", "unsupported", "real%",
              "first unsupported");
  for (const auto& file : gleam::test::lines_of(listing)) {
    auto lib = file.substr(0, file.size() - std::string{".spec"}.size());
    auto spec = gleam::test::spec::read_spec(lib);
    INFO(lib);
    REQUIRE_FALSE(spec.empty());
    ++libraries;
    size_t real = 0;
    std::string unsupported;
    size_t shown = 0;
    for (const auto& e : spec) {
      INFO(e.name);
      REQUIRE(e.classes.size() == 1);
      if (e.classes.front() != "unsupported") {
        ++real;
        continue;
      }
      CHECK_FALSE(e.reason.empty());
      if (shown++ < 5)
        unsupported += (unsupported.empty() ? "" : ", ") + e.name;
    }
    auto percent = 100.0 * static_cast<double>(real) / static_cast<double>(spec.size());
    std::printf("%-10s %8zu %6zu %12zu %5.0f%%  %s\n", lib.c_str(), spec.size(), real,
                spec.size() - real, percent, unsupported.c_str());
  }
  CHECK(libraries >= 8);
}
