// Gleam's libcuda.so.1: the driver-level surface. Every call is answered
// from the process's one client inside Gleam's libcudart.so.13 (public
// runtime calls and the private interface, interpose/private_interface.h),
// so runtime and driver calls share one session, one registry and one
// sequence of ops. Only the primary context exists: a CUcontext is a fake
// handle per device, current once set or once the session is open.
#include "interpose/cuda_export.hpp"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "interpose/driver/client.hpp"
#include "interpose/driver/report.hpp"
#include "interpose/driver/result_names.hpp"
#include "interpose/private_interface.h"

namespace {

const gleam_private_interface& api() {
  return gleam::interpose::driver::client();
}

CUresult cu(cudaError_t x) {
  return static_cast<CUresult>(api().to_cu_result(x));
}

CUresult cu(int x) {
  return static_cast<CUresult>(api().to_cu_result(x));
}

// --- contexts ---------------------------------------------------------------

constexpr int max_devices = 64;

/// A CUcontext of the driver surface. Every context of a device maps onto
/// the session's one server context for that device: the primary contexts
/// (one per device, never destroyed) and those cuCtxCreate makes, which
/// share the session's memory, modules and streams with it.
struct fake_context {
  int device;
  unsigned flags = 0;
  bool alive = true;
};

fake_context contexts[max_devices] = {};

struct init_contexts {
  init_contexts() {
    for (int i = 0; i < max_devices; ++i)
      contexts[i].device = i;
  }
} init_contexts_once;

std::mutex created_mutex;

/// Contexts from cuCtxCreate. Never freed: a destroyed one stays known as
/// dead, so that a stale handle is refused rather than mistaken for a new
/// context at the same address.
std::set<fake_context*>& created() {
  static auto* all = new std::set<fake_context*>;
  return *all;
}

CUcontext primary(int dev) {
  return reinterpret_cast<CUcontext>(&contexts[dev]);
}

bool is_primary(CUcontext c) {
  auto* p = reinterpret_cast<fake_context*>(c);
  return p >= contexts && p < contexts + max_devices;
}

int device_of(CUcontext c) {
  auto* p = reinterpret_cast<fake_context*>(c);
  if (is_primary(c))
    return p->device;
  std::lock_guard<std::mutex> guard{created_mutex};
  auto i = created().find(p);
  return i != created().end() && (*i)->alive ? (*i)->device : -1;
}

/// The calling thread's context stack; empty = "the primary context of the
/// runtime's current device once the session is open".
thread_local std::vector<CUcontext> ctx_stack;
thread_local bool ctx_cleared = false;

CUcontext current() {
  if (!ctx_stack.empty())
    return ctx_stack.back();
  if (ctx_cleared || api().connected() == 0)
    return nullptr;
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= max_devices)
    return nullptr;
  return primary(dev);
}

CUresult check_device(CUdevice dev) {
  int count = 0;
  if (auto err = cudaGetDeviceCount(&count); err != cudaSuccess)
    return cu(err);
  return dev >= 0 && dev < count && dev < max_devices ? CUDA_SUCCESS
                                                     : CUDA_ERROR_INVALID_DEVICE;
}

CUresult initialized() {
  return cu(api().connect());
}

/// The device of `ctx`, or of the current context when `ctx` is null.
CUresult context_device(CUcontext ctx, int* dev) {
  if (ctx == nullptr)
    ctx = current();
  if (ctx == nullptr)
    return CUDA_ERROR_INVALID_CONTEXT;
  *dev = device_of(ctx);
  return *dev < 0 ? CUDA_ERROR_INVALID_CONTEXT : CUDA_SUCCESS;
}

/// Runs `op` with `dev` as the runtime's device, then restores the device.
template <class Op>
CUresult on_device(int dev, Op op) {
  int was = 0;
  if (auto err = cudaGetDevice(&was); err != cudaSuccess)
    return cu(err);
  if (was != dev)
    if (auto err = cudaSetDevice(dev); err != cudaSuccess)
      return cu(err);
  auto result = op();
  if (was != dev)
    cudaSetDevice(was);
  return result;
}

} // namespace

extern "C" {

void gleam_driver_report_unsupported(const char* name, const char* reason) noexcept {
  static std::mutex mutex;
  static std::set<std::string> reported;
  try {
    std::lock_guard<std::mutex> guard{mutex};
    if (reported.insert(name).second)
      std::fprintf(stderr, "gleam: %s is not supported: %s\n", name, reason);
  } catch (...) {
    std::fprintf(stderr, "gleam: %s is not supported\n", name);
  }
}

// --- initialization, version, errors -----------------------------------------

GLEAM_INTERPOSE_EXPORT CUresult cuInit(unsigned int Flags) {
  if (Flags != 0)
    return CUDA_ERROR_INVALID_VALUE;
  return initialized();
}

GLEAM_INTERPOSE_EXPORT CUresult cuDriverGetVersion(int* driverVersion) {
  if (driverVersion == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  return cu(cudaDriverGetVersion(driverVersion));
}

GLEAM_INTERPOSE_EXPORT CUresult cuGetErrorString(CUresult error, const char** pStr) {
  if (pStr == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  *pStr = gleam::interpose::driver::result_text(error);
  return *pStr != nullptr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

GLEAM_INTERPOSE_EXPORT CUresult cuGetErrorName(CUresult error, const char** pStr) {
  if (pStr == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  *pStr = gleam::interpose::driver::result_name(error);
  return *pStr != nullptr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

// --- devices ----------------------------------------------------------------

GLEAM_INTERPOSE_EXPORT CUresult cuDeviceGetCount(int* count) {
  if (count == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  if (auto err = initialized(); err != CUDA_SUCCESS)
    return err;
  return cu(cudaGetDeviceCount(count));
}

GLEAM_INTERPOSE_EXPORT CUresult cuDeviceGet(CUdevice* device, int ordinal) {
  if (device == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  if (auto err = initialized(); err != CUDA_SUCCESS)
    return err;
  if (auto err = check_device(ordinal); err != CUDA_SUCCESS)
    return err;
  *device = ordinal;
  return CUDA_SUCCESS;
}

GLEAM_INTERPOSE_EXPORT CUresult cuDeviceGetName(char* name, int len, CUdevice dev) {
  if (name == nullptr || len <= 0)
    return CUDA_ERROR_INVALID_VALUE;
  cudaDeviceProp prop{};
  if (auto err = cudaGetDeviceProperties(&prop, dev); err != cudaSuccess)
    return cu(err);
  std::snprintf(name, static_cast<size_t>(len), "%s", prop.name);
  return CUDA_SUCCESS;
}

GLEAM_INTERPOSE_EXPORT CUresult cuDeviceGetAttribute(int* pi, CUdevice_attribute attrib,
                                                     CUdevice dev) {
  if (pi == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  // cudaDeviceAttr numbers equal CUdevice_attribute numbers.
  return cu(cudaDeviceGetAttribute(pi, static_cast<cudaDeviceAttr>(attrib), dev));
}

GLEAM_INTERPOSE_EXPORT CUresult cuDeviceTotalMem(size_t* bytes, CUdevice dev) {
  if (bytes == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  cudaDeviceProp prop{};
  if (auto err = cudaGetDeviceProperties(&prop, dev); err != cudaSuccess)
    return cu(err);
  *bytes = prop.totalGlobalMem;
  return CUDA_SUCCESS;
}

GLEAM_INTERPOSE_EXPORT CUresult cuDeviceGetUuid(CUuuid* uuid, CUdevice dev) {
  if (uuid == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  cudaDeviceProp prop{};
  if (auto err = cudaGetDeviceProperties(&prop, dev); err != cudaSuccess)
    return cu(err);
  static_assert(sizeof(prop.uuid) == sizeof(*uuid));
  std::memcpy(uuid, &prop.uuid, sizeof(*uuid));
  return CUDA_SUCCESS;
}

GLEAM_INTERPOSE_EXPORT CUresult cuDeviceGetPCIBusId(char* pciBusId, int len, CUdevice dev) {
  if (pciBusId == nullptr || len <= 0)
    return CUDA_ERROR_INVALID_VALUE;
  return cu(cudaDeviceGetPCIBusId(pciBusId, len, dev));
}

// --- primary context and the context stack -----------------------------------

GLEAM_INTERPOSE_EXPORT CUresult cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int* flags,
                                                           int* active) {
  if (flags == nullptr || active == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  // The session holds the server's primary context: active once it was open.
  int open = api().connected();
  if (auto err = initialized(); err != CUDA_SUCCESS)
    return err;
  if (auto err = check_device(dev); err != CUDA_SUCCESS)
    return err;
  *active = open;
  unsigned f = 0;
  *flags = cudaGetDeviceFlags(&f) == cudaSuccess ? (f & ~cudaDeviceMapHost) : 0;
  return CUDA_SUCCESS;
}

GLEAM_INTERPOSE_EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext* pctx, CUdevice dev) {
  if (pctx == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  if (auto err = initialized(); err != CUDA_SUCCESS)
    return err;
  if (auto err = check_device(dev); err != CUDA_SUCCESS)
    return err;
  *pctx = primary(dev);
  return CUDA_SUCCESS;
}

GLEAM_INTERPOSE_EXPORT CUresult cuDevicePrimaryCtxRelease(CUdevice dev) {
  return check_device(dev);
}

GLEAM_INTERPOSE_EXPORT CUresult cuDevicePrimaryCtxSetFlags(CUdevice dev, unsigned int flags) {
  if (auto err = check_device(dev); err != CUDA_SUCCESS)
    return err;
  return cu(cudaSetDeviceFlags(flags));
}

GLEAM_INTERPOSE_EXPORT CUresult cuDevicePrimaryCtxReset(CUdevice dev) {
  if (auto err = check_device(dev); err != CUDA_SUCCESS)
    return err;
  return cu(cudaDeviceReset());
}

GLEAM_INTERPOSE_EXPORT CUresult cuCtxGetCurrent(CUcontext* pctx) {
  if (pctx == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  *pctx = current();
  return CUDA_SUCCESS;
}

GLEAM_INTERPOSE_EXPORT CUresult cuCtxSetCurrent(CUcontext ctx) {
  if (ctx == nullptr) {
    ctx_stack.clear();
    ctx_cleared = true;
    return CUDA_SUCCESS;
  }
  int dev = device_of(ctx);
  if (dev < 0)
    return CUDA_ERROR_INVALID_CONTEXT;
  if (auto err = cudaSetDevice(dev); err != cudaSuccess)
    return cu(err);
  if (ctx_stack.empty())
    ctx_stack.push_back(ctx);
  else
    ctx_stack.back() = ctx;
  ctx_cleared = false;
  return CUDA_SUCCESS;
}

GLEAM_INTERPOSE_EXPORT CUresult cuCtxPushCurrent(CUcontext ctx) {
  int dev = device_of(ctx);
  if (dev < 0)
    return CUDA_ERROR_INVALID_CONTEXT;
  if (auto err = cudaSetDevice(dev); err != cudaSuccess)
    return cu(err);
  ctx_stack.push_back(ctx);
  ctx_cleared = false;
  return CUDA_SUCCESS;
}

GLEAM_INTERPOSE_EXPORT CUresult cuCtxPopCurrent(CUcontext* pctx) {
  if (ctx_stack.empty())
    return CUDA_ERROR_INVALID_CONTEXT;
  if (pctx != nullptr)
    *pctx = ctx_stack.back();
  ctx_stack.pop_back();
  if (!ctx_stack.empty())
    return cu(cudaSetDevice(device_of(ctx_stack.back())));
  return CUDA_SUCCESS;
}

/// cuCtxCreate for every ABI: a new context on `dev`, current to the
/// calling thread. Scheduling flags apply to the device (they are the
/// session's); execution affinity and CIG are not remoted.
static CUresult create_context(CUcontext* pctx, unsigned int flags, CUdevice dev) {
  if (pctx == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  if (auto err = initialized(); err != CUDA_SUCCESS)
    return err;
  if (auto err = check_device(dev); err != CUDA_SUCCESS)
    return err;
  if (auto err = cudaSetDevice(dev); err != cudaSuccess)
    return cu(err);
  auto* c = new fake_context{dev, flags};
  {
    std::lock_guard<std::mutex> guard{created_mutex};
    created().insert(c);
  }
  auto ctx = reinterpret_cast<CUcontext>(c);
  ctx_stack.push_back(ctx);
  ctx_cleared = false;
  *pctx = ctx;
  return CUDA_SUCCESS;
}

GLEAM_INTERPOSE_EXPORT CUresult cuCtxCreate_v2(CUcontext* pctx, unsigned int flags,
                                               CUdevice dev) {
  return create_context(pctx, flags, dev);
}

GLEAM_INTERPOSE_EXPORT CUresult cuCtxCreate_v3(CUcontext* pctx, CUexecAffinityParam* paramsArray,
                                               int numParams, unsigned int flags,
                                               CUdevice dev) {
  if (numParams < 0 || (numParams > 0 && paramsArray == nullptr))
    return CUDA_ERROR_INVALID_VALUE;
  if (numParams > 0) {
    gleam_driver_report_unsupported("cuCtxCreate_v3 (execution affinity)",
                                    "SM affinity of a context is not remoted");
    return CUDA_ERROR_NOT_SUPPORTED;
  }
  return create_context(pctx, flags, dev);
}

GLEAM_INTERPOSE_EXPORT CUresult cuCtxCreate_v4(CUcontext* pctx, CUctxCreateParams* params,
                                               unsigned int flags, CUdevice dev) {
  if (params != nullptr && (params->execAffinityParams != nullptr || params->cigParams != nullptr)) {
    gleam_driver_report_unsupported("cuCtxCreate_v4 (execution affinity, CIG)",
                                    "SM affinity and CUDA-in-graphics contexts are not remoted");
    return CUDA_ERROR_NOT_SUPPORTED;
  }
  return create_context(pctx, flags, dev);
}

/// Destroys a created context: the device finishes its work first, and the
/// context leaves the calling thread's stack. What was allocated while it
/// was current stays the session's until freed or the session ends.
GLEAM_INTERPOSE_EXPORT CUresult cuCtxDestroy_v2(CUcontext ctx) {
  if (ctx == nullptr || is_primary(ctx))
    return CUDA_ERROR_INVALID_CONTEXT;
  int dev = device_of(ctx);
  if (dev < 0)
    return CUDA_ERROR_INVALID_CONTEXT;
  if (auto err = on_device(dev, [] { return cu(cudaDeviceSynchronize()); });
      err != CUDA_SUCCESS)
    return err;
  {
    std::lock_guard<std::mutex> guard{created_mutex};
    reinterpret_cast<fake_context*>(ctx)->alive = false;
  }
  for (auto i = ctx_stack.begin(); i != ctx_stack.end();)
    i = *i == ctx ? ctx_stack.erase(i) : std::next(i);
  if (!ctx_stack.empty())
    return cu(cudaSetDevice(device_of(ctx_stack.back())));
  return CUDA_SUCCESS;
}

GLEAM_INTERPOSE_EXPORT CUresult cuCtxGetDevice(CUdevice* device) {
  if (device == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  auto c = current();
  if (c == nullptr)
    return CUDA_ERROR_INVALID_CONTEXT;
  *device = device_of(c);
  return CUDA_SUCCESS;
}

GLEAM_INTERPOSE_EXPORT CUresult cuCtxGetDevice_v2(CUdevice* device, CUcontext ctx) {
  if (device == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  int dev = 0;
  if (auto err = context_device(ctx, &dev); err != CUDA_SUCCESS)
    return err;
  *device = dev;
  return CUDA_SUCCESS;
}

GLEAM_INTERPOSE_EXPORT CUresult cuCtxSynchronize_v2(CUcontext ctx) {
  int dev = 0;
  if (auto err = context_device(ctx, &dev); err != CUDA_SUCCESS)
    return err;
  return on_device(dev, [] { return cu(cudaDeviceSynchronize()); });
}

GLEAM_INTERPOSE_EXPORT CUresult cuCtxGetFlags(unsigned int* flags) {
  if (flags == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  auto c = current();
  if (c == nullptr)
    return CUDA_ERROR_INVALID_CONTEXT;
  if (!is_primary(c)) {
    *flags = reinterpret_cast<fake_context*>(c)->flags;
    return CUDA_SUCCESS;
  }
  unsigned f = 0;
  if (auto err = cudaGetDeviceFlags(&f); err != cudaSuccess)
    return cu(err);
  *flags = f & ~cudaDeviceMapHost;
  return CUDA_SUCCESS;
}

/// A primary context's id: unique in the process, stable while it lives.
GLEAM_INTERPOSE_EXPORT CUresult cuCtxGetId(CUcontext ctx, unsigned long long* ctxId) {
  if (ctxId == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  int dev = 0;
  if (auto err = context_device(ctx, &dev); err != CUDA_SUCCESS)
    return err;
  *ctxId = static_cast<unsigned long long>(dev) + 1;
  return CUDA_SUCCESS;
}

GLEAM_INTERPOSE_EXPORT CUresult cuCtxGetStreamPriorityRange(int* leastPriority,
                                                            int* greatestPriority) {
  if (current() == nullptr)
    return CUDA_ERROR_INVALID_CONTEXT;
  return cu(cudaDeviceGetStreamPriorityRange(leastPriority, greatestPriority));
}

GLEAM_INTERPOSE_EXPORT CUresult cuCtxGetCacheConfig(CUfunc_cache* pconfig) {
  if (pconfig == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  if (current() == nullptr)
    return CUDA_ERROR_INVALID_CONTEXT;
  cudaFuncCache config{};
  if (auto err = cudaDeviceGetCacheConfig(&config); err != cudaSuccess)
    return cu(err);
  *pconfig = static_cast<CUfunc_cache>(config);
  return CUDA_SUCCESS;
}

GLEAM_INTERPOSE_EXPORT CUresult cuCtxSetCacheConfig(CUfunc_cache config) {
  if (current() == nullptr)
    return CUDA_ERROR_INVALID_CONTEXT;
  return cu(cudaDeviceSetCacheConfig(static_cast<cudaFuncCache>(config)));
}

GLEAM_INTERPOSE_EXPORT CUresult cuCtxGetApiVersion(CUcontext ctx, unsigned int* version) {
  if (version == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  if (ctx != nullptr && device_of(ctx) < 0)
    return CUDA_ERROR_INVALID_CONTEXT;
  *version = 3020;
  return CUDA_SUCCESS;
}

GLEAM_INTERPOSE_EXPORT CUresult cuCtxSynchronize(void) {
  if (current() == nullptr)
    return CUDA_ERROR_INVALID_CONTEXT;
  return cu(cudaDeviceSynchronize());
}

// The current context's limits are its device's: the server's driver
// answers and sets them (the runtime's cudaDeviceGetLimit / SetLimit carry
// the CUlimit value as it is, driver-only limits included).
GLEAM_INTERPOSE_EXPORT CUresult cuCtxGetLimit(size_t* pvalue, CUlimit limit) {
  if (pvalue == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  if (current() == nullptr)
    return CUDA_ERROR_INVALID_CONTEXT;
  return cu(cudaDeviceGetLimit(pvalue, static_cast<cudaLimit>(limit)));
}

GLEAM_INTERPOSE_EXPORT CUresult cuCtxSetLimit(CUlimit limit, size_t value) {
  if (current() == nullptr)
    return CUDA_ERROR_INVALID_CONTEXT;
  return cu(cudaDeviceSetLimit(static_cast<cudaLimit>(limit), value));
}

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
  return CUDA_SUCCESS;
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
  return cu(api().module_unload(hmod));
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
