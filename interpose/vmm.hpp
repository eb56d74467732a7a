#pragma once

#include <cstddef>
#include <cstdint>

namespace gleam::interpose {

/// The client side of CUDA's virtual memory management API, for the driver
/// surface (libcuda.so.1 reaches these through the private interface).
/// The process's reservations, allocations and mappings are kept here
/// (wire::vmm_space, guarded by the registry's mutex), so that calls CUDA
/// would refuse fail at the call, with CUDA's CUresult, and send nothing.
///
/// Round trips: cuMemGetAllocationGranularity (once per property set and
/// option, then answered from a cache), cuMemAddressReserve (the server's
/// address comes back, as for cuMemAlloc) and cuMemCreate (out of memory
/// comes at the call). Error-code-only, after the local checks:
/// cuMemAddressFree, cuMemRelease, cuMemRetainAllocationHandle, cuMemMap,
/// cuMemUnmap, cuMemSetAccess. Local: cuMemGetAccess,
/// cuMemGetAllocationPropertiesFromHandle. Allocation handles are
/// client-chosen (next_handle()); the server maps them to the driver's.
/// Only the session's GPU (device 0) is a location; host locations are
/// refused with CUDA_ERROR_NOT_SUPPORTED (logged once).
///
/// Each vmm_* function below serves the driver function of its name and
/// returns a CUresult value; all are thread-safe and noexcept. Pointer
/// parameters are the driver API's (`prop` a CUmemAllocationProp, `desc` an
/// array of CUmemAccessDesc, `location` a CUmemLocation).
int vmm_granularity(size_t* granularity, const void* prop, int option) noexcept;
int vmm_address_reserve(uint64_t* ptr, size_t size, size_t alignment, uint64_t addr,
                        unsigned long long flags) noexcept;
int vmm_address_free(uint64_t ptr, size_t size) noexcept;
int vmm_create(uint64_t* handle, size_t size, const void* prop,
               unsigned long long flags) noexcept;
int vmm_release(uint64_t handle) noexcept;
int vmm_map(uint64_t ptr, size_t size, size_t offset, uint64_t handle,
            unsigned long long flags) noexcept;
int vmm_unmap(uint64_t ptr, size_t size) noexcept;
int vmm_set_access(uint64_t ptr, size_t size, const void* desc, size_t count) noexcept;
int vmm_get_access(unsigned long long* flags, const void* location, uint64_t ptr) noexcept;
int vmm_properties(void* prop, uint64_t handle) noexcept;
int vmm_retain(uint64_t* handle, uint64_t addr) noexcept;

/// Where an address lies among the process's virtual memory ranges.
enum class vmm_place {
  /// In no reservation.
  outside,
  /// In a reservation but in no mapping.
  reserved,
  /// In a mapping.
  mapped,
};

/// Where `addr` lies; with `mapped`, `base` and `size` (may be null) get
/// the mapping's range. Takes the registry's mutex.
vmm_place vmm_locate(uint64_t addr, uint64_t* base = nullptr, uint64_t* size = nullptr) noexcept;

/// Bytes from `addr` to the end of the adjacent read-write mappings that
/// contain it (0 when it is in none): what a copy from there may span.
uint64_t vmm_read_write_span(uint64_t addr) noexcept;

/// Forgets every reservation, allocation and mapping and the granularity
/// cache (a device reset released them on the server; a child after
/// fork() has a session of its own). Call with the registry's mutex held.
void vmm_forget_all() noexcept;

} // namespace gleam::interpose
