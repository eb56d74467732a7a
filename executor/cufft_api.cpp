#include "executor/cufft_api.hpp"

#include <dlfcn.h>

#include "executor/vendor_library.hpp"

namespace gleam::executor {

cufft_api::~cufft_api() {
  if (lib_ != nullptr)
    ::dlclose(lib_);
}

caf::expected<std::unique_ptr<cufft_api>> cufft_api::load(const std::string& dir) {
  return load_vendor_api<cufft_api>(
    dir, {"libcufft.so.12", "GLEAM_CUFFT_DIR", "CUDA 13 cuFFT"}, [](cufft_api& api, void* lib) {
      api.lib_ = lib;
      bool any = false;
#define X(name) any = resolve_vendor_symbol(lib, #name, &api.name) || any;
#include "executor/cufft_generated_api.inc"
#undef X
      return any;
    });
}

caf::expected<cufft_api*> cufft_api::shared() {
  return shared_vendor_api<cufft_api>();
}

} // namespace gleam::executor
