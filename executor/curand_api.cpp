#include "executor/curand_api.hpp"

#include <dlfcn.h>

#include "executor/vendor_library.hpp"

namespace gleam::executor {

curand_api::~curand_api() {
  if (lib_ != nullptr)
    ::dlclose(lib_);
}

caf::expected<std::unique_ptr<curand_api>> curand_api::load(const std::string& dir) {
  return load_vendor_api<curand_api>(
    dir, {"libcurand.so.10", "GLEAM_CURAND_DIR", "CUDA 13 cuRAND"},
    "the loaded libcurand.so.10 defines none of cuRAND's functions: install the cuRAND of CUDA 13",
    [](curand_api& api, void* lib) {
      api.lib_ = lib;
      return resolve_vendor_entries(api, lib);
    });
}

caf::expected<curand_api*> curand_api::shared() {
  return shared_vendor_api<curand_api>();
}

} // namespace gleam::executor
