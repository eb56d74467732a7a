#include "executor/vmm.hpp"

#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "executor/cache_ops.hpp"
#include "executor/op_result.hpp"
#include "executor/op_table.hpp"
#include "executor/session_streams.hpp"
#include "executor/weight_cache.hpp"

namespace gleam::executor {

namespace {

/// Executes one VMM op; the members mirror op_context's result helpers.
class vmm_runner {
public:
  vmm_runner(driver_api& api, session& s, CUdevice device, weight_cache* cache,
             proto::OpResult& r)
    : api_(api), s_(s), device_(device), cache_(cache), r_(r) {
  }

  void granularity(const proto::MemGetGranularity& op) {
    CUmemAllocationProp prop;
    if (!prop_of(op.prop(), prop))
      return;
    size_t g = 0;
    if (check(api_.cuMemGetAllocationGranularity(
                &g, &prop, static_cast<CUmemAllocationGranularity_flags>(op.option())),
              "cuMemGetAllocationGranularity"))
      r_.set_value(static_cast<int64_t>(g));
  }

  void reserve(const proto::MemAddressReserve& op) {
    CUdeviceptr p = 0;
    if (!check(api_.cuMemAddressReserve(&p, op.size(), op.alignment(), op.addr(), op.flags()),
               "cuMemAddressReserve"))
      return;
    // The driver never hands out a range the session holds already.
    if (!s_.vmm.reserve(p, op.size())) {
      static_cast<void>(api_.cuMemAddressFree(p, op.size()));
      fail(CUDA_ERROR_UNKNOWN,
           fmt::format("cuMemAddressReserve: range {:#x} + {} bytes overlaps a reservation "
                       "this session holds; report this as a gleam bug",
                       p, op.size()));
      return;
    }
    r_.set_dptr(p);
  }

  void address_free(const proto::MemAddressFree& op) {
    if (auto rc = s_.vmm.check_free(op.ptr(), op.size()); rc != CUDA_SUCCESS) {
      fail(rc, fmt::format("cuMemAddressFree: {:#x} + {} bytes is not a reservation of this "
                           "session, or still holds mappings; pass what cuMemAddressReserve "
                           "gave, after cuMemUnmap",
                           op.ptr(), op.size()));
      return;
    }
    if (check(api_.cuMemAddressFree(op.ptr(), op.size()), "cuMemAddressFree"))
      s_.vmm.free(op.ptr());
  }

  void create(const proto::MemCreate& op) {
    if (auto rc = s_.vmm.check_create(op.handle()); rc != CUDA_SUCCESS) {
      fail(rc, fmt::format("cuMemCreate: allocation handle {} is 0 or names a live "
                           "allocation of this session",
                           op.handle()));
      return;
    }
    if (auto why = memory_refusal(api_, s_, cache_, op.size(), "cuMemCreate"); !why.empty()) {
      fail(CUDA_ERROR_OUT_OF_MEMORY, why);
      return;
    }
    CUmemAllocationProp prop;
    if (!prop_of(op.prop(), prop))
      return;
    CUmemGenericAllocationHandle h = 0;
    auto rc = api_.cuMemCreate(&h, op.size(), &prop, op.flags());
    // The weight cache's GPU tier gives way to the app, as for cuMemAlloc.
    if (rc == CUDA_ERROR_OUT_OF_MEMORY && cache_ != nullptr
        && cache_->shed_gpu(op.size() + (uint64_t{64} << 20)) > 0)
      rc = api_.cuMemCreate(&h, op.size(), &prop, op.flags());
    if (!check(rc, "cuMemCreate"))
      return;
    size_t g = 0;
    if (api_.cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM)
        != CUDA_SUCCESS)
      g = 0;
    wire::vmm_space::allocation a;
    a.handle = op.handle();
    a.size = op.size();
    a.granularity = g;
    a.driver = h;
    a.prop = prop;
    s_.vmm.create(a);
    r_.set_value(static_cast<int64_t>(g));
  }

  void release(const proto::MemRelease& op) {
    if (auto rc = s_.vmm.check_release(op.handle()); rc != CUDA_SUCCESS) {
      unknown_handle("cuMemRelease", op.handle());
      return;
    }
    // While mapped, the driver's handle stays: the memory lives until the
    // last cuMemUnmap, as CUDA defers it.
    if (auto dead = s_.vmm.release(op.handle()))
      check(api_.cuMemRelease(dead->driver), "cuMemRelease");
  }

  void retain(const proto::MemRetain& op) {
    if (s_.vmm.retain(op.handle()) != CUDA_SUCCESS)
      unknown_handle("cuMemRetainAllocationHandle", op.handle());
  }

  void map(const proto::MemMap& op) {
    if (auto rc = s_.vmm.check_map(op.ptr(), op.size(), op.offset(), op.handle(), op.flags());
        rc != CUDA_SUCCESS) {
      fail(rc, fmt::format("cuMemMap: {:#x} + {} bytes of allocation {} at offset {} (flags "
                           "{}): the handle is not this session's, the range is not inside "
                           "one reservation, overlaps a mapping, runs past the allocation, "
                           "is not a multiple of its granularity, or the offset is not 0",
                           op.ptr(), op.size(), op.handle(), op.offset(), op.flags()));
      return;
    }
    const auto* a = s_.vmm.find(op.handle());
    if (check(api_.cuMemMap(op.ptr(), op.size(), op.offset(), a->driver, 0), "cuMemMap"))
      s_.vmm.map(op.ptr(), op.size(), op.offset(), op.handle());
  }

  void unmap(const proto::MemUnmap& op) {
    if (auto rc = s_.vmm.check_unmap(op.ptr(), op.size()); rc != CUDA_SUCCESS) {
      fail(rc, fmt::format("cuMemUnmap: {:#x} + {} bytes cuts a mapping of this session, "
                           "lies outside one reservation or is not a multiple of the "
                           "granularity; unmap whole ranges that cuMemMap mapped",
                           op.ptr(), op.size()));
      return;
    }
    // Earlier work of the session may still use the range (cuMemUnmap
    // waits for the device); not while it captures, which that would break.
    if (s_.captures.empty() && !check(sync_session(api_, s_), "cuMemUnmap"))
      return;
    cache_ops::verify_placed(api_, s_, cache_, op.ptr(), op.size());
    for (const auto& m : s_.vmm.mappings_in(op.ptr(), op.size())) {
      if (!check(api_.cuMemUnmap(m.base, m.size), "cuMemUnmap"))
        return;
      forget_memory(m.base);
      if (auto dead = s_.vmm.unmap(m.base))
        if (!check(api_.cuMemRelease(dead->driver), "cuMemRelease"))
          return;
    }
  }

  void set_access(const proto::MemSetAccess& op) {
    if (auto rc = s_.vmm.check_access(op.ptr(), op.size()); rc != CUDA_SUCCESS) {
      fail(rc, fmt::format("cuMemSetAccess: {:#x} + {} bytes is not exactly whole mappings "
                           "of this session; set access on the ranges cuMemMap mapped",
                           op.ptr(), op.size()));
      return;
    }
    std::vector<CUmemAccessDesc> descs;
    std::optional<unsigned long long> flags;
    for (const auto& d : op.access()) {
      CUmemAccessDesc desc;
      std::memset(&desc, 0, sizeof(desc));
      if (!location(d.location_type(), d.location_id(), desc.location))
        return;
      desc.flags = static_cast<CUmemAccess_flags>(d.flags());
      descs.push_back(desc);
      flags = static_cast<unsigned long long>(d.flags());
    }
    if (!check(api_.cuMemSetAccess(op.ptr(), op.size(), descs.data(), descs.size()),
               "cuMemSetAccess")
        || !flags)
      return;
    s_.vmm.set_access(op.ptr(), op.size(), *flags);
    for (const auto& m : s_.vmm.mappings_in(op.ptr(), op.size())) {
      forget_memory(m.base);
      if (*flags == CU_MEM_ACCESS_FLAGS_PROT_READWRITE
          && !s_.memory.insert(range_entry{m.base, m.size, range_kind::vmm_mapping, 0})) {
        fail(CUDA_ERROR_UNKNOWN,
             fmt::format("cuMemSetAccess: mapping {:#x} + {} bytes overlaps memory this "
                         "session holds; report this as a gleam bug",
                         m.base, m.size));
        return;
      }
    }
  }

private:
  void fail(CUresult rc, std::string detail) {
    fail_op(r_, rc, std::move(detail));
  }

  bool check(CUresult rc, const char* what) {
    return check_op(r_, api_, rc, what);
  }

  void unknown_handle(const char* what, uint64_t handle) {
    fail(CUDA_ERROR_INVALID_VALUE,
         fmt::format("{}: allocation handle {} is not one this session holds (never "
                     "created, or released)",
                     what, handle));
  }

  /// Drops the session-memory entry of the mapping at `base`, if any.
  void forget_memory(uint64_t base) {
    if (auto e = s_.memory.find_base(base); e && e->kind == range_kind::vmm_mapping)
      static_cast<void>(s_.memory.erase(base));
  }

  /// A location of the client's: its device 0 is `device_`.
  bool location(int32_t type, int32_t id, CUmemLocation& out) {
    if (type != CU_MEM_LOCATION_TYPE_DEVICE) {
      fail(CUDA_ERROR_NOT_SUPPORTED,
           fmt::format("memory location type {} is not remoted: only the GPU's own memory "
                       "(CU_MEM_LOCATION_TYPE_DEVICE) can be used through gleam",
                       type));
      return false;
    }
    if (id != 0) {
      fail(CUDA_ERROR_INVALID_DEVICE,
           fmt::format("device {} is not a device of this session (it has device 0)", id));
      return false;
    }
    out.type = CU_MEM_LOCATION_TYPE_DEVICE;
    out.id = static_cast<int>(device_);
    return true;
  }

  bool prop_of(const proto::MemAllocationProp& in, CUmemAllocationProp& out) {
    std::memset(&out, 0, sizeof(out));
    if (!location(in.location_type(), in.location_id(), out.location))
      return false;
    out.type = static_cast<CUmemAllocationType>(in.type());
    out.requestedHandleTypes = static_cast<CUmemAllocationHandleType>(in.handle_types());
    out.allocFlags.compressionType = static_cast<unsigned char>(in.compression_type());
    out.allocFlags.gpuDirectRDMACapable = static_cast<unsigned char>(in.gpu_direct_rdma());
    out.allocFlags.usage = static_cast<unsigned short>(in.usage());
    return true;
  }

  driver_api& api_;
  session& s_;
  CUdevice device_;
  weight_cache* cache_;
  proto::OpResult& r_;
};

} // namespace

void run_vmm(driver_api& api, session& s, CUdevice device, weight_cache* cache,
             const proto::Op& op, proto::OpResult& r) {
  vmm_runner run{api, s, device, cache, r};
  using k = proto::Op::KindCase;
  switch (op.kind_case()) {
    case k::kMemGetGranularity:
      return run.granularity(op.mem_get_granularity());
    case k::kMemAddressReserve:
      return run.reserve(op.mem_address_reserve());
    case k::kMemAddressFree:
      return run.address_free(op.mem_address_free());
    case k::kMemCreate:
      return run.create(op.mem_create());
    case k::kMemRelease:
      return run.release(op.mem_release());
    case k::kMemRetain:
      return run.retain(op.mem_retain());
    case k::kMemMap:
      return run.map(op.mem_map());
    case k::kMemUnmap:
      return run.unmap(op.mem_unmap());
    case k::kMemSetAccess:
      return run.set_access(op.mem_set_access());
    default:
      fail_op(r, CUDA_ERROR_NOT_SUPPORTED, "not an op of the virtual memory family");
      return;
  }
}

CUresult release_vmm(driver_api& api, session& s) {
  CUresult first = CUDA_SUCCESS;
  auto note = [&first](CUresult rc) {
    if (first == CUDA_SUCCESS)
      first = rc;
  };
  for (const auto& m : s.vmm.mappings()) {
    note(api.cuMemUnmap(m.base, m.size));
    if (auto e = s.memory.find_base(m.base); e && e->kind == range_kind::vmm_mapping)
      static_cast<void>(s.memory.erase(m.base));
  }
  for (const auto& a : s.vmm.allocations())
    note(api.cuMemRelease(a.driver));
  for (const auto& res : s.vmm.reservations())
    note(api.cuMemAddressFree(res.base, res.size));
  s.vmm.clear();
  return first;
}

// --- registration (executor/op_table.hpp) -----------------------------------

namespace {

void run_vmm_op(op_context& cx, const proto::Op& op) {
  run_vmm(cx.api, cx.s, cx.device, cx.cache, op, cx.r);
}

using k = proto::Op::KindCase;

constexpr op_route vmm_routes[] = {
  {k::kMemGetGranularity, run_vmm_op}, {k::kMemAddressReserve, run_vmm_op},
  {k::kMemAddressFree, run_vmm_op},    {k::kMemCreate, run_vmm_op},
  {k::kMemRelease, run_vmm_op},        {k::kMemRetain, run_vmm_op},
  {k::kMemMap, run_vmm_op},            {k::kMemUnmap, run_vmm_op},
  {k::kMemSetAccess, run_vmm_op},
};

} // namespace

const op_family vmm_family = make_family(vmm_routes);

} // namespace gleam::executor
