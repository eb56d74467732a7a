// Kernel launches and function queries. Launch arguments are packed by the
// parameter layout the server reported when it loaded the module.
#define __CUDA_API_VERSION_INTERNAL
#include "interpose/export.hpp"

#include <cuda.h>

#include <algorithm>

#include "interpose/capture_state.hpp"
#include "interpose/launch_attributes.hpp"
#include "interpose/runtime.hpp"

using namespace gleam::interpose;
namespace proto = gleam::proto;

namespace {

cudaError_t check_dims(dim3 grid, dim3 block) {
  // CUDA 13 reports empty grids or blocks and shapes beyond the device
  // limits as cudaErrorInvalidValue (observed on the H200, driver 580).
  if (grid.x == 0 || grid.y == 0 || grid.z == 0 || block.x == 0 || block.y == 0
      || block.z == 0)
    return cudaErrorInvalidValue;
  auto threads = uint64_t{block.x} * block.y * block.z;
  if (threads > static_cast<uint64_t>(device_attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, 1024))
      || block.x > static_cast<unsigned>(device_attribute(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, 1024))
      || block.y > static_cast<unsigned>(device_attribute(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y, 1024))
      || block.z > static_cast<unsigned>(device_attribute(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z, 64))
      || grid.x > static_cast<unsigned>(device_attribute(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, 2147483647))
      || grid.y > static_cast<unsigned>(device_attribute(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, 65535))
      || grid.z > static_cast<unsigned>(device_attribute(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, 65535)))
    return cudaErrorInvalidValue;
  return cudaSuccess;
}

/// Queues a launch of `func`. `attrs` (may be null when `n_attrs` is 0) are
/// cudaLaunchKernelExC's attributes, checked and encoded here so that an
/// unknown id or event fails at the call, as CUDA's launch does.
cudaError_t launch(const void* func, dim3 grid, dim3 block, void** args,
                   size_t shared_mem, cudaStream_t stream, bool cooperative,
                   const cudaLaunchAttribute* attrs = nullptr, unsigned n_attrs = 0) {
  if (auto err = connect(); err != cudaSuccess)
    return err;
  function_record* f = nullptr;
  if (auto err = resolve_function(func, &f); err != cudaSuccess)
    return err;
  if (auto err = check_dims(grid, block); err != cudaSuccess)
    return err;
  // The launch is queued: its configuration errors are found here, where
  // CUDA's launch would return them, not at a later call.
  if (auto i = f->attributes.find(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES);
      i != f->attributes.end() && shared_mem > static_cast<size_t>(std::max(i->second, 0)))
    return cudaErrorInvalidValue;
  proto::Op op;
  auto* l = op.mutable_launch_kernel();
  auto known = [](uint64_t e) {
    auto& r = reg();
    std::lock_guard<std::recursive_mutex> guard{r.mutex};
    return r.events.count(e) != 0;
  };
  for (unsigned i = 0; i < n_attrs; ++i)
    if (auto err = encode_launch_attribute(attrs[i], known, l->add_attributes());
        err != cudaSuccess)
      return err;
  l->set_module(f->module->handle);
  l->set_function(f->name);
  l->set_grid_x(grid.x);
  l->set_grid_y(grid.y);
  l->set_grid_z(grid.z);
  l->set_block_x(block.x);
  l->set_block_y(block.y);
  l->set_block_z(block.z);
  l->set_shared_mem(static_cast<uint32_t>(shared_mem));
  l->set_stream(wire_stream(stream));
  l->set_params(pack_arguments(f->params, args));
  l->set_cooperative(cooperative);
  // An event the launch records joins the capture mirror as a
  // cudaEventRecord on the launch's stream would.
  for (unsigned i = 0; i < n_attrs; ++i)
    if (auto e = recorded_event(attrs[i]); e != 0)
      captures().record_event(e, wire_stream(stream));
  // Error-code-only: queued, its error arrives at a later call.
  return submit_on(stream, std::move(op));
}

cudaError_t launch_ex(const cudaLaunchConfig_t* config, const void* func, void** args) {
  if (config == nullptr || (config->numAttrs != 0 && config->attrs == nullptr))
    return cudaErrorInvalidValue;
  return launch(func, config->gridDim, config->blockDim, args, config->dynamicSmemBytes,
                config->stream, false, config->attrs, config->numAttrs);
}

} // namespace

extern "C" {

GLEAM_INTERPOSE_EXPORT cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim,
                                                      dim3 blockDim, void** args,
                                                      size_t sharedMem,
                                                      cudaStream_t stream) {
  return guarded([&] {
    return launch(kernel, gridDim, blockDim, args, sharedMem, stream, false);
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 gridDim,
                                                           dim3 blockDim, void** args,
                                                           size_t sharedMem,
                                                           cudaStream_t stream) {
  return __cudaLaunchKernel(kernel, gridDim, blockDim, args, sharedMem,
                            per_thread(stream));
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaLaunchKernel(const void* func, dim3 gridDim,
                                                    dim3 blockDim, void** args,
                                                    size_t sharedMem,
                                                    cudaStream_t stream) {
  return guarded([&] {
    return launch(func, gridDim, blockDim, args, sharedMem, stream, false);
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaLaunchKernel_ptsz(const void* func, dim3 gridDim,
                                                         dim3 blockDim, void** args,
                                                         size_t sharedMem,
                                                         cudaStream_t stream) {
  return cudaLaunchKernel(func, gridDim, blockDim, args, sharedMem,
                          per_thread(stream));
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaLaunchCooperativeKernel(const void* func, dim3 gridDim,
                                                               dim3 blockDim, void** args,
                                                               size_t sharedMem,
                                                               cudaStream_t stream) {
  return guarded([&] {
    return launch(func, gridDim, blockDim, args, sharedMem, stream, true);
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaLaunchCooperativeKernel_ptsz(
  const void* func, dim3 gridDim, dim3 blockDim, void** args, size_t sharedMem,
  cudaStream_t stream) {
  return cudaLaunchCooperativeKernel(func, gridDim, blockDim, args, sharedMem,
                                     per_thread(stream));
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t* config,
                                                       const void* func, void** args) {
  return guarded([&] { return launch_ex(config, func, args); });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t* config,
                                                            const void* func, void** args) {
  if (config == nullptr || config->stream != nullptr)
    return cudaLaunchKernelExC(config, func, args);
  auto copy = *config;
  copy.stream = cudaStreamPerThread;
  return cudaLaunchKernelExC(&copy, func, args);
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaFuncGetAttributes(cudaFuncAttributes* attr,
                                                         const void* func) {
  return guarded([&] {
    if (attr == nullptr)
      return cudaErrorInvalidValue;
    if (auto err = connect(); err != cudaSuccess)
      return err;
    function_record* f = nullptr;
    if (auto err = resolve_function(func, &f); err != cudaSuccess)
      return err;
    auto get = [&](int a) {
      auto i = f->attributes.find(a);
      return i != f->attributes.end() ? i->second : 0;
    };
    *attr = cudaFuncAttributes{};
    attr->sharedSizeBytes = static_cast<size_t>(get(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES));
    attr->constSizeBytes = static_cast<size_t>(get(CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES));
    attr->localSizeBytes = static_cast<size_t>(get(CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES));
    attr->maxThreadsPerBlock = get(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
    attr->numRegs = get(CU_FUNC_ATTRIBUTE_NUM_REGS);
    attr->ptxVersion = get(CU_FUNC_ATTRIBUTE_PTX_VERSION);
    attr->binaryVersion = get(CU_FUNC_ATTRIBUTE_BINARY_VERSION);
    attr->cacheModeCA = get(CU_FUNC_ATTRIBUTE_CACHE_MODE_CA);
    attr->maxDynamicSharedSizeBytes = get(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES);
    attr->preferredShmemCarveout = get(CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT);
    attr->clusterDimMustBeSet = get(CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET);
    attr->requiredClusterWidth = get(CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH);
    attr->requiredClusterHeight = get(CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT);
    attr->requiredClusterDepth = get(CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH);
    attr->clusterSchedulingPolicyPreference = get(CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE);
    attr->nonPortableClusterSizeAllowed = get(CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED);
    return cudaSuccess;
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaFuncSetAttribute(const void* func,
                                                        enum cudaFuncAttribute attr,
                                                        int value) {
  return guarded([&] {
    if (auto err = connect(); err != cudaSuccess)
      return err;
    function_record* f = nullptr;
    if (auto err = resolve_function(func, &f); err != cudaSuccess)
      return err;
    // cudaFuncAttribute values are the CUfunction_attribute values.
    int cu_attr = static_cast<int>(attr);
    // Queued: the values CUDA refuses at once are refused here.
    if (cu_attr == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) {
      auto stat = f->attributes.count(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES) != 0
                    ? f->attributes[CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES]
                    : 0;
      auto optin = device_attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, 0);
      if (value < 0 || (optin > 0 && value + stat > optin))
        return cudaErrorInvalidValue;
    }
    proto::Op op;
    auto* s = op.mutable_func_set_attribute();
    s->set_module(f->module->handle);
    s->set_function(f->name);
    s->set_attribute(cu_attr);
    s->set_value(value);
    auto err = submit(std::move(op));
    if (err == cudaSuccess)
      f->attributes[cu_attr] = value;
    return err;
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaFuncSetCacheConfig(const void* func,
                                                          enum cudaFuncCache cacheConfig) {
  return guarded([&] {
    if (auto err = connect(); err != cudaSuccess)
      return err;
    function_record* f = nullptr;
    if (auto err = resolve_function(func, &f); err != cudaSuccess)
      return err;
    proto::Op op;
    auto* s = op.mutable_func_set_cache_config();
    s->set_module(f->module->handle);
    s->set_function(f->name);
    s->set_config(static_cast<int>(cacheConfig));
    return submit(std::move(op));
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaFuncGetName(const char** name, const void* func) {
  return guarded([&] {
    if (name == nullptr)
      return cudaErrorInvalidValue;
    auto& r = reg();
    std::lock_guard<std::recursive_mutex> guard{r.mutex};
    auto i = r.functions.find(func);
    if (i == r.functions.end())
      return cudaErrorInvalidDeviceFunction;
    *name = i->second->name.c_str();
    return cudaSuccess;
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
  int* numBlocks, const void* func, int blockSize, size_t dynamicSMemSize,
  unsigned int flags) {
  return guarded([&] {
    if (numBlocks == nullptr)
      return cudaErrorInvalidValue;
    if (auto err = connect(); err != cudaSuccess)
      return err;
    function_record* f = nullptr;
    if (auto err = resolve_function(func, &f); err != cudaSuccess)
      return err;
    proto::Op op;
    auto* o = op.mutable_occupancy_max_active_blocks();
    o->set_module(f->module->handle);
    o->set_function(f->name);
    o->set_block_size(blockSize);
    o->set_dynamic_smem(dynamicSMemSize);
    o->set_flags(flags);
    proto::OpResult result;
    auto err = run_op(std::move(op), &result);
    if (err == cudaSuccess)
      *numBlocks = static_cast<int>(result.value());
    return err;
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(
  int* numBlocks, const void* func, int blockSize, size_t dynamicSMemSize) {
  return cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(numBlocks, func, blockSize,
                                                                dynamicSMemSize, 0);
}

} // extern "C"
