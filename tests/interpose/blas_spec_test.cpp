// The cuBLAS and cuBLASLt surfaces: each spec names exactly the vendor's
// exports, each in one class; the built libraries export exactly those
// names with the vendor's symbol version; the generated lists follow the
// specs; unsupported functions fail with CUBLAS_STATUS_NOT_SUPPORTED; the
// calls answered locally give the vendor's answers without a server.
#include "tests/interpose/library_spec.hpp"
#include "tests/support/files.hpp"
#include "tests/support/gpu_probe.hpp"

#include <catch2/catch.hpp>
#include <cublasLt.h>
#include <cublas_api.h>
#include <dlfcn.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

using gleam::test::lines_of;
using gleam::test::read_file;

using gleam::test::spec::entry;
using gleam::test::spec::exported_by;
using gleam::test::spec::names_of;
using gleam::test::spec::read_spec;
using gleam::test::spec::trim;

std::string vendor_path(const std::string& lib) {
  return "/usr/local/cuda/lib64/lib" + lib + ".so.13";
}

std::vector<std::string> committed_names(const std::string& lib) {
  return lines_of(read_file(gleam::test::source_path("interpose/spec/lib" + lib + ".so.13.symbols")));
}

std::string built(const std::string& lib) {
  return gleam::test::build_path("lib/lib" + lib + ".so.13");
}

/// The libraries and the vendor's export counts of CUDA 13.0.
const std::map<std::string, size_t> libraries = {{"cublas", 756}, {"cublasLt", 184}};

} // namespace

TEST_CASE("each BLAS spec names every vendor export once, in one class",
          "[interpose][spec][blas]") {
  for (const auto& [lib, count] : libraries) {
    INFO(lib);
    auto spec = read_spec(lib);
    auto vendor = committed_names(lib);
    CHECK(vendor.size() == count);
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
      CHECK((e.call == "async" || e.call == "local" || e.call == "handle" || e.call == "sync"));
    }
  }
}

TEST_CASE("the committed BLAS name lists match the installed vendor libraries",
          "[interpose][spec][blas]") {
  for (const auto& [lib, count] : libraries) {
    INFO(lib);
    if (!std::ifstream{vendor_path(lib)}.good()) {
      WARN("no vendor " << vendor_path(lib) << " to compare with; skipped");
      continue;
    }
    auto vendor = exported_by(vendor_path(lib), "lib" + lib + ".so.13");
    auto committed = committed_names(lib);
    CHECK(std::set<std::string>(vendor.versioned.begin(), vendor.versioned.end())
          == std::set<std::string>(committed.begin(), committed.end()));
    // The vendor versions every export: so must we.
    CHECK(vendor.other.empty());
  }
}

TEST_CASE("the PyTorch cuBLAS calls are hand-written, not stubs", "[interpose][spec][blas]") {
  std::set<std::string> manual;
  for (const auto& lib : {"cublas", "cublasLt"})
    for (const auto& e : read_spec(lib))
      if (e.classes.size() == 1 && e.classes.front() == "manual")
        manual.insert(e.name);
  for (const char* name :
       {"cublasCreate_v2", "cublasDestroy_v2", "cublasSetStream_v2", "cublasSetWorkspace_v2",
        "cublasSetMathMode", "cublasGetMathMode", "cublasGemmEx", "cublasGemmStridedBatchedEx",
        "cublasGemmBatchedEx", "cublasSgemm_v2", "cublasHgemm", "cublasSgemmStridedBatched",
        "cublasGetStatusString", "cublasGetVersion_v2", "cublasLtCreate",
        "cublasLtMatmulDescCreate", "cublasLtMatmulDescSetAttribute", "cublasLtMatmulDescDestroy",
        "cublasLtMatrixLayoutCreate", "cublasLtMatrixLayoutSetAttribute",
        "cublasLtMatrixLayoutDestroy", "cublasLtMatmulPreferenceCreate",
        "cublasLtMatmulPreferenceSetAttribute", "cublasLtMatmulPreferenceDestroy",
        "cublasLtMatmulAlgoGetHeuristic", "cublasLtMatmul", "cublasLtGetVersion",
        "cublasLtGetCudartVersion"}) {
    INFO(name);
    CHECK(manual.count(name) == 1);
  }
}

TEST_CASE("the generated BLAS name lists follow the specs", "[interpose][spec][blas]") {
  for (const auto& [lib, count] : libraries) {
    INFO(lib);
    auto spec = read_spec(lib);
    auto names = names_of(spec);
    auto symbols = lines_of(read_file(gleam::test::build_path("interpose/" + lib + "_symbols.txt")));
    CHECK(symbols == std::vector<std::string>(names.begin(), names.end()));
    std::set<std::string> manual, generated;
    size_t unsupported = 0;
    for (const auto& e : spec) {
      if (e.classes.front() == "manual")
        manual.insert(e.name);
      if (e.classes.front() == "generated")
        generated.insert(e.name);
      if (e.classes.front() == "unsupported")
        ++unsupported;
    }
    auto listed = lines_of(read_file(gleam::test::build_path("interpose/" + lib + "_manual.txt")));
    CHECK(listed == std::vector<std::string>(manual.begin(), manual.end()));
    auto stubs = lines_of(read_file(gleam::test::build_path("interpose/" + lib + "_unsupported.txt")));
    CHECK(stubs.size() == unsupported);
    CHECK(manual.size() + generated.size() + unsupported == count);
    if (lib == "cublas") {
      // "<name>\t<id>" per generated function, each id once.
      std::set<std::string> names;
      std::set<std::string> ids;
      for (const auto& line :
           lines_of(read_file(gleam::test::build_path("interpose/cublas_generated.txt")))) {
        auto tab = line.find('\t');
        REQUIRE(tab != std::string::npos);
        names.insert(line.substr(0, tab));
        CHECK(ids.insert(line.substr(tab + 1)).second);
      }
      CHECK(names == generated);
    }
  }
}

TEST_CASE("the built BLAS libraries export exactly their spec's names, versioned",
          "[interpose][library][blas]") {
  for (const auto& [lib, count] : libraries) {
    INFO(lib);
    auto version = "lib" + lib + ".so.13";
    auto exported = exported_by(built(lib), version);
    auto names = names_of(read_spec(lib));
    std::set<std::string> unique(exported.versioned.begin(), exported.versioned.end());
    CHECK(exported.versioned.size() == unique.size());
    CHECK(unique == names);
    for (const auto& name : names) {
      INFO("missing from the library: " << name);
      CHECK(unique.count(name) == 1);
    }
    INFO("first unexpected export: " << (exported.other.empty() ? "" : exported.other.front()));
    CHECK(exported.other.empty());
    // The version script the generator wrote lists the same names.
    auto map = read_file(gleam::test::build_path("interpose/" + lib + ".map"));
    CHECK(map.find(version + " {") != std::string::npos);
    size_t listed = 0;
    for (const auto& line : lines_of(map)) {
      auto t = trim(line);
      if (t.size() > 2 && t.back() == ';' && t != "*;" && t != "};" && t.find(':') == std::string::npos) {
        ++listed;
        INFO(t);
        CHECK(names.count(t.substr(0, t.size() - 1)) == 1);
      }
    }
    CHECK(listed == count);
    std::string out;
    REQUIRE(gleam::test::run_command("readelf -d '" + built(lib) + "'", out) == 0);
    CHECK(out.find("Library soname: [" + version + "]") != std::string::npos);
  }
}

TEST_CASE("unsupported BLAS functions fail with CUBLAS_STATUS_NOT_SUPPORTED",
          "[interpose][library][blas]") {
  auto* lib = dlopen(built("cublas").c_str(), RTLD_NOW | RTLD_LOCAL);
  INFO("dlopen: " << (lib ? "" : dlerror()));
  REQUIRE(lib != nullptr);
  auto* lt = dlopen(built("cublasLt").c_str(), RTLD_NOW | RTLD_LOCAL);
  REQUIRE(lt != nullptr);
  // Grouped batched gemms (host arrays of shapes per group) stay unsupported.
  auto grouped = reinterpret_cast<decltype(&cublasSgemmGroupedBatched)>(
    dlsym(lib, "cublasSgemmGroupedBatched"));
  // float cublasSnrm2(int n, const float* x, int incx), of cublas.h: without
  // cublasInit it returns 0 and leaves NOT_INITIALIZED for cublasGetError.
  using legacy_nrm2 = float (*)(int, const float*, int);
  auto legacy = reinterpret_cast<legacy_nrm2>(dlsym(lib, "cublasSnrm2"));
  auto get_error = reinterpret_cast<cublasStatus_t (*)()>(dlsym(lib, "cublasGetError"));
  // A vendor-internal export (no prototype): its stub reads no argument.
  auto lt_internal = reinterpret_cast<cublasStatus_t (*)()>(dlsym(lt, "cublasLtACCMatmul"));
  REQUIRE(grouped != nullptr);
  REQUIRE(legacy != nullptr);
  REQUIRE(get_error != nullptr);
  REQUIRE(lt_internal != nullptr);
  CHECK(grouped(nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                nullptr, nullptr, nullptr, nullptr, nullptr, 0, nullptr)
        == CUBLAS_STATUS_NOT_SUPPORTED);
  CHECK(legacy(4, nullptr, 1) == 0.0f);
  CHECK(get_error() == CUBLAS_STATUS_NOT_INITIALIZED);
  CHECK(get_error() == CUBLAS_STATUS_SUCCESS);
  CHECK(lt_internal() == CUBLAS_STATUS_NOT_SUPPORTED);
  dlclose(lt);
  dlclose(lib);
}

TEST_CASE("BLAS calls answered locally match the vendor without a server",
          "[interpose][library][blas]") {
  auto* lib = dlopen(built("cublas").c_str(), RTLD_NOW | RTLD_LOCAL);
  REQUIRE(lib != nullptr);
  auto* lt = dlopen(built("cublasLt").c_str(), RTLD_NOW | RTLD_LOCAL);
  REQUIRE(lt != nullptr);
  auto status_string = reinterpret_cast<decltype(&cublasGetStatusString)>(
    dlsym(lib, "cublasGetStatusString"));
  auto status_name = reinterpret_cast<decltype(&cublasGetStatusName)>(
    dlsym(lib, "cublasGetStatusName"));
  auto version = reinterpret_cast<decltype(&cublasGetVersion_v2)>(dlsym(lib, "cublasGetVersion_v2"));
  auto lt_version = reinterpret_cast<decltype(&cublasLtGetVersion)>(dlsym(lt, "cublasLtGetVersion"));
  auto get_math = reinterpret_cast<decltype(&cublasGetMathMode)>(dlsym(lib, "cublasGetMathMode"));
  REQUIRE(status_string != nullptr);
  REQUIRE(status_name != nullptr);
  REQUIRE(version != nullptr);
  REQUIRE(lt_version != nullptr);
  REQUIRE(get_math != nullptr);
  CHECK(std::string{status_string(CUBLAS_STATUS_INVALID_VALUE)}
        == "an unsupported value or parameter was passed to the function");
  CHECK(std::string{status_name(CUBLAS_STATUS_NOT_SUPPORTED)} == "CUBLAS_STATUS_NOT_SUPPORTED");
  CHECK(std::string{status_string(static_cast<cublasStatus_t>(2))} == "unrecognized status");
  int v = 0;
  CHECK(version(nullptr, &v) == CUBLAS_STATUS_SUCCESS);
  CHECK(v == CUBLAS_VERSION);
  CHECK(lt_version() == CUBLAS_VERSION);
  // A handle that is not ours is refused without touching it.
  cublasMath_t mode;
  CHECK(get_math(nullptr, &mode) == CUBLAS_STATUS_NOT_INITIALIZED);

  // Where the vendor library is installed, the local answers are its answers.
  if (auto* vendor = dlopen(vendor_path("cublas").c_str(), RTLD_NOW | RTLD_LOCAL)) {
    auto vs = reinterpret_cast<decltype(&cublasGetStatusString)>(dlsym(vendor, "cublasGetStatusString"));
    auto vn = reinterpret_cast<decltype(&cublasGetStatusName)>(dlsym(vendor, "cublasGetStatusName"));
    auto vv = reinterpret_cast<decltype(&cublasGetVersion_v2)>(dlsym(vendor, "cublasGetVersion_v2"));
    REQUIRE(vs != nullptr);
    for (int s : {0, 1, 2, 3, 7, 8, 11, 13, 14, 15, 16, 99}) {
      INFO("status " << s);
      CHECK(std::string{status_string(static_cast<cublasStatus_t>(s))}
            == vs(static_cast<cublasStatus_t>(s)));
      CHECK(std::string{status_name(static_cast<cublasStatus_t>(s))}
            == vn(static_cast<cublasStatus_t>(s)));
    }
    int vendor_version = 0;
    CHECK(vv(nullptr, &vendor_version) == CUBLAS_STATUS_SUCCESS);
    CHECK(v == vendor_version);
    dlclose(vendor);
  }
  dlclose(lt);
  dlclose(lib);
}

TEST_CASE("cuBLASLt descriptors keep their attributes on the client", "[interpose][library][blas]") {
  auto* lt = dlopen(built("cublasLt").c_str(), RTLD_NOW | RTLD_LOCAL);
  REQUIRE(lt != nullptr);
#define GLEAM_LT(name) auto name = reinterpret_cast<decltype(&::name)>(dlsym(lt, #name)); REQUIRE(name != nullptr)
  GLEAM_LT(cublasLtMatmulDescCreate);
  GLEAM_LT(cublasLtMatmulDescSetAttribute);
  GLEAM_LT(cublasLtMatmulDescGetAttribute);
  GLEAM_LT(cublasLtMatmulDescDestroy);
  GLEAM_LT(cublasLtMatrixLayoutCreate);
  GLEAM_LT(cublasLtMatrixLayoutGetAttribute);
  GLEAM_LT(cublasLtMatrixLayoutSetAttribute);
  GLEAM_LT(cublasLtMatrixLayoutDestroy);
  GLEAM_LT(cublasLtMatmul);
#undef GLEAM_LT
  cublasLtMatmulDesc_t desc = nullptr;
  REQUIRE(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F) == CUBLAS_STATUS_SUCCESS);
  int32_t trans = CUBLAS_OP_T;
  CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &trans, sizeof(trans))
        == CUBLAS_STATUS_SUCCESS);
  int32_t back = -1;
  size_t written = 0;
  CHECK(cublasLtMatmulDescGetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &back, sizeof(back),
                                       &written)
        == CUBLAS_STATUS_SUCCESS);
  CHECK(back == CUBLAS_OP_T);
  CHECK(written == sizeof(back));
  int32_t compute = 0;
  CHECK(cublasLtMatmulDescGetAttribute(desc, CUBLASLT_MATMUL_DESC_COMPUTE_TYPE, &compute,
                                       sizeof(compute), &written)
        == CUBLAS_STATUS_SUCCESS);
  CHECK(compute == CUBLAS_COMPUTE_32F);
  CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, nullptr, 4)
        == CUBLAS_STATUS_INVALID_VALUE);

  cublasLtMatrixLayout_t layout = nullptr;
  REQUIRE(cublasLtMatrixLayoutCreate(&layout, CUDA_R_16F, 64, 32, 64) == CUBLAS_STATUS_SUCCESS);
  int32_t batch = 4;
  CHECK(cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch,
                                         sizeof(batch))
        == CUBLAS_STATUS_SUCCESS);
  uint64_t rows = 0;
  CHECK(cublasLtMatrixLayoutGetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_ROWS, &rows, sizeof(rows),
                                         &written)
        == CUBLAS_STATUS_SUCCESS);
  CHECK(rows == 64);
  int32_t batch_back = 0;
  CHECK(cublasLtMatrixLayoutGetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch_back,
                                         sizeof(batch_back), &written)
        == CUBLAS_STATUS_SUCCESS);
  CHECK(batch_back == 4);
  // A descriptor passed where a layout is expected is refused locally.
  float one = 1;
  CHECK(cublasLtMatmul(nullptr, desc, &one, nullptr, layout, nullptr, layout, &one, nullptr,
                       layout, nullptr, layout, nullptr, nullptr, 0, nullptr)
        == CUBLAS_STATUS_NOT_INITIALIZED);
  CHECK(cublasLtMatrixLayoutDestroy(layout) == CUBLAS_STATUS_SUCCESS);
  CHECK(cublasLtMatmulDescDestroy(desc) == CUBLAS_STATUS_SUCCESS);
  dlclose(lt);
}

namespace {

/// What the cuBLASLt logger callback received.
std::vector<std::string>& logged_lines() {
  static std::vector<std::string> lines;
  return lines;
}

void collect(int level, const char* function, const char* message) {
  logged_lines().push_back(std::to_string(level) + " " + function + " " + message);
}

} // namespace

TEST_CASE("cuBLASLt transform and emulation descriptors keep the vendor's attributes on the "
          "client",
          "[interpose][library][blas]") {
  auto* lt = dlopen(built("cublasLt").c_str(), RTLD_NOW | RTLD_LOCAL);
  REQUIRE(lt != nullptr);
#define GLEAM_LT(name) auto name = reinterpret_cast<decltype(&::name)>(dlsym(lt, #name)); REQUIRE(name != nullptr)
  GLEAM_LT(cublasLtMatrixTransformDescCreate);
  GLEAM_LT(cublasLtMatrixTransformDescSetAttribute);
  GLEAM_LT(cublasLtMatrixTransformDescGetAttribute);
  GLEAM_LT(cublasLtMatrixTransformDescDestroy);
  GLEAM_LT(cublasLtMatrixTransform);
  GLEAM_LT(cublasLtEmulationDescCreate);
  GLEAM_LT(cublasLtEmulationDescSetAttribute);
  GLEAM_LT(cublasLtEmulationDescGetAttribute);
  GLEAM_LT(cublasLtEmulationDescDestroy);
  GLEAM_LT(cublasLtMatmulAlgoGetIds);
  GLEAM_LT(cublasLtMatmulAlgoInit);
  GLEAM_LT(cublasLtMatmulAlgoCheck);
#undef GLEAM_LT
  cublasLtMatrixTransformDesc_t t = nullptr;
  REQUIRE(cublasLtMatrixTransformDescCreate(&t, CUDA_R_16F) == CUBLAS_STATUS_SUCCESS);
  int32_t value = -1;
  size_t written = 0;
  // Defaults: the scale type given, host pointer mode, no transposes.
  CHECK(cublasLtMatrixTransformDescGetAttribute(t, CUBLASLT_MATRIX_TRANSFORM_DESC_SCALE_TYPE,
                                                &value, sizeof(value), &written)
        == CUBLAS_STATUS_SUCCESS);
  CHECK(value == CUDA_R_16F);
  CHECK(written == sizeof(value));
  CHECK(cublasLtMatrixTransformDescGetAttribute(t, CUBLASLT_MATRIX_TRANSFORM_DESC_POINTER_MODE,
                                                &value, sizeof(value), &written)
        == CUBLAS_STATUS_SUCCESS);
  CHECK(value == CUBLASLT_POINTER_MODE_HOST);
  CHECK(cublasLtMatrixTransformDescGetAttribute(t, CUBLASLT_MATRIX_TRANSFORM_DESC_TRANSB, &value,
                                                sizeof(value), &written)
        == CUBLAS_STATUS_SUCCESS);
  CHECK(value == CUBLAS_OP_N);
  // Round trip; the size asked with sizeInBytes 0.
  int32_t trans = CUBLAS_OP_T;
  CHECK(cublasLtMatrixTransformDescSetAttribute(t, CUBLASLT_MATRIX_TRANSFORM_DESC_TRANSA, &trans,
                                                sizeof(trans))
        == CUBLAS_STATUS_SUCCESS);
  written = 0;
  CHECK(cublasLtMatrixTransformDescGetAttribute(t, CUBLASLT_MATRIX_TRANSFORM_DESC_TRANSA, nullptr,
                                                0, &written)
        == CUBLAS_STATUS_SUCCESS);
  CHECK(written == sizeof(int32_t));
  CHECK(cublasLtMatrixTransformDescGetAttribute(t, CUBLASLT_MATRIX_TRANSFORM_DESC_TRANSA, &value,
                                                sizeof(value), &written)
        == CUBLAS_STATUS_SUCCESS);
  CHECK(value == CUBLAS_OP_T);
  // The vendor's refusals: a size other than the attribute's, NULL buf,
  // sizeInBytes 0 without sizeWritten, an attribute the descriptor lacks.
  int64_t wide = CUBLAS_OP_T;
  CHECK(cublasLtMatrixTransformDescSetAttribute(t, CUBLASLT_MATRIX_TRANSFORM_DESC_TRANSA, &wide,
                                                sizeof(wide))
        == CUBLAS_STATUS_INVALID_VALUE);
  CHECK(cublasLtMatrixTransformDescSetAttribute(t, CUBLASLT_MATRIX_TRANSFORM_DESC_TRANSA, nullptr,
                                                sizeof(trans))
        == CUBLAS_STATUS_INVALID_VALUE);
  CHECK(cublasLtMatrixTransformDescGetAttribute(t, CUBLASLT_MATRIX_TRANSFORM_DESC_TRANSA, &wide,
                                                sizeof(wide), &written)
        == CUBLAS_STATUS_INVALID_VALUE);
  CHECK(cublasLtMatrixTransformDescGetAttribute(t, CUBLASLT_MATRIX_TRANSFORM_DESC_TRANSA, nullptr,
                                                0, nullptr)
        == CUBLAS_STATUS_INVALID_VALUE);
  CHECK(cublasLtMatrixTransformDescSetAttribute(
          t, static_cast<cublasLtMatrixTransformDescAttributes_t>(17), &trans, sizeof(trans))
        == CUBLAS_STATUS_INVALID_VALUE);
  // The transform refuses what is not a handle before anything travels.
  float one = 1;
  CHECK(cublasLtMatrixTransform(nullptr, t, &one, nullptr, nullptr, &one, nullptr, nullptr,
                                nullptr, nullptr, nullptr)
        == CUBLAS_STATUS_NOT_INITIALIZED);
  CHECK(cublasLtMatrixTransformDescDestroy(t) == CUBLAS_STATUS_SUCCESS);
  CHECK(cublasLtMatrixTransformDescDestroy(nullptr) == CUBLAS_STATUS_SUCCESS);

  cublasLtEmulationDesc_t e = nullptr;
  REQUIRE(cublasLtEmulationDescCreate(&e) == CUBLAS_STATUS_SUCCESS);
  CHECK(cublasLtEmulationDescGetAttribute(e, CUBLASLT_EMULATION_DESC_SPECIAL_VALUES_SUPPORT,
                                          &value, sizeof(value), &written)
        == CUBLAS_STATUS_SUCCESS);
  CHECK(value == 0xFFFF);
  void* counter = reinterpret_cast<void*>(1);
  CHECK(cublasLtEmulationDescGetAttribute(
          e, CUBLASLT_EMULATION_DESC_FIXEDPOINT_MANTISSA_BIT_COUNT_POINTER, &counter,
          sizeof(counter), &written)
        == CUBLAS_STATUS_SUCCESS);
  CHECK(counter == nullptr);
  int32_t bits = 40;
  CHECK(cublasLtEmulationDescSetAttribute(e, CUBLASLT_EMULATION_DESC_FIXEDPOINT_MAX_MANTISSA_BIT_COUNT,
                                          &bits, sizeof(bits))
        == CUBLAS_STATUS_SUCCESS);
  value = 0;
  CHECK(cublasLtEmulationDescGetAttribute(e, CUBLASLT_EMULATION_DESC_FIXEDPOINT_MAX_MANTISSA_BIT_COUNT,
                                          &value, sizeof(value), &written)
        == CUBLAS_STATUS_SUCCESS);
  CHECK(value == 40);
  CHECK(cublasLtEmulationDescSetAttribute(e, CUBLASLT_EMULATION_DESC_STRATEGY, &wide, sizeof(wide))
        == CUBLAS_STATUS_INVALID_VALUE);
  CHECK(cublasLtEmulationDescDestroy(e) == CUBLAS_STATUS_SUCCESS);

  // The algo-level calls refuse what is not a handle at the call.
  int ids[4];
  int count = 0;
  CHECK(cublasLtMatmulAlgoGetIds(nullptr, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F,
                                 CUDA_R_32F, CUDA_R_32F, 4, ids, &count)
        == CUBLAS_STATUS_NOT_INITIALIZED);
  cublasLtMatmulAlgo_t algo;
  CHECK(cublasLtMatmulAlgoInit(nullptr, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F,
                               CUDA_R_32F, CUDA_R_32F, 0, &algo)
        == CUBLAS_STATUS_NOT_INITIALIZED);
  CHECK(cublasLtMatmulAlgoCheck(nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, &algo,
                                nullptr)
        == CUBLAS_STATUS_NOT_INITIALIZED);
  dlclose(lt);
}

TEST_CASE("cuBLASLt descriptors initialized in the app's buffers (the vendor's inline *Init)",
          "[interpose][library][blas]") {
  auto* lt = dlopen(built("cublasLt").c_str(), RTLD_NOW | RTLD_LOCAL);
  REQUIRE(lt != nullptr);
#define GLEAM_LT(name) auto name = reinterpret_cast<decltype(&::name)>(dlsym(lt, #name)); REQUIRE(name != nullptr)
  GLEAM_LT(cublasLtMatrixLayoutInit_internal);
  GLEAM_LT(cublasLtMatrixLayoutGetAttribute);
  GLEAM_LT(cublasLtMatrixLayoutSetAttribute);
  GLEAM_LT(cublasLtMatmulDescInit_internal);
  GLEAM_LT(cublasLtMatmulDescGetAttribute);
  GLEAM_LT(cublasLtMatmulPreferenceInit_internal);
  GLEAM_LT(cublasLtMatmulPreferenceGetAttribute);
  GLEAM_LT(cublasLtMatrixTransformDescInit_internal);
  GLEAM_LT(cublasLtMatrixTransformDescGetAttribute);
  GLEAM_LT(cublasLtEmulationDescInit_internal);
  GLEAM_LT(cublasLtEmulationDescGetAttribute);
#undef GLEAM_LT
  size_t written = 0;
  // What cublasLtMatrixLayoutInit(&layout, CUDA_R_32F, 5, 3, 8) compiles to.
  cublasLtMatrixLayoutOpaque_t layout;
  REQUIRE(cublasLtMatrixLayoutInit_internal(&layout, sizeof(layout), CUDA_R_32F, 5, 3, 8)
          == CUBLAS_STATUS_SUCCESS);
  uint64_t rows = 0;
  CHECK(cublasLtMatrixLayoutGetAttribute(&layout, CUBLASLT_MATRIX_LAYOUT_ROWS, &rows, sizeof(rows),
                                         &written)
        == CUBLAS_STATUS_SUCCESS);
  CHECK(rows == 5);
  int32_t order = CUBLASLT_ORDER_ROW;
  CHECK(cublasLtMatrixLayoutSetAttribute(&layout, CUBLASLT_MATRIX_LAYOUT_ORDER, &order,
                                         sizeof(order))
        == CUBLAS_STATUS_SUCCESS);
  // A copy of the struct names the same descriptor.
  cublasLtMatrixLayoutOpaque_t copy = layout;
  order = -1;
  CHECK(cublasLtMatrixLayoutGetAttribute(&copy, CUBLASLT_MATRIX_LAYOUT_ORDER, &order,
                                         sizeof(order), &written)
        == CUBLAS_STATUS_SUCCESS);
  CHECK(order == CUBLASLT_ORDER_ROW);
  // Initializing the buffer again starts afresh.
  REQUIRE(cublasLtMatrixLayoutInit_internal(&layout, sizeof(layout), CUDA_R_16F, 9, 3, 9)
          == CUBLAS_STATUS_SUCCESS);
  CHECK(cublasLtMatrixLayoutGetAttribute(&layout, CUBLASLT_MATRIX_LAYOUT_ROWS, &rows, sizeof(rows),
                                         &written)
        == CUBLAS_STATUS_SUCCESS);
  CHECK(rows == 9);
  CHECK(cublasLtMatrixLayoutGetAttribute(&layout, CUBLASLT_MATRIX_LAYOUT_ORDER, &order,
                                         sizeof(order), &written)
        == CUBLAS_STATUS_SUCCESS);
  CHECK(order == CUBLASLT_ORDER_COL);
  // Too small a buffer: CUBLAS_STATUS_ALLOC_FAILED, as documented.
  alignas(8) unsigned char small[32];
  CHECK(cublasLtMatrixLayoutInit_internal(reinterpret_cast<cublasLtMatrixLayout_t>(small),
                                          sizeof(small), CUDA_R_32F, 5, 3, 8)
        == CUBLAS_STATUS_ALLOC_FAILED);

  cublasLtMatmulDescOpaque_t desc;
  CHECK(cublasLtMatmulDescInit_internal(&desc, sizeof(cublasLtMatrixLayoutOpaque_t),
                                        CUBLAS_COMPUTE_32F, CUDA_R_32F)
        == CUBLAS_STATUS_ALLOC_FAILED);
  REQUIRE(cublasLtMatmulDescInit_internal(&desc, sizeof(desc), CUBLAS_COMPUTE_32F_FAST_TF32,
                                          CUDA_R_32F)
          == CUBLAS_STATUS_SUCCESS);
  int32_t compute = 0;
  CHECK(cublasLtMatmulDescGetAttribute(&desc, CUBLASLT_MATMUL_DESC_COMPUTE_TYPE, &compute,
                                       sizeof(compute), &written)
        == CUBLAS_STATUS_SUCCESS);
  CHECK(compute == CUBLAS_COMPUTE_32F_FAST_TF32);
  // A layout is not a matmul descriptor.
  CHECK(cublasLtMatmulDescGetAttribute(reinterpret_cast<cublasLtMatmulDesc_t>(&layout),
                                       CUBLASLT_MATMUL_DESC_COMPUTE_TYPE, &compute,
                                       sizeof(compute), &written)
        == CUBLAS_STATUS_INVALID_VALUE);

  cublasLtMatmulPreferenceOpaque_t pref;
  REQUIRE(cublasLtMatmulPreferenceInit_internal(&pref, sizeof(pref)) == CUBLAS_STATUS_SUCCESS);
  uint64_t workspace = 1;
  CHECK(cublasLtMatmulPreferenceGetAttribute(&pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                             &workspace, sizeof(workspace), &written)
        == CUBLAS_STATUS_SUCCESS);
  CHECK(workspace == 0);

  cublasLtMatrixTransformDescOpaque_t transform;
  REQUIRE(cublasLtMatrixTransformDescInit_internal(&transform, sizeof(transform), CUDA_R_64F)
          == CUBLAS_STATUS_SUCCESS);
  int32_t scale = 0;
  CHECK(cublasLtMatrixTransformDescGetAttribute(&transform,
                                                CUBLASLT_MATRIX_TRANSFORM_DESC_SCALE_TYPE, &scale,
                                                sizeof(scale), &written)
        == CUBLAS_STATUS_SUCCESS);
  CHECK(scale == CUDA_R_64F);

  cublasLtEmulationDescOpaque_t emulation;
  REQUIRE(cublasLtEmulationDescInit_internal(&emulation, sizeof(emulation))
          == CUBLAS_STATUS_SUCCESS);
  int32_t strategy = -1;
  CHECK(cublasLtEmulationDescGetAttribute(&emulation, CUBLASLT_EMULATION_DESC_STRATEGY, &strategy,
                                          sizeof(strategy), &written)
        == CUBLAS_STATUS_SUCCESS);
  CHECK(strategy == 0);
  CHECK(cublasLtEmulationDescInit_internal(nullptr, sizeof(emulation))
        == CUBLAS_STATUS_INVALID_VALUE);
  dlclose(lt);
}

TEST_CASE("the cuBLASLt logger logs the app's calls on the client", "[interpose][library][blas]") {
  auto* lt = dlopen(built("cublasLt").c_str(), RTLD_NOW | RTLD_LOCAL);
  REQUIRE(lt != nullptr);
#define GLEAM_LT(name) auto name = reinterpret_cast<decltype(&::name)>(dlsym(lt, #name)); REQUIRE(name != nullptr)
  GLEAM_LT(cublasLtLoggerSetLevel);
  GLEAM_LT(cublasLtLoggerSetMask);
  GLEAM_LT(cublasLtLoggerSetCallback);
  GLEAM_LT(cublasLtLoggerSetFile);
  GLEAM_LT(cublasLtLoggerOpenFile);
  GLEAM_LT(cublasLtLoggerForceDisable);
  GLEAM_LT(cublasLtEmulationDescCreate);
  GLEAM_LT(cublasLtEmulationDescSetAttribute);
  GLEAM_LT(cublasLtEmulationDescDestroy);
#undef GLEAM_LT
  CHECK(cublasLtLoggerSetLevel(6) == CUBLAS_STATUS_INVALID_VALUE);
  CHECK(cublasLtLoggerSetLevel(-1) == CUBLAS_STATUS_INVALID_VALUE);
  logged_lines().clear();
  REQUIRE(cublasLtLoggerSetCallback(collect) == CUBLAS_STATUS_SUCCESS);
  // Errors only.
  REQUIRE(cublasLtLoggerSetLevel(1) == CUBLAS_STATUS_SUCCESS);
  cublasLtEmulationDesc_t e = nullptr;
  REQUIRE(cublasLtEmulationDescCreate(&e) == CUBLAS_STATUS_SUCCESS);
  int64_t wide = 0;
  CHECK(cublasLtEmulationDescSetAttribute(e, CUBLASLT_EMULATION_DESC_STRATEGY, &wide, sizeof(wide))
        == CUBLAS_STATUS_INVALID_VALUE);
  REQUIRE(logged_lines().size() == 1);
  CHECK(logged_lines()[0]
        == "1 cublasLtEmulationDescSetAttribute failed with CUBLAS_STATUS_INVALID_VALUE");
  // The API trace (mask 16) names every call.
  logged_lines().clear();
  REQUIRE(cublasLtLoggerSetMask(16) == CUBLAS_STATUS_SUCCESS);
  int32_t strategy = 0;
  CHECK(cublasLtEmulationDescSetAttribute(e, CUBLASLT_EMULATION_DESC_STRATEGY, &strategy,
                                          sizeof(strategy))
        == CUBLAS_STATUS_SUCCESS);
  REQUIRE(logged_lines().size() == 1);
  CHECK(logged_lines()[0] == "5 cublasLtEmulationDescSetAttribute called");
  // Without a callback, lines go to the file opened.
  auto path = gleam::test::build_path("tests/interpose_spec_test.lt.log");
  CHECK(cublasLtLoggerOpenFile("/nonexistent/dir/lt.log") == CUBLAS_STATUS_INVALID_VALUE);
  CHECK(cublasLtLoggerOpenFile(nullptr) == CUBLAS_STATUS_INVALID_VALUE);
  REQUIRE(cublasLtLoggerOpenFile(path.c_str()) == CUBLAS_STATUS_SUCCESS);
  REQUIRE(cublasLtLoggerSetCallback(nullptr) == CUBLAS_STATUS_SUCCESS);
  REQUIRE(cublasLtLoggerSetLevel(5) == CUBLAS_STATUS_SUCCESS);
  CHECK(cublasLtEmulationDescSetAttribute(e, CUBLASLT_EMULATION_DESC_STRATEGY, &wide, sizeof(wide))
        == CUBLAS_STATUS_INVALID_VALUE);
  auto text = read_file(path);
  CHECK(text.find("[cublasLt]") != std::string::npos);
  CHECK(text.find("[Api][cublasLtEmulationDescSetAttribute] called") != std::string::npos);
  CHECK(text.find("[Error][cublasLtEmulationDescSetAttribute] failed with "
                  "CUBLAS_STATUS_INVALID_VALUE")
        != std::string::npos);
  // ForceDisable wins over any later setting.
  REQUIRE(cublasLtLoggerForceDisable() == CUBLAS_STATUS_SUCCESS);
  REQUIRE(cublasLtLoggerSetCallback(collect) == CUBLAS_STATUS_SUCCESS);
  REQUIRE(cublasLtLoggerSetLevel(5) == CUBLAS_STATUS_SUCCESS);
  logged_lines().clear();
  CHECK(cublasLtEmulationDescSetAttribute(e, CUBLASLT_EMULATION_DESC_STRATEGY, &wide, sizeof(wide))
        == CUBLAS_STATUS_INVALID_VALUE);
  CHECK(logged_lines().empty());
  CHECK(cublasLtLoggerSetFile(stderr) == CUBLAS_STATUS_SUCCESS);
  CHECK(cublasLtEmulationDescDestroy(e) == CUBLAS_STATUS_SUCCESS);
  std::remove(path.c_str());
  dlclose(lt);
}

TEST_CASE("a cuBLAS program binds to our libraries and fails cleanly without a server",
          "[interpose][library][blas]") {
  auto program = gleam::test::build_path("tests/programs/cublas_gemm");
  if (!std::ifstream{program}.good()) {
    WARN("tests/programs/cublas_gemm is not built (no nvcc); skipped");
    return;
  }
  auto dir = gleam::test::build_path("tests/interpose_spec_test.d");
  std::string out;
  REQUIRE(gleam::test::run_command("mkdir -p '" + dir + "'", out) == 0);
  // Port 1 on the loopback refuses at once. LD_DEBUG=bindings shows where
  // the program's cuBLAS symbols went.
  auto rc = gleam::test::run_command(
    "GLEAM_SERVER=127.0.0.1:1 LD_DEBUG=bindings LD_DEBUG_OUTPUT='" + dir + "/bindings' "
      + "LD_LIBRARY_PATH='" + gleam::test::build_path("lib") + "' '" + program + "' 2>&1",
    out);
  INFO(out);
  CHECK(rc == 1);
  CHECK(out.find("cublasCreate(&handle) failed: CUBLAS_STATUS_NOT_INITIALIZED") != std::string::npos);
  std::string bindings;
  REQUIRE(gleam::test::run_command("cat '" + dir + "'/bindings.* && rm -f '" + dir + "'/bindings.*",
                                   bindings)
          == 0);
  auto line_of = [&](const std::string& symbol) {
    auto at = bindings.find("`" + symbol + "'");
    if (at == std::string::npos)
      return std::string{};
    auto start = bindings.rfind('\n', at);
    return bindings.substr(start + 1, bindings.find('\n', at) - start - 1);
  };
  auto create = line_of("cublasCreate_v2");
  INFO(create);
  CHECK(create.find(gleam::test::build_path("lib/libcublas.so.13")) != std::string::npos);
  CHECK(create.find("[libcublas.so.13]") != std::string::npos);
}

TEST_CASE("generated BLAS functions check their handle and arguments at the call",
          "[interpose][library][blas]") {
  // No server is needed: the checks the vendor makes at the call come first.
  auto* lib = dlopen(built("cublas").c_str(), RTLD_NOW | RTLD_LOCAL);
  INFO("dlopen: " << (lib ? "" : dlerror()));
  REQUIRE(lib != nullptr);
  auto saxpy = reinterpret_cast<decltype(&cublasSaxpy_v2)>(dlsym(lib, "cublasSaxpy_v2"));
  auto sgemv = reinterpret_cast<decltype(&cublasSgemv_v2)>(dlsym(lib, "cublasSgemv_v2"));
  REQUIRE(saxpy != nullptr);
  REQUIRE(sgemv != nullptr);
  float alpha = 1;
  CHECK(saxpy(nullptr, 4, &alpha, nullptr, 1, nullptr, 1) == CUBLAS_STATUS_NOT_INITIALIZED);
  int not_a_handle[16] = {};
  CHECK(sgemv(reinterpret_cast<cublasHandle_t>(not_a_handle), CUBLAS_OP_N, 2, 2, &alpha, nullptr,
              2, nullptr, 1, &alpha, nullptr, 1)
        == CUBLAS_STATUS_NOT_INITIALIZED);
  dlclose(lib);
}

TEST_CASE("coverage of every interposed library", "[interpose][spec][coverage]") {
  // Printed for the record (ctest -V, or the test binary with this tag):
  // per library, the functions remoted (manual or generated) against the
  // vendor's exports, and the most common reasons for the rest.
  for (const char* lib :
       {"cudart", "cuda", "cublas", "cublasLt", "curand", "cudnn", "cusolver"}) {
    auto spec = read_spec(lib);
    size_t manual = 0, generated = 0, unsupported = 0;
    std::map<std::string, size_t> reasons;
    for (const auto& e : spec) {
      REQUIRE(e.classes.size() == 1);
      if (e.classes.front() == "manual")
        ++manual;
      else if (e.classes.front() == "generated")
        ++generated;
      else {
        ++unsupported;
        ++reasons[e.reason];
      }
    }
    std::vector<std::pair<size_t, std::string>> top;
    for (const auto& [why, n] : reasons)
      top.emplace_back(n, why);
    std::sort(top.rbegin(), top.rend());
    std::printf("coverage %-9s %4zu functions: %4zu real (%zu manual, %zu generated), %4zu "
                "unsupported (%.0f%% real)\n",
                lib, spec.size(), manual + generated, manual, generated, unsupported,
                100.0 * static_cast<double>(manual + generated) / static_cast<double>(spec.size()));
    for (size_t i = 0; i < top.size() && i < 3; ++i)
      std::printf("  %4zu unsupported: %s\n", top[i].first, top[i].second.c_str());
    CHECK(manual + generated + unsupported == spec.size());
  }
}

TEST_CASE("every public cuBLASLt function is remoted", "[interpose][spec][coverage]") {
  // Of cublasLt.spec, only the vendor-internal exports (no cublasLt.h
  // declaration) are unsupported.
  size_t public_functions = 0, real = 0;
  for (const auto& e : read_spec("cublasLt")) {
    INFO(e.name);
    REQUIRE((e.header == "cublasLt.h" || e.header == "none"));
    if (e.header == "none") {
      CHECK(e.classes.front() == "unsupported");
      continue;
    }
    ++public_functions;
    CHECK(e.classes.front() != "unsupported");
    if (e.classes.front() != "unsupported")
      ++real;
  }
  std::printf("coverage cublasLt public (declared in cublasLt.h): %zu of %zu real\n", real,
              public_functions);
  CHECK(public_functions == 49);
}
