// Virtual memory management of the driver surface (cuMemCreate,
// cuMemAddressReserve, cuMemMap, cuMemSetAccess, ...): every call is the
// client's (interpose/vmm.hpp, reached through the private interface),
// which checks it as CUDA does and forwards it to the session's GPU.
#include "interpose/cuda_export.hpp"

#include <cstddef>
#include <cstdint>

#include "interpose/driver/client.hpp"

namespace {

using gleam::interpose::driver::client;
using gleam::interpose::driver::client_has;

/// Whether the client's table has `member` (a libcudart.so.13 of an older
/// build has not: the call is then not supported).
#define GLEAM_DRIVER_CLIENT_HAS(member) client_has(offsetof(gleam_private_interface, member))

CUresult as_cu(int x) {
  return static_cast<CUresult>(x);
}

} // namespace

extern "C" {

GLEAM_INTERPOSE_EXPORT CUresult cuMemGetAllocationGranularity(
  size_t* granularity, const CUmemAllocationProp* prop, CUmemAllocationGranularity_flags option) {
  if (!GLEAM_DRIVER_CLIENT_HAS(mem_get_granularity))
    return CUDA_ERROR_NOT_SUPPORTED;
  return as_cu(client().mem_get_granularity(granularity, prop, option));
}

GLEAM_INTERPOSE_EXPORT CUresult cuMemAddressReserve(CUdeviceptr* ptr, size_t size,
                                                    size_t alignment, CUdeviceptr addr,
                                                    unsigned long long flags) {
  if (!GLEAM_DRIVER_CLIENT_HAS(mem_address_reserve))
    return CUDA_ERROR_NOT_SUPPORTED;
  if (ptr == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  uint64_t p = 0;
  auto rc = as_cu(client().mem_address_reserve(&p, size, alignment, addr, flags));
  if (rc == CUDA_SUCCESS)
    *ptr = p;
  return rc;
}

GLEAM_INTERPOSE_EXPORT CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size) {
  if (!GLEAM_DRIVER_CLIENT_HAS(mem_address_free))
    return CUDA_ERROR_NOT_SUPPORTED;
  return as_cu(client().mem_address_free(ptr, size));
}

GLEAM_INTERPOSE_EXPORT CUresult cuMemCreate(CUmemGenericAllocationHandle* handle, size_t size,
                                            const CUmemAllocationProp* prop,
                                            unsigned long long flags) {
  if (!GLEAM_DRIVER_CLIENT_HAS(mem_create))
    return CUDA_ERROR_NOT_SUPPORTED;
  if (handle == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  uint64_t h = 0;
  auto rc = as_cu(client().mem_create(&h, size, prop, flags));
  if (rc == CUDA_SUCCESS)
    *handle = h;
  return rc;
}

GLEAM_INTERPOSE_EXPORT CUresult cuMemRelease(CUmemGenericAllocationHandle handle) {
  if (!GLEAM_DRIVER_CLIENT_HAS(mem_release))
    return CUDA_ERROR_NOT_SUPPORTED;
  return as_cu(client().mem_release(handle));
}

GLEAM_INTERPOSE_EXPORT CUresult cuMemRetainAllocationHandle(CUmemGenericAllocationHandle* handle,
                                                            void* addr) {
  if (!GLEAM_DRIVER_CLIENT_HAS(mem_retain))
    return CUDA_ERROR_NOT_SUPPORTED;
  if (handle == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  uint64_t h = 0;
  auto rc = as_cu(client().mem_retain(&h, reinterpret_cast<uintptr_t>(addr)));
  if (rc == CUDA_SUCCESS)
    *handle = h;
  return rc;
}

GLEAM_INTERPOSE_EXPORT CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset,
                                         CUmemGenericAllocationHandle handle,
                                         unsigned long long flags) {
  if (!GLEAM_DRIVER_CLIENT_HAS(mem_map))
    return CUDA_ERROR_NOT_SUPPORTED;
  return as_cu(client().mem_map(ptr, size, offset, handle, flags));
}

GLEAM_INTERPOSE_EXPORT CUresult cuMemUnmap(CUdeviceptr ptr, size_t size) {
  if (!GLEAM_DRIVER_CLIENT_HAS(mem_unmap))
    return CUDA_ERROR_NOT_SUPPORTED;
  return as_cu(client().mem_unmap(ptr, size));
}

GLEAM_INTERPOSE_EXPORT CUresult cuMemSetAccess(CUdeviceptr ptr, size_t size,
                                               const CUmemAccessDesc* desc, size_t count) {
  if (!GLEAM_DRIVER_CLIENT_HAS(mem_set_access))
    return CUDA_ERROR_NOT_SUPPORTED;
  return as_cu(client().mem_set_access(ptr, size, desc, count));
}

GLEAM_INTERPOSE_EXPORT CUresult cuMemGetAccess(unsigned long long* flags,
                                               const CUmemLocation* location, CUdeviceptr ptr) {
  if (!GLEAM_DRIVER_CLIENT_HAS(mem_get_access))
    return CUDA_ERROR_NOT_SUPPORTED;
  return as_cu(client().mem_get_access(flags, location, ptr));
}

GLEAM_INTERPOSE_EXPORT CUresult cuMemGetAllocationPropertiesFromHandle(
  CUmemAllocationProp* prop, CUmemGenericAllocationHandle handle) {
  if (!GLEAM_DRIVER_CLIENT_HAS(mem_get_properties))
    return CUDA_ERROR_NOT_SUPPORTED;
  return as_cu(client().mem_get_properties(prop, handle));
}

} // extern "C"
