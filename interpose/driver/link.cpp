// The driver's JIT linker (cuLinkCreate … cuLinkComplete), as Numba and
// other driver-API programs use it to link PTX with device libraries. The
// link runs on this machine: nvJitLink (libnvJitLink.so.13, from the CUDA
// toolkit or the nvidia-nvjitlink wheel) links the inputs for the server
// GPU's architecture, and the cubin it makes loads through cuModuleLoadData
// like any other. The server's driver never sees the inputs.
#include "interpose/driver/common.hpp"

#include <dlfcn.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <nvJitLink.h>

#include "interpose/driver/report.hpp"

namespace {

using namespace gleam::interpose::driver;

/// nvJitLink's entry points (the 13.0 ABI its header binds to).
struct jit_link_api {
  decltype(&__nvJitLinkCreate_13_0) create = nullptr;
  decltype(&__nvJitLinkDestroy_13_0) destroy = nullptr;
  decltype(&__nvJitLinkAddData_13_0) add_data = nullptr;
  decltype(&__nvJitLinkComplete_13_0) complete = nullptr;
  decltype(&__nvJitLinkGetLinkedCubinSize_13_0) cubin_size = nullptr;
  decltype(&__nvJitLinkGetLinkedCubin_13_0) cubin = nullptr;
  decltype(&__nvJitLinkGetErrorLogSize_13_0) error_log_size = nullptr;
  decltype(&__nvJitLinkGetErrorLog_13_0) error_log = nullptr;
  decltype(&__nvJitLinkGetInfoLogSize_13_0) info_log_size = nullptr;
  decltype(&__nvJitLinkGetInfoLog_13_0) info_log = nullptr;
  bool loaded = false;
};

template <class F>
bool bind(void* lib, const char* name, F& out) {
  out = reinterpret_cast<F>(dlsym(lib, name));
  return out != nullptr;
}

/// nvJitLink, loaded at first use: by its SONAME, then from CUDA_HOME and
/// the toolkit's default place.
const jit_link_api& jit_link() {
  static const jit_link_api api = [] {
    jit_link_api a;
    std::vector<std::string> candidates{"libnvJitLink.so.13"};
    if (const char* home = std::getenv("CUDA_HOME"))
      candidates.push_back(std::string{home} + "/lib64/libnvJitLink.so.13");
    candidates.push_back("/usr/local/cuda/lib64/libnvJitLink.so.13");
    void* lib = nullptr;
    for (const auto& c : candidates)
      if ((lib = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL)) != nullptr)
        break;
    if (lib == nullptr)
      return a;
    a.loaded = bind(lib, "__nvJitLinkCreate_13_0", a.create)
               && bind(lib, "__nvJitLinkDestroy_13_0", a.destroy)
               && bind(lib, "__nvJitLinkAddData_13_0", a.add_data)
               && bind(lib, "__nvJitLinkComplete_13_0", a.complete)
               && bind(lib, "__nvJitLinkGetLinkedCubinSize_13_0", a.cubin_size)
               && bind(lib, "__nvJitLinkGetLinkedCubin_13_0", a.cubin)
               && bind(lib, "__nvJitLinkGetErrorLogSize_13_0", a.error_log_size)
               && bind(lib, "__nvJitLinkGetErrorLog_13_0", a.error_log)
               && bind(lib, "__nvJitLinkGetInfoLogSize_13_0", a.info_log_size)
               && bind(lib, "__nvJitLinkGetInfoLog_13_0", a.info_log);
    return a;
  }();
  return api;
}

/// One input of a pending link: its bytes, kind and name.
struct link_input {
  std::string bytes;
  nvJitLinkInputType type;
  std::string name;
};

/// A CUlinkState: the options of cuLinkCreate, the inputs so far, and the
/// cubin once complete (owned until cuLinkDestroy).
struct link_state {
  std::vector<std::string> options; // nvJitLink's, e.g. "-arch=sm_90"
  std::vector<link_input> inputs;
  std::string cubin;
  /// The app's log buffers and where their sizes go back.
  char* info_log = nullptr;
  size_t info_size = 0;
  void** info_size_out = nullptr;
  char* error_log = nullptr;
  size_t error_size = 0;
  void** error_size_out = nullptr;
};

/// An option's value as the driver passes it: a value cast to a pointer.
template <class T>
T value_of(void* v) {
  return static_cast<T>(reinterpret_cast<uintptr_t>(v));
}

/// "-arch=sm_XY" of the current context's device.
CUresult arch_of_current(std::string& arch) {
  int dev = 0;
  if (auto err = context_device(nullptr, &dev); err != CUDA_SUCCESS)
    return err;
  int major = 0, minor = 0;
  if (auto err = cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
      err != CUDA_SUCCESS)
    return err;
  if (auto err = cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
      err != CUDA_SUCCESS)
    return err;
  arch = "-arch=sm_" + std::to_string(major * 10 + minor);
  return CUDA_SUCCESS;
}

/// "-arch=sm_XY[a|f]" of a CUjit_target value.
std::string arch_of_target(unsigned target) {
  std::string suffix;
  if (target >= CU_COMPUTE_FAMILY_TARGET_BASE) {
    target -= CU_COMPUTE_FAMILY_TARGET_BASE;
    suffix = "f";
  } else if (target >= CU_COMPUTE_ACCELERATED_TARGET_BASE) {
    target -= CU_COMPUTE_ACCELERATED_TARGET_BASE;
    suffix = "a";
  }
  return "-arch=sm_" + std::to_string(target) + suffix;
}

/// Reads the JIT options a link state keeps; false for an option value the
/// driver would refuse.
bool read_options(link_state& s, unsigned n, const CUjit_option* options, void** values,
                  std::string& arch) {
  if (n > 0 && (options == nullptr || values == nullptr))
    return false;
  for (unsigned i = 0; i < n; ++i) {
    switch (options[i]) {
      case CU_JIT_TARGET:
        arch = arch_of_target(value_of<unsigned>(values[i]));
        break;
      case CU_JIT_OPTIMIZATION_LEVEL:
        s.options.push_back("-O" + std::to_string(value_of<unsigned>(values[i])));
        break;
      case CU_JIT_GENERATE_DEBUG_INFO:
        if (value_of<int>(values[i]) != 0)
          s.options.push_back("-g");
        break;
      case CU_JIT_GENERATE_LINE_INFO:
        if (value_of<int>(values[i]) != 0)
          s.options.push_back("-lineinfo");
        break;
      case CU_JIT_LOG_VERBOSE:
        if (value_of<int>(values[i]) != 0)
          s.options.push_back("-verbose");
        break;
      case CU_JIT_INFO_LOG_BUFFER:
        s.info_log = static_cast<char*>(values[i]);
        break;
      case CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES:
        s.info_size = value_of<size_t>(values[i]);
        s.info_size_out = &values[i];
        break;
      case CU_JIT_ERROR_LOG_BUFFER:
        s.error_log = static_cast<char*>(values[i]);
        break;
      case CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES:
        s.error_size = value_of<size_t>(values[i]);
        s.error_size_out = &values[i];
        break;
      case CU_JIT_LTO:
        if (value_of<int>(values[i]) != 0)
          s.options.push_back("-lto");
        break;
      default:
        break; // tuning options (registers, threads, cache modes): the linker's defaults
    }
  }
  return true;
}

/// Copies `text` into the app's log buffer of `size` bytes and writes the
/// bytes used (with the terminator) back to the size option.
void fill_log(const std::string& text, char* buffer, size_t size, void** size_out) {
  if (buffer == nullptr || size == 0)
    return;
  auto n = std::min(text.size(), size - 1);
  std::memcpy(buffer, text.data(), n);
  buffer[n] = '\0';
  if (size_out != nullptr)
    *size_out = reinterpret_cast<void*>(static_cast<uintptr_t>(n + 1));
}

bool input_type(CUjitInputType type, nvJitLinkInputType& out) {
  switch (type) {
    case CU_JIT_INPUT_CUBIN:
      out = NVJITLINK_INPUT_CUBIN;
      return true;
    case CU_JIT_INPUT_PTX:
      out = NVJITLINK_INPUT_PTX;
      return true;
    case CU_JIT_INPUT_FATBINARY:
      out = NVJITLINK_INPUT_FATBIN;
      return true;
    case CU_JIT_INPUT_OBJECT:
      out = NVJITLINK_INPUT_OBJECT;
      return true;
    case CU_JIT_INPUT_LIBRARY:
      out = NVJITLINK_INPUT_LIBRARY;
      return true;
    case CU_JIT_INPUT_NVVM:
      out = NVJITLINK_INPUT_LTOIR;
      return true;
    default:
      return false;
  }
}

/// The size of an image given without one: PTX is text up to its
/// terminator; the binary kinds must say their size.
size_t size_of_input(CUjitInputType type, const void* data, size_t size) {
  if (size != 0 || type != CU_JIT_INPUT_PTX)
    return size;
  return std::strlen(static_cast<const char*>(data)) + 1;
}

CUresult add_input(CUlinkState state, CUjitInputType type, std::string bytes, const char* name) {
  if (state == nullptr)
    return CUDA_ERROR_INVALID_HANDLE;
  nvJitLinkInputType kind{};
  if (!input_type(type, kind) || bytes.empty())
    return CUDA_ERROR_INVALID_VALUE;
  auto* s = reinterpret_cast<link_state*>(state);
  s->inputs.push_back(link_input{std::move(bytes), kind, name != nullptr ? name : "input"});
  return CUDA_SUCCESS;
}

} // namespace

extern "C" {

GLEAM_INTERPOSE_EXPORT CUresult cuLinkCreate_v2(unsigned int numOptions, CUjit_option* options,
                                                void** optionValues, CUlinkState* stateOut) {
  if (stateOut == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  auto s = std::make_unique<link_state>();
  std::string arch;
  if (!read_options(*s, numOptions, options, optionValues, arch))
    return CUDA_ERROR_INVALID_VALUE;
  if (arch.empty())
    if (auto err = arch_of_current(arch); err != CUDA_SUCCESS)
      return err;
  s->options.insert(s->options.begin(), arch);
  if (!jit_link().loaded) {
    fill_log("Gleam links with nvJitLink on this machine and found no libnvJitLink.so.13: "
             "install the CUDA toolkit or the nvidia-nvjitlink wheel",
             s->error_log, s->error_size, s->error_size_out);
    gleam_driver_report_unsupported("cuLinkCreate (no libnvJitLink.so.13 on this machine)",
                                    "the JIT linker runs on the client: install nvJitLink");
    return CUDA_ERROR_JIT_COMPILER_NOT_FOUND;
  }
  *stateOut = reinterpret_cast<CUlinkState>(s.release());
  return CUDA_SUCCESS;
}

GLEAM_INTERPOSE_EXPORT CUresult cuLinkAddData_v2(CUlinkState state, CUjitInputType type,
                                                 void* data, size_t size, const char* name,
                                                 unsigned int, CUjit_option*, void**) {
  if (data == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  size = size_of_input(type, data, size);
  return add_input(state, type, std::string(static_cast<const char*>(data), size), name);
}

GLEAM_INTERPOSE_EXPORT CUresult cuLinkAddFile_v2(CUlinkState state, CUjitInputType type,
                                                 const char* path, unsigned int, CUjit_option*,
                                                 void**) {
  if (path == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  std::ifstream in{path, std::ios::binary};
  if (!in)
    return CUDA_ERROR_FILE_NOT_FOUND;
  std::string bytes{std::istreambuf_iterator<char>{in}, std::istreambuf_iterator<char>{}};
  if (type == CU_JIT_INPUT_PTX)
    bytes.push_back('\0');
  return add_input(state, type, std::move(bytes), path);
}

GLEAM_INTERPOSE_EXPORT CUresult cuLinkComplete(CUlinkState state, void** cubinOut,
                                               size_t* sizeOut) {
  if (state == nullptr)
    return CUDA_ERROR_INVALID_HANDLE;
  if (cubinOut == nullptr || sizeOut == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  auto* s = reinterpret_cast<link_state*>(state);
  const auto& api = jit_link();
  std::vector<const char*> opts;
  for (const auto& o : s->options)
    opts.push_back(o.c_str());
  nvJitLinkHandle h = nullptr;
  if (api.create(&h, static_cast<uint32_t>(opts.size()), opts.data()) != NVJITLINK_SUCCESS)
    return CUDA_ERROR_INVALID_VALUE;
  auto result = NVJITLINK_SUCCESS;
  for (const auto& in : s->inputs)
    if ((result = api.add_data(h, in.type, in.bytes.data(), in.bytes.size(), in.name.c_str()))
        != NVJITLINK_SUCCESS)
      break;
  if (result == NVJITLINK_SUCCESS)
    result = api.complete(h);
  auto log_of = [&](auto size_fn, auto log_fn) {
    size_t n = 0;
    std::string text;
    if (size_fn(h, &n) == NVJITLINK_SUCCESS && n > 0) {
      text.resize(n);
      log_fn(h, text.data());
      text.resize(std::strlen(text.c_str()));
    }
    return text;
  };
  fill_log(log_of(api.info_log_size, api.info_log), s->info_log, s->info_size, s->info_size_out);
  fill_log(log_of(api.error_log_size, api.error_log), s->error_log, s->error_size,
           s->error_size_out);
  CUresult out = CUDA_SUCCESS;
  size_t n = 0;
  if (result == NVJITLINK_SUCCESS && api.cubin_size(h, &n) == NVJITLINK_SUCCESS && n > 0) {
    s->cubin.resize(n);
    if (api.cubin(h, s->cubin.data()) != NVJITLINK_SUCCESS)
      out = CUDA_ERROR_UNKNOWN;
  } else {
    // What the driver answers for inputs it cannot compile or link.
    out = result == NVJITLINK_ERROR_PTX_COMPILE ? CUDA_ERROR_INVALID_PTX
                                                : CUDA_ERROR_INVALID_IMAGE;
  }
  api.destroy(&h);
  if (out != CUDA_SUCCESS)
    return out;
  *cubinOut = s->cubin.data();
  *sizeOut = s->cubin.size();
  return CUDA_SUCCESS;
}

GLEAM_INTERPOSE_EXPORT CUresult cuLinkDestroy(CUlinkState state) {
  if (state == nullptr)
    return CUDA_ERROR_INVALID_HANDLE;
  delete reinterpret_cast<link_state*>(state);
  return CUDA_SUCCESS;
}

} // extern "C"
