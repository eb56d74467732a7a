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
    dir, {"libcufft.so.12", "GLEAM_CUFFT_DIR", "CUDA 13 cuFFT"},
    "the loaded libcufft.so.12 defines none of cuFFT's functions: install the cuFFT of CUDA 13",
    [](cufft_api& api, void* lib) {
      api.lib_ = lib;
      return resolve_vendor_entries(api, lib);
    });
}

caf::expected<cufft_api*> cufft_api::shared() {
  return shared_vendor_api<cufft_api>();
}

} // namespace gleam::executor
