#include "executor/op_context.hpp"

#include <utility>

#include <fmt/format.h>

#include "executor/executor.hpp"
#include "executor/op_result.hpp"
#include "executor/session_streams.hpp"

namespace gleam::executor {

void op_context::fail(CUresult rc, std::string detail) {
  fail_op(r, rc, std::move(detail));
}

bool op_context::check(CUresult rc, const char* what) {
  return check_op(r, api, rc, what);
}

void op_context::check_query(CUresult rc, const char* what) {
  if (rc == CUDA_ERROR_NOT_READY)
    r.set_status(static_cast<int32_t>(rc));
  else
    check(rc, what);
}

bool op_context::check_range(uint64_t ptr, uint64_t len, const char* what) {
  if (s.memory.contains(ptr, len))
    return true;
  fail(CUDA_ERROR_INVALID_VALUE,
       fmt::format("{}: address {:#x} + {} bytes is outside this session's "
                   "allocations; pass a range inside one cudaMalloc'd "
                   "buffer or module variable",
                   what, ptr, len));
  return false;
}

bool op_context::check_size(uint64_t size, const char* what) {
  if (size <= executor::max_transfer_bytes)
    return true;
  fail(CUDA_ERROR_INVALID_VALUE,
       fmt::format("{}: {} bytes exceeds the {} byte limit of one "
                   "transfer; split the copy",
                   what, size, executor::max_transfer_bytes));
  return false;
}

std::string quota_refusal(const session& s, uint64_t size, const char* what) {
  return fmt::format("{} of {} bytes: the session holds {} MiB of device memory and its quota "
                     "([gpu_server] session-memory) is {} MiB",
                     what, size, s.device_bytes() >> 20, s.memory_quota >> 20);
}

std::string memory_refusal(driver_api& api, session& s, weight_cache* cache, uint64_t size,
                           const char* what) {
  if (!s.within_memory_quota(size))
    return quota_refusal(s, size, what);
  if (s.ledger == nullptr)
    return {};
  auto device_free = [&]() -> uint64_t {
    size_t free = 0;
    size_t total = 0;
    if (!s.ledger->has_guarantees() || api.cuMemGetInfo(&free, &total) != CUDA_SUCCESS)
      return 0;
    return free;
  };
  auto why = s.ledger->reserve(s.ledger_slot, size, device_free());
  // The cache's GPU tier holds memory for no tenant: it yields to one.
  if (!why.empty() && cache != nullptr && s.ledger->has_guarantees() && cache->gpu_bytes() > 0
      && cache->shed_gpu(size + (uint64_t{64} << 20)) > 0)
    why = s.ledger->reserve(s.ledger_slot, size, device_free());
  if (why.empty()) {
    s.ledger_reserved = true;
    return {};
  }
  return fmt::format("{} of {} bytes: {}", what, size, why);
}

bool op_context::check_quota(uint64_t size, const char* what) {
  auto why = memory_refusal(api, s, cache, size, what);
  if (why.empty())
    return true;
  fail(CUDA_ERROR_OUT_OF_MEMORY, why);
  return false;
}

bool op_context::lookup_stream(uint64_t handle, CUstream& out) {
  auto rc = stream_for_work(api, s, handle, &out);
  if (rc == CUDA_SUCCESS)
    return true;
  if (rc == CUDA_ERROR_INVALID_HANDLE)
    fail(rc, fmt::format("stream handle {} is not a stream of this session "
                         "(never created, or destroyed)",
                         handle));
  else if (rc == CUDA_ERROR_STREAM_CAPTURE_IMPLICIT)
    fail(rc, "operation would make the legacy stream depend on a capturing blocking "
             "stream of this session (the capture is invalidated)");
  else
    check(rc, "the session's stream");
  return false;
}

bool op_context::lookup_event(uint64_t handle, CUevent& out) {
  auto i = s.events.find(handle);
  if (i != s.events.end()) {
    out = i->second;
    return true;
  }
  fail(CUDA_ERROR_INVALID_HANDLE,
       fmt::format("event handle {} is not an event of this session "
                   "(never created, or destroyed)",
                   handle));
  return false;
}

bool op_context::lookup_graph(uint64_t handle, CUgraph& out) {
  auto i = s.graphs.find(handle);
  if (i != s.graphs.end() && i->second != nullptr) {
    out = i->second;
    return true;
  }
  fail(CUDA_ERROR_INVALID_VALUE,
       fmt::format("graph handle {} is not a graph of this session (never "
                   "captured, or destroyed)",
                   handle));
  return false;
}

bool op_context::lookup_exec(uint64_t handle, CUgraphExec& out) {
  auto i = s.execs.find(handle);
  if (i != s.execs.end()) {
    out = i->second;
    return true;
  }
  fail(CUDA_ERROR_INVALID_VALUE,
       fmt::format("graph exec handle {} is not an executable graph of "
                   "this session (never instantiated, or destroyed)",
                   handle));
  return false;
}

function_entry* op_context::lookup_function(uint64_t module, const std::string& name) {
  auto m = s.modules.find(module);
  if (m == s.modules.end()) {
    fail(CUDA_ERROR_INVALID_HANDLE,
         fmt::format("module handle {} is not a module of this session",
                     module));
    return nullptr;
  }
  auto f = m->second.functions.find(name);
  if (f != m->second.functions.end())
    return &f->second;
  function_entry entry;
  auto rc = api.cuModuleGetFunction(&entry.handle, m->second.handle,
                                    name.c_str());
  if (rc != CUDA_SUCCESS) {
    fail(CUDA_ERROR_INVALID_HANDLE,
         fmt::format("function '{}' is not in module {}: {}", name, module,
                     api.describe(rc)));
    return nullptr;
  }
  entry.params = param_layout(entry.handle);
  return &m->second.functions.emplace(name, std::move(entry)).first->second;
}

std::vector<param_slot> op_context::param_layout(CUfunction f) {
  std::vector<param_slot> out;
  for (size_t i = 0;; ++i) {
    size_t offset = 0;
    size_t size = 0;
    if (api.cuFuncGetParamInfo(f, i, &offset, &size) != CUDA_SUCCESS)
      break;
    out.push_back(param_slot{static_cast<uint32_t>(offset),
                             static_cast<uint32_t>(size)});
  }
  return out;
}

bool op_context::register_allocation(CUdeviceptr p, uint64_t size) {
  // The driver never hands out overlapping memory; a failed insert means
  // the table is corrupt.
  if (!s.memory.insert(range_entry{p, size, range_kind::allocation, 0})) {
    static_cast<void>(api.cuMemFree(p));
    fail(CUDA_ERROR_UNKNOWN,
         fmt::format("allocation {:#x} + {} bytes overlaps a range this "
                     "session already holds; report this as a gleam bug",
                     p, size));
    return false;
  }
  return true;
}

} // namespace gleam::executor
