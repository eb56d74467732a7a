#include "executor/cufft_api.hpp"

#include <dlfcn.h>

#include <utility>

#include <fmt/format.h>

#include "executor/error.hpp"
#include "executor/vendor_library.hpp"

namespace gleam::executor {

cufft_api::~cufft_api() {
  if (lib_ != nullptr)
    ::dlclose(lib_);
}

caf::expected<std::unique_ptr<cufft_api>> cufft_api::load(const std::string& dir) {
  auto lib = open_vendor_library(dir, {"libcufft.so.12", "GLEAM_CUFFT_DIR", "CUDA 13 cuFFT"});
  if (!lib)
    return std::move(lib.error());
  auto api = std::make_unique<cufft_api>();
  api->lib_ = *lib;
  bool any = false;
#define X(name)                                                                  \
  api->name = reinterpret_cast<decltype(&::name)>(::dlsym(api->lib_, #name));    \
  any = any || api->name != nullptr;
#include "executor/cufft_generated_api.inc"
#undef X
  if (!any)
    return make_error(error_code::missing_symbol,
                      "the loaded libcufft.so.12 defines none of cuFFT's functions: install "
                      "the cuFFT of CUDA 13");
  return api;
}

caf::expected<cufft_api*> cufft_api::shared() {
  return shared_vendor_api<cufft_api>();
}

} // namespace gleam::executor
