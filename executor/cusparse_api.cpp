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
    dir, {"libcusparse.so.12", "GLEAM_CUSPARSE_DIR", "CUDA 13 cuSPARSE"}, [](cusparse_api& api, void* lib) {
      api.lib_ = lib;
      bool any = false;
#define X(name) any = resolve_vendor_symbol(lib, #name, &api.name) || any;
#include "executor/cusparse_generated_api.inc"
#undef X
      return any;
    });
}

caf::expected<cusparse_api*> cusparse_api::shared() {
  return shared_vendor_api<cusparse_api>();
}

} // namespace gleam::executor
