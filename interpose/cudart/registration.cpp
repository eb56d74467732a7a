// Registration entry points that nvcc's host code calls from static
// constructors, and the launch configuration stack of <<<...>>>. They only
// record locally: nothing here starts the client or touches the network.
#define __CUDA_API_VERSION_INTERNAL
#include "interpose/export.hpp"

#include <vector>

#include "interpose/fatbin/fatbin.hpp"
#include "interpose/runtime.hpp"

using namespace gleam::interpose;
namespace proto = gleam::proto;

namespace {

struct call_configuration {
  dim3 grid;
  dim3 block;
  size_t shared_mem = 0;
  cudaStream_t stream = nullptr;
};

thread_local std::vector<call_configuration> configurations;

module_record* as_module(void** handle) {
  return reinterpret_cast<module_record*>(handle);
}

} // namespace

extern "C" {

GLEAM_INTERPOSE_EXPORT void** __cudaRegisterFatBinary(void* fatCubin) {
  try {
    auto& r = reg();
    std::lock_guard<std::recursive_mutex> guard{r.mutex};
    auto m = std::make_unique<module_record>();
    m->fatbin_wrapper = fatCubin;
    if (auto view = fatbin::parse_wrapper(fatCubin)) {
      m->image = view->image().data;
      m->image_size = view->image().size;
    } else {
      m->loaded = true;
      m->load_error = cudaErrorInvalidKernelImage;
    }
    auto* raw = m.get();
    r.modules.push_back(std::move(m));
    return reinterpret_cast<void**>(raw);
  } catch (...) {
    return nullptr;
  }
}

GLEAM_INTERPOSE_EXPORT void __cudaRegisterFatBinaryEnd(void** fatCubinHandle) {
}

GLEAM_INTERPOSE_EXPORT void __cudaUnregisterFatBinary(void** fatCubinHandle) {
  // The server frees the session's modules when the session closes; the
  // records stay so late calls from other static destructors find them.
}

GLEAM_INTERPOSE_EXPORT char __cudaInitModule(void** fatCubinHandle) {
  return 1;
}

GLEAM_INTERPOSE_EXPORT void __cudaRegisterFunction(
  void** fatCubinHandle, const char* hostFun, char* deviceFun,
  const char* deviceName, int thread_limit, uint3* tid, uint3* bid, dim3* bDim,
  dim3* gDim, int* wSize) {
  try {
    auto* m = as_module(fatCubinHandle);
    if (m == nullptr)
      return;
    auto& r = reg();
    std::lock_guard<std::recursive_mutex> guard{r.mutex};
    auto f = std::make_unique<function_record>();
    f->module = m;
    f->host = hostFun;
    f->name = deviceName != nullptr ? deviceName : deviceFun;
    r.functions[hostFun] = f.get();
    // A cudaKernel_t from __cudaGetKernel is the record's own address.
    r.functions[f.get()] = f.get();
    m->functions.push_back(std::move(f));
  } catch (...) {
    report_unsupported("__cudaRegisterFunction", "out of memory while registering a kernel");
  }
}

GLEAM_INTERPOSE_EXPORT void __cudaRegisterVar(void** fatCubinHandle, char* hostVar,
                                              char* deviceAddress,
                                              const char* deviceName, int ext,
                                              size_t size, int constant,
                                              int global) {
  try {
    auto* m = as_module(fatCubinHandle);
    if (m == nullptr)
      return;
    auto& r = reg();
    std::lock_guard<std::recursive_mutex> guard{r.mutex};
    auto v = std::make_unique<variable_record>();
    v->module = m;
    v->host = hostVar;
    v->name = deviceName != nullptr ? deviceName : deviceAddress;
    v->size = size;
    v->constant = constant != 0;
    r.variables[hostVar] = v.get();
    m->variables.push_back(std::move(v));
  } catch (...) {
    report_unsupported("__cudaRegisterVar", "out of memory while registering a variable");
  }
}

GLEAM_INTERPOSE_EXPORT void* __cudaGetProcAddress(void) {
  return nullptr;
}

GLEAM_INTERPOSE_EXPORT unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim,
                                                            size_t sharedMem,
                                                            cudaStream_t stream) {
  try {
    configurations.push_back({gridDim, blockDim, sharedMem, stream});
    return 0;
  } catch (...) {
    return 1;
  }
}

GLEAM_INTERPOSE_EXPORT cudaError_t __cudaPopCallConfiguration(dim3* gridDim,
                                                              dim3* blockDim,
                                                              size_t* sharedMem,
                                                              void* stream) {
  if (configurations.empty())
    return record(cudaErrorMissingConfiguration);
  auto c = configurations.back();
  configurations.pop_back();
  *gridDim = c.grid;
  *blockDim = c.block;
  *sharedMem = c.shared_mem;
  *static_cast<cudaStream_t*>(stream) = c.stream;
  return cudaSuccess;
}

GLEAM_INTERPOSE_EXPORT cudaError_t __cudaGetKernel(cudaKernel_t* kernelPtr,
                                                   const void* entryFuncAddr) {
  auto& r = reg();
  std::lock_guard<std::recursive_mutex> guard{r.mutex};
  auto i = r.functions.find(entryFuncAddr);
  if (i == r.functions.end())
    return record(cudaErrorInvalidDeviceFunction);
  *kernelPtr = reinterpret_cast<cudaKernel_t>(i->second);
  return cudaSuccess;
}

} // extern "C"
