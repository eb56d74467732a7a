#include "executor/cusparse_api.hpp"

#include <dlfcn.h>

#include "executor/vendor_library.hpp"

namespace gleam::executor {

cusparse_api::~cusparse_api() {
  if (lib_ != nullptr)
    ::dlclose(lib_);
}

caf::expected<std::unique_ptr<cusparse_api>> cusparse_api::load(const std::string& dir) {
  return load_vendor_api<cusparse_api>(
    dir, {"libcusparse.so.12", "GLEAM_CUSPARSE_DIR", "CUDA 13 cuSPARSE"},
    "the loaded libcusparse.so.12 defines none of cuSPARSE's functions: install the cuSPARSE "
    "of CUDA 13",
    [](cusparse_api& api, void* lib) {
      api.lib_ = lib;
      return resolve_vendor_entries(api, lib);
    });
}

caf::expected<cusparse_api*> cusparse_api::shared() {
  return shared_vendor_api<cusparse_api>();
}

} // namespace gleam::executor
