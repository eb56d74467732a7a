// Gleam's libcuda.so.1: memory, copies, pointer attributes, modules,
// launches, streams and events. Every call is answered from the process's
// one client inside Gleam's libcudart.so.13 (public runtime calls and the
// private interface, interpose/private_interface.h), so runtime and driver
// calls share one session, one registry and one sequence of ops. Contexts
// and devices: contexts.cpp.
#include "interpose/driver/common.hpp"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>
#include <algorithm>
#include <fstream>
#include <iterator>

#include "interpose/driver/client.hpp"
#include "interpose/driver/report.hpp"
#include "interpose/driver/result_names.hpp"
#include "interpose/private_interface.h"

using namespace gleam::interpose::driver;

namespace {

/// Where a CUfunction came from, for cuFuncGetModule and cuFuncGetName.
struct function_origin {
  CUmodule module;
  std::string name;
};

std::mutex functions_mutex;

/// Never destroyed: exit handlers may still ask.
std::map<CUfunction, function_origin>& functions() {
  static auto* all = new std::map<CUfunction, function_origin>;
  return *all;
}

/// cuOccupancyMaxPotentialBlockSize*: the block size (a multiple of the warp
/// size, up to the function's and the caller's limit) with the most threads
/// resident per multiprocessor, the larger on a tie, as the CUDA occupancy
/// calculator chooses; the grid that fills the device at it.
CUresult potential_block_size(int* minGridSize, int* blockSize, CUfunction func,
                              CUoccupancyB2DSize dynamic_of, size_t dynamicSMemSize,
                              int blockSizeLimit, unsigned flags) {
  if (minGridSize == nullptr || blockSize == nullptr || func == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  int max_threads = 0, warp = 32, sms = 0, dev = 0;
  if (auto err = cuFuncGetAttribute(&max_threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, func);
      err != CUDA_SUCCESS)
    return err;
  if (auto err = context_device(nullptr, &dev); err != CUDA_SUCCESS)
    return err;
  cuDeviceGetAttribute(&warp, CU_DEVICE_ATTRIBUTE_WARP_SIZE, dev);
  if (auto err = cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev);
      err != CUDA_SUCCESS)
    return err;
  int limit = blockSizeLimit > 0 ? std::min(blockSizeLimit, max_threads) : max_threads;
  int best_size = 0, best_blocks = 0;
  for (int size = (limit / warp) * warp; size > 0; size -= warp) {
    size_t dynamic = dynamic_of != nullptr ? dynamic_of(size) : dynamicSMemSize;
    int blocks = 0;
    if (auto err = cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&blocks, func, size,
                                                                       dynamic, flags);
        err != CUDA_SUCCESS)
      return err;
    if (blocks * size > best_blocks * best_size) {
      best_blocks = blocks;
      best_size = size;
    }
  }
  *blockSize = best_size;
  *minGridSize = best_blocks * sms;
  return CUDA_SUCCESS;
}

} // namespace

extern "C" {

// --- memory -------------------------------------------------------------------

GLEAM_INTERPOSE_EXPORT CUresult cuMemGetInfo(size_t* free, size_t* total) {
  return cu(cudaMemGetInfo(free, total));
}

GLEAM_INTERPOSE_EXPORT CUresult cuMemAlloc(CUdeviceptr* dptr, size_t bytesize) {
  if (dptr == nullptr || bytesize == 0)
    return CUDA_ERROR_INVALID_VALUE;
  void* p = nullptr;
  auto err = cudaMalloc(&p, bytesize);
  *dptr = reinterpret_cast<CUdeviceptr>(p);
  return cu(err);
}

GLEAM_INTERPOSE_EXPORT CUresult cuMemFree(CUdeviceptr dptr) {
  return cu(cudaFree(reinterpret_cast<void*>(dptr)));
}

// Managed and page-locked host memory: the runtime's (its flags have the
// same values), so mapped memory gets the runtime's host mirror.
GLEAM_INTERPOSE_EXPORT CUresult cuMemAllocManaged(CUdeviceptr* dptr, size_t bytesize,
                                                  unsigned int flags) {
  if (dptr == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  void* p = nullptr;
  auto err = cudaMallocManaged(&p, bytesize, flags);
  *dptr = reinterpret_cast<CUdeviceptr>(p);
  return cu(err);
}

GLEAM_INTERPOSE_EXPORT CUresult cuMemAllocHost(void** pp, size_t bytesize) {
  return cu(cudaMallocHost(pp, bytesize));
}

GLEAM_INTERPOSE_EXPORT CUresult cuMemHostAlloc(void** pp, size_t bytesize, unsigned int Flags) {
  return cu(cudaHostAlloc(pp, bytesize, Flags));
}

GLEAM_INTERPOSE_EXPORT CUresult cuMemFreeHost(void* p) {
  return cu(cudaFreeHost(p));
}

GLEAM_INTERPOSE_EXPORT CUresult cuMemHostRegister(void* p, size_t bytesize, unsigned int Flags) {
  return cu(cudaHostRegister(p, bytesize, Flags));
}

GLEAM_INTERPOSE_EXPORT CUresult cuMemGetAddressRange(CUdeviceptr* pbase, size_t* psize,
                                                     CUdeviceptr dptr) {
  uint64_t base = 0, size = 0;
  if (auto err = api().allocation_range(dptr, &base, &size); err != cudaSuccess)
    return CUDA_ERROR_NOT_FOUND;
  if (pbase != nullptr)
    *pbase = base;
  if (psize != nullptr)
    *psize = size;
  return CUDA_SUCCESS;
}

GLEAM_INTERPOSE_EXPORT CUresult cuMemcpyHtoD(CUdeviceptr dst, const void* src, size_t n) {
  return cu(cudaMemcpy(reinterpret_cast<void*>(dst), src, n, cudaMemcpyHostToDevice));
}

GLEAM_INTERPOSE_EXPORT CUresult cuMemcpyDtoH(void* dst, CUdeviceptr src, size_t n) {
  return cu(cudaMemcpy(dst, reinterpret_cast<void*>(src), n, cudaMemcpyDeviceToHost));
}

GLEAM_INTERPOSE_EXPORT CUresult cuMemcpyDtoD(CUdeviceptr dst, CUdeviceptr src, size_t n) {
  return cu(cudaMemcpy(reinterpret_cast<void*>(dst), reinterpret_cast<void*>(src), n,
                       cudaMemcpyDeviceToDevice));
}

GLEAM_INTERPOSE_EXPORT CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t n) {
  return cu(cudaMemcpy(reinterpret_cast<void*>(dst), reinterpret_cast<void*>(src), n,
                       cudaMemcpyDefault));
}

GLEAM_INTERPOSE_EXPORT CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t n,
                                              CUstream s) {
  return cu(cudaMemcpyAsync(reinterpret_cast<void*>(dst), reinterpret_cast<void*>(src), n,
                            cudaMemcpyDefault, s));
}

GLEAM_INTERPOSE_EXPORT CUresult cuMemcpyHtoDAsync(CUdeviceptr dst, const void* src, size_t n,
                                                  CUstream s) {
  return cu(cudaMemcpyAsync(reinterpret_cast<void*>(dst), src, n, cudaMemcpyHostToDevice, s));
}

GLEAM_INTERPOSE_EXPORT CUresult cuMemcpyDtoHAsync(void* dst, CUdeviceptr src, size_t n,
                                                  CUstream s) {
  return cu(cudaMemcpyAsync(dst, reinterpret_cast<void*>(src), n, cudaMemcpyDeviceToHost, s));
}

GLEAM_INTERPOSE_EXPORT CUresult cuMemcpyDtoDAsync(CUdeviceptr dst, CUdeviceptr src, size_t n,
                                                  CUstream s) {
  return cu(cudaMemcpyAsync(reinterpret_cast<void*>(dst), reinterpret_cast<void*>(src), n,
                            cudaMemcpyDeviceToDevice, s));
}

GLEAM_INTERPOSE_EXPORT CUresult cuMemsetD8(CUdeviceptr dst, unsigned char uc, size_t n) {
  return cu(cudaMemset(reinterpret_cast<void*>(dst), uc, n));
}

GLEAM_INTERPOSE_EXPORT CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char uc, size_t n,
                                                CUstream s) {
  return cu(cudaMemsetAsync(reinterpret_cast<void*>(dst), uc, n, s));
}

GLEAM_INTERPOSE_EXPORT CUresult cuMemsetD32(CUdeviceptr dst, unsigned int ui, size_t n) {
  return cu(api().memset_d32(dst, ui, n, nullptr, 0));
}

GLEAM_INTERPOSE_EXPORT CUresult cuMemsetD32Async(CUdeviceptr dst, unsigned int ui, size_t n,
                                                 CUstream s) {
  return cu(api().memset_d32(dst, ui, n, s, 1));
}

GLEAM_INTERPOSE_EXPORT CUresult cuPointerGetAttribute(void* data, CUpointer_attribute attribute,
                                                      CUdeviceptr ptr) {
  if (data == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  cudaPointerAttributes a{};
  if (auto err = cudaPointerGetAttributes(&a, reinterpret_cast<void*>(ptr));
      err != cudaSuccess)
    return cu(err);
  bool device = a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged;
  uint64_t base = 0, size = 0;
  bool in_allocation = api().allocation_range(ptr, &base, &size) == cudaSuccess;
  switch (attribute) {
    case CU_POINTER_ATTRIBUTE_CONTEXT:
      if (a.type == cudaMemoryTypeUnregistered)
        return CUDA_ERROR_INVALID_VALUE;
      *static_cast<CUcontext*>(data) = primary(a.device);
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
      if (a.type == cudaMemoryTypeUnregistered)
        return CUDA_ERROR_INVALID_VALUE;
      *static_cast<unsigned*>(data) = device ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST;
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
      if (a.devicePointer == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
      *static_cast<CUdeviceptr*>(data) = reinterpret_cast<CUdeviceptr>(a.devicePointer);
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_HOST_POINTER:
      if (a.hostPointer == nullptr)
        return CUDA_ERROR_INVALID_VALUE;
      *static_cast<void**>(data) = a.hostPointer;
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_IS_MANAGED:
      *static_cast<unsigned*>(data) = a.type == cudaMemoryTypeManaged ? 1 : 0;
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
      if (a.type == cudaMemoryTypeUnregistered)
        return CUDA_ERROR_INVALID_VALUE;
      *static_cast<int*>(data) = a.device;
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
      if (!in_allocation)
        return CUDA_ERROR_INVALID_VALUE;
      *static_cast<CUdeviceptr*>(data) = base;
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
      if (!in_allocation)
        return CUDA_ERROR_INVALID_VALUE;
      *static_cast<size_t*>(data) = size;
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_MAPPED:
      *static_cast<int*>(data) = in_allocation ? 1 : 0;
      return CUDA_SUCCESS;
    default:
      gleam_driver_report_unsupported("cuPointerGetAttribute",
                                      "only the context, memory type, pointers, managed, "
                                      "device ordinal, range and mapped attributes are "
                                      "answered");
      return CUDA_ERROR_NOT_SUPPORTED;
  }
}

GLEAM_INTERPOSE_EXPORT CUresult cuPointerGetAttributes(unsigned int numAttributes,
                                                       CUpointer_attribute* attributes,
                                                       void** data, CUdeviceptr ptr) {
  if (attributes == nullptr || data == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  for (unsigned i = 0; i < numAttributes; ++i) {
    if (auto err = cuPointerGetAttribute(data[i], attributes[i], ptr);
        err == CUDA_ERROR_NOT_SUPPORTED)
      return err;
    // Like the driver: an attribute that does not apply is left zeroed.
  }
  return CUDA_SUCCESS;
}

// --- modules and launches ----------------------------------------------------

GLEAM_INTERPOSE_EXPORT CUresult cuModuleLoadData(CUmodule* module, const void* image) {
  if (module == nullptr || image == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  void* m = nullptr;
  auto err = api().module_load(image, 0, &m);
  if (err != cudaSuccess)
    return cu(err);
  *module = static_cast<CUmodule>(m);
  return CUDA_SUCCESS;
}

GLEAM_INTERPOSE_EXPORT CUresult cuModuleLoadDataEx(CUmodule* module, const void* image,
                                                   unsigned int numOptions,
                                                   CUjit_option* options,
                                                   void** optionValues) {
  // JIT options tune the server's PTX compilation only; they are dropped.
  (void) numOptions;
  (void) options;
  (void) optionValues;
  return cuModuleLoadData(module, image);
}

GLEAM_INTERPOSE_EXPORT CUresult cuModuleLoadFatBinary(CUmodule* module, const void* fatCubin) {
  return cuModuleLoadData(module, fatCubin);
}

GLEAM_INTERPOSE_EXPORT CUresult cuModuleGetFunction(CUfunction* hfunc, CUmodule hmod,
                                                    const char* name) {
  if (hfunc == nullptr || name == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  void* f = nullptr;
  auto err = api().module_get_function(hmod, name, &f);
  if (err == cudaErrorSymbolNotFound)
    return CUDA_ERROR_NOT_FOUND;
  if (err != cudaSuccess)
    return cu(err);
  *hfunc = static_cast<CUfunction>(f);
  std::lock_guard<std::mutex> guard{functions_mutex};
  functions()[*hfunc] = function_origin{hmod, name};
  return CUDA_SUCCESS;
}

GLEAM_INTERPOSE_EXPORT CUresult cuFuncGetModule(CUmodule* hmod, CUfunction hfunc) {
  if (hmod == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard<std::mutex> guard{functions_mutex};
  auto i = functions().find(hfunc);
  if (i == functions().end())
    return CUDA_ERROR_INVALID_HANDLE;
  *hmod = i->second.module;
  return CUDA_SUCCESS;
}

GLEAM_INTERPOSE_EXPORT CUresult cuFuncGetName(const char** name, CUfunction hfunc) {
  if (name == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard<std::mutex> guard{functions_mutex};
  auto i = functions().find(hfunc);
  if (i == functions().end())
    return CUDA_ERROR_INVALID_HANDLE;
  *name = i->second.name.c_str();
  return CUDA_SUCCESS;
}

GLEAM_INTERPOSE_EXPORT CUresult cuFuncGetParamInfo(CUfunction func, size_t paramIndex,
                                                   size_t* paramOffset, size_t* paramSize) {
  if (func == nullptr)
    return CUDA_ERROR_INVALID_HANDLE;
  if (paramOffset == nullptr && paramSize == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  if (!gleam::interpose::driver::client_has(offsetof(gleam_private_interface, function_param)))
    return CUDA_ERROR_NOT_SUPPORTED; // an older libcudart.so.13 beside this library
  auto err = api().function_param(func, paramIndex, paramOffset, paramSize);
  return err == cudaErrorInvalidResourceHandle ? CUDA_ERROR_INVALID_HANDLE : cu(err);
}

/// Functions load with their module (cuModuleGetLoadingMode says eager).
GLEAM_INTERPOSE_EXPORT CUresult cuFuncIsLoaded(CUfunctionLoadingState* state, CUfunction function) {
  if (state == nullptr || function == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  *state = CU_FUNCTION_LOADING_STATE_LOADED;
  return CUDA_SUCCESS;
}

GLEAM_INTERPOSE_EXPORT CUresult cuFuncLoad(CUfunction function) {
  return function != nullptr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

GLEAM_INTERPOSE_EXPORT CUresult cuModuleLoad(CUmodule* module, const char* fname) {
  if (module == nullptr || fname == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  std::ifstream in{fname, std::ios::binary};
  if (!in)
    return CUDA_ERROR_FILE_NOT_FOUND;
  std::string image{std::istreambuf_iterator<char>{in}, std::istreambuf_iterator<char>{}};
  image.push_back('\0'); // a PTX file is text without its terminator
  return cuModuleLoadData(module, image.data());
}

GLEAM_INTERPOSE_EXPORT CUresult cuModuleGetGlobal(CUdeviceptr* dptr, size_t* bytes,
                                                  CUmodule hmod, const char* name) {
  uint64_t p = 0;
  auto err = api().module_get_global(hmod, name, &p, bytes);
  if (err == cudaErrorSymbolNotFound)
    return CUDA_ERROR_NOT_FOUND;
  if (err != cudaSuccess)
    return cu(err);
  if (dptr != nullptr)
    *dptr = p;
  return CUDA_SUCCESS;
}

GLEAM_INTERPOSE_EXPORT CUresult cuModuleUnload(CUmodule hmod) {
  auto err = cu(api().module_unload(hmod));
  if (err == CUDA_SUCCESS) {
    std::lock_guard<std::mutex> guard{functions_mutex};
    for (auto i = functions().begin(); i != functions().end();)
      i = i->second.module == hmod ? functions().erase(i) : std::next(i);
  }
  return err;
}

/// Modules load when they are asked for: cuModuleLoadData sends the image at
/// once and fails there if the server's driver refuses it.
GLEAM_INTERPOSE_EXPORT CUresult cuModuleGetLoadingMode(CUmoduleLoadingMode* mode) {
  if (mode == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  *mode = CU_MODULE_EAGER_LOADING;
  return CUDA_SUCCESS;
}

GLEAM_INTERPOSE_EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned int gridDimX,
                                               unsigned int gridDimY, unsigned int gridDimZ,
                                               unsigned int blockDimX, unsigned int blockDimY,
                                               unsigned int blockDimZ,
                                               unsigned int sharedMemBytes, CUstream hStream,
                                               void** kernelParams, void** extra) {
  if (f == nullptr)
    return CUDA_ERROR_INVALID_HANDLE;
  if (extra != nullptr) {
    gleam_driver_report_unsupported("cuLaunchKernel with extra",
                                    "pass the arguments through kernelParams");
    return CUDA_ERROR_NOT_SUPPORTED;
  }
  // A CUfunction from cuModuleGetFunction is registered with the runtime, so
  // cudaLaunchKernel packs kernelParams by the layout the server reported.
  return cu(cudaLaunchKernel(f, dim3(gridDimX, gridDimY, gridDimZ),
                             dim3(blockDimX, blockDimY, blockDimZ), kernelParams,
                             sharedMemBytes, hStream));
}

// CUlaunchAttribute and cudaLaunchAttribute are one layout (id, padding, a
// 64-byte value union whose CUevent members are the runtime's cudaEvent_t
// handles here), so the driver's attributes pass to cudaLaunchKernelExC as
// they are.
static_assert(sizeof(CUlaunchAttribute) == sizeof(cudaLaunchAttribute));
static_assert(offsetof(CUlaunchAttribute, value) == offsetof(cudaLaunchAttribute, val));
static_assert(sizeof(CUlaunchAttributeValue) == sizeof(cudaLaunchAttributeValue));

GLEAM_INTERPOSE_EXPORT CUresult cuLaunchKernelEx(const CUlaunchConfig* config, CUfunction f,
                                                 void** kernelParams, void** extra) {
  if (config == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  if (f == nullptr)
    return CUDA_ERROR_INVALID_HANDLE;
  if (extra != nullptr) {
    gleam_driver_report_unsupported("cuLaunchKernelEx with extra",
                                    "pass the arguments through kernelParams");
    return CUDA_ERROR_NOT_SUPPORTED;
  }
  cudaLaunchConfig_t c{};
  c.gridDim = dim3(config->gridDimX, config->gridDimY, config->gridDimZ);
  c.blockDim = dim3(config->blockDimX, config->blockDimY, config->blockDimZ);
  c.dynamicSmemBytes = config->sharedMemBytes;
  c.stream = config->hStream;
  c.attrs = reinterpret_cast<cudaLaunchAttribute*>(config->attrs);
  c.numAttrs = config->numAttrs;
  return cu(cudaLaunchKernelExC(&c, f, kernelParams));
}

GLEAM_INTERPOSE_EXPORT CUresult cuLaunchCooperativeKernel(
  CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
  unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,
  unsigned int sharedMemBytes, CUstream hStream, void** kernelParams) {
  if (f == nullptr)
    return CUDA_ERROR_INVALID_HANDLE;
  return cu(cudaLaunchCooperativeKernel(f, dim3(gridDimX, gridDimY, gridDimZ),
                                        dim3(blockDimX, blockDimY, blockDimZ), kernelParams,
                                        sharedMemBytes, hStream));
}

GLEAM_INTERPOSE_EXPORT CUresult cuFuncGetAttribute(int* pi, CUfunction_attribute attrib,
                                                   CUfunction hfunc) {
  if (pi == nullptr || hfunc == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  auto err = api().function_attribute(hfunc, attrib, pi);
  return err == cudaSuccess ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

GLEAM_INTERPOSE_EXPORT CUresult cuFuncSetAttribute(CUfunction hfunc, CUfunction_attribute attrib,
                                                   int value) {
  // cudaFuncAttribute numbers equal the settable CUfunction_attribute ones.
  return cu(cudaFuncSetAttribute(hfunc, static_cast<cudaFuncAttribute>(attrib), value));
}

GLEAM_INTERPOSE_EXPORT CUresult cuFuncSetCacheConfig(CUfunction hfunc, CUfunc_cache config) {
  return cu(cudaFuncSetCacheConfig(hfunc, static_cast<cudaFuncCache>(config)));
}

GLEAM_INTERPOSE_EXPORT CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(
  int* numBlocks, CUfunction func, int blockSize, size_t dynamicSMemSize) {
  return cu(cudaOccupancyMaxActiveBlocksPerMultiprocessor(numBlocks, func, blockSize,
                                                          dynamicSMemSize));
}

GLEAM_INTERPOSE_EXPORT CUresult cuOccupancyMaxPotentialBlockSize(
  int* minGridSize, int* blockSize, CUfunction func, CUoccupancyB2DSize blockSizeToDynamicSMemSize,
  size_t dynamicSMemSize, int blockSizeLimit) {
  return potential_block_size(minGridSize, blockSize, func, blockSizeToDynamicSMemSize,
                              dynamicSMemSize, blockSizeLimit, CU_OCCUPANCY_DEFAULT);
}

GLEAM_INTERPOSE_EXPORT CUresult cuOccupancyMaxPotentialBlockSizeWithFlags(
  int* minGridSize, int* blockSize, CUfunction func, CUoccupancyB2DSize blockSizeToDynamicSMemSize,
  size_t dynamicSMemSize, int blockSizeLimit, unsigned int flags) {
  return potential_block_size(minGridSize, blockSize, func, blockSizeToDynamicSMemSize,
                              dynamicSMemSize, blockSizeLimit, flags);
}

GLEAM_INTERPOSE_EXPORT CUresult cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
  int* numBlocks, CUfunction func, int blockSize, size_t dynamicSMemSize, unsigned int flags) {
  return cu(cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
    numBlocks, func, blockSize, dynamicSMemSize, flags));
}

// --- streams and events --------------------------------------------------------

GLEAM_INTERPOSE_EXPORT CUresult cuStreamCreate(CUstream* phStream, unsigned int Flags) {
  return cu(cudaStreamCreateWithFlags(phStream, Flags));
}

GLEAM_INTERPOSE_EXPORT CUresult cuStreamCreateWithPriority(CUstream* phStream,
                                                           unsigned int flags, int priority) {
  return cu(cudaStreamCreateWithPriority(phStream, flags, priority));
}

GLEAM_INTERPOSE_EXPORT CUresult cuStreamDestroy(CUstream hStream) {
  return cu(cudaStreamDestroy(hStream));
}

GLEAM_INTERPOSE_EXPORT CUresult cuStreamSynchronize(CUstream hStream) {
  return cu(cudaStreamSynchronize(hStream));
}

GLEAM_INTERPOSE_EXPORT CUresult cuStreamQuery(CUstream hStream) {
  return cu(cudaStreamQuery(hStream));
}

GLEAM_INTERPOSE_EXPORT CUresult cuStreamWaitEvent(CUstream hStream, CUevent hEvent,
                                                  unsigned int Flags) {
  return cu(cudaStreamWaitEvent(hStream, hEvent, Flags));
}

GLEAM_INTERPOSE_EXPORT CUresult cuEventCreate(CUevent* phEvent, unsigned int Flags) {
  return cu(cudaEventCreateWithFlags(phEvent, Flags));
}

GLEAM_INTERPOSE_EXPORT CUresult cuEventDestroy(CUevent hEvent) {
  return cu(cudaEventDestroy(hEvent));
}

GLEAM_INTERPOSE_EXPORT CUresult cuEventRecord(CUevent hEvent, CUstream hStream) {
  return cu(cudaEventRecord(hEvent, hStream));
}

GLEAM_INTERPOSE_EXPORT CUresult cuEventSynchronize(CUevent hEvent) {
  return cu(cudaEventSynchronize(hEvent));
}

GLEAM_INTERPOSE_EXPORT CUresult cuEventQuery(CUevent hEvent) {
  return cu(cudaEventQuery(hEvent));
}

GLEAM_INTERPOSE_EXPORT CUresult cuEventElapsedTime(float* pMilliseconds, CUevent hStart,
                                                   CUevent hEnd) {
  return cu(cudaEventElapsedTime(pMilliseconds, hStart, hEnd));
}

} // extern "C"
