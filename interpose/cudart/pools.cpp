// Stream-ordered memory pools (cudaMemPool*, cudaDeviceGet/SetMemPool,
// cudaMallocFromPoolAsync). Pool handles are chosen here and mapped by the
// server to driver pools of the session (executor/mem_pools.hpp), the
// device's default pool included: the server makes the session a stand-in
// of its own, so one app's settings and statistics never reach another's.
// The current pool of each device is kept here (cudaDeviceSetMemPool
// sends nothing); allocations name their pool on the wire. Creation,
// attributes, access and allocations wait for the server (their errors come
// at the call); trims and destruction are error-code-only. Memory in host
// locations and interprocess export/import are not remoted.
#define __CUDA_API_VERSION_INTERNAL
#include "interpose/export.hpp"

#include <cuda.h>

#include "interpose/capture_state.hpp"
#include "interpose/cudart/pools.hpp"
#include "interpose/runtime.hpp"

using namespace gleam::interpose;
namespace proto = gleam::proto;

namespace gleam::interpose {

namespace {

cudaMemPool_t as_pool(uint64_t h) {
  return reinterpret_cast<cudaMemPool_t>(static_cast<uintptr_t>(h));
}

uint64_t handle(cudaMemPool_t p) {
  return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p));
}

bool valid_device(int device) {
  return device >= 0 && device < session().devices_size();
}

/// The default pool of `device` (a valid ordinal), made on the server the
/// first time it is asked for.
cudaError_t default_pool(int device, uint64_t* out) {
  auto& r = reg();
  std::lock_guard<std::recursive_mutex> guard{r.mutex};
  if (auto h = r.pools.default_pool(device); h != 0) {
    *out = h;
    return cudaSuccess;
  }
  auto h = next_handle();
  proto::Op op;
  op.mutable_mem_pool_create()->set_pool(h);
  op.mutable_mem_pool_create()->set_session_default(true);
  if (auto err = run_op(std::move(op)); err != cudaSuccess)
    return err;
  r.pools.add(h, device, true);
  *out = h;
  return cudaSuccess;
}

bool known_pool(cudaMemPool_t pool) {
  auto& r = reg();
  std::lock_guard<std::recursive_mutex> guard{r.mutex};
  return pool != nullptr && r.pools.known(handle(pool));
}

/// A location the server serves: a device of the session. Host locations
/// are cudaErrorNotSupported (reported once), anything else
/// cudaErrorInvalidValue.
cudaError_t check_location(const cudaMemLocation& where, const char* fn) {
  if (where.type == cudaMemLocationTypeDevice)
    return valid_device(where.id) ? cudaSuccess : cudaErrorInvalidDevice;
  if (where.type == cudaMemLocationTypeHost || where.type == cudaMemLocationTypeHostNuma
      || where.type == cudaMemLocationTypeHostNumaCurrent) {
    report_unsupported(fn, "memory pools in host locations are not remoted: their memory "
                           "would live on the GPU server's host; use device pools");
    return cudaErrorNotSupported;
  }
  return cudaErrorInvalidValue;
}

/// For the location-based pool calls: pinned memory of a device of the
/// session. Host locations and managed pools are cudaErrorNotSupported
/// (reported once), other types and bad devices cudaErrorInvalidValue.
cudaError_t pinned_device(const cudaMemLocation& where, cudaMemAllocationType type,
                          const char* fn) {
  if (type == cudaMemAllocationTypeManaged) {
    report_unsupported(fn, "managed memory pools are not remoted; use device pools");
    return cudaErrorNotSupported;
  }
  if (type != cudaMemAllocationTypePinned)
    return cudaErrorInvalidValue;
  auto err = check_location(where, fn);
  return err == cudaErrorInvalidDevice ? cudaErrorInvalidValue : err;
}

/// Whether cudaMemPoolAttr `attr` holds an int (else a cuuint64_t); false
/// with `*known` false for an attribute CUDA does not define.
bool int_valued(cudaMemPoolAttr attr, bool* known) {
  *known = true;
  switch (attr) {
    case cudaMemPoolReuseFollowEventDependencies:
    case cudaMemPoolReuseAllowOpportunistic:
    case cudaMemPoolReuseAllowInternalDependencies:
      return true;
    case cudaMemPoolAttrReleaseThreshold:
    case cudaMemPoolAttrReservedMemCurrent:
    case cudaMemPoolAttrReservedMemHigh:
    case cudaMemPoolAttrUsedMemCurrent:
    case cudaMemPoolAttrUsedMemHigh:
      return false;
  }
  *known = false;
  return false;
}

cudaError_t alloc_from_pool(void** ptr, size_t size, cudaMemPool_t pool, cudaStream_t stream) {
  if (ptr == nullptr || !known_pool(pool))
    return cudaErrorInvalidValue;
  if (auto err = known_stream(stream); err != cudaSuccess)
    return err;
  if (size == 0) {
    *ptr = nullptr;
    return cudaSuccess;
  }
  return stream_ordered_alloc(ptr, size, handle(pool), stream);
}

} // namespace

uint64_t malloc_async_pool() {
  auto& r = reg();
  std::lock_guard<std::recursive_mutex> guard{r.mutex};
  return r.pools.active() ? r.pools.current(r.device) : 0;
}

cudaError_t stream_ordered_alloc(void** ptr, size_t size, uint64_t pool, cudaStream_t stream) {
  bool captured = captures().status(wire_stream(stream)) != cudaStreamCaptureStatusNone;
  proto::Op op;
  auto* a = op.mutable_mem_alloc_async();
  a->set_stream(wire_stream(stream));
  a->set_size(size);
  a->set_pool(pool);
  proto::OpResult result;
  if (auto err = run_op(std::move(op), &result); err != cudaSuccess)
    return err;
  auto& r = reg();
  std::lock_guard<std::recursive_mutex> guard{r.mutex};
  r.allocations[result.dptr()] = size;
  if (pool != 0 && !captured)
    r.pools.note_allocation(result.dptr(), pool);
  *ptr = reinterpret_cast<void*>(static_cast<uintptr_t>(result.dptr()));
  return cudaSuccess;
}

} // namespace gleam::interpose

extern "C" {

GLEAM_INTERPOSE_EXPORT cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t* memPool,
                                                               int device) {
  return guarded([&] {
    if (memPool == nullptr)
      return cudaErrorInvalidValue;
    if (auto err = connect(); err != cudaSuccess)
      return err;
    if (!valid_device(device))
      return cudaErrorInvalidDevice;
    uint64_t h = 0;
    if (auto err = default_pool(device, &h); err != cudaSuccess)
      return err;
    *memPool = as_pool(h);
    return cudaSuccess;
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaDeviceGetMemPool(cudaMemPool_t* memPool, int device) {
  return guarded([&] {
    if (memPool == nullptr)
      return cudaErrorInvalidValue;
    if (auto err = connect(); err != cudaSuccess)
      return err;
    if (!valid_device(device))
      return cudaErrorInvalidValue;
    uint64_t h = 0;
    {
      auto& r = reg();
      std::lock_guard<std::recursive_mutex> guard{r.mutex};
      h = r.pools.current(device);
    }
    if (h == 0)
      if (auto err = default_pool(device, &h); err != cudaSuccess)
        return err;
    *memPool = as_pool(h);
    return cudaSuccess;
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaDeviceSetMemPool(int device, cudaMemPool_t memPool) {
  return guarded([&] {
    if (auto err = connect(); err != cudaSuccess)
      return err;
    // As CUDA answers: a pool that is not one of `device` (an ordinal with
    // no device included) is an invalid value, not an invalid device.
    auto& r = reg();
    std::lock_guard<std::recursive_mutex> guard{r.mutex};
    if (memPool == nullptr || !r.pools.known(handle(memPool))
        || r.pools.device_of(handle(memPool)) != device || !valid_device(device))
      return cudaErrorInvalidValue;
    r.pools.set_current(device, handle(memPool));
    return cudaSuccess;
  });
}

// The location-based forms: device locations with pinned memory are the
// device's pools above; host locations and managed pools are not remoted.
GLEAM_INTERPOSE_EXPORT cudaError_t cudaMemGetDefaultMemPool(cudaMemPool_t* memPool,
                                                            struct cudaMemLocation* location,
                                                            enum cudaMemAllocationType type) {
  return guarded([&] {
    if (memPool == nullptr || location == nullptr)
      return cudaErrorInvalidValue;
    if (auto err = connect(); err != cudaSuccess)
      return err;
    if (auto err = pinned_device(*location, type, "cudaMemGetDefaultMemPool");
        err != cudaSuccess)
      return err;
    uint64_t h = 0;
    if (auto err = default_pool(location->id, &h); err != cudaSuccess)
      return err;
    *memPool = as_pool(h);
    return cudaSuccess;
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaMemGetMemPool(cudaMemPool_t* memPool,
                                                     struct cudaMemLocation* location,
                                                     enum cudaMemAllocationType type) {
  return guarded([&] {
    if (memPool == nullptr || location == nullptr)
      return cudaErrorInvalidValue;
    if (auto err = connect(); err != cudaSuccess)
      return err;
    if (auto err = pinned_device(*location, type, "cudaMemGetMemPool"); err != cudaSuccess)
      return err;
    return cudaDeviceGetMemPool(memPool, location->id);
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaMemSetMemPool(struct cudaMemLocation* location,
                                                     enum cudaMemAllocationType type,
                                                     cudaMemPool_t memPool) {
  return guarded([&] {
    if (location == nullptr)
      return cudaErrorInvalidValue;
    if (auto err = connect(); err != cudaSuccess)
      return err;
    if (auto err = pinned_device(*location, type, "cudaMemSetMemPool"); err != cudaSuccess)
      return err;
    return cudaDeviceSetMemPool(location->id, memPool);
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaMemPoolCreate(cudaMemPool_t* memPool,
                                                     const cudaMemPoolProps* poolProps) {
  return guarded([&] {
    if (memPool == nullptr || poolProps == nullptr)
      return cudaErrorInvalidValue;
    if (auto err = connect(); err != cudaSuccess)
      return err;
    if (auto err = check_location(poolProps->location, "cudaMemPoolCreate");
        err != cudaSuccess)
      return err == cudaErrorInvalidDevice ? cudaErrorInvalidValue : err;
    auto h = next_handle();
    proto::Op op;
    auto* c = op.mutable_mem_pool_create();
    c->set_pool(h);
    c->set_alloc_type(static_cast<int32_t>(poolProps->allocType));
    c->set_handle_types(static_cast<int32_t>(poolProps->handleTypes));
    c->set_location_type(static_cast<int32_t>(poolProps->location.type));
    c->set_location_id(poolProps->location.id);
    c->set_max_size(poolProps->maxSize);
    c->set_usage(poolProps->usage);
    if (auto err = run_op(std::move(op)); err != cudaSuccess)
      return err;
    auto& r = reg();
    std::lock_guard<std::recursive_mutex> guard{r.mutex};
    r.pools.add(h, poolProps->location.id, false);
    *memPool = as_pool(h);
    return cudaSuccess;
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaMemPoolDestroy(cudaMemPool_t memPool) {
  return guarded([&] {
    auto& r = reg();
    std::lock_guard<std::recursive_mutex> guard{r.mutex};
    // A device's default pool cannot be destroyed.
    if (memPool == nullptr || !r.pools.known(handle(memPool))
        || r.pools.is_default(handle(memPool)))
      return cudaErrorInvalidValue;
    proto::Op op;
    op.mutable_mem_pool_destroy()->set_pool(handle(memPool));
    if (auto err = submit(std::move(op)); err != cudaSuccess)
      return err;
    r.pools.remove(handle(memPool));
    return cudaSuccess;
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t memPool,
                                                           enum cudaMemPoolAttr attr,
                                                           void* value) {
  return guarded([&] {
    bool known = false;
    bool is_int = int_valued(attr, &known);
    if (value == nullptr || !known || !known_pool(memPool))
      return cudaErrorInvalidValue;
    proto::Op op;
    auto* s = op.mutable_mem_pool_set_attribute();
    s->set_pool(handle(memPool));
    s->set_attribute(static_cast<int32_t>(attr));
    if (is_int)
      s->set_value(static_cast<uint64_t>(static_cast<uint32_t>(*static_cast<int*>(value))));
    else
      s->set_value(*static_cast<cuuint64_t*>(value));
    return run_op(std::move(op));
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t memPool,
                                                           enum cudaMemPoolAttr attr,
                                                           void* value) {
  return guarded([&] {
    bool known = false;
    bool is_int = int_valued(attr, &known);
    if (value == nullptr || !known || !known_pool(memPool))
      return cudaErrorInvalidValue;
    proto::Op op;
    op.mutable_mem_pool_get_attribute()->set_pool(handle(memPool));
    op.mutable_mem_pool_get_attribute()->set_attribute(static_cast<int32_t>(attr));
    proto::OpResult result;
    auto err = run_op(std::move(op), &result);
    if (err != cudaSuccess)
      return err;
    if (is_int)
      *static_cast<int*>(value) = static_cast<int>(result.value());
    else
      *static_cast<cuuint64_t*>(value) = static_cast<cuuint64_t>(result.value());
    return cudaSuccess;
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaMemPoolTrimTo(cudaMemPool_t memPool,
                                                     size_t minBytesToKeep) {
  return guarded([&] {
    if (!known_pool(memPool))
      return cudaErrorInvalidValue;
    proto::Op op;
    op.mutable_mem_pool_trim_to()->set_pool(handle(memPool));
    op.mutable_mem_pool_trim_to()->set_min_bytes_to_keep(minBytesToKeep);
    return submit(std::move(op));
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaMemPoolSetAccess(cudaMemPool_t memPool,
                                                        const cudaMemAccessDesc* descList,
                                                        size_t count) {
  return guarded([&] {
    if (!known_pool(memPool) || (descList == nullptr && count != 0))
      return cudaErrorInvalidValue;
    proto::Op op;
    auto* s = op.mutable_mem_pool_set_access();
    s->set_pool(handle(memPool));
    for (size_t i = 0; i < count; ++i) {
      if (auto err = check_location(descList[i].location, "cudaMemPoolSetAccess");
          err != cudaSuccess)
        return err == cudaErrorInvalidDevice ? cudaErrorInvalidValue : err;
      auto* d = s->add_access();
      d->set_location_type(static_cast<int32_t>(descList[i].location.type));
      d->set_location_id(descList[i].location.id);
      d->set_flags(static_cast<int32_t>(descList[i].flags));
    }
    return run_op(std::move(op));
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaMemPoolGetAccess(enum cudaMemAccessFlags* flags,
                                                        cudaMemPool_t memPool,
                                                        struct cudaMemLocation* location) {
  return guarded([&] {
    if (flags == nullptr || location == nullptr || !known_pool(memPool))
      return cudaErrorInvalidValue;
    if (auto err = check_location(*location, "cudaMemPoolGetAccess"); err != cudaSuccess)
      return err == cudaErrorInvalidDevice ? cudaErrorInvalidValue : err;
    proto::Op op;
    auto* g = op.mutable_mem_pool_get_access();
    g->set_pool(handle(memPool));
    g->set_location_type(static_cast<int32_t>(location->type));
    g->set_location_id(location->id);
    proto::OpResult result;
    auto err = run_op(std::move(op), &result);
    if (err == cudaSuccess)
      *flags = static_cast<cudaMemAccessFlags>(result.value());
    return err;
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaMallocFromPoolAsync(void** ptr, size_t size,
                                                           cudaMemPool_t memPool,
                                                           cudaStream_t stream) {
  return guarded([&] { return alloc_from_pool(ptr, size, memPool, stream); });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaMallocFromPoolAsync_ptsz(void** ptr, size_t size,
                                                                cudaMemPool_t memPool,
                                                                cudaStream_t stream) {
  return guarded([&] { return alloc_from_pool(ptr, size, memPool, per_thread(stream)); });
}

} // extern "C"
