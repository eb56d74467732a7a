#include "executor/blas_api.hpp"

#include <dlfcn.h>

#include <memory>
#include <utility>

#include <fmt/format.h>

#include "executor/error.hpp"
#include "executor/vendor_library.hpp"

namespace gleam::executor {

namespace {

/// Opens `soname` of cuBLAS from `dir` or the usual places ($GLEAM_CUBLAS_DIR
/// first; executor/vendor_library.hpp).
caf::expected<void*> open_library(const std::string& dir, const char* soname) {
  return open_vendor_library(dir, {soname, "GLEAM_CUBLAS_DIR", "CUDA 13 cuBLAS",
                                   error_code::no_blas_library});
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
  return shared_vendor_api<blas_api>();
}

} // namespace gleam::executor
