#include "executor/curand_api.hpp"

#include <dlfcn.h>

#include <utility>

#include <fmt/format.h>

#include "executor/error.hpp"
#include "executor/vendor_library.hpp"

namespace gleam::executor {

curand_api::~curand_api() {
  if (lib_ != nullptr)
    ::dlclose(lib_);
}

caf::expected<std::unique_ptr<curand_api>> curand_api::load(const std::string& dir) {
  auto lib = open_vendor_library(dir, {"libcurand.so.10", "GLEAM_CURAND_DIR", "CUDA 13 cuRAND"});
  if (!lib)
    return std::move(lib.error());
  auto api = std::make_unique<curand_api>();
  api->lib_ = *lib;
  bool any = false;
#define X(name)                                                                  \
  api->name = reinterpret_cast<decltype(&::name)>(::dlsym(api->lib_, #name));    \
  any = any || api->name != nullptr;
#include "executor/curand_generated_api.inc"
#undef X
  if (!any)
    return make_error(error_code::missing_symbol,
                      "the loaded libcurand.so.10 defines none of cuRAND's functions: install "
                      "the cuRAND of CUDA 13");
  return api;
}

caf::expected<curand_api*> curand_api::shared() {
  return shared_vendor_api<curand_api>();
}

} // namespace gleam::executor
