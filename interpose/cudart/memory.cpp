// Device and host memory: allocation, copies (1D, 2D, symbols), memsets and
// pointer queries. Memsets, frees, async host-to-device and device-to-device
// copies are error-code-only (submit); copies to the host wait.
#define __CUDA_API_VERSION_INTERNAL
#include "interpose/export.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "config/client_config.hpp"
#include "interpose/capture_state.hpp"
#include "interpose/cudart/managed.hpp"
#include "interpose/cudart/pools.hpp"
#include "interpose/host_copies.hpp"
#include "interpose/mirror.hpp"
#include "interpose/runtime.hpp"
#include "interpose/vmm.hpp"

using namespace gleam::interpose;
namespace proto = gleam::proto;

cudaError_t gleam::interpose::server_alloc(uint64_t size, bool slab, uint64_t* dptr) {
  proto::Op op;
  op.mutable_mem_alloc()->set_size(size);
  op.mutable_mem_alloc()->set_slab(slab);
  proto::OpResult result;
  auto err = run_op(std::move(op), &result);
  if (err == cudaSuccess)
    *dptr = result.dptr();
  return err;
}

namespace {

/// The slab pool, set up from the config on first use; call with
/// reg().mutex held. Carving needs async forwarding (GLEAM_ASYNC=off keeps
/// one round trip per cudaMalloc, as the naive mode measures).
slab_pool& pool(registry& r) {
  if (!r.slabs_configured) {
    auto cfg = gleam::config::load_client_config();
    uint64_t max_slab = cfg ? cfg->alloc_slab : 0;
    r.slabs = slab_pool{async_enabled() ? max_slab : 0};
    r.slabs_configured = true;
  }
  return r.slabs;
}

/// cudaMalloc without a round trip: an address carved from a slab (one
/// round trip for a new slab when none has room), registered on the server
/// by a queued MemAlloc.at. 0 when not carved: outside a capture only (the
/// server decides what an allocation during capture does), and never when
/// the slab itself does not fit.
uint64_t carve(size_t size) {
  auto& r = reg();
  std::unique_lock<std::recursive_mutex> lock{r.mutex};
  auto& p = pool(r);
  if (!p.carves(size) || captures().any())
    return 0;
  auto addr = p.carve(size);
  if (!addr) {
    auto slab_size = p.next_slab_size(size);
    lock.unlock();
    uint64_t base = 0;
    if (server_alloc(slab_size, true, &base) != cudaSuccess)
      return 0; // the plain allocation below reports what the device says
    lock.lock();
    p.add_slab(base, slab_size);
    addr = p.carve(size);
    if (!addr)
      return 0;
  }
  proto::Op op;
  op.mutable_mem_alloc()->set_size(size);
  op.mutable_mem_alloc()->set_at(*addr);
  if (submit(std::move(op)) != cudaSuccess) {
    uint64_t empty = 0;
    p.release(*addr, &empty);
    return 0;
  }
  r.allocations[*addr] = size;
  return *addr;
}

cudaError_t alloc(void** ptr, size_t size) {
  if (ptr == nullptr)
    return cudaErrorInvalidValue;
  if (size == 0) {
    *ptr = nullptr;
    return cudaSuccess;
  }
  if (auto addr = carve(size); addr != 0) {
    *ptr = reinterpret_cast<void*>(static_cast<uintptr_t>(addr));
    return cudaSuccess;
  }
  uint64_t dptr = 0;
  auto err = server_alloc(size, false, &dptr);
  if (err == cudaErrorMemoryAllocation) {
    // The newest slab may be holding the memory empty: give it back, retry.
    uint64_t empty = 0;
    {
      auto& r = reg();
      std::lock_guard<std::recursive_mutex> guard{r.mutex};
      empty = r.slabs.take_empty();
    }
    if (empty != 0) {
      proto::Op op;
      op.mutable_mem_free()->set_dptr(empty);
      if (run_op(std::move(op)) == cudaSuccess)
        err = server_alloc(size, false, &dptr);
    }
  }
  if (err != cudaSuccess)
    return err;
  *ptr = reinterpret_cast<void*>(static_cast<uintptr_t>(dptr));
  auto& r = reg();
  std::lock_guard<std::recursive_mutex> guard{r.mutex};
  r.allocations[dptr] = size;
  return cudaSuccess;
}

/// cudaFree of an allocation this process holds (any kind: cudaMalloc,
/// carved, cudaMallocAsync, graph memory).
cudaError_t free_device(void* devPtr) {
  if (devPtr == nullptr)
    return cudaSuccess;
  auto addr = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(devPtr));
  if (auto m = mirror_at_device(addr)) // mapped host memory is not cudaFree's
    return m->managed && m->device == addr ? mirrored_free(devPtr) : cudaErrorInvalidValue;
  {
    auto& r = reg();
    std::lock_guard<std::recursive_mutex> guard{r.mutex};
    if (r.allocations.count(addr) == 0)
      return cudaErrorInvalidValue;
  }
  proto::Op op;
  op.mutable_mem_free()->set_dptr(addr);
  // Safe to queue: the server frees in op order, after every earlier use,
  // and before any later allocation that could reuse the address (a
  // carved one: after the device is idle, as cuMemFree).
  auto& r = reg();
  std::lock_guard<std::recursive_mutex> guard{r.mutex};
  auto err = submit(std::move(op));
  if (err != cudaSuccess)
    return err;
  r.allocations.erase(addr);
  r.pools.forget_allocation(addr);
  uint64_t empty = 0;
  if (r.slabs.release(addr, &empty) && empty != 0) {
    proto::Op slab;
    slab.mutable_mem_free()->set_dptr(empty);
    return submit(std::move(slab));
  }
  return cudaSuccess;
}

bool capturing(cudaStream_t stream) {
  return captures().status(wire_stream(stream)) != cudaStreamCaptureStatusNone;
}

/// cudaMallocAsync. Into a capturing stream, or from a pool once the app
/// holds one (malloc_async_pool, interpose/cudart/pools.hpp): a
/// stream-ordered allocation on the server, whose address comes back (one
/// round trip). Otherwise as cudaMalloc: memory usable at once is usable in
/// stream order too.
cudaError_t alloc_async(void** ptr, size_t size, cudaStream_t stream) {
  if (ptr == nullptr)
    return cudaErrorInvalidValue;
  if (auto err = known_stream(stream); err != cudaSuccess)
    return err;
  auto pool = malloc_async_pool();
  if ((!capturing(stream) && pool == 0) || size == 0)
    return alloc(ptr, size);
  return stream_ordered_alloc(ptr, size, pool, stream);
}

/// cudaFreeAsync. Into a capturing stream: a free node of the capture; of
/// a pool allocation: freed in stream order (cuMemFreeAsync). Otherwise as
/// cudaFree, which the server runs after every earlier op.
cudaError_t free_async(void* devPtr, cudaStream_t stream) {
  if (auto err = known_stream(stream); err != cudaSuccess)
    return err;
  auto addr = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(devPtr));
  auto& r = reg();
  std::lock_guard<std::recursive_mutex> guard{r.mutex};
  if (devPtr == nullptr || (!capturing(stream) && r.pools.pool_of(addr) == 0))
    return free_device(devPtr);
  if (r.allocations.count(addr) == 0)
    return cudaErrorInvalidValue;
  proto::Op op;
  op.mutable_mem_free_async()->set_stream(wire_stream(stream));
  op.mutable_mem_free_async()->set_dptr(addr);
  if (auto err = submit_on(stream, std::move(op)); err != cudaSuccess)
    return err;
  r.allocations.erase(addr);
  r.pools.forget_allocation(addr);
  return cudaSuccess;
}

cudaError_t host_alloc(void** ptr, size_t size, unsigned flags) {
  constexpr unsigned known = cudaHostAllocPortable | cudaHostAllocMapped
                             | cudaHostAllocWriteCombined;
  if (ptr == nullptr || (flags & ~known) != 0)
    return cudaErrorInvalidValue;
  if ((flags & cudaHostAllocMapped) != 0)
    return mirrored_alloc(ptr, std::max<size_t>(size, 1), false, flags);
  auto page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  auto rounded = (std::max<size_t>(size, 1) + page - 1) / page * page;
  void* p = nullptr;
  if (::posix_memalign(&p, page, rounded) != 0)
    return cudaErrorMemoryAllocation;
  auto& r = reg();
  std::lock_guard<std::recursive_mutex> guard{r.mutex};
  r.host_ranges[reinterpret_cast<uintptr_t>(p)] = {rounded, flags, false};
  *ptr = p;
  return cudaSuccess;
}

cudaError_t memcpy_2d(void* dst, size_t dpitch, const void* src, size_t spitch,
                      size_t width, size_t height, cudaMemcpyKind kind,
                      cudaStream_t stream, bool async) {
  if (width > dpitch || width > spitch)
    return cudaErrorInvalidPitchValue;
  if (width == 0 || height == 0)
    return cudaSuccess;
  kind = effective_kind(dst, src, kind);
  // Captured between device and host memory: nodes that carry the bytes
  // across at every replay (interpose/host_copies.hpp).
  if (async && (kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToHost)
      && capturing(stream))
    return capture_host_copy(stream, dst, dpitch, src, spitch, width, height, kind);
  proto::Op op;
  auto* m = op.mutable_memcpy_2d();
  m->set_width(width);
  m->set_height(height);
  m->set_stream(wire_stream(stream));
  m->set_async(async);
  switch (kind) {
    case cudaMemcpyHostToHost:
      for (size_t row = 0; row < height; ++row)
        std::memmove(static_cast<char*>(dst) + row * dpitch,
                     static_cast<const char*>(src) + row * spitch, width);
      return cudaSuccess;
    case cudaMemcpyHostToDevice: {
      m->set_kind(proto::Memcpy2D::HTOD);
      m->set_dst(reinterpret_cast<uintptr_t>(dst));
      m->set_dst_pitch(dpitch);
      std::string packed(width * height, '\0');
      for (size_t row = 0; row < height; ++row)
        std::memcpy(&packed[row * width], static_cast<const char*>(src) + row * spitch, width);
      m->set_data(std::move(packed));
      if (async)
        return submit_on(stream, std::move(op));
      return deliver_deferred(run_op(std::move(op)));
    }
    case cudaMemcpyDeviceToHost: {
      m->set_kind(proto::Memcpy2D::DTOH);
      m->set_src(reinterpret_cast<uintptr_t>(src));
      m->set_src_pitch(spitch);
      proto::OpResult result;
      if (auto err = run_op(std::move(op), &result); err != cudaSuccess)
        return err;
      if (result.data().size() != width * height)
        return cudaErrorUnknown;
      for (size_t row = 0; row < height; ++row)
        std::memcpy(static_cast<char*>(dst) + row * dpitch, &result.data()[row * width], width);
      return async ? cudaSuccess : deliver_deferred(cudaSuccess);
    }
    case cudaMemcpyDeviceToDevice:
      m->set_kind(proto::Memcpy2D::DTOD);
      m->set_dst(reinterpret_cast<uintptr_t>(dst));
      m->set_dst_pitch(dpitch);
      m->set_src(reinterpret_cast<uintptr_t>(src));
      m->set_src_pitch(spitch);
      if (async)
        return submit_on(stream, std::move(op));
      return deliver_deferred(run_op(std::move(op)));
    default:
      return cudaErrorInvalidMemcpyDirection;
  }
}

cudaError_t memset_op(void* dst, int value, size_t count, size_t pitch,
                      size_t height, cudaStream_t stream, bool async) {
  if (count == 0 || height == 0)
    return cudaSuccess;
  // Checked here, so that the queued memset fails at this call like CUDA's.
  auto span = height > 1 ? pitch * (height - 1) + count : count;
  if ((height > 1 && count > pitch) || !fits_allocation(dst, span))
    return cudaErrorInvalidValue;
  proto::Op op;
  auto* m = op.mutable_memset();
  m->set_dst(reinterpret_cast<uintptr_t>(dst));
  m->set_value(static_cast<uint32_t>(value) & 0xffu);
  m->set_element_size(1);
  m->set_count(count);
  m->set_pitch(pitch);
  m->set_height(height);
  m->set_stream(wire_stream(stream));
  m->set_async(async);
  return submit_on(stream, std::move(op));
}

cudaError_t to_symbol(const void* symbol, const void* src, size_t count,
                      size_t offset, cudaMemcpyKind kind, cudaStream_t stream,
                      bool async) {
  void* dst = nullptr;
  if (auto err = symbol_end(symbol, offset, count, kind, true, &dst); err != cudaSuccess)
    return err;
  return copy(dst, src, count, kind, stream, async);
}

cudaError_t from_symbol(void* dst, const void* symbol, size_t count,
                        size_t offset, cudaMemcpyKind kind, cudaStream_t stream,
                        bool async) {
  void* src = nullptr;
  if (auto err = symbol_end(symbol, offset, count, kind, false, &src); err != cudaSuccess)
    return err;
  return copy(dst, src, count, kind, stream, async);
}

} // namespace

extern "C" {

GLEAM_INTERPOSE_EXPORT cudaError_t cudaMalloc(void** devPtr, size_t size) {
  return guarded([&] { return alloc(devPtr, size); });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaMallocPitch(void** devPtr, size_t* pitch,
                                                   size_t width, size_t height) {
  return guarded([&] {
    if (devPtr == nullptr || pitch == nullptr)
      return cudaErrorInvalidValue;
    // The pitch alignment of every current device.
    constexpr size_t align = 512;
    *pitch = (std::max<size_t>(width, 1) + align - 1) / align * align;
    return alloc(devPtr, *pitch * height);
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaFree(void* devPtr) {
  return guarded([&] { return free_device(devPtr); });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaMallocAsync(void** devPtr, size_t size,
                                                   cudaStream_t hStream) {
  return guarded([&] { return alloc_async(devPtr, size, hStream); });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaMallocAsync_ptsz(void** devPtr, size_t size,
                                                        cudaStream_t hStream) {
  return guarded([&] { return alloc_async(devPtr, size, per_thread(hStream)); });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaFreeAsync(void* devPtr, cudaStream_t hStream) {
  return guarded([&] { return free_async(devPtr, hStream); });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaFreeAsync_ptsz(void* devPtr, cudaStream_t hStream) {
  return guarded([&] { return free_async(devPtr, per_thread(hStream)); });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaMallocHost(void** ptr, size_t size) {
  return guarded([&] { return host_alloc(ptr, size, cudaHostAllocDefault); });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaHostAlloc(void** pHost, size_t size, unsigned int flags) {
  return guarded([&] { return host_alloc(pHost, size, flags); });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaFreeHost(void* ptr) {
  return guarded([&] {
    if (ptr == nullptr)
      return cudaSuccess;
    if (auto m = mirror_at_host(ptr); m && m->refresh == mirror_refresh::lazy)
      return m->managed || m->host != reinterpret_cast<uintptr_t>(ptr)
                 ? cudaErrorInvalidValue
                 : mirrored_free(ptr);
    auto& r = reg();
    std::lock_guard<std::recursive_mutex> guard{r.mutex};
    auto i = r.host_ranges.find(reinterpret_cast<uintptr_t>(ptr));
    if (i == r.host_ranges.end() || i->second.registered)
      return cudaErrorInvalidValue;
    r.host_ranges.erase(i);
    std::free(ptr);
    return cudaSuccess;
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaHostRegister(void* ptr, size_t size, unsigned int flags) {
  return guarded([&] {
    constexpr unsigned known = cudaHostRegisterPortable | cudaHostRegisterMapped
                               | cudaHostRegisterIoMemory | cudaHostRegisterReadOnly;
    if (ptr == nullptr || size == 0 || (flags & ~known) != 0)
      return cudaErrorInvalidValue;
    auto& r = reg();
    std::lock_guard<std::recursive_mutex> guard{r.mutex};
    auto key = reinterpret_cast<uintptr_t>(ptr);
    if (r.host_ranges.count(key) != 0)
      return cudaErrorHostMemoryAlreadyRegistered;
    if ((flags & cudaHostRegisterMapped) != 0)
      return register_mapped(ptr, size, flags);
    r.host_ranges[key] = {size, flags, true};
    return cudaSuccess;
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaHostUnregister(void* ptr) {
  return guarded([&] {
    if (auto m = mirror_at_host(ptr); m && m->refresh == mirror_refresh::eager)
      return unregister_mapped(ptr);
    auto& r = reg();
    std::lock_guard<std::recursive_mutex> guard{r.mutex};
    auto i = r.host_ranges.find(reinterpret_cast<uintptr_t>(ptr));
    if (i == r.host_ranges.end() || !i->second.registered)
      return cudaErrorHostMemoryNotRegistered;
    r.host_ranges.erase(i);
    return cudaSuccess;
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaHostGetFlags(unsigned int* pFlags, void* pHost) {
  return guarded([&] {
    if (pFlags == nullptr)
      return cudaErrorInvalidValue;
    auto& r = reg();
    std::lock_guard<std::recursive_mutex> guard{r.mutex};
    auto addr = reinterpret_cast<uintptr_t>(pHost);
    auto i = r.host_ranges.upper_bound(addr);
    if (i == r.host_ranges.begin())
      return cudaErrorInvalidValue;
    --i;
    if (addr >= i->first + i->second.size)
      return cudaErrorInvalidValue;
    *pFlags = i->second.flags;
    return cudaSuccess;
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaPointerGetAttributes(cudaPointerAttributes* attributes,
                                                            const void* ptr) {
  return guarded([&] {
    if (attributes == nullptr)
      return cudaErrorInvalidValue;
    *attributes = cudaPointerAttributes{};
    attributes->device = reg().device;
    auto addr = reinterpret_cast<uintptr_t>(ptr);
    auto m = mirror_at_host(ptr);
    if (!m)
      m = mirror_at_device(addr);
    if (m) {
      bool by_host = addr >= m->host && addr < m->host + m->size;
      auto off = by_host ? addr - m->host : addr - m->device;
      attributes->type = m->managed ? cudaMemoryTypeManaged : cudaMemoryTypeHost;
      attributes->hostPointer = reinterpret_cast<void*>(m->host + off);
      attributes->devicePointer = reinterpret_cast<void*>(static_cast<uintptr_t>(m->device + off));
      return cudaSuccess;
    }
    // A reserved virtual address range is no memory until mapped.
    if (vmm_locate(addr) == vmm_place::reserved) {
      attributes->type = cudaMemoryTypeUnregistered;
      attributes->device = -2;
      return cudaSuccess;
    }
    switch (classify(ptr)) {
      case pointer_kind::device:
        attributes->type = cudaMemoryTypeDevice;
        attributes->devicePointer = const_cast<void*>(ptr);
        break;
      case pointer_kind::host_pinned:
        attributes->type = cudaMemoryTypeHost;
        attributes->hostPointer = const_cast<void*>(ptr);
        break;
      case pointer_kind::host_pageable:
        attributes->type = cudaMemoryTypeUnregistered;
        attributes->device = -2;
        break;
    }
    return cudaSuccess;
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaMemcpy(void* dst, const void* src, size_t count,
                                              enum cudaMemcpyKind kind) {
  return guarded([&] { return copy(dst, src, count, kind, nullptr, false); });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaMemcpy_ptds(void* dst, const void* src, size_t count,
                                                   enum cudaMemcpyKind kind) {
  return guarded([&] { return copy(dst, src, count, kind, cudaStreamPerThread, false); });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t count,
                                                   enum cudaMemcpyKind kind,
                                                   cudaStream_t stream) {
  return guarded([&] { return copy(dst, src, count, kind, stream, true); });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaMemcpyAsync_ptsz(void* dst, const void* src,
                                                        size_t count,
                                                        enum cudaMemcpyKind kind,
                                                        cudaStream_t stream) {
  return guarded([&] { return copy(dst, src, count, kind, per_thread(stream), true); });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaMemcpyPeer(void* dst, int dstDevice, const void* src,
                                                  int srcDevice, size_t count) {
  return guarded([&] {
    if (dstDevice != 0 || srcDevice != 0)
      return cudaErrorInvalidDevice;
    return copy(dst, src, count, cudaMemcpyDeviceToDevice, nullptr, false);
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaMemcpyPeerAsync(void* dst, int dstDevice,
                                                       const void* src, int srcDevice,
                                                       size_t count, cudaStream_t stream) {
  return guarded([&] {
    if (dstDevice != 0 || srcDevice != 0)
      return cudaErrorInvalidDevice;
    return copy(dst, src, count, cudaMemcpyDeviceToDevice, stream, true);
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaMemcpy2D(void* dst, size_t dpitch, const void* src,
                                                size_t spitch, size_t width, size_t height,
                                                enum cudaMemcpyKind kind) {
  return guarded([&] {
    return memcpy_2d(dst, dpitch, src, spitch, width, height, kind, nullptr, false);
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaMemcpy2D_ptds(void* dst, size_t dpitch, const void* src,
                                                     size_t spitch, size_t width,
                                                     size_t height,
                                                     enum cudaMemcpyKind kind) {
  return guarded([&] {
    return memcpy_2d(dst, dpitch, src, spitch, width, height, kind, cudaStreamPerThread, false);
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaMemcpy2DAsync(void* dst, size_t dpitch, const void* src,
                                                     size_t spitch, size_t width,
                                                     size_t height, enum cudaMemcpyKind kind,
                                                     cudaStream_t stream) {
  return guarded([&] {
    return memcpy_2d(dst, dpitch, src, spitch, width, height, kind, stream, true);
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaMemcpy2DAsync_ptsz(void* dst, size_t dpitch,
                                                          const void* src, size_t spitch,
                                                          size_t width, size_t height,
                                                          enum cudaMemcpyKind kind,
                                                          cudaStream_t stream) {
  return guarded([&] {
    return memcpy_2d(dst, dpitch, src, spitch, width, height, kind, per_thread(stream), true);
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaMemset(void* devPtr, int value, size_t count) {
  return guarded([&] { return memset_op(devPtr, value, count, 0, 1, nullptr, false); });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaMemset_ptds(void* devPtr, int value, size_t count) {
  return guarded([&] {
    return memset_op(devPtr, value, count, 0, 1, cudaStreamPerThread, false);
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaMemsetAsync(void* devPtr, int value, size_t count,
                                                   cudaStream_t stream) {
  return guarded([&] { return memset_op(devPtr, value, count, 0, 1, stream, true); });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaMemsetAsync_ptsz(void* devPtr, int value, size_t count,
                                                        cudaStream_t stream) {
  return guarded([&] {
    return memset_op(devPtr, value, count, 0, 1, per_thread(stream), true);
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaMemset2D(void* devPtr, size_t pitch, int value,
                                                size_t width, size_t height) {
  return guarded([&] {
    if (width > pitch)
      return cudaErrorInvalidValue;
    return memset_op(devPtr, value, width, pitch, height, nullptr, false);
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaMemset2D_ptds(void* devPtr, size_t pitch, int value,
                                                     size_t width, size_t height) {
  return guarded([&] {
    if (width > pitch)
      return cudaErrorInvalidValue;
    return memset_op(devPtr, value, width, pitch, height, cudaStreamPerThread, false);
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaMemset2DAsync(void* devPtr, size_t pitch, int value,
                                                     size_t width, size_t height,
                                                     cudaStream_t stream) {
  return guarded([&] {
    if (width > pitch)
      return cudaErrorInvalidValue;
    return memset_op(devPtr, value, width, pitch, height, stream, true);
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaMemset2DAsync_ptsz(void* devPtr, size_t pitch,
                                                          int value, size_t width,
                                                          size_t height,
                                                          cudaStream_t stream) {
  return guarded([&] {
    if (width > pitch)
      return cudaErrorInvalidValue;
    return memset_op(devPtr, value, width, pitch, height, per_thread(stream), true);
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaMemcpyToSymbol(const void* symbol, const void* src,
                                                      size_t count, size_t offset,
                                                      enum cudaMemcpyKind kind) {
  return guarded([&] { return to_symbol(symbol, src, count, offset, kind, nullptr, false); });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaMemcpyToSymbol_ptds(const void* symbol,
                                                           const void* src, size_t count,
                                                           size_t offset,
                                                           enum cudaMemcpyKind kind) {
  return guarded([&] {
    return to_symbol(symbol, src, count, offset, kind, cudaStreamPerThread, false);
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaMemcpyToSymbolAsync(const void* symbol,
                                                           const void* src, size_t count,
                                                           size_t offset,
                                                           enum cudaMemcpyKind kind,
                                                           cudaStream_t stream) {
  return guarded([&] { return to_symbol(symbol, src, count, offset, kind, stream, true); });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaMemcpyToSymbolAsync_ptsz(const void* symbol,
                                                                const void* src,
                                                                size_t count, size_t offset,
                                                                enum cudaMemcpyKind kind,
                                                                cudaStream_t stream) {
  return guarded([&] {
    return to_symbol(symbol, src, count, offset, kind, per_thread(stream), true);
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaMemcpyFromSymbol(void* dst, const void* symbol,
                                                        size_t count, size_t offset,
                                                        enum cudaMemcpyKind kind) {
  return guarded([&] { return from_symbol(dst, symbol, count, offset, kind, nullptr, false); });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaMemcpyFromSymbol_ptds(void* dst, const void* symbol,
                                                             size_t count, size_t offset,
                                                             enum cudaMemcpyKind kind) {
  return guarded([&] {
    return from_symbol(dst, symbol, count, offset, kind, cudaStreamPerThread, false);
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaMemcpyFromSymbolAsync(void* dst, const void* symbol,
                                                             size_t count, size_t offset,
                                                             enum cudaMemcpyKind kind,
                                                             cudaStream_t stream) {
  return guarded([&] { return from_symbol(dst, symbol, count, offset, kind, stream, true); });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaMemcpyFromSymbolAsync_ptsz(void* dst,
                                                                  const void* symbol,
                                                                  size_t count, size_t offset,
                                                                  enum cudaMemcpyKind kind,
                                                                  cudaStream_t stream) {
  return guarded([&] {
    return from_symbol(dst, symbol, count, offset, kind, per_thread(stream), true);
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaGetSymbolAddress(void** devPtr, const void* symbol) {
  return guarded([&] {
    if (devPtr == nullptr)
      return cudaErrorInvalidValue;
    variable_record* v = nullptr;
    if (auto err = resolve_variable(symbol, &v); err != cudaSuccess)
      return err;
    *devPtr = reinterpret_cast<void*>(static_cast<uintptr_t>(v->dptr));
    return cudaSuccess;
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaGetSymbolSize(size_t* size, const void* symbol) {
  return guarded([&] {
    if (size == nullptr)
      return cudaErrorInvalidValue;
    variable_record* v = nullptr;
    if (auto err = resolve_variable(symbol, &v); err != cudaSuccess)
      return err;
    *size = v->size;
    return cudaSuccess;
  });
}

} // extern "C"
