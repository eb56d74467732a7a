// The driver surface's contexts and devices: primary contexts, those
// cuCtxCreate makes, each thread's context stack, initialization and the
// device queries. Every context of a device maps onto the session's one
// server context for it.
#include "interpose/driver/common.hpp"

#include <cstdio>
#include <cstring>
#include <iterator>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "interpose/driver/report.hpp"
#include "interpose/driver/result_names.hpp"

namespace gleam::interpose::driver {

namespace {

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

bool is_primary(CUcontext c) {
  auto* p = reinterpret_cast<fake_context*>(c);
  return p >= contexts && p < contexts + max_devices;
}

/// The calling thread's context stack; empty = "the primary context of the
/// runtime's current device once the session is open".
thread_local std::vector<CUcontext> ctx_stack;
thread_local bool ctx_cleared = false;

} // namespace

CUcontext primary(int dev) {
  return reinterpret_cast<CUcontext>(&contexts[dev]);
}

int device_of(CUcontext c) {
  auto* p = reinterpret_cast<fake_context*>(c);
  if (is_primary(c))
    return p->device;
  std::lock_guard<std::mutex> guard{created_mutex};
  auto i = created().find(p);
  return i != created().end() && (*i)->alive ? (*i)->device : -1;
}

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

} // namespace gleam::interpose::driver

using namespace gleam::interpose::driver;

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
  release_context_storage(primary(dev));
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
  release_context_storage(ctx);
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

GLEAM_INTERPOSE_EXPORT CUresult cuDeviceComputeCapability(int* major, int* minor, CUdevice dev) {
  if (major == nullptr || minor == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  if (auto err = cuDeviceGetAttribute(major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
      err != CUDA_SUCCESS)
    return err;
  return cuDeviceGetAttribute(minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
}

GLEAM_INTERPOSE_EXPORT CUresult cuDeviceGetProperties(CUdevprop* prop, CUdevice dev) {
  if (prop == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  const std::pair<int*, CUdevice_attribute> fields[] = {
    {&prop->maxThreadsPerBlock, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK},
    {&prop->maxThreadsDim[0], CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X},
    {&prop->maxThreadsDim[1], CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y},
    {&prop->maxThreadsDim[2], CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z},
    {&prop->maxGridSize[0], CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X},
    {&prop->maxGridSize[1], CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y},
    {&prop->maxGridSize[2], CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z},
    {&prop->sharedMemPerBlock, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK},
    {&prop->totalConstantMemory, CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY},
    {&prop->SIMDWidth, CU_DEVICE_ATTRIBUTE_WARP_SIZE},
    {&prop->memPitch, CU_DEVICE_ATTRIBUTE_MAX_PITCH},
    {&prop->regsPerBlock, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK},
    {&prop->clockRate, CU_DEVICE_ATTRIBUTE_CLOCK_RATE},
    {&prop->textureAlign, CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT},
  };
  for (const auto& [field, attribute] : fields)
    if (auto err = cuDeviceGetAttribute(field, attribute, dev); err != CUDA_SUCCESS)
      return err;
  return CUDA_SUCCESS;
}

} // extern "C"
