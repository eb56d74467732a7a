#include "executor/blas_api.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "executor/error.hpp"

namespace gleam::executor {

namespace {

/// A symbol only Gleam's interposer runtime defines (gleam::interpose::connect).
constexpr const char* interposer_marker = "_ZN5gleam9interpose7connectEv";

/// Directories to look in, by explicit path only: the plain SONAME could
/// resolve (through a gleam binary's RUNPATH) to Gleam's own libcublas.so.13
/// of the same bundle, and loading that would register the wire schema a
/// second time in this process.
std::vector<std::string> candidate_dirs(const std::string& dir) {
  if (!dir.empty())
    return {dir};
  std::vector<std::string> out;
  if (const char* env = std::getenv("GLEAM_CUBLAS_DIR"); env != nullptr && *env != '\0')
    out.emplace_back(env);
  out.emplace_back("/usr/local/cuda/lib64");
  out.emplace_back("/usr/local/cuda-13/lib64");
  return out;
}

bool exists(const std::string& path) {
  return ::access(path.c_str(), F_OK) == 0;
}

/// Opens `soname` from the first candidate directory that has it.
caf::expected<void*> open_library(const std::string& dir, const char* soname) {
  std::string tried;
  for (const auto& d : candidate_dirs(dir)) {
    auto path = d + "/" + soname;
    if (exists(d + "/libgleam_interpose.so")) {
      tried += fmt::format("\n  {}: Gleam's interposer directory, not the vendor's", d);
      continue;
    }
    if (!exists(path)) {
      tried += fmt::format("\n  {}: no such file", path);
      continue;
    }
    // RTLD_GLOBAL: libcublas.so.13 finds libcublasLt.so.13 loaded first.
    if (void* h = ::dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL)) {
      if (::dlsym(h, interposer_marker) != nullptr) {
        ::dlclose(h);
        tried += fmt::format("\n  {}: Gleam's interposer, not the vendor's library", path);
        continue;
      }
      return h;
    }
    const char* why = ::dlerror();
    tried += fmt::format("\n  {}: {}", path, why != nullptr ? why : "not found");
  }
  return make_error(error_code::no_blas_library,
                    fmt::format("cannot load the vendor's {} (CUDA 13 cuBLAS); install "
                                "it or point GLEAM_CUBLAS_DIR at its directory. Tried:{}",
                                soname, tried));
}

} // namespace

blas_api::~blas_api() {
  if (blas_ != nullptr)
    ::dlclose(blas_);
  if (lt_ != nullptr)
    ::dlclose(lt_);
}

caf::expected<std::unique_ptr<blas_api>> blas_api::load(const std::string& dir) {
  auto api = std::make_unique<blas_api>();
  auto lt = open_library(dir, "libcublasLt.so.13");
  if (!lt)
    return std::move(lt.error());
  api->lt_ = *lt;
  auto blas = open_library(dir, "libcublas.so.13");
  if (!blas)
    return std::move(blas.error());
  api->blas_ = *blas;
  std::string missing;
#define GLEAM_EXECUTOR_RESOLVE(lib, name)                                      \
  api->name = reinterpret_cast<decltype(&::name)>(::dlsym(api->lib, #name));  \
  if (api->name == nullptr)                                                    \
    missing += std::string{missing.empty() ? "" : ", "} + #name;
#define GLEAM_EXECUTOR_RESOLVE_BLAS(name) GLEAM_EXECUTOR_RESOLVE(blas_, name)
#define GLEAM_EXECUTOR_RESOLVE_LT(name) GLEAM_EXECUTOR_RESOLVE(lt_, name)
  GLEAM_EXECUTOR_CUBLAS_FUNCTIONS(GLEAM_EXECUTOR_RESOLVE_BLAS)
  GLEAM_EXECUTOR_CUBLASLT_FUNCTIONS(GLEAM_EXECUTOR_RESOLVE_LT)
  // Generated functions are optional: one this cuBLAS lacks stays null and
  // its calls fail with CUBLAS_STATUS_NOT_SUPPORTED.
#define X(name) api->name = reinterpret_cast<decltype(&::name)>(::dlsym(api->blas_, #name));
#include "executor/cublas_generated_api.inc"
#undef X
  for (auto [slot, name] : {std::pair<void**, const char*>{reinterpret_cast<void**>(&api->cublasGemmEx), "cublasGemmEx"},
                            {reinterpret_cast<void**>(&api->cublasGemmStridedBatchedEx), "cublasGemmStridedBatchedEx"},
                            {reinterpret_cast<void**>(&api->cublasGemmBatchedEx), "cublasGemmBatchedEx"}}) {
    *slot = ::dlsym(api->blas_, name);
    if (*slot == nullptr)
      missing += std::string{missing.empty() ? "" : ", "} + name;
  }
#undef GLEAM_EXECUTOR_RESOLVE_LT
#undef GLEAM_EXECUTOR_RESOLVE_BLAS
#undef GLEAM_EXECUTOR_RESOLVE
  if (!missing.empty())
    return make_error(error_code::missing_symbol,
                      fmt::format("the loaded cuBLAS lacks {}: install the cuBLAS of "
                                  "CUDA 13",
                                  missing));
  return api;
}

caf::expected<blas_api*> blas_api::shared() {
  static std::once_flag once;
  static caf::expected<std::unique_ptr<blas_api>>* loaded = nullptr;
  std::call_once(once, [] {
    loaded = new caf::expected<std::unique_ptr<blas_api>>(load());
  });
  if (!*loaded)
    return loaded->error();
  return loaded->value().get();
}

} // namespace gleam::executor
