// Device management and queries, answered from the session's device list
// (SessionOpened.devices) except where the server must act.
#define __CUDA_API_VERSION_INTERNAL
#include "interpose/export.hpp"

#include <algorithm>
#include <cuda.h>

#include <cstdio>
#include <cstring>
#include <vector>

#include "interpose/capture_state.hpp"
#include "interpose/mirror.hpp"
#include "interpose/runtime.hpp"
#include "interpose/vmm.hpp"

using namespace gleam::interpose;
namespace proto = gleam::proto;

namespace {

int attr(CUdevice_attribute a, int fallback = 0) {
  return device_attribute(static_cast<int>(a), fallback);
}

/// Every cudaDeviceProp field from the server's device: name, uuid and
/// memory from its DeviceInfo, every other field from the CUdevice_attribute
/// that CUDA fills it from (the server reads them all at session open).
cudaError_t fill_properties(cudaDeviceProp* p, int device) {
  const auto& opened = session();
  if (device < 0 || device >= opened.devices_size())
    return cudaErrorInvalidDevice;
  const auto& d = opened.devices(device);
  auto saved = reg().device;
  reg().device = device;
  *p = cudaDeviceProp{};
  std::snprintf(p->name, sizeof(p->name), "%s", d.name().c_str());
  std::memcpy(p->uuid.bytes, d.uuid().data(), std::min<size_t>(16, d.uuid().size()));
  std::memcpy(p->luid, d.luid().data(), std::min<size_t>(8, d.luid().size()));
  p->totalGlobalMem = d.total_memory();
  p->sharedMemPerBlock = static_cast<size_t>(attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK));
  p->regsPerBlock = attr(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK);
  p->warpSize = attr(CU_DEVICE_ATTRIBUTE_WARP_SIZE, 32);
  p->memPitch = static_cast<size_t>(attr(CU_DEVICE_ATTRIBUTE_MAX_PITCH));
  p->maxThreadsPerBlock = attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  p->maxThreadsDim[0] = attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X);
  p->maxThreadsDim[1] = attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y);
  p->maxThreadsDim[2] = attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z);
  p->maxGridSize[0] = attr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X);
  p->maxGridSize[1] = attr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y);
  p->maxGridSize[2] = attr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z);
  p->totalConstMem = static_cast<size_t>(attr(CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY));
  p->major = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  p->minor = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  p->textureAlignment = static_cast<size_t>(attr(CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT));
  p->texturePitchAlignment = static_cast<size_t>(attr(CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT));
  p->multiProcessorCount = attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  p->integrated = attr(CU_DEVICE_ATTRIBUTE_INTEGRATED);
  p->canMapHostMemory = attr(CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY);
  p->maxTexture1D = attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_WIDTH);
  p->maxTexture2D[0] = attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_WIDTH);
  p->maxTexture2D[1] = attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_HEIGHT);
  p->maxTexture3D[0] = attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH);
  p->maxTexture3D[1] = attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT);
  p->maxTexture3D[2] = attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH);
  p->maxTexture1DMipmap = attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_MIPMAPPED_WIDTH);
  p->maxTexture2DMipmap[0] = attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_MIPMAPPED_WIDTH);
  p->maxTexture2DMipmap[1] = attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_MIPMAPPED_HEIGHT);
  p->maxTexture2DLinear[0] = attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_WIDTH);
  p->maxTexture2DLinear[1] = attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_HEIGHT);
  p->maxTexture2DLinear[2] = attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_PITCH);
  p->maxTexture2DGather[0] = attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_GATHER_WIDTH);
  p->maxTexture2DGather[1] = attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_GATHER_HEIGHT);
  p->maxTexture3DAlt[0] = attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH_ALTERNATE);
  p->maxTexture3DAlt[1] = attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT_ALTERNATE);
  p->maxTexture3DAlt[2] = attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH_ALTERNATE);
  p->maxTextureCubemap = attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_WIDTH);
  p->maxTexture1DLayered[0] = attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LAYERED_WIDTH);
  p->maxTexture1DLayered[1] = attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LAYERED_LAYERS);
  p->maxTexture2DLayered[0] = attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_WIDTH);
  p->maxTexture2DLayered[1] = attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_HEIGHT);
  p->maxTexture2DLayered[2] = attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_LAYERS);
  p->maxTextureCubemapLayered[0] = attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_LAYERED_WIDTH);
  p->maxTextureCubemapLayered[1] = attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_LAYERED_LAYERS);
  p->maxSurface1D = attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_WIDTH);
  p->maxSurface2D[0] = attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_WIDTH);
  p->maxSurface2D[1] = attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_HEIGHT);
  p->maxSurface3D[0] = attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_WIDTH);
  p->maxSurface3D[1] = attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_HEIGHT);
  p->maxSurface3D[2] = attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_DEPTH);
  p->maxSurface1DLayered[0] = attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_LAYERED_WIDTH);
  p->maxSurface1DLayered[1] = attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_LAYERED_LAYERS);
  p->maxSurface2DLayered[0] = attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_WIDTH);
  p->maxSurface2DLayered[1] = attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_HEIGHT);
  p->maxSurface2DLayered[2] = attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_LAYERS);
  p->maxSurfaceCubemap = attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_WIDTH);
  p->maxSurfaceCubemapLayered[0] = attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_LAYERED_WIDTH);
  p->maxSurfaceCubemapLayered[1] = attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_LAYERED_LAYERS);
  p->surfaceAlignment = static_cast<size_t>(attr(CU_DEVICE_ATTRIBUTE_SURFACE_ALIGNMENT));
  p->concurrentKernels = attr(CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS);
  p->ECCEnabled = attr(CU_DEVICE_ATTRIBUTE_ECC_ENABLED);
  p->pciBusID = attr(CU_DEVICE_ATTRIBUTE_PCI_BUS_ID);
  p->pciDeviceID = attr(CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID);
  p->pciDomainID = attr(CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID);
  p->tccDriver = attr(CU_DEVICE_ATTRIBUTE_TCC_DRIVER);
  p->asyncEngineCount = attr(CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT);
  p->unifiedAddressing = attr(CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING);
  p->memoryBusWidth = attr(CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
  p->l2CacheSize = attr(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
  p->persistingL2CacheMaxSize = attr(CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE);
  p->maxThreadsPerMultiProcessor = attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
  p->streamPrioritiesSupported = attr(CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED);
  p->globalL1CacheSupported = attr(CU_DEVICE_ATTRIBUTE_GLOBAL_L1_CACHE_SUPPORTED);
  p->localL1CacheSupported = attr(CU_DEVICE_ATTRIBUTE_LOCAL_L1_CACHE_SUPPORTED);
  p->sharedMemPerMultiprocessor = static_cast<size_t>(attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR));
  p->regsPerMultiprocessor = attr(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR);
  p->managedMemory = attr(CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY);
  p->isMultiGpuBoard = attr(CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD);
  p->multiGpuBoardGroupID = attr(CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD_GROUP_ID);
  p->hostNativeAtomicSupported = attr(CU_DEVICE_ATTRIBUTE_HOST_NATIVE_ATOMIC_SUPPORTED);
  p->pageableMemoryAccess = attr(CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS);
  p->concurrentManagedAccess = attr(CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS);
  p->computePreemptionSupported = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_PREEMPTION_SUPPORTED);
  p->canUseHostPointerForRegisteredMem = attr(CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM);
  p->cooperativeLaunch = attr(CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH);
  p->sharedMemPerBlockOptin = static_cast<size_t>(attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN));
  p->pageableMemoryAccessUsesHostPageTables = attr(CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES);
  p->directManagedMemAccessFromHost = attr(CU_DEVICE_ATTRIBUTE_DIRECT_MANAGED_MEM_ACCESS_FROM_HOST);
  p->maxBlocksPerMultiProcessor = attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR);
  p->accessPolicyMaxWindowSize = attr(CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE);
  p->reservedSharedMemPerBlock = static_cast<size_t>(attr(CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK));
  p->hostRegisterSupported = attr(CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED);
  p->sparseCudaArraySupported = attr(CU_DEVICE_ATTRIBUTE_SPARSE_CUDA_ARRAY_SUPPORTED);
  p->hostRegisterReadOnlySupported = attr(CU_DEVICE_ATTRIBUTE_READ_ONLY_HOST_REGISTER_SUPPORTED);
  p->timelineSemaphoreInteropSupported = attr(CU_DEVICE_ATTRIBUTE_TIMELINE_SEMAPHORE_INTEROP_SUPPORTED);
  p->memoryPoolsSupported = attr(CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED);
  p->gpuDirectRDMASupported = attr(CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED);
  p->gpuDirectRDMAFlushWritesOptions = static_cast<unsigned>(attr(CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS));
  p->gpuDirectRDMAWritesOrdering = attr(CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WRITES_ORDERING);
  p->memoryPoolSupportedHandleTypes = static_cast<unsigned>(attr(CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES));
  p->deferredMappingCudaArraySupported = attr(CU_DEVICE_ATTRIBUTE_DEFERRED_MAPPING_CUDA_ARRAY_SUPPORTED);
  p->ipcEventSupported = attr(CU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED);
  p->clusterLaunch = attr(CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH);
  p->unifiedFunctionPointers = attr(CU_DEVICE_ATTRIBUTE_UNIFIED_FUNCTION_POINTERS);
  p->deviceNumaConfig = attr(CU_DEVICE_ATTRIBUTE_NUMA_CONFIG);
  p->deviceNumaId = attr(CU_DEVICE_ATTRIBUTE_NUMA_ID);
  p->mpsEnabled = attr(CU_DEVICE_ATTRIBUTE_MPS_ENABLED);
  p->hostNumaId = attr(CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID);
  p->gpuPciDeviceID = static_cast<unsigned>(attr(CU_DEVICE_ATTRIBUTE_GPU_PCI_DEVICE_ID));
  p->gpuPciSubsystemID = static_cast<unsigned>(attr(CU_DEVICE_ATTRIBUTE_GPU_PCI_SUBSYSTEM_ID));
  p->hostNumaMultinodeIpcSupported = attr(CU_DEVICE_ATTRIBUTE_HOST_NUMA_MULTINODE_IPC_SUPPORTED);
  reg().device = saved;
  return cudaSuccess;
}

cudaError_t valid_device(int device) {
  if (device < 0 || device >= session().devices_size())
    return cudaErrorInvalidDevice;
  return cudaSuccess;
}

} // namespace

extern "C" {

GLEAM_INTERPOSE_EXPORT cudaError_t cudaGetDeviceCount(int* count) {
  return guarded([&] {
    if (count == nullptr)
      return cudaErrorInvalidValue;
    *count = 0;
    if (auto err = connect(); err != cudaSuccess)
      return err == cudaErrorDevicesUnavailable ? err : cudaErrorNoDevice;
    *count = session().devices_size();
    return cudaSuccess;
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device) {
  return guarded([&] {
    if (prop == nullptr)
      return cudaErrorInvalidValue;
    if (auto err = connect(); err != cudaSuccess)
      return err;
    auto& r = reg();
    std::lock_guard<std::recursive_mutex> guard{r.mutex};
    return fill_properties(prop, device);
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaDeviceGetAttribute(int* value, enum cudaDeviceAttr a,
                                                          int device) {
  return guarded([&] {
    if (value == nullptr)
      return cudaErrorInvalidValue;
    if (auto err = connect(); err != cudaSuccess)
      return err;
    if (auto err = valid_device(device); err != cudaSuccess)
      return err;
    const auto& attrs = session().devices(device).attributes();
    // cudaDeviceAttr values equal the CUdevice_attribute values.
    auto i = attrs.find(static_cast<int>(a));
    if (i == attrs.end())
      return cudaErrorInvalidValue;
    *value = i->second;
    return cudaSuccess;
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaSetDevice(int device) {
  return guarded([&] {
    if (auto err = connect(); err != cudaSuccess)
      return err;
    if (auto err = valid_device(device); err != cudaSuccess)
      return err;
    reg().device = device;
    return cudaSuccess;
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaInitDevice(int device, unsigned int deviceFlags,
                                                  unsigned int flags) {
  return cudaSetDevice(device);
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaGetDevice(int* device) {
  return guarded([&] {
    if (device == nullptr)
      return cudaErrorInvalidValue;
    *device = reg().device;
    return cudaSuccess;
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaSetDeviceFlags(unsigned int flags) {
  return guarded([&] {
    reg().device_flags = flags;
    set_wait_flags(flags);
    return cudaSuccess;
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaGetDeviceFlags(unsigned int* flags) {
  return guarded([&] {
    if (flags == nullptr)
      return cudaErrorInvalidValue;
    *flags = reg().device_flags;
    return cudaSuccess;
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaChooseDevice(int* device, const cudaDeviceProp* prop) {
  return guarded([&] {
    if (device == nullptr || prop == nullptr)
      return cudaErrorInvalidValue;
    if (auto err = connect(); err != cudaSuccess)
      return err;
    *device = 0;
    return cudaSuccess;
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaDeviceGetPCIBusId(char* pciBusId, int len, int device) {
  return guarded([&] {
    if (pciBusId == nullptr || len <= 0)
      return cudaErrorInvalidValue;
    if (auto err = connect(); err != cudaSuccess)
      return err;
    if (auto err = valid_device(device); err != cudaSuccess)
      return err;
    auto saved = reg().device;
    reg().device = device;
    std::snprintf(pciBusId, static_cast<size_t>(len), "%08x:%02x:%02x.0",
                  attr(CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID),
                  attr(CU_DEVICE_ATTRIBUTE_PCI_BUS_ID),
                  attr(CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID));
    reg().device = saved;
    return cudaSuccess;
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaDeviceGetByPCIBusId(int* device, const char* pciBusId) {
  return guarded([&] {
    if (device == nullptr || pciBusId == nullptr)
      return cudaErrorInvalidValue;
    if (auto err = connect(); err != cudaSuccess)
      return err;
    for (int d = 0; d < session().devices_size(); ++d) {
      char id[32];
      if (cudaDeviceGetPCIBusId(id, sizeof(id), d) == cudaSuccess
          && strcasecmp(id, pciBusId) == 0) {
        *device = d;
        return cudaSuccess;
      }
    }
    return cudaErrorInvalidDevice;
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaDeviceGetStreamPriorityRange(int* leastPriority,
                                                                    int* greatestPriority) {
  return guarded([&] {
    // The range of every CUDA device since compute capability 3.5.
    if (leastPriority != nullptr)
      *leastPriority = 0;
    if (greatestPriority != nullptr)
      *greatestPriority = -5;
    return cudaSuccess;
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaDeviceGetCacheConfig(enum cudaFuncCache* pCacheConfig) {
  return guarded([&] {
    if (pCacheConfig == nullptr)
      return cudaErrorInvalidValue;
    *pCacheConfig = cudaFuncCachePreferNone;
    return cudaSuccess;
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaDeviceSetCacheConfig(enum cudaFuncCache cacheConfig) {
  // A preference only; the device may ignore it, and so does Gleam.
  return guarded([&] { return cudaSuccess; });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaDeviceGetLimit(size_t* pValue, enum cudaLimit limit) {
  return guarded([&] {
    if (pValue == nullptr)
      return cudaErrorInvalidValue;
    proto::Op op;
    op.mutable_ctx_get_limit()->set_limit(static_cast<int>(limit));
    proto::OpResult result;
    auto err = run_op(std::move(op), &result);
    if (err == cudaSuccess)
      *pValue = static_cast<size_t>(result.value());
    return err;
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaDeviceSetLimit(enum cudaLimit limit, size_t value) {
  return guarded([&] {
    proto::Op op;
    auto* s = op.mutable_ctx_set_limit();
    s->set_limit(static_cast<int>(limit));
    s->set_value(value);
    return submit(std::move(op));
  });
}

// Synchronizes the legacy default stream, the per-thread stream and every
// stream of the app, in one batch: the same completion as cuCtxSynchronize
// on the session's context.
GLEAM_INTERPOSE_EXPORT cudaError_t cudaDeviceSynchronize(void) {
  return guarded([&] {
    if (captures().any()) {
      // While a stream captures, syncing stream by stream would touch the
      // capturing ones (and invalidate them): the server's driver judges
      // the real cuCtxSynchronize, as the local one would.
      proto::Op op;
      op.mutable_ctx_synchronize();
      return run_op(std::move(op));
    }
    std::vector<proto::Op> ops;
    auto add = [&](uint64_t stream) {
      proto::Op op;
      op.mutable_stream_synchronize()->set_stream(stream);
      ops.push_back(std::move(op));
    };
    add(0);
    add(wire_stream(cudaStreamPerThread));
    {
      auto& r = reg();
      std::lock_guard<std::recursive_mutex> guard{r.mutex};
      for (const auto& s : r.streams)
        add(s.first);
    }
    return deliver_deferred(run_ops(ops, nullptr));
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaDeviceReset(void) {
  return guarded([&] {
    proto::Op op;
    op.mutable_device_reset();
    auto err = run_op(std::move(op));
    if (err == cudaSuccess) {
      auto& r = reg();
      std::lock_guard<std::recursive_mutex> guard{r.mutex};
      r.allocations.clear();
      r.slabs.clear();
      r.streams.clear();
      r.events.clear();
      r.pools.clear();
      vmm_forget_all();
      // Managed and mapped memory went with the device's.
      for (const auto& m : mirror_clear())
        r.host_ranges.erase(m.host);
      for (auto& m : r.modules)
        if (m->load_error == cudaSuccess)
          m->loaded = false;
    }
    return err;
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaMemGetInfo(size_t* free, size_t* total) {
  return guarded([&] {
    if (free == nullptr || total == nullptr)
      return cudaErrorInvalidValue;
    proto::Op op;
    op.mutable_mem_get_info();
    proto::OpResult result;
    auto err = run_op(std::move(op), &result);
    if (err == cudaSuccess) {
      // Slab memory no allocation uses is the app's to allocate.
      auto& r = reg();
      std::lock_guard<std::recursive_mutex> guard{r.mutex};
      *free = std::min<size_t>(result.mem_info().free() + r.slabs.unused_bytes(),
                               result.mem_info().total());
      *total = result.mem_info().total();
    }
    return err;
  });
}

} // extern "C"
