#include "executor/driver_api.hpp"

#include <dlfcn.h>

#include "executor/error.hpp"

namespace gleam::executor {

driver_api::~driver_api() {
  if (handle_ != nullptr)
    dlclose(handle_);
}

caf::expected<std::unique_ptr<driver_api>>
driver_api::load(const std::string& library) {
  dlerror();
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    std::string detail = why != nullptr ? why : "unknown dlopen failure";
    if (detail.find(library) == std::string::npos)
      detail = library + ": " + detail;
    return make_error(error_code::no_driver,
                      "no CUDA driver on this machine (" + detail
                        + "): run gpu_server on a host with an NVIDIA GPU and "
                          "driver >= 580");
  }
  auto api = std::make_unique<driver_api>();
  api->handle_ = handle;
  // Each entry point is looked up under the exact symbol its <cuda.h>
  // declaration names (after the header's own renames such as cuMemAlloc ->
  // cuMemAlloc_v2), so the ABI of the pointer matches its type.
  // cuGetProcAddress would hand out the newest ABI for CUDA 13.0 instead,
  // e.g. cuCtxSynchronize_v2(CUcontext) for cuCtxSynchronize(void).
  auto resolve = [&](const char* name, void** fn) -> caf::error {
    *fn = dlsym(handle, name);
    if (*fn == nullptr)
      return make_error(error_code::missing_symbol,
                        "the CUDA driver in " + library + " has no " + name
                          + ": install driver >= 580");
    return caf::none;
  };
#define GLEAM_EXECUTOR_STR2(x) #x
#define GLEAM_EXECUTOR_STR(x) GLEAM_EXECUTOR_STR2(x)
#define GLEAM_EXECUTOR_DRIVER_RESOLVE(name)                                   \
  if (auto err = resolve(GLEAM_EXECUTOR_STR(name),                            \
                         reinterpret_cast<void**>(&api->name)))               \
    return err;
  GLEAM_EXECUTOR_DRIVER_FUNCTIONS(GLEAM_EXECUTOR_DRIVER_RESOLVE)
#undef GLEAM_EXECUTOR_DRIVER_RESOLVE
#undef GLEAM_EXECUTOR_STR
#undef GLEAM_EXECUTOR_STR2
  if (auto rc = api->cuInit(0); rc == CUDA_ERROR_STUB_LIBRARY)
    return make_error(error_code::no_driver,
                      "no CUDA driver on this machine (" + library
                        + " is the toolkit's link stub, not a driver): run "
                          "gpu_server on a host with an NVIDIA GPU and "
                          "driver >= 580");
  if (auto rc = api->cuInit(0); rc != CUDA_SUCCESS)
    return make_error(error_code::driver_call_failed,
                      "cuInit(0) failed with " + api->describe(rc)
                        + ": check that the NVIDIA driver is loaded "
                          "(nvidia-smi) and a GPU is visible");
  return api;
}

std::string driver_api::describe(CUresult rc) const {
  const char* name = nullptr;
  const char* text = nullptr;
  if (cuGetErrorName != nullptr)
    static_cast<void>(cuGetErrorName(rc, &name));
  if (cuGetErrorString != nullptr)
    static_cast<void>(cuGetErrorString(rc, &text));
  std::string out = name != nullptr
                      ? std::string{name}
                      : "CUresult " + std::to_string(static_cast<int>(rc));
  if (text != nullptr)
    out += std::string{" ("} + text + ")";
  return out;
}

} // namespace gleam::executor
