// Tests of Gleam's driver-level surface libcuda.so.1 (interpose/driver/,
// interpose/spec/cuda.spec) and of cudaGetDriverEntryPoint* in our
// libcudart.so.13, which hand out its functions. No GPU, no server.
#include "tests/support/files.hpp"
#include "tests/support/gpu_probe.hpp"
#include "tests/support/process.hpp"

#include <catch2/catch.hpp>
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

using gleam::test::lines_of;
using gleam::test::read_file;

using gleam::test::build_path;
using gleam::test::free_port;
using gleam::test::run_command;
using gleam::test::source_path;

/// name -> classes of each cuda.spec entry.
std::map<std::string, std::vector<std::string>> read_spec() {
  std::map<std::string, std::vector<std::string>> entries;
  std::string current;
  for (const auto& raw : lines_of(read_file(source_path("interpose/spec/cuda.spec")))) {
    std::istringstream words{raw};
    std::string key, value;
    words >> key >> value;
    if (key == "fn") {
      current = value;
      entries[current];
    } else if (key == "class") {
      entries[current].push_back(value);
    }
  }
  return entries;
}

std::string driver_library() {
  return build_path("lib/driver/libcuda.so.1");
}

void* driver() {
  static void* lib = dlopen(driver_library().c_str(), RTLD_NOW | RTLD_LOCAL);
  return lib;
}

template <class F>
F sym(void* lib, const char* name) {
  return reinterpret_cast<F>(dlsym(lib, name));
}

using get_proc_t = CUresult (*)(const char*, void**, int, cuuint64_t,
                                CUdriverProcAddressQueryResult*);

} // namespace

TEST_CASE("every driver spec entry has exactly one class", "[interpose][driver][spec]") {
  auto spec = read_spec();
  REQUIRE(spec.size() > 50);
  for (const auto& [name, classes] : spec) {
    INFO(name);
    REQUIRE(classes.size() == 1);
    CHECK((classes[0] == "manual" || classes[0] == "unsupported"));
  }
  auto manual = lines_of(read_file(build_path("interpose/cuda_manual.txt")));
  auto unsupported = lines_of(read_file(build_path("interpose/cuda_unsupported.txt")));
  CHECK(manual.size() + unsupported.size() == spec.size());
}

TEST_CASE("the driver spec names what PyTorch cu130 resolves", "[interpose][driver][spec]") {
  auto spec = read_spec();
  // ATen's lazy NVRTC stub (AT_FORALL_NVRTC, resolved by dlsym of the
  // macro-expanded names), c10/cuda/driver_api.h, and driver-API basics.
  const char* needed[] = {
    "cuModuleLoadData", "cuModuleLoadDataEx", "cuModuleGetFunction",
    "cuOccupancyMaxActiveBlocksPerMultiprocessor", "cuGetErrorString", "cuLaunchKernel",
    "cuLaunchCooperativeKernel", "cuCtxGetCurrent", "cuCtxSetCurrent", "cuModuleUnload",
    "cuDevicePrimaryCtxGetState", "cuDevicePrimaryCtxRetain", "cuLinkCreate_v2",
    "cuLinkAddData_v2", "cuLinkComplete", "cuFuncSetAttribute", "cuFuncGetAttribute",
    "cuPointerGetAttribute", "cuTensorMapEncodeTiled", "cuDeviceGetAttribute", "cuDeviceGet",
    "cuMemAddressReserve", "cuMemRelease", "cuMemMap", "cuMemAddressFree", "cuMemSetAccess",
    "cuMemUnmap", "cuMemCreate", "cuMemGetAllocationGranularity",
    "cuMemExportToShareableHandle", "cuMemImportFromShareableHandle", "cuMemsetD32Async",
    "cuStreamWriteValue32_v2", "cuMulticastCreate", "cuMulticastBindMem",
    "cuMulticastAddDevice", "cuGreenCtxCreate", "cuInit", "cuDriverGetVersion",
    "cuDeviceGetCount", "cuDeviceGetName", "cuDeviceTotalMem_v2", "cuDeviceGetUuid_v2",
    "cuDevicePrimaryCtxRelease_v2", "cuCtxGetDevice", "cuCtxSynchronize", "cuGetErrorName",
    "cuGetProcAddress_v2", "cuPointerGetAttributes", "cuMemGetAddressRange_v2",
    "cuMemGetInfo_v2", "cuMemAlloc_v2", "cuMemFree_v2", "cuMemcpyHtoD_v2", "cuMemcpyDtoH_v2",
    "cuStreamCreate", "cuStreamDestroy_v2", "cuStreamSynchronize", "cuEventCreate",
    "cuEventRecord", "cuEventDestroy_v2", "cuEventElapsedTime_v2", "cuFuncSetCacheConfig",
    "cuMemRetainAllocationHandle", "cuMemGetAllocationPropertiesFromHandle",
    "cuMulticastUnbind", "cuCtxPopCurrent_v2", "cuCtxPushCurrent_v2", "cuCtxFromGreenCtx",
    "cuGreenCtxDestroy", "cuGreenCtxStreamCreate", "cuDevSmResourceSplitByCount",
    "cuDeviceGetDevResource", "cuDevResourceGenerateDesc", "cuLogsRegisterCallback",
    "cuLogsUnregisterCallback"};
  for (const char* name : needed) {
    INFO("missing from cuda.spec: " << name);
    CHECK(spec.count(name) == 1);
  }
}

TEST_CASE("the built libcuda.so.1 exports exactly the generated version script",
          "[interpose][driver][library]") {
  std::string out;
  REQUIRE(run_command("nm -D --defined-only '" + driver_library() + "'", out) == 0);
  std::set<std::string> exported;
  std::vector<std::string> other;
  std::istringstream in{out};
  for (std::string line; std::getline(in, line);) {
    std::istringstream words{line};
    std::string address, type, symbol;
    words >> address >> type >> symbol;
    if (type == "T" && symbol.find('@') == std::string::npos)
      exported.insert(symbol);
    else
      other.push_back(type + " " + symbol);
  }
  auto listed = lines_of(read_file(build_path("interpose/cuda_symbols.txt")));
  std::set<std::string> from_script;
  for (const auto& line : lines_of(read_file(build_path("interpose/cuda.map"))))
    if (line.size() > 5 && line.rfind("    ", 0) == 0 && line.back() == ';'
        && line.find('*') == std::string::npos)
      from_script.insert(line.substr(4, line.size() - 5));
  CHECK(exported == std::set<std::string>(listed.begin(), listed.end()));
  CHECK(exported == from_script);
  std::set<std::string> spec_names;
  for (const auto& [name, classes] : read_spec())
    spec_names.insert(name);
  CHECK(exported == spec_names);
  INFO("first unexpected export: " << (other.empty() ? "" : other.front()));
  CHECK(other.empty());

  REQUIRE(run_command("readelf -d '" + driver_library() + "'", out) == 0);
  CHECK(out.find("Library soname: [libcuda.so.1]") != std::string::npos);
  CHECK(out.find("Shared library: [libcudart.so.13]") != std::string::npos);
}

TEST_CASE("cuGetProcAddress hands out our functions by versioned name",
          "[interpose][driver][library]") {
  void* lib = driver();
  INFO("dlopen: " << (lib ? "" : dlerror()));
  REQUIRE(lib != nullptr);
  auto get_proc = sym<get_proc_t>(lib, "cuGetProcAddress_v2");
  REQUIRE(get_proc != nullptr);

  void* fn = nullptr;
  auto status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  CHECK(get_proc("cuMemAlloc", &fn, 13000, CU_GET_PROC_ADDRESS_DEFAULT, &status)
        == CUDA_SUCCESS);
  CHECK(status == CU_GET_PROC_ADDRESS_SUCCESS);
  CHECK(fn == dlsym(lib, "cuMemAlloc_v2"));
  CHECK(fn != nullptr);

  CHECK(get_proc("cuLaunchKernel", &fn, 12000, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &status)
        == CUDA_SUCCESS);
  CHECK(fn == dlsym(lib, "cuLaunchKernel"));
  // Per-thread default stream callers get the per-thread variants.
  CHECK(get_proc("cuLaunchKernel", &fn, 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,
                 &status) == CUDA_SUCCESS);
  CHECK(fn == dlsym(lib, "cuLaunchKernel_ptsz"));
  CHECK(get_proc("cuMemcpyHtoD", &fn, 13000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,
                 &status) == CUDA_SUCCESS);
  CHECK(fn == dlsym(lib, "cuMemcpyHtoD_v2_ptds"));
  CHECK(get_proc("cuMemAlloc", &fn, 13000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,
                 &status) == CUDA_SUCCESS);
  CHECK(fn == dlsym(lib, "cuMemAlloc_v2"));
  CHECK(get_proc("cuGetProcAddress", &fn, 12000, 0, &status) == CUDA_SUCCESS);
  CHECK(fn == reinterpret_cast<void*>(get_proc));
  CHECK(get_proc("cuEventElapsedTime", &fn, 13000, 0, &status) == CUDA_SUCCESS);
  CHECK(fn == dlsym(lib, "cuEventElapsedTime_v2"));

  fn = &status;
  CHECK(get_proc("cuNoSuchFunction", &fn, 13000, 0, &status) == CUDA_ERROR_NOT_FOUND);
  CHECK(status == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
  CHECK(fn == nullptr);
  CHECK(get_proc(nullptr, &fn, 13000, 0, &status) == CUDA_ERROR_INVALID_VALUE);
}

TEST_CASE("cudaGetDriverEntryPoint hands out libcuda.so.1's functions",
          "[interpose][driver][library]") {
  void* lib = driver();
  REQUIRE(lib != nullptr);
  void* rt = dlopen(build_path("lib/libcudart.so.13").c_str(), RTLD_NOW | RTLD_LOCAL);
  REQUIRE(rt != nullptr);
  auto by_version = sym<decltype(&cudaGetDriverEntryPointByVersion)>(
    rt, "cudaGetDriverEntryPointByVersion");
  using plain_t = cudaError_t (*)(const char*, void**, unsigned long long,
                                  cudaDriverEntryPointQueryResult*);
  auto plain = sym<plain_t>(rt, "cudaGetDriverEntryPoint");
  REQUIRE(by_version != nullptr);
  REQUIRE(plain != nullptr);

  void* fn = nullptr;
  auto status = cudaDriverEntryPointSymbolNotFound;
  CHECK(by_version("cuModuleLoadData", &fn, 12000, cudaEnableDefault, &status) == cudaSuccess);
  CHECK(status == cudaDriverEntryPointSuccess);
  CHECK(fn == dlsym(lib, "cuModuleLoadData"));
  CHECK(fn != nullptr);
  CHECK(by_version("cuMemFree", &fn, 13000, cudaEnableDefault, &status) == cudaSuccess);
  CHECK(fn == dlsym(lib, "cuMemFree_v2"));
  CHECK(plain("cuDeviceGetAttribute", &fn, cudaEnableDefault, &status) == cudaSuccess);
  CHECK(fn == dlsym(lib, "cuDeviceGetAttribute"));
  CHECK(by_version("cuMemCreate", &fn, 12000, cudaEnableDefault, &status) == cudaSuccess);
  CHECK(fn == dlsym(lib, "cuMemCreate"));
  // An unsupported function is handed out too; calling it fails closed.
  CHECK(by_version("cuMemExportToShareableHandle", &fn, 12000, cudaEnableDefault, &status)
        == cudaSuccess);
  REQUIRE(fn != nullptr);
  int shareable = -1;
  CHECK(reinterpret_cast<decltype(&cuMemExportToShareableHandle)>(fn)(
          &shareable, 1, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0)
        == CUDA_ERROR_NOT_SUPPORTED);

  fn = &status;
  CHECK(by_version("cuNoSuchFunction", &fn, 13000, cudaEnableDefault, &status) == cudaSuccess);
  CHECK(status == cudaDriverEntryPointSymbolNotFound);
  CHECK(fn == nullptr);
  CHECK(plain(nullptr, &fn, cudaEnableDefault, &status) == cudaErrorInvalidValue);
}

TEST_CASE("every name of c10's driver API table resolves at its pinned version",
          "[interpose][driver][library]") {
  void* rt = dlopen(build_path("lib/libcudart.so.13").c_str(), RTLD_NOW | RTLD_LOCAL);
  REQUIRE(rt != nullptr);
  auto by_version = sym<decltype(&cudaGetDriverEntryPointByVersion)>(
    rt, "cudaGetDriverEntryPointByVersion");
  REQUIRE(by_version != nullptr);
  // C10_LIBCUDA_DRIVER_API_REQUIRED and _OPTIONAL of c10/cuda/driver_api.h.
  const std::pair<const char*, unsigned> names[] = {
    {"cuDeviceGet", 12000}, {"cuDeviceGetAttribute", 12000}, {"cuMemGetAddressRange", 12000},
    {"cuMemAddressReserve", 12000}, {"cuMemRelease", 12000}, {"cuMemMap", 12000},
    {"cuMemAddressFree", 12000}, {"cuMemSetAccess", 12000}, {"cuMemUnmap", 12000},
    {"cuMemCreate", 12000}, {"cuMemGetAllocationGranularity", 12000},
    {"cuMemExportToShareableHandle", 12000}, {"cuMemImportFromShareableHandle", 12000},
    {"cuMemRetainAllocationHandle", 12000}, {"cuMemGetAllocationPropertiesFromHandle", 12000},
    {"cuMemsetD32Async", 12000}, {"cuStreamWriteValue32", 12000}, {"cuGetErrorString", 12000},
    {"cuMulticastAddDevice", 12030}, {"cuMulticastBindMem", 12030},
    {"cuMulticastCreate", 12030}, {"cuMulticastUnbind", 12030}, {"cuCtxFromGreenCtx", 12080},
    {"cuCtxGetCurrent", 12080}, {"cuCtxPopCurrent", 12080}, {"cuCtxPushCurrent", 12080},
    {"cuCtxSetCurrent", 12080}, {"cuGreenCtxCreate", 12080}, {"cuGreenCtxDestroy", 12080},
    {"cuGreenCtxStreamCreate", 12080}, {"cuDevSmResourceSplitByCount", 12080},
    {"cuDeviceGetDevResource", 12080}, {"cuDevResourceGenerateDesc", 12080},
    {"cuLogsRegisterCallback", 12090}, {"cuLogsUnregisterCallback", 12090}};
  for (const auto& [name, version] : names) {
    INFO(name << " at " << version);
    void* fn = nullptr;
    auto status = cudaDriverEntryPointSymbolNotFound;
    CHECK(by_version(name, &fn, version, cudaEnableDefault, &status) == cudaSuccess);
    CHECK(status == cudaDriverEntryPointSuccess);
    CHECK(fn != nullptr);
  }
  // The versioned variant is the one handed out.
  void* fn = nullptr;
  auto status = cudaDriverEntryPointSymbolNotFound;
  REQUIRE(by_version("cuStreamWriteValue32", &fn, 12000, cudaEnableDefault, &status)
          == cudaSuccess);
  CHECK(fn == dlsym(driver(), "cuStreamWriteValue32_v2"));
}

TEST_CASE("driver calls without a reachable server fail with CUDA_ERROR_NO_DEVICE",
          "[interpose][driver][library]") {
  // Before anything in this process connects.
  auto server = "127.0.0.1:" + std::to_string(free_port());
  ::setenv("GLEAM_SERVER", server.c_str(), 1);
  void* lib = driver();
  REQUIRE(lib != nullptr);
  auto init = sym<decltype(&cuInit)>(lib, "cuInit");
  auto count = sym<decltype(&cuDeviceGetCount)>(lib, "cuDeviceGetCount");
  auto load = sym<decltype(&cuModuleLoadData)>(lib, "cuModuleLoadData");
  auto alloc = sym<decltype(&cuMemAlloc)>(lib, "cuMemAlloc_v2");
  auto current = sym<decltype(&cuCtxGetCurrent)>(lib, "cuCtxGetCurrent");
  auto state = sym<decltype(&cuDevicePrimaryCtxGetState)>(lib, "cuDevicePrimaryCtxGetState");
  auto name = sym<decltype(&cuGetErrorName)>(lib, "cuGetErrorName");
  auto text = sym<decltype(&cuGetErrorString)>(lib, "cuGetErrorString");
  REQUIRE((init && count && load && alloc && current && state && name && text));

  CHECK(init(1) == CUDA_ERROR_INVALID_VALUE);
  CHECK(init(0) == CUDA_ERROR_NO_DEVICE);
  int n = -1;
  CHECK(count(&n) == CUDA_ERROR_NO_DEVICE);
  CUmodule module = nullptr;
  const char ptx[] = ".version 8.0\n.target sm_90\n.address_size 64\n";
  CHECK(load(&module, ptx) == CUDA_ERROR_NO_DEVICE);
  CHECK(module == nullptr);
  CUdeviceptr p = 0;
  CHECK(alloc(&p, 256) == CUDA_ERROR_NO_DEVICE);
  CUcontext ctx = reinterpret_cast<CUcontext>(&n);
  CHECK(current(&ctx) == CUDA_SUCCESS);
  CHECK(ctx == nullptr);
  unsigned flags = 0;
  int active = -1;
  CHECK(state(0, &flags, &active) == CUDA_ERROR_NO_DEVICE);
  // Virtual memory management needs the server's device too.
  auto granularity = sym<decltype(&cuMemGetAllocationGranularity)>(
    lib, "cuMemGetAllocationGranularity");
  auto reserve = sym<decltype(&cuMemAddressReserve)>(lib, "cuMemAddressReserve");
  REQUIRE((granularity && reserve));
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  size_t g = 0;
  CHECK(granularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM) == CUDA_ERROR_NO_DEVICE);
  CUdeviceptr va = 0;
  CHECK(reserve(&va, size_t{2} << 20, 0, 0, 0) == CUDA_ERROR_NO_DEVICE);
  CHECK(va == 0);

  const char* s = nullptr;
  CHECK(name(CUDA_ERROR_NO_DEVICE, &s) == CUDA_SUCCESS);
  CHECK(std::string{s} == "CUDA_ERROR_NO_DEVICE");
  CHECK(text(CUDA_ERROR_NOT_FOUND, &s) == CUDA_SUCCESS);
  CHECK(std::string{s}.find("not found") != std::string::npos);
  CHECK(name(static_cast<CUresult>(12345), &s) == CUDA_ERROR_INVALID_VALUE);
}
