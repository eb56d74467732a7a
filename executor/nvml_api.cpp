#include "executor/nvml_api.hpp"

#include <dlfcn.h>

#include <string>
#include <utility>

#include <fmt/format.h>

#include "executor/error.hpp"
#include "executor/vendor_library.hpp"

namespace gleam::executor {

namespace {

/// The directory of the driver's libcuda.so.1 this process loaded (NVML
/// is installed next to it, wherever the driver lives: a distribution's
/// multiarch directory, a container's /usr/local/nvidia/lib64, WSL's
/// /usr/lib/wsl/lib); empty when none is loaded.
std::string loaded_driver_dir() {
  void* cuda = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (cuda == nullptr)
    return {};
  std::string out;
  Dl_info info{};
  if (void* sym = ::dlsym(cuda, "cuInit"); sym != nullptr && ::dladdr(sym, &info) != 0
                                             && info.dli_fname != nullptr) {
    out = info.dli_fname;
    out = out.substr(0, out.rfind('/'));
  }
  ::dlclose(cuda);
  return out;
}

/// Where the driver installs libnvidia-ml.so.1: next to the loaded driver,
/// then the container, Debian/Ubuntu multiarch, RPM and plain layouts.
const char* const* driver_dirs() {
  static const std::string loaded = loaded_driver_dir();
  static const char* const dirs[] = {loaded.c_str(), "/usr/local/nvidia/lib64",
                                     "/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib",
                                     nullptr};
  return loaded.empty() ? dirs + 1 : dirs;
}

} // namespace

nvml_api::~nvml_api() {
  if (initialized_ && nvmlShutdown != nullptr)
    static_cast<void>(nvmlShutdown());
  if (lib_ != nullptr)
    ::dlclose(lib_);
}

caf::expected<std::unique_ptr<nvml_api>> nvml_api::load(const std::string& dir) {
  vendor_library_search search{"libnvidia-ml.so.1", "GLEAM_NVML_DIR",
                               "NVML of the NVIDIA driver"};
  search.dirs = driver_dirs();
  auto lib = open_vendor_library(dir, search);
  if (!lib)
    return std::move(lib.error());
  auto api = std::make_unique<nvml_api>();
  api->lib_ = *lib;
#define X(name) api->name = reinterpret_cast<decltype(&::name)>(::dlsym(api->lib_, #name));
#include "executor/nvml_generated_api.inc"
#undef X
  api->nvmlInit_v2 = reinterpret_cast<decltype(&::nvmlInit_v2)>(::dlsym(api->lib_, "nvmlInit_v2"));
  api->nvmlShutdown =
    reinterpret_cast<decltype(&::nvmlShutdown)>(::dlsym(api->lib_, "nvmlShutdown"));
  if (api->nvmlInit_v2 == nullptr)
    return make_error(error_code::missing_symbol,
                      "the loaded libnvidia-ml.so.1 has no nvmlInit_v2: install the NVML of "
                      "the GPU's driver (or point GLEAM_NVML_DIR at it)");
  if (auto st = api->nvmlInit_v2(); st != NVML_SUCCESS)
    return make_error(error_code::driver_call_failed,
                      fmt::format("nvmlInit_v2 of the server's NVML returned {}: is the NVIDIA "
                                  "driver loaded, and does its version match the library?",
                                  static_cast<int>(st)));
  api->initialized_ = true;
  return api;
}

caf::expected<nvml_api*> nvml_api::shared() {
  return shared_vendor_api<nvml_api>();
}

} // namespace gleam::executor
