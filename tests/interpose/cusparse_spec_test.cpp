// The cuSPARSE surface: cusparse.spec names exactly the vendor's exports,
// each in one class, with unique ids; the built libcusparse.so.12 exports
// exactly those names with the vendor's symbol version and SONAME, and the
// generated name lists agree with the spec; what is
// refused or answered at the call (a handle the process does not hold,
// negative sizes, bad enums, unsupported functions, status names) needs
// no server. Prints the coverage line.
#include "tests/interpose/library_spec.hpp"
#include "tests/support/files.hpp"
#include "tests/support/gpu_probe.hpp"

#include <catch2/catch.hpp>
#include <cusparse.h>
#include <dlfcn.h>

#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace {

using gleam::test::spec::names_of;
using gleam::test::spec::read_spec;

constexpr const char* version = "libcusparse.so.12";
const std::string vendor = "/usr/local/cuda/lib64/libcusparse.so.12";

std::string built() {
  return gleam::test::build_path("lib/libcusparse.so.12");
}

} // namespace

TEST_CASE("cusparse.spec names every vendor export once", "[interpose][spec][cusparse]") {
  auto spec = read_spec("cusparse");
  auto names = gleam::test::spec::committed_names(version);
  // libcusparse.so.12 of CUDA 13.0 (cuSPARSE 12.6) exports 423 functions.
  CHECK(names.size() == 423);
  CHECK(names_of(spec) == std::set<std::string>(names.begin(), names.end()));
  CHECK(spec.size() == names.size());
  std::map<std::string, int> classes;
  std::set<std::string> ids;
  for (const auto& e : spec) {
    INFO(e.name);
    REQUIRE(e.classes.size() == 1);
    ++classes[e.classes.front()];
    // Everything generated travels as a LibraryCall of its pinned id; the
    // manual functions answer locally.
    if (e.classes.front() == "generated")
      CHECK_FALSE(e.id.empty());
    if (!e.id.empty())
      CHECK(ids.insert(e.id).second);
  }
  auto real = classes["generated"] + classes["manual"];
  WARN("cuSPARSE coverage: " << real << " of " << spec.size() << " exports real ("
                             << classes["generated"] << " generated, " << classes["manual"]
                             << " manual), " << classes["unsupported"] << " unsupported");
  CHECK(classes["generated"] == 98);
  CHECK(classes["manual"] == 8);
}

TEST_CASE("the committed cuSPARSE name list matches the installed vendor library",
          "[interpose][spec][cusparse]") {
  gleam::test::spec::check_vendor_list(vendor, version);
}

TEST_CASE("the built libcusparse.so.12 exports exactly the spec's names, versioned",
          "[interpose][library][cusparse]") {
  gleam::test::spec::check_built_exports("cusparse", version);
  gleam::test::spec::check_generated_lists("cusparse");
}

TEST_CASE("cuSPARSE calls refused or answered at the call need no server",
          "[interpose][library][cusparse]") {
  auto* lib = dlopen(built().c_str(), RTLD_NOW | RTLD_LOCAL);
  INFO("dlopen: " << (lib ? "" : dlerror()));
  REQUIRE(lib != nullptr);
#define GLEAM_CUSPARSE(name)                                                   \
  auto name = reinterpret_cast<decltype(&::name)>(dlsym(lib, #name));          \
  REQUIRE(name != nullptr)
  GLEAM_CUSPARSE(cusparseSetStream);
  GLEAM_CUSPARSE(cusparseDestroy);
  GLEAM_CUSPARSE(cusparseGetStream);
  GLEAM_CUSPARSE(cusparseSpMM);
  GLEAM_CUSPARSE(cusparseDestroySpMat);
  GLEAM_CUSPARSE(cusparseCreateCsr);
  GLEAM_CUSPARSE(cusparseCreateDnMat);
  GLEAM_CUSPARSE(cusparseGetErrorName);
  GLEAM_CUSPARSE(cusparseGetErrorString);
  GLEAM_CUSPARSE(cusparseGetMatType);
  GLEAM_CUSPARSE(cusparseScsrgeam2);
  GLEAM_CUSPARSE(cusparseSbsrmv);
#undef GLEAM_CUSPARSE
  // Handles and descriptors this process never made: NOT_INITIALIZED, and
  // nothing is sent (there is no server to send it to).
  // A handle of another library's memory: readable, but no client object.
  alignas(8) unsigned char junk[64] = {};
  auto* foreign = reinterpret_cast<cusparseHandle_t>(junk);
  CHECK(cusparseSetStream(foreign, nullptr) == CUSPARSE_STATUS_NOT_INITIALIZED);
  CHECK(cusparseDestroy(nullptr) == CUSPARSE_STATUS_NOT_INITIALIZED);
  cudaStream_t s = nullptr;
  CHECK(cusparseGetStream(nullptr, &s) == CUSPARSE_STATUS_NOT_INITIALIZED);
  CHECK(cusparseDestroySpMat(nullptr) == CUSPARSE_STATUS_NOT_INITIALIZED);
  float one = 1.0f;
  CHECK(cusparseSpMM(foreign, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE,
                     &one, nullptr, nullptr, &one, nullptr, CUDA_R_32F, CUSPARSE_SPMM_ALG_DEFAULT,
                     nullptr)
        == CUSPARSE_STATUS_NOT_INITIALIZED);
  // Negative sizes and unknown enums are refused before a descriptor is
  // made.
  cusparseSpMatDescr_t m = nullptr;
  CHECK(cusparseCreateCsr(&m, -1, 4, 0, nullptr, nullptr, nullptr, CUSPARSE_INDEX_32I,
                          CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F)
        == CUSPARSE_STATUS_INVALID_VALUE);
  CHECK(cusparseCreateCsr(&m, 3, 4, 0, nullptr, nullptr, nullptr,
                          static_cast<cusparseIndexType_t>(9), CUSPARSE_INDEX_32I,
                          CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F)
        == CUSPARSE_STATUS_INVALID_VALUE);
  CHECK(m == nullptr);
  cusparseDnMatDescr_t d = nullptr;
  // Column-major 4 x 2 with a leading dimension below 4.
  CHECK(cusparseCreateDnMat(&d, 4, 2, 3, nullptr, CUDA_R_32F, CUSPARSE_ORDER_COL)
        == CUSPARSE_STATUS_INVALID_VALUE);
  CHECK(cusparseCreateDnMat(&d, 4, 2, 4, nullptr, CUDA_R_32F, static_cast<cusparseOrder_t>(7))
        == CUSPARSE_STATUS_INVALID_VALUE);
  CHECK(d == nullptr);
  // Answered locally, as the vendor's.
  CHECK(std::string(cusparseGetErrorName(CUSPARSE_STATUS_INVALID_VALUE))
        == "CUSPARSE_STATUS_INVALID_VALUE");
  CHECK(std::string(cusparseGetErrorString(CUSPARSE_STATUS_SUCCESS)) == "success");
  CHECK(cusparseGetMatType(nullptr) == CUSPARSE_MATRIX_TYPE_GENERAL);
  // Unsupported functions: a defined error, never success.
  CHECK(cusparseScsrgeam2(foreign, 1, 1, &one, nullptr, 0, nullptr, nullptr, nullptr, &one,
                          nullptr, 0, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                          nullptr, nullptr)
        == CUSPARSE_STATUS_NOT_SUPPORTED);
  CHECK(cusparseSbsrmv(foreign, CUSPARSE_DIRECTION_ROW, CUSPARSE_OPERATION_NON_TRANSPOSE, 1, 1,
                       1, &one, nullptr, nullptr, nullptr, nullptr, 1, nullptr, &one, nullptr)
        == CUSPARSE_STATUS_NOT_SUPPORTED);
  dlclose(lib);
}

TEST_CASE("a cuSPARSE program binds to our library and fails cleanly without a server",
          "[interpose][library][cusparse]") {
  // No server: the program's first cuSPARSE call says the library could
  // not be initialized, and it exits 1.
  gleam::test::spec::check_program_binds(
    "cusparse_spmm", version, "cusparseCreate",
    "cusparseCreate(&handle) failed: CUSPARSE_STATUS_NOT_INITIALIZED");
}
