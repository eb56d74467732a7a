// The cuSOLVER surface: cusolver.spec names exactly the vendor's exports,
// each in one class, with unique ids; the built libcusolver.so.12 exports
// exactly those names with the vendor's symbol version and SONAME; what is
// refused at the call (a handle the process does not hold, an unsupported
// function) needs no server. Prints the coverage line.
#include "tests/interpose/library_spec.hpp"
#include "tests/support/gpu_probe.hpp"

#include <catch2/catch.hpp>
#include <cusolverDn.h>
#include <dlfcn.h>

#include <map>
#include <set>
#include <string>

namespace {

constexpr const char* version = "libcusolver.so.12";
const std::string vendor = "/usr/local/cuda/lib64/libcusolver.so.12";

} // namespace

TEST_CASE("cusolver.spec names every vendor export once", "[interpose][spec][cusolver]") {
  auto spec = gleam::test::spec::read_spec("cusolver");
  auto names = gleam::test::spec::committed_names(version);
  // libcusolver.so.12 of CUDA 13.0 exports 832 functions.
  CHECK(names.size() == 832);
  CHECK(gleam::test::spec::names_of(spec) == std::set<std::string>(names.begin(), names.end()));
  CHECK(spec.size() == names.size());
  std::map<std::string, int> classes;
  std::set<std::string> ids;
  std::set<std::string> remoted;
  for (const auto& e : spec) {
    INFO(e.name);
    REQUIRE(e.classes.size() == 1);
    ++classes[e.classes.front()];
    // Everything remoted but the local cusolverDnGetStream travels as a
    // LibraryCall of its pinned id.
    if (e.classes.front() == "generated")
      CHECK_FALSE(e.id.empty());
    if (e.classes.front() != "unsupported")
      remoted.insert(e.name);
    if (!e.id.empty())
      CHECK(ids.insert(e.id).second);
  }
  auto real = classes["generated"] + classes["manual"];
  WARN("cuSOLVER coverage: " << real << " of " << spec.size() << " exports real ("
                             << classes["generated"] << " generated, " << classes["manual"]
                             << " manual), " << classes["unsupported"] << " unsupported");
  // The vendor's internal exports (no prototype) are nobody's API: the share
  // that counts is of the public functions.
  size_t internal = 0;
  for (const auto& e : spec)
    if (e.reason == "internal vendor entry point without a public prototype")
      ++internal;
  CHECK(internal == 261);
  auto public_functions = spec.size() - internal;
  WARN("cuSOLVER coverage of public functions: " << real << " of " << public_functions << " ("
                                                 << 100 * real / public_functions << "%)");
  // What PyTorch's torch.linalg calls is remoted.
  for (const char* name :
       {"cusolverDnCreate", "cusolverDnDestroy", "cusolverDnSetStream", "cusolverDnGetStream",
        "cusolverDnCreateParams", "cusolverDnDestroyParams", "cusolverDnSetAdvOptions",
        "cusolverGetProperty", "cusolverGetVersion", "cusolverDnXgetrf_bufferSize",
        "cusolverDnXgetrf", "cusolverDnXgetrs", "cusolverDnXpotrf_bufferSize",
        "cusolverDnXpotrf", "cusolverDnXpotrs", "cusolverDnXsyevd_bufferSize",
        "cusolverDnXsyevd", "cusolverDnXgeqrf_bufferSize", "cusolverDnXgeqrf",
        "cusolverDnXgesvd_bufferSize", "cusolverDnXgesvd", "cusolverDnSgetrf",
        "cusolverDnZgetrs", "cusolverDnDpotrf", "cusolverDnCpotrs", "cusolverDnDgeqrf",
        "cusolverDnDorgqr", "cusolverDnZungqr", "cusolverDnSormqr", "cusolverDnCunmqr",
        "cusolverDnDsyevd", "cusolverDnZheevd", "cusolverDnSgesvd", "cusolverDnDsyevjBatched",
        "cusolverDnZgesvdjBatched", "cusolverDnDpotrfBatched", "cusolverDnCpotrsBatched"}) {
    INFO(name);
    CHECK(remoted.count(name) == 1);
  }
  // Every typed dense family, in each of its four types, and the rest of
  // the 64-bit API but the randomized SVD.
  for (const char* family :
       {"gebrd", "gesvdaStridedBatched", "laswp", "lauum", "sytri", "syevdx", "sygvd", "sygvdx",
        "sygvj", "sytrd", "orgbr", "orgtr", "ormtr"}) {
    std::string f = family;
    for (char t : std::string{"SDCZ"}) {
      auto typed = std::string(1, t) + f;
      if (t == 'C' || t == 'Z')
        for (auto [real_prefix, complex_prefix] :
             {std::pair<const char*, const char*>{"sy", "he"}, {"or", "un"}})
          if (f.rfind(real_prefix, 0) == 0 && f != "sytri")
            typed = std::string(1, t) + complex_prefix + f.substr(2);
      for (const auto& name : {typed, typed + "_bufferSize"}) {
        auto full = "cusolverDn" + name;
        INFO(full);
        if (f == "laswp" && name != typed)
          continue;
        CHECK(remoted.count(full) == 1);
      }
    }
  }
  for (const char* name :
       {"cusolverDnXsytrs", "cusolverDnXsytrs_bufferSize", "cusolverDnXsyevdx",
        "cusolverDnXsyevdx_bufferSize", "cusolverDnXgesvdp", "cusolverDnXgesvdp_bufferSize",
        "cusolverDnXlarft", "cusolverDnXlarft_bufferSize"}) {
    INFO(name);
    CHECK(remoted.count(name) == 1);
  }
  // Mixed-precision iterative refinement: every typed pair, its options and
  // results, the 64-bit form (its matrices of the options' main precision).
  for (const char* pair : {"DD", "DS", "DH", "DB", "DX", "SS", "SH", "SB", "SX", "ZZ", "ZC",
                           "ZK", "ZE", "ZY", "CC", "CK", "CE", "CY"})
    for (const char* solver : {"gesv", "gels"})
      for (const char* suffix : {"", "_bufferSize"}) {
        auto name = std::string("cusolverDn") + pair + solver + suffix;
        INFO(name);
        CHECK(remoted.count(name) == 1);
      }
  for (const char* name :
       {"cusolverDnIRSParamsCreate", "cusolverDnIRSParamsDestroy",
        "cusolverDnIRSParamsSetSolverPrecisions", "cusolverDnIRSParamsSetRefinementSolver",
        "cusolverDnIRSParamsSetTol", "cusolverDnIRSInfosCreate", "cusolverDnIRSInfosDestroy",
        "cusolverDnIRSInfosGetNiters", "cusolverDnIRSXgesv_bufferSize", "cusolverDnIRSXgesv",
        "cusolverDnIRSXgels_bufferSize", "cusolverDnIRSXgels"}) {
    INFO(name);
    CHECK(remoted.count(name) == 1);
  }
  CHECK(classes["generated"] >= 369);
}

TEST_CASE("the committed cuSOLVER name list matches the installed vendor library",
          "[interpose][spec][cusolver]") {
  gleam::test::spec::check_vendor_list(vendor, version);
}

TEST_CASE("the generated cuSOLVER name lists follow the spec", "[interpose][spec][cusolver]") {
  gleam::test::spec::check_generated_lists("cusolver");
}

TEST_CASE("the built libcusolver.so.12 exports exactly the spec's names, versioned",
          "[interpose][library][cusolver]") {
  gleam::test::spec::check_built_exports("cusolver", version);
}

TEST_CASE("cuSOLVER calls refused at the call need no server", "[interpose][library][cusolver]") {
  auto* lib = dlopen(gleam::test::build_path(std::string("lib/") + version).c_str(),
                     RTLD_NOW | RTLD_LOCAL);
  INFO("dlopen: " << (lib ? "" : dlerror()));
  REQUIRE(lib != nullptr);
#define GLEAM_CUSOLVER(name)                                                   \
  auto name = reinterpret_cast<decltype(&::name)>(dlsym(lib, #name));          \
  REQUIRE(name != nullptr)
  GLEAM_CUSOLVER(cusolverDnDgetrf);
  GLEAM_CUSOLVER(cusolverDnXgetrs);
  GLEAM_CUSOLVER(cusolverDnSetStream);
  GLEAM_CUSOLVER(cusolverDnGetStream);
  GLEAM_CUSOLVER(cusolverDnDestroy);
  GLEAM_CUSOLVER(cusolverDnDestroyParams);
  GLEAM_CUSOLVER(cusolverDnIRSInfosGetResidualHistory);
  GLEAM_CUSOLVER(cusolverDnSpotrfBatched);
#undef GLEAM_CUSOLVER
  // A handle this process never made is CUSOLVER_STATUS_NOT_INITIALIZED,
  // before the arguments are looked at, and nothing is sent (there is no
  // server to send it to).
  int foreign[64] = {};
  auto* handle = reinterpret_cast<cusolverDnHandle_t>(foreign);
  double a[4] = {};
  int info = 0;
  CHECK(cusolverDnDgetrf(handle, 2, 2, a, 2, a, nullptr, &info)
        == CUSOLVER_STATUS_NOT_INITIALIZED);
  CHECK(cusolverDnDgetrf(handle, -1, 2, a, 2, a, nullptr, &info)
        == CUSOLVER_STATUS_NOT_INITIALIZED);
  CHECK(cusolverDnDgetrf(nullptr, 2, 2, a, 2, a, nullptr, &info)
        == CUSOLVER_STATUS_NOT_INITIALIZED);
  CHECK(cusolverDnXgetrs(handle, nullptr, CUBLAS_OP_N, 2, 1, CUDA_R_64F, a, 2, nullptr,
                         CUDA_R_64F, a, 2, &info)
        == CUSOLVER_STATUS_NOT_INITIALIZED);
  CHECK(cusolverDnSetStream(handle, nullptr) == CUSOLVER_STATUS_NOT_INITIALIZED);
  cudaStream_t stream = nullptr;
  CHECK(cusolverDnGetStream(handle, &stream) == CUSOLVER_STATUS_NOT_INITIALIZED);
  CHECK(cusolverDnDestroy(handle) == CUSOLVER_STATUS_NOT_INITIALIZED);
  CHECK(cusolverDnDestroyParams(nullptr) == CUSOLVER_STATUS_NOT_INITIALIZED);
  // Iterative refinement's residual history is memory inside the server's
  // library: a defined error, never success. (The sparse API's exports are
  // deprecated in the vendor's header, so they are checked through the spec
  // above.)
  void* history = &info;
  CHECK(cusolverDnIRSInfosGetResidualHistory(reinterpret_cast<cusolverDnIRSInfos_t>(foreign),
                                             &history)
        == CUSOLVER_STATUS_NOT_SUPPORTED);
  CHECK(history == &info);
  float* farrays[1] = {nullptr};
  CHECK(cusolverDnSpotrfBatched(handle, CUBLAS_FILL_MODE_LOWER, 1, farrays, 1, &info, 1)
        == CUSOLVER_STATUS_NOT_INITIALIZED);
  dlclose(lib);
}
