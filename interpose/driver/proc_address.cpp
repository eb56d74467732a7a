// cuGetProcAddress_v2: the name -> function table of libcuda.so.1 (every
// export of interpose/spec/cuda.spec), with the driver's versioning: a base
// name ("cuMemAlloc") means its newest exported _vN variant when the caller's
// cudaVersion is at least the version that introduced it.
#include "interpose/cuda_export.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <string>

namespace {

const std::map<std::string, void*>& table() {
  static const auto* t = [] {
    auto* m = new std::map<std::string, void*>;
#define GLEAM_DRIVER_PROC(name) (*m)[#name] = reinterpret_cast<void*>(&name);
#include "interpose/cuda_proc_table.inc"
#undef GLEAM_DRIVER_PROC
    return m;
  }();
  return *t;
}

/// The CUDA version (1000 * major + 10 * minor) that introduced a _vN
/// variant; variants not listed date from before CUDA 4.0.
int introduced(const std::string& versioned) {
  static const std::map<std::string, int> since = {
    {"cuCtxCreate_v4", 12050},         {"cuCtxDestroy_v2", 4000},
    {"cuCtxPopCurrent_v2", 4000},      {"cuCtxPushCurrent_v2", 4000},
    {"cuDevicePrimaryCtxRelease_v2", 11000}, {"cuDevicePrimaryCtxReset_v2", 11000},
    {"cuDevicePrimaryCtxSetFlags_v2", 11000}, {"cuDeviceGetUuid_v2", 11040},
    {"cuEventDestroy_v2", 4000},       {"cuEventElapsedTime_v2", 12080},
    {"cuGetProcAddress_v2", 12000},    {"cuIpcOpenMemHandle_v2", 11000},
    {"cuLinkAddData_v2", 6050},        {"cuLinkCreate_v2", 6050},
    {"cuMemHostRegister_v2", 6050},    {"cuStreamDestroy_v2", 4000},
    {"cuStreamWaitValue32_v2", 11070}, {"cuStreamWriteValue32_v2", 11070},
  };
  auto i = since.find(versioned);
  return i != since.end() ? i->second : 3020;
}

bool debug_enabled() {
  static bool on = [] {
    const char* v = std::getenv("GLEAM_LOG");
    return v != nullptr && (std::strcmp(v, "debug") == 0 || std::strcmp(v, "trace") == 0);
  }();
  return on;
}

void log_once(const char* symbol, int version, bool found) {
  if (!debug_enabled())
    return;
  static std::mutex mutex;
  static std::set<std::string> seen;
  std::lock_guard<std::mutex> guard{mutex};
  if (seen.insert(symbol).second)
    std::fprintf(stderr, "gleam-client [debug] cuGetProcAddress(%s, %d): %s\n", symbol,
                 version, found ? "found" : "not found");
}

} // namespace

extern "C" {

GLEAM_INTERPOSE_EXPORT CUresult cuGetProcAddress(const char* symbol, void** pfn,
                                                 int cudaVersion, cuuint64_t flags,
                                                 CUdriverProcAddressQueryResult* symbolStatus) {
  (void) flags; // per-thread and legacy default stream variants are the same function
  if (symbol == nullptr || pfn == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  *pfn = nullptr;
  const auto& t = table();
  std::string base{symbol};
  void* found = nullptr;
  bool too_old = false;
  for (int v = 9; v >= 2 && found == nullptr; --v) {
    auto name = base + "_v" + std::to_string(v);
    auto i = t.find(name);
    if (i == t.end())
      continue;
    if (cudaVersion >= introduced(name))
      found = i->second;
    else
      too_old = true;
  }
  if (found == nullptr) {
    auto i = t.find(base);
    if (i != t.end())
      found = i->second;
  }
  log_once(symbol, cudaVersion, found != nullptr);
  if (found == nullptr) {
    if (symbolStatus != nullptr)
      *symbolStatus = too_old ? CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT
                              : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    return CUDA_ERROR_NOT_FOUND;
  }
  *pfn = found;
  if (symbolStatus != nullptr)
    *symbolStatus = CU_GET_PROC_ADDRESS_SUCCESS;
  return CUDA_SUCCESS;
}

} // extern "C"
