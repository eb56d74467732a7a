// cuGetProcAddress_v2: the name -> function table of libcuda.so.1 (every
// export of interpose/spec/cuda.spec), with the driver's versioning: a base
// name ("cuMemAlloc") means its newest _vN variant whose `since` (the spec's,
// from the toolkit's cudaTypedefs.h) the caller's cudaVersion reaches, else
// the name's first ABI. The ABIs differ, so an older caller never gets a
// newer variant. With CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM the
// function's _ptsz / _ptds variant, where it has one.
#include "interpose/cuda_export.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <string>

// Every export, declared by its symbol name alone: the vendor header declares
// the legacy and per-thread names only in its internal view, with
// prototypes that clash with the current ones, and the table needs
// addresses only.
#define GLEAM_DRIVER_PROC(name, since) extern "C" void gleam_proc_##name() __asm__(#name);
#include "interpose/cuda_proc_table.inc"
#undef GLEAM_DRIVER_PROC

namespace {

struct proc {
  void* function;
  /// The CUDA version that introduced this _vN variant (0: the first ABI).
  int since;
};

const std::map<std::string, proc>& table() {
  static const auto* t = [] {
    auto* m = new std::map<std::string, proc>;
#define GLEAM_DRIVER_PROC(name, since) \
  (*m)[#name] = proc{reinterpret_cast<void*>(&gleam_proc_##name), since};
#include "interpose/cuda_proc_table.inc"
#undef GLEAM_DRIVER_PROC
    return m;
  }();
  return *t;
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
  if (symbol == nullptr || pfn == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  *pfn = nullptr;
  const auto& t = table();
  std::string base{symbol};
  std::string found_name;
  void* found = nullptr;
  bool too_old = false;
  for (int v = 9; v >= 2 && found == nullptr; --v) {
    auto name = base + "_v" + std::to_string(v);
    auto i = t.find(name);
    if (i == t.end())
      continue;
    if (cudaVersion >= i->second.since) {
      found = i->second.function;
      found_name = name;
    } else {
      too_old = true;
    }
  }
  if (found == nullptr) {
    auto i = t.find(base);
    if (i != t.end()) {
      found = i->second.function;
      found_name = base;
    }
  }
  // Per-thread default stream semantics, where the function has a variant
  // for it (_ptsz for stream-taking calls, _ptds for synchronous ones).
  if (found != nullptr && (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0)
    for (const char* suffix : {"_ptsz", "_ptds"})
      if (auto i = t.find(found_name + suffix); i != t.end()) {
        found = i->second.function;
        break;
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
