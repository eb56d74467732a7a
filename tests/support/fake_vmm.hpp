#pragma once

// A host-backed stand-in for the CUDA driver's virtual memory management,
// for the executor's CPU tests and the fake GPU server: a reservation is
// an inaccessible range of this process's address space (mmap PROT_NONE),
// an allocation a memfd of its size, a mapping that memfd mapped at the
// reserved address and cuMemSetAccess an mprotect, so device addresses are
// host pointers and bytes written through a mapping are the allocation's.
// As the driver, it releases an allocation's memory only once it is
// released and unmapped. The granularity is 2 MiB, as NVIDIA GPUs answer.
// It checks what the driver checks that the executor relies on; the rest
// of CUDA's rules are the executor's to apply before it calls. Not
// thread-safe (one state per process).

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <utility>

#include <cuda.h>

#include "executor/driver_api.hpp"

namespace gleam::test {

/// Bytes of the fake's minimum and recommended granularity.
inline constexpr size_t fake_vmm_granularity = size_t{2} << 20;

/// The fake driver's objects: what is reserved, allocated and mapped now.
struct fake_vmm_state {
  struct allocation {
    /// The memfd holding the bytes.
    int fd = -1;
    /// Bytes.
    size_t size = 0;
    int mappings = 0;
    bool released = false;
  };
  std::map<CUmemGenericAllocationHandle, allocation> allocations;
  /// Base -> bytes.
  std::map<CUdeviceptr, size_t> reservations;
  /// Base -> (bytes, handle).
  std::map<CUdeviceptr, std::pair<size_t, CUmemGenericAllocationHandle>> mappings;
  CUmemGenericAllocationHandle next_handle = 0x4000;
  /// A cuMemCreate of more bytes finds the "device" full.
  size_t capacity = size_t{64} << 30;

  /// True when nothing is reserved, allocated or mapped.
  bool empty() const {
    return allocations.empty() && reservations.empty() && mappings.empty();
  }
};

inline fake_vmm_state& fake_vmm() {
  static fake_vmm_state s;
  return s;
}

namespace fake_vmm_detail {

inline void* at(CUdeviceptr p) {
  return reinterpret_cast<void*>(static_cast<uintptr_t>(p));
}

/// Puts an inaccessible reservation back over [p, p + n).
inline bool rereserve(CUdeviceptr p, size_t n) {
  return ::mmap(at(p), n, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED,
                -1, 0)
         != MAP_FAILED;
}

inline void drop_if_unused(CUmemGenericAllocationHandle h) {
  auto& st = fake_vmm();
  auto i = st.allocations.find(h);
  if (i != st.allocations.end() && i->second.released && i->second.mappings == 0) {
    ::close(i->second.fd);
    st.allocations.erase(i);
  }
}

} // namespace fake_vmm_detail

/// Fills the VMM entry points of `api` with the fake.
inline void install_fake_vmm(executor::driver_api& api) {
  using namespace fake_vmm_detail;
  api.cuMemGetAllocationGranularity = [](size_t* g, const CUmemAllocationProp* prop,
                                         CUmemAllocationGranularity_flags) {
    if (g == nullptr || prop == nullptr || prop->type != CU_MEM_ALLOCATION_TYPE_PINNED
        || prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE)
      return CUDA_ERROR_INVALID_VALUE;
    *g = fake_vmm_granularity;
    return CUDA_SUCCESS;
  };
  api.cuMemAddressReserve = [](CUdeviceptr* ptr, size_t size, size_t alignment, CUdeviceptr,
                               unsigned long long flags) {
    if (size == 0 || size % fake_vmm_granularity != 0 || (alignment & (alignment - 1)) != 0
        || flags != 0)
      return CUDA_ERROR_INVALID_VALUE;
    // Over-reserved, then trimmed to an aligned start, as device ranges are.
    auto align = std::max(alignment, fake_vmm_granularity);
    void* raw = ::mmap(nullptr, size + align, PROT_NONE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (raw == MAP_FAILED)
      return CUDA_ERROR_OUT_OF_MEMORY;
    auto start = reinterpret_cast<uintptr_t>(raw);
    auto base = (start + align - 1) / align * align;
    if (base > start)
      ::munmap(raw, base - start);
    if (auto tail = start + size + align - (base + size); tail > 0)
      ::munmap(reinterpret_cast<void*>(base + size), tail);
    fake_vmm().reservations[base] = size;
    *ptr = base;
    return CUDA_SUCCESS;
  };
  api.cuMemAddressFree = [](CUdeviceptr ptr, size_t size) {
    auto& st = fake_vmm();
    auto i = st.reservations.find(ptr);
    if (i == st.reservations.end() || i->second != size)
      return CUDA_ERROR_INVALID_VALUE;
    ::munmap(at(ptr), size);
    st.reservations.erase(i);
    return CUDA_SUCCESS;
  };
  api.cuMemCreate = [](CUmemGenericAllocationHandle* h, size_t size,
                       const CUmemAllocationProp* prop, unsigned long long flags) {
    auto& st = fake_vmm();
    if (size == 0 || size % fake_vmm_granularity != 0 || prop == nullptr || flags != 0
        || prop->type != CU_MEM_ALLOCATION_TYPE_PINNED)
      return CUDA_ERROR_INVALID_VALUE;
    if (size > st.capacity)
      return CUDA_ERROR_OUT_OF_MEMORY;
    int fd = ::memfd_create("gleam-fake-vmm", MFD_CLOEXEC);
    if (fd < 0)
      return CUDA_ERROR_OUT_OF_MEMORY;
    if (::ftruncate(fd, static_cast<off_t>(size)) != 0) {
      ::close(fd);
      return CUDA_ERROR_OUT_OF_MEMORY;
    }
    *h = st.next_handle++;
    st.allocations[*h] = {fd, size, 0, false};
    return CUDA_SUCCESS;
  };
  api.cuMemRelease = [](CUmemGenericAllocationHandle h) {
    auto& st = fake_vmm();
    auto i = st.allocations.find(h);
    if (i == st.allocations.end() || i->second.released)
      return CUDA_ERROR_INVALID_VALUE;
    i->second.released = true;
    drop_if_unused(h);
    return CUDA_SUCCESS;
  };
  api.cuMemMap = [](CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle h,
                    unsigned long long) {
    auto& st = fake_vmm();
    auto i = st.allocations.find(h);
    if (i == st.allocations.end() || i->second.released || offset + size > i->second.size)
      return CUDA_ERROR_INVALID_VALUE;
    if (::mmap(at(ptr), size, PROT_NONE, MAP_SHARED | MAP_FIXED, i->second.fd,
               static_cast<off_t>(offset))
        == MAP_FAILED)
      return CUDA_ERROR_INVALID_VALUE;
    st.mappings[ptr] = {size, h};
    ++i->second.mappings;
    return CUDA_SUCCESS;
  };
  api.cuMemUnmap = [](CUdeviceptr ptr, size_t size) {
    auto& st = fake_vmm();
    auto m = st.mappings.find(ptr);
    if (m == st.mappings.end() || m->second.first != size || !rereserve(ptr, size))
      return CUDA_ERROR_INVALID_VALUE;
    auto h = m->second.second;
    st.mappings.erase(m);
    --st.allocations[h].mappings;
    drop_if_unused(h);
    return CUDA_SUCCESS;
  };
  api.cuMemSetAccess = [](CUdeviceptr ptr, size_t size, const CUmemAccessDesc* desc,
                          size_t count) {
    if (desc == nullptr || count == 0)
      return CUDA_ERROR_INVALID_VALUE;
    int prot = PROT_NONE;
    for (size_t i = 0; i < count; ++i) {
      if (desc[i].location.type != CU_MEM_LOCATION_TYPE_DEVICE)
        return CUDA_ERROR_INVALID_VALUE;
      prot = desc[i].flags == CU_MEM_ACCESS_FLAGS_PROT_READWRITE ? PROT_READ | PROT_WRITE
             : desc[i].flags == CU_MEM_ACCESS_FLAGS_PROT_READ    ? PROT_READ
                                                                 : PROT_NONE;
    }
    return ::mprotect(at(ptr), size, prot) == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
  };
}

} // namespace gleam::test
