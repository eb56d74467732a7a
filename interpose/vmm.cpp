// The client side of CUDA's virtual memory management API (interpose/vmm.hpp):
// CUDA's checks against the process's wire::vmm_space, then the op.
#include "interpose/vmm.hpp"

#include <cuda.h>

#include <cstring>
#include <map>
#include <mutex>
#include <tuple>

#include "interpose/error_map.hpp"
#include "interpose/host_calls.hpp"
#include "interpose/runtime.hpp"
#include "wire/vmm_space.hpp"

namespace gleam::interpose {

namespace {

using wire::vmm_space;

/// Property fields and option of one granularity query.
using granularity_key = std::tuple<int, int, int, int, int, int, int, int>;

/// The process's virtual memory state; guarded by reg().mutex.
struct vmm_state {
  vmm_space space;
  /// Answers of cuMemGetAllocationGranularity, by query.
  std::map<granularity_key, uint64_t> granularity;
};

/// Never destroyed: calls may come from static destructors.
vmm_state& state() {
  static auto* x = new vmm_state;
  return *x;
}

/// Runs `f` (returning a CUresult) for a driver entry point: the refusal of
/// a call from a graph's host function, the sticky error, the session
/// (opened first), and no exception across the C ABI.
template <class F>
int guarded_cu(F&& f) noexcept {
  if (in_host_call())
    return CUDA_ERROR_NOT_PERMITTED;
  if (auto s = sticky_error(); s != cudaSuccess)
    return to_cu_result(s);
  try {
    if (auto err = connect(); err != cudaSuccess)
      return to_cu_result(err == cudaErrorDevicesUnavailable ? err : cudaErrorNoDevice);
    return f();
  } catch (...) {
    return CUDA_ERROR_UNKNOWN;
  }
}

/// The CUresult of a round trip: the server's own status when the op
/// failed there, else the session's error.
int result_of(cudaError_t err, const proto::OpResult& r) {
  if (err == cudaSuccess)
    return CUDA_SUCCESS;
  return r.status() != 0 ? r.status() : to_cu_result(err);
}

/// CUDA's check of a location: the session's device, else
/// CUDA_ERROR_INVALID_DEVICE; host locations are not remoted.
int check_location(const CUmemLocation& l) {
  switch (l.type) {
    case CU_MEM_LOCATION_TYPE_DEVICE:
      return l.id >= 0 && l.id < session().devices_size() ? CUDA_SUCCESS
                                                          : CUDA_ERROR_INVALID_DEVICE;
    case CU_MEM_LOCATION_TYPE_HOST:
    case CU_MEM_LOCATION_TYPE_HOST_NUMA:
    case CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT:
      report_unsupported("virtual memory in a host location",
                         "memory of the server's host is out of this process's reach; "
                         "use CU_MEM_LOCATION_TYPE_DEVICE");
      return CUDA_ERROR_NOT_SUPPORTED;
    default:
      return CUDA_ERROR_INVALID_VALUE;
  }
}

/// CUDA's checks of an allocation's properties; `out` gets them for the
/// wire.
int check_prop(const CUmemAllocationProp& p, proto::MemAllocationProp* out) {
  if (p.type == CU_MEM_ALLOCATION_TYPE_MANAGED) {
    report_unsupported("cuMemCreate of managed memory",
                       "the client has no host view of it; use CU_MEM_ALLOCATION_TYPE_PINNED");
    return CUDA_ERROR_NOT_SUPPORTED;
  }
  if (p.type != CU_MEM_ALLOCATION_TYPE_PINNED)
    return CUDA_ERROR_INVALID_VALUE;
  if (auto rc = check_location(p.location); rc != CUDA_SUCCESS)
    return rc;
  out->set_type(p.type);
  out->set_handle_types(p.requestedHandleTypes);
  out->set_location_type(p.location.type);
  out->set_location_id(p.location.id);
  out->set_compression_type(p.allocFlags.compressionType);
  out->set_gpu_direct_rdma(p.allocFlags.gpuDirectRDMACapable);
  out->set_usage(p.allocFlags.usage);
  return CUDA_SUCCESS;
}

granularity_key key_of(const proto::MemAllocationProp& p, int option) {
  return {p.type(),
          p.handle_types(),
          p.location_type(),
          p.location_id(),
          static_cast<int>(p.compression_type()),
          static_cast<int>(p.gpu_direct_rdma()),
          static_cast<int>(p.usage()),
          option};
}

/// Sends an error-code-only op; its CUresult (the session's, or the op's
/// own with GLEAM_ASYNC=off).
int submitted(proto::Op op) {
  return to_cu_result(submit(std::move(op)));
}

} // namespace

int vmm_granularity(size_t* granularity, const void* prop, int option) noexcept {
  return guarded_cu([&]() -> int {
    if (granularity == nullptr || prop == nullptr
        || (option != CU_MEM_ALLOC_GRANULARITY_MINIMUM
            && option != CU_MEM_ALLOC_GRANULARITY_RECOMMENDED))
      return CUDA_ERROR_INVALID_VALUE;
    proto::Op op;
    auto* q = op.mutable_mem_get_granularity();
    if (auto rc = check_prop(*static_cast<const CUmemAllocationProp*>(prop), q->mutable_prop());
        rc != CUDA_SUCCESS)
      return rc;
    q->set_option(option);
    auto key = key_of(q->prop(), option);
    auto& r = reg();
    {
      std::lock_guard<std::recursive_mutex> guard{r.mutex};
      auto& cache = state().granularity;
      if (auto i = cache.find(key); i != cache.end()) {
        *granularity = i->second;
        return CUDA_SUCCESS;
      }
    }
    proto::OpResult result;
    auto err = run_op(std::move(op), &result);
    if (err != cudaSuccess)
      return result_of(err, result);
    std::lock_guard<std::recursive_mutex> guard{r.mutex};
    state().granularity[key] = static_cast<uint64_t>(result.value());
    *granularity = static_cast<size_t>(result.value());
    return CUDA_SUCCESS;
  });
}

int vmm_address_reserve(uint64_t* ptr, size_t size, size_t alignment, uint64_t addr,
                        unsigned long long flags) noexcept {
  return guarded_cu([&]() -> int {
    if (ptr == nullptr || size == 0 || (alignment & (alignment - 1)) != 0)
      return CUDA_ERROR_INVALID_VALUE;
    proto::Op op;
    auto* m = op.mutable_mem_address_reserve();
    m->set_size(size);
    m->set_alignment(alignment);
    m->set_addr(addr);
    m->set_flags(flags);
    proto::OpResult result;
    auto err = run_op(std::move(op), &result);
    if (err != cudaSuccess)
      return result_of(err, result);
    auto& r = reg();
    std::lock_guard<std::recursive_mutex> guard{r.mutex};
    if (!state().space.reserve(result.dptr(), size)) {
      // Not the server's range to give: let it go again.
      proto::Op undo;
      undo.mutable_mem_address_free()->set_ptr(result.dptr());
      undo.mutable_mem_address_free()->set_size(size);
      static_cast<void>(submit(std::move(undo)));
      return CUDA_ERROR_UNKNOWN;
    }
    *ptr = result.dptr();
    return CUDA_SUCCESS;
  });
}

int vmm_address_free(uint64_t ptr, size_t size) noexcept {
  return guarded_cu([&]() -> int {
    auto& r = reg();
    std::lock_guard<std::recursive_mutex> guard{r.mutex};
    auto& space = state().space;
    if (auto rc = space.check_free(ptr, size); rc != CUDA_SUCCESS)
      return rc;
    proto::Op op;
    op.mutable_mem_address_free()->set_ptr(ptr);
    op.mutable_mem_address_free()->set_size(size);
    if (auto rc = submitted(std::move(op)); rc != CUDA_SUCCESS)
      return rc;
    space.free(ptr);
    return CUDA_SUCCESS;
  });
}

int vmm_create(uint64_t* handle, size_t size, const void* prop,
               unsigned long long flags) noexcept {
  return guarded_cu([&]() -> int {
    if (handle == nullptr || prop == nullptr || size == 0 || flags != 0)
      return CUDA_ERROR_INVALID_VALUE;
    const auto& p = *static_cast<const CUmemAllocationProp*>(prop);
    proto::Op op;
    auto* m = op.mutable_mem_create();
    if (auto rc = check_prop(p, m->mutable_prop()); rc != CUDA_SUCCESS)
      return rc;
    auto h = next_handle();
    m->set_handle(h);
    m->set_size(size);
    proto::OpResult result;
    auto err = run_op(std::move(op), &result);
    if (err != cudaSuccess)
      return result_of(err, result);
    vmm_space::allocation a;
    a.handle = h;
    a.size = size;
    a.granularity = static_cast<uint64_t>(result.value());
    a.prop = p;
    a.prop.win32HandleMetaData = nullptr;
    auto& r = reg();
    std::lock_guard<std::recursive_mutex> guard{r.mutex};
    state().space.create(a);
    *handle = h;
    return CUDA_SUCCESS;
  });
}

int vmm_release(uint64_t handle) noexcept {
  return guarded_cu([&]() -> int {
    auto& r = reg();
    std::lock_guard<std::recursive_mutex> guard{r.mutex};
    auto& space = state().space;
    if (auto rc = space.check_release(handle); rc != CUDA_SUCCESS)
      return rc;
    proto::Op op;
    op.mutable_mem_release()->set_handle(handle);
    if (auto rc = submitted(std::move(op)); rc != CUDA_SUCCESS)
      return rc;
    static_cast<void>(space.release(handle));
    return CUDA_SUCCESS;
  });
}

int vmm_retain(uint64_t* handle, uint64_t addr) noexcept {
  return guarded_cu([&]() -> int {
    if (handle == nullptr)
      return CUDA_ERROR_INVALID_VALUE;
    auto& r = reg();
    std::lock_guard<std::recursive_mutex> guard{r.mutex};
    auto& space = state().space;
    auto h = space.handle_at(addr);
    if (!h)
      return CUDA_ERROR_INVALID_VALUE;
    proto::Op op;
    op.mutable_mem_retain()->set_handle(*h);
    if (auto rc = submitted(std::move(op)); rc != CUDA_SUCCESS)
      return rc;
    static_cast<void>(space.retain(*h));
    *handle = *h;
    return CUDA_SUCCESS;
  });
}

int vmm_map(uint64_t ptr, size_t size, size_t offset, uint64_t handle,
            unsigned long long flags) noexcept {
  return guarded_cu([&]() -> int {
    auto& r = reg();
    std::lock_guard<std::recursive_mutex> guard{r.mutex};
    auto& space = state().space;
    if (auto rc = space.check_map(ptr, size, offset, handle, flags); rc != CUDA_SUCCESS)
      return rc;
    proto::Op op;
    auto* m = op.mutable_mem_map();
    m->set_ptr(ptr);
    m->set_size(size);
    m->set_offset(offset);
    m->set_handle(handle);
    if (auto rc = submitted(std::move(op)); rc != CUDA_SUCCESS)
      return rc;
    space.map(ptr, size, offset, handle);
    return CUDA_SUCCESS;
  });
}

int vmm_unmap(uint64_t ptr, size_t size) noexcept {
  return guarded_cu([&]() -> int {
    auto& r = reg();
    std::lock_guard<std::recursive_mutex> guard{r.mutex};
    auto& space = state().space;
    if (auto rc = space.check_unmap(ptr, size); rc != CUDA_SUCCESS)
      return rc;
    proto::Op op;
    op.mutable_mem_unmap()->set_ptr(ptr);
    op.mutable_mem_unmap()->set_size(size);
    if (auto rc = submitted(std::move(op)); rc != CUDA_SUCCESS)
      return rc;
    for (const auto& m : space.mappings_in(ptr, size))
      static_cast<void>(space.unmap(m.base));
    return CUDA_SUCCESS;
  });
}

int vmm_set_access(uint64_t ptr, size_t size, const void* desc, size_t count) noexcept {
  return guarded_cu([&]() -> int {
    if (desc == nullptr || count == 0)
      return CUDA_ERROR_INVALID_VALUE;
    const auto* d = static_cast<const CUmemAccessDesc*>(desc);
    proto::Op op;
    auto* m = op.mutable_mem_set_access();
    m->set_ptr(ptr);
    m->set_size(size);
    unsigned long long flags = CU_MEM_ACCESS_FLAGS_PROT_NONE;
    for (size_t i = 0; i < count; ++i) {
      if (auto rc = check_location(d[i].location); rc != CUDA_SUCCESS)
        return rc;
      if (d[i].flags != CU_MEM_ACCESS_FLAGS_PROT_NONE
          && d[i].flags != CU_MEM_ACCESS_FLAGS_PROT_READ
          && d[i].flags != CU_MEM_ACCESS_FLAGS_PROT_READWRITE)
        return CUDA_ERROR_INVALID_VALUE;
      auto* a = m->add_access();
      a->set_location_type(d[i].location.type);
      a->set_location_id(d[i].location.id);
      a->set_flags(d[i].flags);
      flags = d[i].flags;
    }
    auto& r = reg();
    std::lock_guard<std::recursive_mutex> guard{r.mutex};
    auto& space = state().space;
    if (auto rc = space.check_access(ptr, size); rc != CUDA_SUCCESS)
      return rc;
    if (auto rc = submitted(std::move(op)); rc != CUDA_SUCCESS)
      return rc;
    space.set_access(ptr, size, flags);
    return CUDA_SUCCESS;
  });
}

int vmm_get_access(unsigned long long* flags, const void* location, uint64_t ptr) noexcept {
  return guarded_cu([&]() -> int {
    if (flags == nullptr || location == nullptr)
      return CUDA_ERROR_INVALID_VALUE;
    const auto& l = *static_cast<const CUmemLocation*>(location);
    bool host = l.type == CU_MEM_LOCATION_TYPE_HOST || l.type == CU_MEM_LOCATION_TYPE_HOST_NUMA
                || l.type == CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT;
    if (!host)
      if (auto rc = check_location(l); rc != CUDA_SUCCESS)
        return rc;
    auto& r = reg();
    std::lock_guard<std::recursive_mutex> guard{r.mutex};
    const auto* m = state().space.mapping_at(ptr);
    if (m == nullptr)
      return CUDA_ERROR_INVALID_VALUE;
    // Gleam grants no host access to device memory.
    *flags = host ? static_cast<unsigned long long>(CU_MEM_ACCESS_FLAGS_PROT_NONE) : m->access;
    return CUDA_SUCCESS;
  });
}

int vmm_properties(void* prop, uint64_t handle) noexcept {
  return guarded_cu([&]() -> int {
    if (prop == nullptr)
      return CUDA_ERROR_INVALID_VALUE;
    auto& r = reg();
    std::lock_guard<std::recursive_mutex> guard{r.mutex};
    const auto* a = state().space.find(handle);
    if (a == nullptr || a->references == 0)
      return CUDA_ERROR_INVALID_VALUE;
    std::memcpy(prop, &a->prop, sizeof(CUmemAllocationProp));
    return CUDA_SUCCESS;
  });
}

vmm_place vmm_locate(uint64_t addr, uint64_t* base, uint64_t* size) noexcept {
  auto& r = reg();
  std::lock_guard<std::recursive_mutex> guard{r.mutex};
  const auto& space = state().space;
  if (const auto* m = space.mapping_at(addr)) {
    if (base != nullptr)
      *base = m->base;
    if (size != nullptr)
      *size = m->size;
    return vmm_place::mapped;
  }
  return space.reserved(addr) ? vmm_place::reserved : vmm_place::outside;
}

uint64_t vmm_read_write_span(uint64_t addr) noexcept {
  auto& r = reg();
  std::lock_guard<std::recursive_mutex> guard{r.mutex};
  return state().space.read_write_span(addr);
}

void vmm_forget_all() noexcept {
  state().space.clear();
  state().granularity.clear();
}

} // namespace gleam::interpose
