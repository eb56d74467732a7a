#include "executor/mem_pools.hpp"

#include <cstring>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "executor/op_result.hpp"
#include "executor/op_table.hpp"

namespace gleam::executor {

namespace {

/// Executes one pool op; the members mirror op_context's result helpers.
class pool_runner {
public:
  pool_runner(driver_api& api, session& s, CUdevice device, proto::OpResult& r)
    : api_(api), s_(s), device_(device), r_(r) {
  }

  void create(const proto::MemPoolCreate& op) {
    if (op.pool() == 0 || s_.pools.count(op.pool()) != 0) {
      fail(CUDA_ERROR_INVALID_VALUE,
           fmt::format("memory pool handle {} is 0 or already in use in this session",
                       op.pool()));
      return;
    }
    CUmemPoolProps props;
    std::memset(&props, 0, sizeof(props));
    props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    props.location.id = static_cast<int>(device_);
    if (!op.session_default()) {
      props.allocType = static_cast<CUmemAllocationType>(op.alloc_type());
      props.handleTypes = static_cast<CUmemAllocationHandleType>(op.handle_types());
      props.maxSize = static_cast<size_t>(op.max_size());
      props.usage = static_cast<unsigned short>(op.usage());
      if (!location(op.location_type(), op.location_id(), props.location))
        return;
    }
    CUmemoryPool pool = nullptr;
    if (check(api_.cuMemPoolCreate(&pool, &props), "cuMemPoolCreate"))
      s_.pools.emplace(op.pool(), pool);
  }

  void destroy(const proto::MemPoolDestroy& op) {
    auto i = s_.pools.find(op.pool());
    if (i == s_.pools.end()) {
      unknown(op.pool());
      return;
    }
    if (check(api_.cuMemPoolDestroy(i->second), "cuMemPoolDestroy"))
      s_.pools.erase(i);
  }

  void set_attribute(const proto::MemPoolSetAttribute& op) {
    auto* pool = lookup(op.pool());
    if (pool == nullptr)
      return;
    auto attr = static_cast<CUmemPool_attribute>(op.attribute());
    if (int_valued(attr)) {
      int value = static_cast<int>(op.value());
      check(api_.cuMemPoolSetAttribute(pool, attr, &value), "cuMemPoolSetAttribute");
    } else {
      cuuint64_t value = op.value();
      check(api_.cuMemPoolSetAttribute(pool, attr, &value), "cuMemPoolSetAttribute");
    }
  }

  void get_attribute(const proto::MemPoolGetAttribute& op) {
    auto* pool = lookup(op.pool());
    if (pool == nullptr)
      return;
    auto attr = static_cast<CUmemPool_attribute>(op.attribute());
    if (int_valued(attr)) {
      int value = 0;
      if (check(api_.cuMemPoolGetAttribute(pool, attr, &value), "cuMemPoolGetAttribute"))
        r_.set_value(value);
    } else {
      cuuint64_t value = 0;
      if (check(api_.cuMemPoolGetAttribute(pool, attr, &value), "cuMemPoolGetAttribute"))
        r_.set_value(static_cast<int64_t>(value));
    }
  }

  void trim_to(const proto::MemPoolTrimTo& op) {
    if (auto* pool = lookup(op.pool()))
      check(api_.cuMemPoolTrimTo(pool, static_cast<size_t>(op.min_bytes_to_keep())),
            "cuMemPoolTrimTo");
  }

  void set_access(const proto::MemPoolSetAccess& op) {
    auto* pool = lookup(op.pool());
    if (pool == nullptr)
      return;
    std::vector<CUmemAccessDesc> map(static_cast<size_t>(op.access_size()));
    for (int i = 0; i < op.access_size(); ++i) {
      const auto& a = op.access(i);
      std::memset(&map[i], 0, sizeof(map[i]));
      if (!location(a.location_type(), a.location_id(), map[i].location))
        return;
      map[i].flags = static_cast<CUmemAccess_flags>(a.flags());
    }
    check(api_.cuMemPoolSetAccess(pool, map.data(), map.size()), "cuMemPoolSetAccess");
  }

  void get_access(const proto::MemPoolGetAccess& op) {
    auto* pool = lookup(op.pool());
    CUmemLocation where;
    std::memset(&where, 0, sizeof(where));
    if (pool == nullptr || !location(op.location_type(), op.location_id(), where))
      return;
    CUmemAccess_flags flags = CU_MEM_ACCESS_FLAGS_PROT_NONE;
    if (check(api_.cuMemPoolGetAccess(&flags, pool, &where), "cuMemPoolGetAccess"))
      r_.set_value(static_cast<int64_t>(flags));
  }

private:
  /// The attributes whose value is an int (the others are cuuint64_t).
  static bool int_valued(CUmemPool_attribute a) {
    return a == CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES
           || a == CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC
           || a == CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES;
  }

  /// The server location of a client location; false with the result set.
  bool location(int32_t type, int32_t id, CUmemLocation& out) {
    if (type == CU_MEM_LOCATION_TYPE_DEVICE) {
      if (id != 0) {
        fail(CUDA_ERROR_INVALID_DEVICE,
             fmt::format("memory location: device {} does not exist in this session (its "
                         "one device is 0)",
                         id));
        return false;
      }
      out.type = CU_MEM_LOCATION_TYPE_DEVICE;
      out.id = static_cast<int>(device_);
      return true;
    }
    if (type == CU_MEM_LOCATION_TYPE_HOST || type == CU_MEM_LOCATION_TYPE_HOST_NUMA
        || type == CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT) {
      fail(CUDA_ERROR_NOT_SUPPORTED,
           fmt::format("memory location type {} (host memory) is not remoted: such memory "
                       "would live on the GPU server's host; use device pools",
                       type));
      return false;
    }
    fail(CUDA_ERROR_INVALID_VALUE, fmt::format("memory location type {} is not valid", type));
    return false;
  }

  CUmemoryPool lookup(uint64_t handle) {
    auto* pool = find_pool(s_, handle);
    if (pool == nullptr)
      unknown(handle);
    return pool;
  }

  void unknown(uint64_t handle) {
    fail(CUDA_ERROR_INVALID_VALUE,
         fmt::format("memory pool handle {} is not a pool of this session (never created, "
                     "or destroyed)",
                     handle));
  }

  void fail(CUresult rc, std::string detail) {
    fail_op(r_, rc, std::move(detail));
  }

  bool check(CUresult rc, const char* what) {
    return check_op(r_, api_, rc, what);
  }

  driver_api& api_;
  session& s_;
  CUdevice device_;
  proto::OpResult& r_;
};

} // namespace

void run_mem_pool(driver_api& api, session& s, CUdevice device, const proto::Op& op,
                  proto::OpResult& r) {
  pool_runner p{api, s, device, r};
  using k = proto::Op::KindCase;
  switch (op.kind_case()) {
    case k::kMemPoolCreate:
      return p.create(op.mem_pool_create());
    case k::kMemPoolDestroy:
      return p.destroy(op.mem_pool_destroy());
    case k::kMemPoolSetAttribute:
      return p.set_attribute(op.mem_pool_set_attribute());
    case k::kMemPoolGetAttribute:
      return p.get_attribute(op.mem_pool_get_attribute());
    case k::kMemPoolTrimTo:
      return p.trim_to(op.mem_pool_trim_to());
    case k::kMemPoolSetAccess:
      return p.set_access(op.mem_pool_set_access());
    case k::kMemPoolGetAccess:
      return p.get_access(op.mem_pool_get_access());
    default:
      r.set_status(CUDA_ERROR_NOT_SUPPORTED);
      r.set_error(fmt::format("op kind {} is not a memory pool op",
                              static_cast<int>(op.kind_case())));
  }
}

CUmemoryPool find_pool(const session& s, uint64_t pool) {
  auto i = s.pools.find(pool);
  return i == s.pools.end() ? nullptr : i->second;
}

CUresult release_mem_pools(driver_api& api, session& s) {
  CUresult first = CUDA_SUCCESS;
  for (auto& kv : s.pools)
    if (auto rc = api.cuMemPoolDestroy(kv.second); rc != CUDA_SUCCESS && first == CUDA_SUCCESS)
      first = rc;
  s.pools.clear();
  return first;
}

// --- registration (executor/op_table.hpp) -----------------------------------

namespace {

void run_mem_pool_op(op_context& cx, const proto::Op& op) {
  run_mem_pool(cx.api, cx.s, cx.device, op, cx.r);
}

using k = proto::Op::KindCase;

constexpr op_route mem_pool_routes[] = {
  {k::kMemPoolCreate, run_mem_pool_op},       {k::kMemPoolDestroy, run_mem_pool_op},
  {k::kMemPoolSetAttribute, run_mem_pool_op}, {k::kMemPoolGetAttribute, run_mem_pool_op},
  {k::kMemPoolTrimTo, run_mem_pool_op},       {k::kMemPoolSetAccess, run_mem_pool_op},
  {k::kMemPoolGetAccess, run_mem_pool_op},
};

} // namespace

const op_family mem_pool_family = make_family(mem_pool_routes);

} // namespace gleam::executor
