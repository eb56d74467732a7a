// Managed memory and mapped host memory on host mirrors (interpose/mirror.hpp):
// allocation, the hints (prefetch, advice, stream attachment, which need no
// work on the server: the mirror's coherence does not depend on them) and
// cudaHostGetDevicePointer.
#define __CUDA_API_VERSION_INTERNAL
#include "interpose/export.hpp"

#include <mutex>

#include "interpose/cudart/managed.hpp"
#include "interpose/mirror.hpp"
#include "interpose/runtime.hpp"

using namespace gleam::interpose;
namespace proto = gleam::proto;

namespace gleam::interpose {

namespace {

/// Server allocations are asked in multiples of this, so that each starts
/// on its own pages (the driver aligns allocations of 2 MiB and more to
/// 2 MiB) and no other allocation shares a mirror's pages.
constexpr uint64_t mirror_granule = uint64_t{2} << 20;

/// Tries a mirror at this many server addresses before giving up.
constexpr int mirror_attempts = 8;

void free_on_server(uint64_t dptr) {
  proto::Op op;
  op.mutable_mem_free()->set_dptr(dptr);
  static_cast<void>(submit(std::move(op))); // a failure comes back deferred
}

} // namespace

cudaError_t mirrored_alloc(void** ptr, size_t size, bool managed, unsigned flags) {
  auto request = (static_cast<uint64_t>(size) + mirror_granule - 1) / mirror_granule
                 * mirror_granule;
  // The server's address decides the mirror's: one taken in this process
  // (a library, a heap) is kept aside until another one fits.
  std::vector<uint64_t> taken;
  uint64_t dptr = 0;
  cudaError_t err = cudaErrorMemoryAllocation;
  for (int attempt = 0; attempt < mirror_attempts; ++attempt) {
    if (err = server_alloc(request, false, &dptr); err != cudaSuccess)
      break;
    if (err = mirror_map(dptr, size, managed, flags); err == cudaSuccess)
      break;
    taken.push_back(dptr);
  }
  for (auto t : taken)
    free_on_server(t);
  if (err != cudaSuccess)
    return err;
  // The mirror's fresh pages read zero: so do the device's.
  proto::Op zero;
  auto* m = zero.mutable_memset();
  m->set_dst(dptr);
  m->set_element_size(1);
  m->set_count(size);
  m->set_height(1);
  m->set_stream(2);
  if (err = submit(std::move(zero)); err != cudaSuccess) {
    static_cast<void>(mirror_remove(static_cast<uintptr_t>(dptr)));
    free_on_server(dptr);
    return err;
  }
  auto& r = reg();
  std::lock_guard<std::recursive_mutex> guard{r.mutex};
  r.allocations[dptr] = size;
  if (!managed)
    r.host_ranges[static_cast<uintptr_t>(dptr)] = {size, flags, false};
  *ptr = reinterpret_cast<void*>(static_cast<uintptr_t>(dptr));
  return cudaSuccess;
}

cudaError_t mirrored_free(void* ptr) {
  auto addr = reinterpret_cast<uintptr_t>(ptr);
  if (!mirror_remove(addr))
    return cudaErrorInvalidValue;
  {
    auto& r = reg();
    std::lock_guard<std::recursive_mutex> guard{r.mutex};
    r.allocations.erase(addr);
    r.host_ranges.erase(addr);
  }
  free_on_server(addr);
  return cudaSuccess;
}

cudaError_t register_mapped(void* ptr, size_t size, unsigned flags) {
  uint64_t dptr = 0;
  if (auto err = server_alloc(size, false, &dptr); err != cudaSuccess)
    return err;
  auto host = reinterpret_cast<uintptr_t>(ptr);
  if (auto err = mirror_register(host, dptr, size, flags); err != cudaSuccess) {
    free_on_server(dptr);
    return err;
  }
  auto& r = reg();
  std::lock_guard<std::recursive_mutex> guard{r.mutex};
  r.allocations[dptr] = size;
  r.host_ranges[host] = {size, flags, true};
  return cudaSuccess;
}

cudaError_t unregister_mapped(void* ptr) {
  auto info = mirror_at_host(ptr);
  if (!info || info->managed || info->host != reinterpret_cast<uintptr_t>(ptr)
      || info->refresh != mirror_refresh::eager)
    return cudaErrorHostMemoryNotRegistered;
  // The kernels' last writes reach the app's memory before it is its own.
  if (auto err = flush(); err != cudaSuccess)
    return err;
  static_cast<void>(mirror_remove(info->host));
  {
    auto& r = reg();
    std::lock_guard<std::recursive_mutex> guard{r.mutex};
    r.allocations.erase(info->device);
    r.host_ranges.erase(info->host);
  }
  free_on_server(info->device);
  return cudaSuccess;
}

} // namespace gleam::interpose

namespace {

/// [p, p + count) inside one managed allocation.
bool in_managed(const void* p, size_t count) {
  auto m = mirror_at_host(p);
  if (!m || !m->managed)
    return false;
  auto a = reinterpret_cast<uintptr_t>(p);
  return count <= m->host + m->size - a;
}

/// A location of a prefetch or an advice: the session's device or the host.
cudaError_t check_location(const cudaMemLocation& location) {
  switch (location.type) {
    case cudaMemLocationTypeDevice:
      return location.id >= 0 && location.id < 1 ? cudaSuccess : cudaErrorInvalidDevice;
    case cudaMemLocationTypeHost:
    case cudaMemLocationTypeHostNuma:
    case cudaMemLocationTypeHostNumaCurrent:
      return cudaSuccess;
    default:
      return cudaErrorInvalidValue;
  }
}

cudaError_t malloc_managed(void** devPtr, size_t size, unsigned flags) {
  if (devPtr == nullptr || (flags != cudaMemAttachGlobal && flags != cudaMemAttachHost))
    return cudaErrorInvalidValue;
  // CUDA 13 answers a zero size as cudaMalloc does: success and a null
  // pointer (measured; its documentation says cudaErrorInvalidValue).
  if (size == 0) {
    *devPtr = nullptr;
    return cudaSuccess;
  }
  if (auto err = connect(); err != cudaSuccess)
    return err;
  return mirrored_alloc(devPtr, size, true, flags);
}

cudaError_t prefetch(const void* devPtr, size_t count, cudaMemLocation location,
                     unsigned flags, cudaStream_t stream) {
  if (auto err = known_stream(stream); err != cudaSuccess)
    return err;
  if (flags != 0 || !in_managed(devPtr, count))
    return cudaErrorInvalidValue;
  // Dirty pages go to the device before the next op anyway, and the host
  // fetches what it touches: where the bytes live is Gleam's concern.
  return check_location(location);
}

cudaError_t advise(const void* devPtr, size_t count, cudaMemoryAdvise advice,
                   cudaMemLocation location) {
  switch (advice) {
    case cudaMemAdviseSetReadMostly:
    case cudaMemAdviseUnsetReadMostly:
      break;
    case cudaMemAdviseSetPreferredLocation:
    case cudaMemAdviseUnsetPreferredLocation:
    case cudaMemAdviseSetAccessedBy:
    case cudaMemAdviseUnsetAccessedBy:
      if (auto err = check_location(location); err != cudaSuccess)
        return err;
      break;
    default:
      return cudaErrorInvalidValue;
  }
  return in_managed(devPtr, count) ? cudaSuccess : cudaErrorInvalidValue;
}

cudaError_t attach(cudaStream_t stream, void* devPtr, size_t length, unsigned flags) {
  if (auto err = known_stream(stream); err != cudaSuccess)
    return err;
  if (flags != cudaMemAttachGlobal && flags != cudaMemAttachHost
      && flags != cudaMemAttachSingle)
    return cudaErrorInvalidValue;
  auto m = mirror_at_host(devPtr);
  if (!m || !m->managed || m->host != reinterpret_cast<uintptr_t>(devPtr)
      || (length != 0 && length != m->size))
    return cudaErrorInvalidValue;
  return cudaSuccess;
}

} // namespace

extern "C" {

GLEAM_INTERPOSE_EXPORT cudaError_t cudaMallocManaged(void** devPtr, size_t size,
                                                     unsigned int flags) {
  return guarded([&] { return malloc_managed(devPtr, size, flags); });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaMemPrefetchAsync(const void* devPtr, size_t count,
                                                        struct cudaMemLocation location,
                                                        unsigned int flags,
                                                        cudaStream_t stream) {
  return guarded([&] { return prefetch(devPtr, count, location, flags, stream); });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaMemPrefetchAsync_ptsz(const void* devPtr, size_t count,
                                                             struct cudaMemLocation location,
                                                             unsigned int flags,
                                                             cudaStream_t stream) {
  return guarded([&] {
    return prefetch(devPtr, count, location, flags, per_thread(stream));
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaMemAdvise(const void* devPtr, size_t count,
                                                 enum cudaMemoryAdvise advice,
                                                 struct cudaMemLocation location) {
  return guarded([&] { return advise(devPtr, count, advice, location); });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaStreamAttachMemAsync(cudaStream_t stream, void* devPtr,
                                                            size_t length, unsigned int flags) {
  return guarded([&] { return attach(stream, devPtr, length, flags); });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaStreamAttachMemAsync_ptsz(cudaStream_t stream,
                                                                 void* devPtr, size_t length,
                                                                 unsigned int flags) {
  return guarded([&] { return attach(per_thread(stream), devPtr, length, flags); });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaHostGetDevicePointer(void** pDevice, void* pHost,
                                                            unsigned int flags) {
  return guarded([&] {
    if (pDevice == nullptr || flags != 0)
      return cudaErrorInvalidValue;
    if (auto m = mirror_at_host(pHost); m && !m->managed) {
      auto off = reinterpret_cast<uintptr_t>(pHost) - m->host;
      *pDevice = reinterpret_cast<void*>(static_cast<uintptr_t>(m->device + off));
      return cudaSuccess;
    }
    if (classify(pHost) == pointer_kind::host_pinned) {
      report_unsupported("cudaHostGetDevicePointer of pinned memory that is not mapped",
                         "a GPU in another machine reaches host memory only through a "
                         "mirror: allocate it with cudaHostAlloc(cudaHostAllocMapped) "
                         "or register it with cudaHostRegister(cudaHostRegisterMapped)");
      return cudaErrorNotSupported;
    }
    return cudaErrorInvalidValue;
  });
}

} // extern "C"
