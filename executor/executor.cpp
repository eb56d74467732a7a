#include "executor/executor.hpp"

#include "executor/cache_ops.hpp"
#include "executor/device_memory_tier.hpp"

#include <chrono>
#include <cstring>
#include <limits>
#include <utility>

#include <fmt/format.h>

#include "executor/blas.hpp"
#include "executor/error.hpp"
#include "executor/graph_clone.hpp"
#include "executor/graph_copies.hpp"
#include "executor/launch_attributes.hpp"
#include "executor/library_runner.hpp"
#include "executor/mem_pools.hpp"
#include "executor/module_image.hpp"
#include "executor/op_result.hpp"
#include "executor/session_secret.hpp"
#include "executor/session_streams.hpp"
#include "executor/vmm.hpp"
#include "wire/protocol.hpp"

namespace gleam::executor {

namespace {

constexpr uint64_t max_u64 = std::numeric_limits<uint64_t>::max();

/// Errors after which the context is unusable; the batch stops there.
bool is_sticky(CUresult rc) {
  switch (rc) {
    case CUDA_ERROR_ECC_UNCORRECTABLE:
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_CONTEXT_IS_DESTROYED:
      return true;
    default:
      return false;
  }
}

/// Extent in bytes of a pitched region of `height` rows of `width` bytes,
/// or nothing when it overflows 64 bits. A region without rows or columns
/// has extent 0.
std::optional<uint64_t> pitched_extent(uint64_t width, uint64_t pitch,
                                       uint64_t height) {
  if (width == 0 || height == 0)
    return uint64_t{0};
  uint64_t rows = 0;
  if (__builtin_mul_overflow(pitch, height - 1, &rows) || rows > max_u64 - width)
    return std::nullopt;
  return rows + width;
}

std::string uuid_string(const std::string& bytes) {
  std::string out = "GPU-";
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10)
      out += '-';
    out += fmt::format("{:02x}", static_cast<uint8_t>(bytes[i]));
  }
  return out;
}

uint64_t now_ns() {
  using namespace std::chrono;
  return static_cast<uint64_t>(
    duration_cast<nanoseconds>(system_clock::now().time_since_epoch()).count());
}

/// Frees every driver object of `s` (on `device`) and empties its tables.
/// Returns the first failure, CUDA_SUCCESS when everything went.
CUresult release_session_resources(driver_api& api, session& s, weight_cache* cache,
                                   CUdevice device) {
  CUresult first = CUDA_SUCCESS;
  auto note = [&first](CUresult rc) {
    if (first == CUDA_SUCCESS)
      first = rc;
  };
  // Host nodes still waiting for the client return: the waits below must
  // not depend on a client that is gone.
  if (s.back_channel != nullptr)
    s.back_channel->end(s.id);
  // Ongoing captures end first (their streams go next); then the graphs.
  for (auto& kv : s.captures) {
    auto st = s.streams.find(kv.first);
    CUgraph g = nullptr;
    if (st != s.streams.end() && api.cuStreamEndCapture != nullptr)
      static_cast<void>(api.cuStreamEndCapture(st->second, &g));
    if (g != nullptr)
      note(api.cuGraphDestroy(g));
  }
  s.captures.clear();
  // Pending work of the session may still use its memory.
  note(sync_session(api, s));
  // Library handles first: they hold the session's streams and workspaces.
  if (release_blas(s) != CUBLAS_STATUS_SUCCESS)
    note(CUDA_ERROR_UNKNOWN);
  if (release_library_handles(s) != 0)
    note(CUDA_ERROR_UNKNOWN);
  // Session end: the weight rule for every chunk still in place, and what
  // the session uploaded on disk before the session is gone.
  cache_ops::verify_placed(api, s, cache, 0, std::numeric_limits<uint64_t>::max());
  if (cache != nullptr)
    cache->wait_persisted();
  for (auto& kv : s.execs)
    note(api.cuGraphExecDestroy(kv.second));
  s.execs.clear();
  for (auto& kv : s.graphs)
    if (kv.second != nullptr)
      note(api.cuGraphDestroy(kv.second));
  s.graphs.clear();
  s.nodes.clear();
  s.host_calls.clear();
  release_host_copies(api, s);
  for (auto& kv : s.streams)
    note(api.cuStreamDestroy(kv.second));
  s.streams.clear();
  release_session_streams(api, s);
  for (auto& kv : s.events)
    note(api.cuEventDestroy(kv.second));
  s.events.clear();
  for (auto& kv : s.modules)
    note(api.cuModuleUnload(kv.second.handle));
  s.modules.clear();
  note(release_vmm(api, s));
  for (const auto& e : s.memory.entries()) {
    if (e.kind == range_kind::allocation)
      note(api.cuMemFree(static_cast<CUdeviceptr>(e.base)));
    // Graph memory a launched graph left allocated; refused (and nothing
    // to free) when its graph never ran.
    if (e.kind == range_kind::graph_allocation)
      static_cast<void>(api.cuMemFree(static_cast<CUdeviceptr>(e.base)));
  }
  // The graph memory pool keeps what the session's graphs used.
  if (api.cuDeviceGraphMemTrim != nullptr)
    note(api.cuDeviceGraphMemTrim(device));
  s.memory.clear();
  note(release_mem_pools(api, s));
  for (const auto& e : s.slabs.entries())
    note(api.cuMemFree(static_cast<CUdeviceptr>(e.base)));
  s.slabs.clear();
  return first;
}

/// Executes one op of one session into one result.
class op_runner {
public:
  op_runner(driver_api& api, blas_api* blas, session& s, proto::OpResult& r,
            weight_cache* cache = nullptr, CUdevice device = 0,
            capture_judge* judge = nullptr)
    : api_(api), blas_(blas), s_(s), r_(r), cache_(cache), device_(device), judge_(judge) {
  }

  void run(const proto::Op& op) {
    if (op.capture_checked() && judge_ != nullptr) {
      // The app's thread is bound by the capture rules: the driver judges
      // this op as it would have judged the app's call.
      judge_->run(s_, op.prohibited_by(), [&] { dispatch(op); });
    } else {
      dispatch(op);
    }
  }

private:
  void dispatch(const proto::Op& op) {
    using k = proto::Op::KindCase;
    switch (op.kind_case()) {
      case k::kMemAlloc:
        return mem_alloc(op.mem_alloc());
      case k::kMemFree:
        return mem_free(op.mem_free());
      case k::kMemcpyHtod:
        return memcpy_htod(op.memcpy_htod());
      case k::kMemcpyDtoh:
        return memcpy_dtoh(op.memcpy_dtoh());
      case k::kMemcpyDtod:
        return memcpy_dtod(op.memcpy_dtod());
      case k::kMemcpy2D:
        return memcpy_2d(op.memcpy_2d());
      case k::kMemset:
        return memset(op.memset());
      case k::kMemGetInfo:
        return mem_get_info();
      case k::kMemAllocPitch:
        return mem_alloc_pitch(op.mem_alloc_pitch());
      case k::kModuleLoad:
        return module_load(op.module_load());
      case k::kModuleUnload:
        return module_unload(op.module_unload());
      case k::kLaunchKernel:
        return launch_kernel(op.launch_kernel());
      case k::kFuncSetAttribute:
        return func_set_attribute(op.func_set_attribute());
      case k::kFuncSetCacheConfig:
        return func_set_cache_config(op.func_set_cache_config());
      case k::kOccupancyMaxActiveBlocks:
        return occupancy(op.occupancy_max_active_blocks());
      case k::kStreamCreate:
        return stream_create(op.stream_create());
      case k::kStreamDestroy:
        return stream_destroy(op.stream_destroy());
      case k::kStreamSynchronize:
        return stream_synchronize(op.stream_synchronize());
      case k::kStreamQuery:
        return stream_query(op.stream_query());
      case k::kStreamWaitEvent:
        return stream_wait_event(op.stream_wait_event());
      case k::kEventCreate:
        return event_create(op.event_create());
      case k::kEventDestroy:
        return event_destroy(op.event_destroy());
      case k::kEventRecord:
        return event_record(op.event_record());
      case k::kEventSynchronize:
        return event_synchronize(op.event_synchronize());
      case k::kEventQuery:
        return event_query(op.event_query());
      case k::kEventElapsedTime:
        return event_elapsed_time(op.event_elapsed_time());
      case k::kCtxSynchronize:
        // The session's streams: other sessions' work is not the app's.
        check(sync_session(api_, s_), "cuCtxSynchronize");
        return;
      case k::kDeviceReset:
        check(release_session_resources(api_, s_, cache_, device_), "DeviceReset");
        return;
      case k::kCtxSetLimit:
        return ctx_set_limit(op.ctx_set_limit());
      case k::kCtxGetLimit:
        return ctx_get_limit(op.ctx_get_limit());
      // cuBLAS / cuBLASLt ops: executor/blas.cpp.
      case k::kBlasCreate:
      case k::kBlasDestroy:
      case k::kBlasSetStream:
      case k::kBlasSetWorkspace:
      case k::kBlasSetMathMode:
      case k::kBlasSetAtomicsMode:
      case k::kBlasGemm:
      case k::kBlasLtCreate:
      case k::kBlasLtDestroy:
      case k::kBlasLtMatmul:
      case k::kBlasLtHeuristic:
        return run_blas(blas_, api_, s_, op, r_);
      // Library calls (cuBLAS's and every other library's generated ones)
      // and their kept outputs: executor/library_runner.cpp.
      case k::kLibraryCall:
      case k::kLibraryOutputRead:
        return run_library_op(blas_, api_, s_, op, r_);
      // --- weight cache (executor/cache_ops.hpp) ---
      case k::kCacheFill:
        return cache_fill(op.cache_fill());
      case k::kCacheUpload:
        return cache_upload(op.cache_upload());
      case k::kCacheStats:
        return cache_ops{api_, s_, cache_, r_}.stats();
      case k::kCacheList:
        return cache_ops{api_, s_, cache_, r_}.list(op.cache_list());
      case k::kCacheEvict:
        return cache_ops{api_, s_, cache_, r_}.evict(op.cache_evict());
      case k::kCacheGet:
        return cache_ops{api_, s_, cache_, r_}.get(op.cache_get());
      case k::kStreamBeginCapture:
        return stream_begin_capture(op.stream_begin_capture());
      case k::kStreamEndCapture:
        return stream_end_capture(op.stream_end_capture());
      case k::kGraphInstantiate:
        return graph_instantiate(op.graph_instantiate());
      case k::kGraphLaunch:
        return graph_launch(op.graph_launch());
      case k::kGraphUpload:
        return graph_upload(op.graph_upload());
      case k::kGraphExecDestroy:
        return graph_exec_destroy(op.graph_exec_destroy());
      case k::kGraphDestroy:
        return graph_destroy(op.graph_destroy());
      case k::kGraphExecUpdate:
        return graph_exec_update(op.graph_exec_update());
      case k::kStreamCaptureInfo:
        return stream_capture_info(op.stream_capture_info());
      case k::kGraphCreate:
        return graph_create(op.graph_create());
      case k::kGraphAddKernelNode:
        return graph_add_kernel_node(op.graph_add_kernel_node());
      case k::kGraphAddMemsetNode:
        return graph_add_memset_node(op.graph_add_memset_node());
      case k::kGraphAddEmptyNode:
        return graph_add_empty_node(op.graph_add_empty_node());
      case k::kGraphAddDependencies:
        return graph_add_dependencies(op.graph_add_dependencies());
      case k::kGraphKernelNodeSetParams:
        return graph_kernel_node_set_params(op.graph_kernel_node_set_params());
      case k::kGraphExecKernelNodeSetParams:
        return graph_exec_kernel_node_set_params(op.graph_exec_kernel_node_set_params());
      case k::kGraphAddHostNode:
        return graph_add_host_node(op.graph_add_host_node());
      case k::kGraphHostNodeSetParams:
        return graph_host_node_set_params(op.graph_host_node_set_params());
      case k::kGraphExecHostNodeSetParams:
        return graph_exec_host_node_set_params(op.graph_exec_host_node_set_params());
      case k::kStreamHostFunc:
        return stream_host_func(op.stream_host_func());
      case k::kMemAllocAsync:
        return mem_alloc_async(op.mem_alloc_async());
      case k::kMemFreeAsync:
        return mem_free_async(op.mem_free_async());
      case k::kGraphAddMemAllocNode:
        return graph_add_mem_alloc_node(op.graph_add_mem_alloc_node());
      case k::kGraphAddMemFreeNode:
        return graph_add_mem_free_node(op.graph_add_mem_free_node());
      case k::kGraphMemTrim:
        check(api_.cuDeviceGraphMemTrim(device_), "cuDeviceGraphMemTrim");
        return;
      // Stream-ordered memory pools: executor/mem_pools.cpp.
      case k::kMemPoolCreate:
      case k::kMemPoolDestroy:
      case k::kMemPoolSetAttribute:
      case k::kMemPoolGetAttribute:
      case k::kMemPoolTrimTo:
      case k::kMemPoolSetAccess:
      case k::kMemPoolGetAccess:
        return run_mem_pool(api_, s_, device_, op, r_);
      case k::kGraphClone:
        return graph_clone(api_, s_, op.graph_clone(), r_);
      // Memcpy nodes and memset node parameters: executor/graph_copies.cpp.
      case k::kGraphAddMemcpyNode:
      case k::kGraphMemcpyNodeSetParams:
      case k::kGraphExecMemcpyNodeSetParams:
      case k::kStreamHostCopy:
      case k::kGraphMemsetNodeSetParams:
      case k::kGraphExecMemsetNodeSetParams:
        return run_graph_copy(api_, s_, op, r_);
      // Virtual memory management: executor/vmm.cpp.
      case k::kMemGetGranularity:
      case k::kMemAddressReserve:
      case k::kMemAddressFree:
      case k::kMemCreate:
      case k::kMemRelease:
      case k::kMemRetain:
      case k::kMemMap:
      case k::kMemUnmap:
      case k::kMemSetAccess:
        return run_vmm(api_, s_, device_, cache_, op, r_);
      case k::KIND_NOT_SET:
        break;
    }
    fail(CUDA_ERROR_NOT_SUPPORTED,
         fmt::format("op seq {} has no kind this server knows: update the "
                     "gpu_server to the client's version",
                     op.seq()));
  }

  // --- result helpers -----------------------------------------------------

  void fail(CUresult rc, std::string detail) {
    fail_op(r_, rc, std::move(detail));
  }

  /// Records `rc` of driver call `what`; true on success.
  bool check(CUresult rc, const char* what) {
    return check_op(r_, api_, rc, what);
  }

  /// Like check, but CUDA_ERROR_NOT_READY is an answer, not a failure.
  void check_query(CUresult rc, const char* what) {
    if (rc == CUDA_ERROR_NOT_READY)
      r_.set_status(static_cast<int32_t>(rc));
    else
      check(rc, what);
  }

  bool check_range(uint64_t ptr, uint64_t len, const char* what) {
    if (s_.memory.contains(ptr, len))
      return true;
    fail(CUDA_ERROR_INVALID_VALUE,
         fmt::format("{}: address {:#x} + {} bytes is outside this session's "
                     "allocations; pass a range inside one cudaMalloc'd "
                     "buffer or module variable",
                     what, ptr, len));
    return false;
  }

  bool check_size(uint64_t size, const char* what) {
    if (size <= executor::max_transfer_bytes)
      return true;
    fail(CUDA_ERROR_INVALID_VALUE,
         fmt::format("{}: {} bytes exceeds the {} byte limit of one "
                     "transfer; split the copy",
                     what, size, executor::max_transfer_bytes));
    return false;
  }

  /// The session's stream `handle`, for the op's work on it
  /// (executor/session_streams.hpp); false with the result set.
  bool lookup_stream(uint64_t handle, CUstream& out) {
    auto rc = stream_for_work(api_, s_, handle, &out);
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

  bool lookup_event(uint64_t handle, CUevent& out) {
    auto i = s_.events.find(handle);
    if (i != s_.events.end()) {
      out = i->second;
      return true;
    }
    fail(CUDA_ERROR_INVALID_HANDLE,
         fmt::format("event handle {} is not an event of this session "
                     "(never created, or destroyed)",
                     handle));
    return false;
  }

  /// True when `stream` is capturing on the server (fails the op): a copy
  /// from or to the client's host memory cannot become a graph node, since
  /// its host side lives only as long as this op.
  bool refuse_capturing(CUstream stream, const char* what) {
    if (api_.cuStreamIsCapturing == nullptr)
      return false;
    CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
    if (api_.cuStreamIsCapturing(stream, &status) != CUDA_SUCCESS
        || status == CU_STREAM_CAPTURE_STATUS_NONE)
      return false;
    fail(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
         fmt::format("{} into a capturing stream: copies between host memory "
                     "and the GPU cannot be captured through gleam (the host "
                     "side is on the client); copy outside the capture into "
                     "a device buffer the graph reads",
                     what));
    return true;
  }

  /// Synchronizes `stream` for the executor's own needs (a copy's result),
  /// in relaxed capture mode so that it never counts as an app call.
  bool internal_sync(CUstream stream) {
    scoped_capture_mode mode{api_, CU_STREAM_CAPTURE_MODE_RELAXED};
    return check(api_.cuStreamSynchronize(stream), "cuStreamSynchronize");
  }

  bool lookup_graph(uint64_t handle, CUgraph& out) {
    auto i = s_.graphs.find(handle);
    if (i != s_.graphs.end() && i->second != nullptr) {
      out = i->second;
      return true;
    }
    fail(CUDA_ERROR_INVALID_VALUE,
         fmt::format("graph handle {} is not a graph of this session (never "
                     "captured, or destroyed)",
                     handle));
    return false;
  }

  bool lookup_exec(uint64_t handle, CUgraphExec& out) {
    auto i = s_.execs.find(handle);
    if (i != s_.execs.end()) {
      out = i->second;
      return true;
    }
    fail(CUDA_ERROR_INVALID_VALUE,
         fmt::format("graph exec handle {} is not an executable graph of "
                     "this session (never instantiated, or destroyed)",
                     handle));
    return false;
  }

  /// The function `name` of module `module`, resolved now if ModuleLoad did
  /// not ask for it; null (with the result set) when there is none.
  function_entry* lookup_function(uint64_t module, const std::string& name) {
    auto m = s_.modules.find(module);
    if (m == s_.modules.end()) {
      fail(CUDA_ERROR_INVALID_HANDLE,
           fmt::format("module handle {} is not a module of this session",
                       module));
      return nullptr;
    }
    auto f = m->second.functions.find(name);
    if (f != m->second.functions.end())
      return &f->second;
    function_entry entry;
    auto rc = api_.cuModuleGetFunction(&entry.handle, m->second.handle,
                                       name.c_str());
    if (rc != CUDA_SUCCESS) {
      fail(CUDA_ERROR_INVALID_HANDLE,
           fmt::format("function '{}' is not in module {}: {}", name, module,
                       api_.describe(rc)));
      return nullptr;
    }
    entry.params = param_layout(entry.handle);
    return &m->second.functions.emplace(name, std::move(entry)).first->second;
  }

  std::vector<param_slot> param_layout(CUfunction f) {
    std::vector<param_slot> out;
    for (size_t i = 0;; ++i) {
      size_t offset = 0;
      size_t size = 0;
      if (api_.cuFuncGetParamInfo(f, i, &offset, &size) != CUDA_SUCCESS)
        break;
      out.push_back(param_slot{static_cast<uint32_t>(offset),
                               static_cast<uint32_t>(size)});
    }
    return out;
  }

  // --- weight cache -------------------------------------------------------

  void cache_fill(const proto::CacheFill& op) {
    uint64_t total = 0;
    for (auto n : op.sizes()) {
      if (n > max_cache_chunk_bytes) {
        fail(CUDA_ERROR_INVALID_VALUE,
             fmt::format("CacheFill names a chunk of {} bytes; chunks are at most {} bytes",
                         n, max_cache_chunk_bytes));
        return;
      }
      total += n;
    }
    CUstream stream = nullptr;
    if (check_range(op.dst(), total, "CacheFill") && lookup_stream(op.stream(), stream))
      cache_ops{api_, s_, cache_, r_}.fill(op, stream);
  }

  void cache_upload(const proto::CacheUpload& op) {
    if (op.image())
      return cache_ops{api_, s_, cache_, r_}.upload_image(op);
    CUstream stream = nullptr;
    // A part is checked against its whole chunk.
    auto span = op.chunk_size() != 0 ? op.chunk_size() : op.data().size();
    if (check_range(op.dst(), span, "CacheUpload") && lookup_stream(op.stream(), stream))
      cache_ops{api_, s_, cache_, r_}.upload(op, stream);
  }

  // --- memory -------------------------------------------------------------

  void mem_alloc(const proto::MemAlloc& op) {
    if (op.at() != 0)
      return mem_carve(op);
    CUdeviceptr p = 0;
    if (!check(alloc_device(&p, op.size()), "cuMemAlloc"))
      return;
    if (op.slab()) {
      // Fresh driver memory never overlaps a slab this session holds.
      static_cast<void>(s_.slabs.insert(range_entry{p, op.size(), range_kind::allocation, 0}));
      r_.set_dptr(p);
      return;
    }
    if (register_allocation(p, op.size()))
      r_.set_dptr(p);
  }

  /// cuMemAlloc; when the device is full and the weight cache's GPU tier
  /// holds memory, the tier gives way (its chunks stay on the host) and the
  /// allocation is tried again: the app comes before the cache.
  CUresult alloc_device(CUdeviceptr* p, uint64_t size) {
    auto rc = api_.cuMemAlloc(p, size);
    if (rc == CUDA_ERROR_OUT_OF_MEMORY && cache_ != nullptr
        && cache_->shed_gpu(size + (uint64_t{64} << 20)) > 0)
      rc = api_.cuMemAlloc(p, size);
    return rc;
  }

  /// An allocation the client carved from one of its slabs: it must lie in
  /// one slab and overlap nothing the session holds.
  void mem_carve(const proto::MemAlloc& op) {
    if (op.size() == 0 || !s_.slabs.contains(op.at(), op.size())) {
      fail(CUDA_ERROR_INVALID_VALUE,
           fmt::format("MemAlloc at {:#x} + {} bytes does not lie inside one slab of this "
                       "session",
                       op.at(), op.size()));
      return;
    }
    if (!s_.memory.insert(range_entry{op.at(), op.size(), range_kind::carved, 0})) {
      fail(CUDA_ERROR_INVALID_VALUE,
           fmt::format("MemAlloc at {:#x} + {} bytes overlaps an allocation this session "
                       "holds",
                       op.at(), op.size()));
      return;
    }
    r_.set_dptr(op.at());
  }

  bool register_allocation(CUdeviceptr p, uint64_t size) {
    // The driver never hands out overlapping memory; a failed insert means
    // the table is corrupt.
    if (!s_.memory.insert(range_entry{p, size, range_kind::allocation, 0})) {
      static_cast<void>(api_.cuMemFree(p));
      fail(CUDA_ERROR_UNKNOWN,
           fmt::format("allocation {:#x} + {} bytes overlaps a range this "
                       "session already holds; report this as a gleam bug",
                       p, size));
      return false;
    }
    return true;
  }

  void mem_free(const proto::MemFree& op) {
    if (op.dptr() == 0)
      return;
    auto e = s_.memory.find_base(op.dptr());
    if (!e)
      if (auto slab = s_.slabs.find_base(op.dptr()))
        return slab_free(*slab);
    if (e && e->kind == range_kind::carved) {
      cache_ops::verify_placed(api_, s_, cache_, e->base, e->size);
      // cuMemFree waits for the device; so does this, or a later carve of
      // the same bytes could be written before earlier work read them. Not
      // while the session captures: that would break the capture, and
      // captured work does not run until its graph is launched.
      if (s_.captures.empty() && !check(sync_session(api_, s_), "cuMemFree"))
        return;
      static_cast<void>(s_.memory.erase(e->base));
      return;
    }
    if (!e || (e->kind != range_kind::allocation && e->kind != range_kind::graph_allocation)) {
      fail(CUDA_ERROR_INVALID_VALUE,
           fmt::format("cuMemFree: address {:#x} is not the start of an "
                       "allocation of this session; free only pointers "
                       "this session's cudaMalloc returned",
                       op.dptr()));
      return;
    }
    cache_ops::verify_placed(api_, s_, cache_, e->base, e->size);
    if (check(api_.cuMemFree(static_cast<CUdeviceptr>(op.dptr())), "cuMemFree"))
      static_cast<void>(s_.memory.erase(op.dptr()));
  }

  void slab_free(const range_entry& slab) {
    if (s_.memory.overlaps(slab.base, slab.size)) {
      fail(CUDA_ERROR_INVALID_VALUE,
           fmt::format("cuMemFree: slab {:#x} still holds allocations; free them first",
                       slab.base));
      return;
    }
    if (check(api_.cuMemFree(static_cast<CUdeviceptr>(slab.base)), "cuMemFree"))
      static_cast<void>(s_.slabs.erase(slab.base));
  }

  void mem_alloc_pitch(const proto::MemAllocPitch& op) {
    // cudaMallocPitch takes no element size; 0 means 4, the smallest the
    // driver accepts.
    auto element = op.element_size() == 0 ? 4u : op.element_size();
    CUdeviceptr p = 0;
    size_t pitch = 0;
    if (!check(api_.cuMemAllocPitch(&p, &pitch, op.width(), op.height(), element),
               "cuMemAllocPitch")
        || !register_allocation(p, static_cast<uint64_t>(pitch) * op.height()))
      return;
    r_.set_dptr(p);
    r_.set_pitch(pitch);
  }

  void mem_get_info() {
    size_t free = 0;
    size_t total = 0;
    if (!check(api_.cuMemGetInfo(&free, &total), "cuMemGetInfo"))
      return;
    // The GPU tier gives way to the app's allocations (alloc_device).
    if (cache_ != nullptr)
      free = static_cast<size_t>(std::min<uint64_t>(free + cache_->gpu_bytes(), total));
    auto* info = r_.mutable_mem_info();
    info->set_free(free);
    info->set_total(total);
  }

  void memcpy_htod(const proto::MemcpyHtoD& op) {
    const auto& data = op.data();
    CUstream stream = nullptr;
    if (!check_range(op.dst(), data.size(), "cuMemcpyHtoD")
        || !lookup_stream(op.stream(), stream) || data.empty())
      return;
    auto dst = static_cast<CUdeviceptr>(op.dst());
    if (op.async() && refuse_capturing(stream, "cudaMemcpyAsync host-to-device"))
      return;
    // A synchronous copy goes on the session's stream too (never the
    // context's legacy stream) and is waited for.
    if (check(api_.cuMemcpyHtoDAsync(dst, data.data(), data.size(), stream),
              op.async() ? "cuMemcpyHtoDAsync" : "cuMemcpyHtoD")
        && !op.async())
      internal_sync(stream);
  }

  void memcpy_dtoh(const proto::MemcpyDtoH& op) {
    CUstream stream = nullptr;
    if (!check_size(op.size(), "cuMemcpyDtoH")
        || !check_range(op.src(), op.size(), "cuMemcpyDtoH")
        || !lookup_stream(op.stream(), stream))
      return;
    if (op.async() && refuse_capturing(stream, "cudaMemcpyAsync device-to-host"))
      return;
    auto* out = r_.mutable_data();
    out->resize(op.size());
    if (op.size() == 0)
      return;
    auto src = static_cast<CUdeviceptr>(op.src());
    bool ok = check(api_.cuMemcpyDtoHAsync(&(*out)[0], src, op.size(), stream),
                    op.async() ? "cuMemcpyDtoHAsync" : "cuMemcpyDtoH")
              && internal_sync(stream);
    if (!ok)
      r_.clear_data();
  }

  void memcpy_dtod(const proto::MemcpyDtoD& op) {
    CUstream stream = nullptr;
    if (!check_range(op.src(), op.size(), "cuMemcpyDtoD source")
        || !check_range(op.dst(), op.size(), "cuMemcpyDtoD destination")
        || !lookup_stream(op.stream(), stream) || op.size() == 0)
      return;
    auto dst = static_cast<CUdeviceptr>(op.dst());
    auto src = static_cast<CUdeviceptr>(op.src());
    if (check(api_.cuMemcpyDtoDAsync(dst, src, op.size(), stream),
              op.async() ? "cuMemcpyDtoDAsync" : "cuMemcpyDtoD")
        && !op.async())
      internal_sync(stream);
  }

  /// Validates the device side of a 2D copy.
  bool check_pitched(uint64_t ptr, uint64_t pitch, uint64_t width,
                     uint64_t height, const char* what) {
    if (width > pitch) {
      fail(CUDA_ERROR_INVALID_VALUE,
           fmt::format("{}: width {} bytes exceeds the pitch {} bytes", what,
                       width, pitch));
      return false;
    }
    auto extent = pitched_extent(width, pitch, height);
    if (!extent) {
      fail(CUDA_ERROR_INVALID_VALUE,
           fmt::format("{}: pitch {} x {} rows overflows 64 bits", what, pitch,
                       height));
      return false;
    }
    return check_range(ptr, *extent, what);
  }

  void memcpy_2d(const proto::Memcpy2D& op) {
    uint64_t dense = 0;
    if (__builtin_mul_overflow(op.width(), op.height(), &dense)) {
      fail(CUDA_ERROR_INVALID_VALUE,
           fmt::format("cuMemcpy2D: {} x {} bytes overflows 64 bits",
                       op.width(), op.height()));
      return;
    }
    CUDA_MEMCPY2D c;
    std::memset(&c, 0, sizeof(c));
    c.WidthInBytes = op.width();
    c.Height = op.height();
    std::string* out = nullptr;
    switch (op.kind()) {
      case proto::Memcpy2D::HTOD:
        if (op.data().size() != dense) {
          fail(CUDA_ERROR_INVALID_VALUE,
               fmt::format("cuMemcpy2D host-to-device: {} data bytes for a "
                           "{} x {} region (expected {})",
                           op.data().size(), op.width(), op.height(), dense));
          return;
        }
        if (!check_pitched(op.dst(), op.dst_pitch(), op.width(), op.height(),
                           "cuMemcpy2D destination"))
          return;
        c.srcMemoryType = CU_MEMORYTYPE_HOST;
        c.srcHost = op.data().data();
        c.srcPitch = op.width();
        c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
        c.dstDevice = static_cast<CUdeviceptr>(op.dst());
        c.dstPitch = op.dst_pitch();
        break;
      case proto::Memcpy2D::DTOH:
        if (!check_size(dense, "cuMemcpy2D device-to-host")
            || !check_pitched(op.src(), op.src_pitch(), op.width(), op.height(),
                              "cuMemcpy2D source"))
          return;
        out = r_.mutable_data();
        out->resize(dense);
        c.srcMemoryType = CU_MEMORYTYPE_DEVICE;
        c.srcDevice = static_cast<CUdeviceptr>(op.src());
        c.srcPitch = op.src_pitch();
        c.dstMemoryType = CU_MEMORYTYPE_HOST;
        c.dstHost = dense == 0 ? nullptr : &(*out)[0];
        c.dstPitch = op.width();
        break;
      case proto::Memcpy2D::DTOD:
        if (!check_pitched(op.src(), op.src_pitch(), op.width(), op.height(),
                           "cuMemcpy2D source")
            || !check_pitched(op.dst(), op.dst_pitch(), op.width(), op.height(),
                              "cuMemcpy2D destination"))
          return;
        c.srcMemoryType = CU_MEMORYTYPE_DEVICE;
        c.srcDevice = static_cast<CUdeviceptr>(op.src());
        c.srcPitch = op.src_pitch();
        c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
        c.dstDevice = static_cast<CUdeviceptr>(op.dst());
        c.dstPitch = op.dst_pitch();
        break;
      default:
        fail(CUDA_ERROR_INVALID_VALUE,
             fmt::format("cuMemcpy2D: unknown copy kind {}",
                         static_cast<int>(op.kind())));
        return;
    }
    CUstream stream = nullptr;
    if (!lookup_stream(op.stream(), stream) || dense == 0)
      return;
    if (op.async() && op.kind() != proto::Memcpy2D::DTOD
        && refuse_capturing(stream, "cudaMemcpy2DAsync with a host side")) {
      r_.clear_data();
      return;
    }
    bool ok = check(api_.cuMemcpy2DAsync(&c, stream),
                    op.async() ? "cuMemcpy2DAsync" : "cuMemcpy2D");
    if (ok && (out != nullptr || !op.async()))
      ok = internal_sync(stream);
    if (!ok && out != nullptr)
      r_.clear_data();
  }

  void memset(const proto::Memset& op) {
    auto es = op.element_size();
    if (es != 1 && es != 2 && es != 4) {
      fail(CUDA_ERROR_INVALID_VALUE,
           fmt::format("cuMemset: element size {} bytes; use 1, 2 or 4", es));
      return;
    }
    uint64_t row = 0;
    if (__builtin_mul_overflow(op.count(), uint64_t{es}, &row)) {
      fail(CUDA_ERROR_INVALID_VALUE,
           fmt::format("cuMemset: {} elements of {} bytes overflow 64 bits",
                       op.count(), es));
      return;
    }
    bool two_d = op.height() > 1;
    CUstream stream = nullptr;
    if (two_d) {
      if (!check_pitched(op.dst(), op.pitch(), row, op.height(), "cuMemsetD2D"))
        return;
    } else if (!check_range(op.dst(), row, "cuMemset")) {
      return;
    }
    if (!lookup_stream(op.stream(), stream) || row == 0)
      return;
    auto dst = static_cast<CUdeviceptr>(op.dst());
    auto n = static_cast<size_t>(op.count());
    auto h = static_cast<size_t>(op.height());
    auto pitch = static_cast<size_t>(op.pitch());
    auto v8 = static_cast<unsigned char>(op.value());
    auto v16 = static_cast<unsigned short>(op.value());
    auto v32 = static_cast<unsigned int>(op.value());
    // A synchronous memset goes on the session's stream and is waited for.
    CUresult rc = CUDA_SUCCESS;
    if (two_d)
      rc = es == 1   ? api_.cuMemsetD2D8Async(dst, pitch, v8, n, h, stream)
           : es == 2 ? api_.cuMemsetD2D16Async(dst, pitch, v16, n, h, stream)
                     : api_.cuMemsetD2D32Async(dst, pitch, v32, n, h, stream);
    else
      rc = es == 1   ? api_.cuMemsetD8Async(dst, v8, n, stream)
           : es == 2 ? api_.cuMemsetD16Async(dst, v16, n, stream)
                     : api_.cuMemsetD32Async(dst, v32, n, stream);
    if (check(rc, two_d ? "cuMemsetD2D" : "cuMemset") && !op.async())
      internal_sync(stream);
  }

  // --- modules and launches -----------------------------------------------

  void module_load(const proto::ModuleLoad& op) {
    if (s_.modules.count(op.module()) != 0) {
      fail(CUDA_ERROR_INVALID_VALUE,
           fmt::format("module handle {} is already loaded in this session; "
                       "use a fresh handle or unload it first",
                       op.module()));
      return;
    }
    std::string image;
    if (!cache_ops{api_, s_, cache_, r_}.module_image(op, image))
      return;
    if (image.empty()) {
      fail(CUDA_ERROR_INVALID_IMAGE,
           fmt::format("ModuleLoad of module {} carries no image: the "
                       "gpu_server must fill it from the cache (image_key of "
                       "{} bytes) before execution",
                       op.module(), op.image_key().size()));
      return;
    }
    // The one gate before the driver, whichever way the bytes came (inline,
    // from the cache by image_key, stored before this check existed).
    if (auto refused = check_module_image(image)) {
      fail(refused->rc, fmt::format("ModuleLoad of module {} ({}): {}", op.module(),
                                    op.image().empty() ? "image by key" : "image in the op",
                                    refused->detail));
      return;
    }
    module_entry m;
    if (!check(api_.cuModuleLoadData(&m.handle, image.data()),
               "cuModuleLoadData"))
      return;
    auto* loaded = r_.mutable_module();
    for (const auto& name : op.functions()) {
      auto* info = loaded->add_functions();
      info->set_name(name);
      function_entry f;
      if (api_.cuModuleGetFunction(&f.handle, m.handle, name.c_str())
          != CUDA_SUCCESS)
        continue;
      info->set_found(true);
      f.params = param_layout(f.handle);
      for (const auto& p : f.params) {
        auto* pi = info->add_params();
        pi->set_offset(p.offset);
        pi->set_size(p.size);
      }
      auto& attrs = *info->mutable_attributes();
      for (int a = 0; a < CU_FUNC_ATTRIBUTE_MAX; ++a) {
        int value = 0;
        if (api_.cuFuncGetAttribute(&value, static_cast<CUfunction_attribute>(a),
                                    f.handle)
            == CUDA_SUCCESS)
          attrs[a] = value;
      }
      m.functions.emplace(name, std::move(f));
    }
    for (const auto& name : op.variables()) {
      auto* info = loaded->add_variables();
      info->set_name(name);
      CUdeviceptr p = 0;
      size_t size = 0;
      if (api_.cuModuleGetGlobal(&p, &size, m.handle, name.c_str())
            != CUDA_SUCCESS
          || size == 0)
        continue;
      if (!s_.memory.insert(
            range_entry{p, size, range_kind::module_variable, op.module()}))
        continue;
      info->set_found(true);
      info->set_dptr(p);
      info->set_size(size);
    }
    s_.modules.emplace(op.module(), std::move(m));
  }

  void module_unload(const proto::ModuleUnload& op) {
    auto m = s_.modules.find(op.module());
    if (m == s_.modules.end()) {
      fail(CUDA_ERROR_INVALID_HANDLE,
           fmt::format("module handle {} is not a module of this session",
                       op.module()));
      return;
    }
    if (!check(api_.cuModuleUnload(m->second.handle), "cuModuleUnload"))
      return;
    s_.memory.erase_module(op.module());
    s_.modules.erase(m);
  }

  void launch_kernel(const proto::LaunchKernel& op) {
    auto* f = lookup_function(op.module(), op.function());
    CUstream stream = nullptr;
    if (f == nullptr || !lookup_stream(op.stream(), stream))
      return;
    const auto& params = op.params();
    uint64_t end = 0;
    uint64_t align = 1;
    for (const auto& p : f->params) {
      end = std::max<uint64_t>(end, uint64_t{p.offset} + p.size);
      // A type's size is a multiple of its alignment: the largest power of
      // two dividing the size bounds the alignment from above.
      uint64_t a = p.size == 0 ? 1 : (uint64_t{p.size} & (~uint64_t{p.size} + 1));
      align = std::max(align, std::min<uint64_t>(a, 16));
    }
    uint64_t padded = (end + align - 1) / align * align;
    if (params.size() != end && params.size() != padded) {
      fail(CUDA_ERROR_INVALID_VALUE,
           fmt::format("launch of '{}': parameter buffer of {} bytes, but its "
                       "layout of {} parameters ends at {} bytes (padded "
                       "{}); pack the arguments by the layout ModuleLoad "
                       "returned",
                       op.function(), params.size(), f->params.size(), end,
                       padded));
      return;
    }
    std::vector<CUlaunchAttribute> attrs;
    std::string detail;
    if (auto rc = launch_attributes(op, s_, attrs, detail); rc != CUDA_SUCCESS) {
      fail(rc, fmt::format("launch of '{}': {}", op.function(), detail));
      return;
    }
    CUlaunchConfig cfg;
    std::memset(&cfg, 0, sizeof(cfg));
    cfg.gridDimX = op.grid_x();
    cfg.gridDimY = op.grid_y();
    cfg.gridDimZ = op.grid_z();
    cfg.blockDimX = op.block_x();
    cfg.blockDimY = op.block_y();
    cfg.blockDimZ = op.block_z();
    cfg.sharedMemBytes = op.shared_mem();
    cfg.hStream = stream;
    cfg.attrs = attrs.empty() ? nullptr : attrs.data();
    cfg.numAttrs = static_cast<unsigned>(attrs.size());
    // 16-byte aligned copy of the packed arguments.
    std::vector<uint64_t> buf((params.size() + 15) / 16 * 2);
    if (!params.empty())
      std::memcpy(buf.data(), params.data(), params.size());
    // One pointer per parameter into the packed buffer (kernelParams, as
    // cudart passes them), so that a launch captured into a graph is a
    // kernel node like a local one: its parameters readable and updatable.
    std::vector<void*> args(f->params.size());
    auto* base = reinterpret_cast<char*>(buf.data());
    for (size_t i = 0; i < f->params.size(); ++i)
      args[i] = base + f->params[i].offset;
    check(api_.cuLaunchKernelEx(&cfg, f->handle,
                                args.empty() ? nullptr : args.data(), nullptr),
          "cuLaunchKernelEx");
  }

  void func_set_attribute(const proto::FuncSetAttribute& op) {
    if (auto* f = lookup_function(op.module(), op.function()))
      check(api_.cuFuncSetAttribute(
              f->handle, static_cast<CUfunction_attribute>(op.attribute()),
              op.value()),
            "cuFuncSetAttribute");
  }

  void func_set_cache_config(const proto::FuncSetCacheConfig& op) {
    if (auto* f = lookup_function(op.module(), op.function()))
      check(api_.cuFuncSetCacheConfig(f->handle,
                                      static_cast<CUfunc_cache>(op.config())),
            "cuFuncSetCacheConfig");
  }

  void occupancy(const proto::OccupancyMaxActiveBlocks& op) {
    auto* f = lookup_function(op.module(), op.function());
    if (f == nullptr)
      return;
    int blocks = 0;
    if (check(api_.cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
                &blocks, f->handle, op.block_size(), op.dynamic_smem(),
                op.flags()),
              "cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags"))
      r_.set_value(blocks);
  }

  // --- streams and events -------------------------------------------------

  void stream_create(const proto::StreamCreate& op) {
    if (op.stream() <= stream_handle::per_thread
        || s_.streams.count(op.stream()) != 0) {
      fail(CUDA_ERROR_INVALID_VALUE,
           fmt::format("stream handle {} is reserved or already in use in "
                       "this session; handles 0, 1 and 2 are the default "
                       "streams",
                       op.stream()));
      return;
    }
    // Non-blocking on the driver: the context's legacy stream is every
    // session's; a blocking stream waits for the session's own legacy
    // stream only (executor/session_streams.hpp).
    CUstream s = nullptr;
    if (!check(api_.cuStreamCreateWithPriority(&s, op.flags() | CU_STREAM_NON_BLOCKING,
                                               op.priority()),
               "cuStreamCreateWithPriority"))
      return;
    s_.streams.emplace(op.stream(), s);
    if ((op.flags() & CU_STREAM_NON_BLOCKING) == 0)
      s_.blocking[op.stream()];
  }

  void stream_destroy(const proto::StreamDestroy& op) {
    auto i = s_.streams.find(op.stream());
    if (i == s_.streams.end()) {
      fail(CUDA_ERROR_INVALID_HANDLE,
           fmt::format("stream handle {} is not a stream this session "
                       "created",
                       op.stream()));
      return;
    }
    if (!check(api_.cuStreamDestroy(i->second), "cuStreamDestroy"))
      return;
    s_.streams.erase(i);
    auto b = s_.blocking.find(op.stream());
    if (b != s_.blocking.end()) {
      if (b->second.done != nullptr)
        static_cast<void>(api_.cuEventDestroy(b->second.done));
      s_.blocking.erase(b);
    }
  }

  void stream_synchronize(const proto::StreamSynchronize& op) {
    CUstream s = nullptr;
    if (lookup_stream(op.stream(), s))
      check(api_.cuStreamSynchronize(s), "cuStreamSynchronize");
  }

  void stream_query(const proto::StreamQuery& op) {
    CUstream s = nullptr;
    if (lookup_stream(op.stream(), s))
      check_query(api_.cuStreamQuery(s), "cuStreamQuery");
  }

  void stream_wait_event(const proto::StreamWaitEvent& op) {
    CUstream s = nullptr;
    CUevent e = nullptr;
    if (lookup_stream(op.stream(), s) && lookup_event(op.event(), e))
      check(api_.cuStreamWaitEvent(s, e, op.flags()), "cuStreamWaitEvent");
  }

  void event_create(const proto::EventCreate& op) {
    if (s_.events.count(op.event()) != 0) {
      fail(CUDA_ERROR_INVALID_VALUE,
           fmt::format("event handle {} is already in use in this session",
                       op.event()));
      return;
    }
    CUevent e = nullptr;
    if (check(api_.cuEventCreate(&e, op.flags()), "cuEventCreate"))
      s_.events.emplace(op.event(), e);
  }

  void event_destroy(const proto::EventDestroy& op) {
    auto i = s_.events.find(op.event());
    if (i == s_.events.end()) {
      fail(CUDA_ERROR_INVALID_HANDLE,
           fmt::format("event handle {} is not an event of this session",
                       op.event()));
      return;
    }
    if (check(api_.cuEventDestroy(i->second), "cuEventDestroy"))
      s_.events.erase(i);
  }

  void event_record(const proto::EventRecord& op) {
    CUevent e = nullptr;
    CUstream s = nullptr;
    if (lookup_event(op.event(), e) && lookup_stream(op.stream(), s))
      check(api_.cuEventRecordWithFlags(e, s, op.flags()),
            "cuEventRecordWithFlags");
  }

  void event_synchronize(const proto::EventSynchronize& op) {
    CUevent e = nullptr;
    if (lookup_event(op.event(), e))
      check(api_.cuEventSynchronize(e), "cuEventSynchronize");
  }

  void event_query(const proto::EventQuery& op) {
    CUevent e = nullptr;
    if (lookup_event(op.event(), e))
      check_query(api_.cuEventQuery(e), "cuEventQuery");
  }

  void event_elapsed_time(const proto::EventElapsedTime& op) {
    CUevent start = nullptr;
    CUevent end = nullptr;
    if (!lookup_event(op.start(), start) || !lookup_event(op.end(), end))
      return;
    float ms = 0;
    if (check(api_.cuEventElapsedTime(&ms, start, end), "cuEventElapsedTime"))
      r_.set_elapsed_ms(ms);
  }

  // --- stream capture and graphs -----------------------------------------

  void capture_status(CUstream stream) {
    CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
    cuuint64_t id = 0;
    if (api_.cuStreamGetCaptureInfo(stream, &status, &id, nullptr, nullptr,
                                    nullptr, nullptr)
        != CUDA_SUCCESS)
      return;
    auto* info = r_.mutable_capture_info();
    info->set_status(static_cast<int32_t>(status));
    info->set_id(id);
  }

  void stream_begin_capture(const proto::StreamBeginCapture& op) {
    if (op.stream() == stream_handle::legacy_default || op.stream() == stream_handle::legacy) {
      fail(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, "the legacy stream cannot be captured");
      return;
    }
    CUstream stream = nullptr;
    if (!lookup_stream(op.stream(), stream))
      return;
    if (op.graph() <= stream_handle::per_thread || s_.graphs.count(op.graph()) != 0) {
      fail(CUDA_ERROR_INVALID_VALUE,
           fmt::format("graph handle {} is reserved or already in use in "
                       "this session",
                       op.graph()));
      return;
    }
    // Relaxed whatever the app's mode: the app's mode binds the app's
    // threads, which the client knows; on the server it would bind the
    // thread every session shares (capture_judge.hpp).
    if (!check(api_.cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_RELAXED),
               "cuStreamBeginCapture"))
      return;
    // The graph exists from the start of the capture; it is registered at
    // its end, when the driver hands it over.
    s_.captures[op.stream()] = op.graph();
    capture_status(stream);
  }

  void stream_end_capture(const proto::StreamEndCapture& op) {
    CUstream stream = nullptr;
    if (!lookup_stream(op.stream(), stream))
      return;
    CUgraph g = nullptr;
    auto rc = api_.cuStreamEndCapture(stream, &g);
    CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
    if (api_.cuStreamIsCapturing(stream, &status) == CUDA_SUCCESS
        && status == CU_STREAM_CAPTURE_STATUS_NONE)
      s_.captures.erase(op.stream());
    r_.mutable_capture_info()->set_status(static_cast<int32_t>(status));
    if (!check(rc, "cuStreamEndCapture")) {
      if (g != nullptr)
        static_cast<void>(api_.cuGraphDestroy(g));
      return;
    }
    if (op.graph() <= stream_handle::per_thread || s_.graphs.count(op.graph()) != 0) {
      static_cast<void>(api_.cuGraphDestroy(g));
      fail(CUDA_ERROR_INVALID_VALUE,
           fmt::format("graph handle {} is reserved or already in use in "
                       "this session",
                       op.graph()));
      return;
    }
    s_.graphs[op.graph()] = g;
  }

  void graph_instantiate(const proto::GraphInstantiate& op) {
    CUgraph g = nullptr;
    if (!lookup_graph(op.graph(), g))
      return;
    if (op.exec() <= stream_handle::per_thread || s_.execs.count(op.exec()) != 0) {
      fail(CUDA_ERROR_INVALID_VALUE,
           fmt::format("graph exec handle {} is reserved or already in use "
                       "in this session",
                       op.exec()));
      return;
    }
    CUgraphExec e = nullptr;
    if (check(api_.cuGraphInstantiateWithFlags(&e, g, op.flags()),
              "cuGraphInstantiateWithFlags"))
      s_.execs[op.exec()] = e;
  }

  void graph_launch(const proto::GraphLaunch& op) {
    CUgraphExec e = nullptr;
    CUstream stream = nullptr;
    if (lookup_exec(op.exec(), e) && lookup_stream(op.stream(), stream))
      check(api_.cuGraphLaunch(e, stream), "cuGraphLaunch");
  }

  void graph_upload(const proto::GraphUpload& op) {
    CUgraphExec e = nullptr;
    CUstream stream = nullptr;
    if (lookup_exec(op.exec(), e) && lookup_stream(op.stream(), stream))
      check(api_.cuGraphUpload(e, stream), "cuGraphUpload");
  }

  void graph_exec_destroy(const proto::GraphExecDestroy& op) {
    CUgraphExec e = nullptr;
    if (lookup_exec(op.exec(), e) && check(api_.cuGraphExecDestroy(e), "cuGraphExecDestroy"))
      s_.execs.erase(op.exec());
  }

  void graph_destroy(const proto::GraphDestroy& op) {
    CUgraph g = nullptr;
    if (!lookup_graph(op.graph(), g) || !check(api_.cuGraphDestroy(g), "cuGraphDestroy"))
      return;
    s_.graphs.erase(op.graph());
    for (auto i = s_.nodes.begin(); i != s_.nodes.end();)
      i = i->second.first == op.graph() ? s_.nodes.erase(i) : std::next(i);
  }

  // --- the explicit graph API ---------------------------------------------

  void graph_create(const proto::GraphCreate& op) {
    if (op.graph() <= stream_handle::per_thread || s_.graphs.count(op.graph()) != 0) {
      fail(CUDA_ERROR_INVALID_VALUE,
           fmt::format("graph handle {} is reserved or already in use in this session",
                       op.graph()));
      return;
    }
    CUgraph g = nullptr;
    if (check(api_.cuGraphCreate(&g, op.flags()), "cuGraphCreate"))
      s_.graphs[op.graph()] = g;
  }

  /// The graph and the driver nodes of `deps` for adding node `node`; false
  /// (with the result set) when one is unknown or `node` is taken.
  bool node_target(uint64_t graph, uint64_t node,
                   const google::protobuf::RepeatedField<uint64_t>& deps, CUgraph& g,
                   std::vector<CUgraphNode>& out) {
    if (!lookup_graph(graph, g))
      return false;
    if (node <= stream_handle::per_thread || s_.nodes.count(node) != 0) {
      fail(CUDA_ERROR_INVALID_VALUE,
           fmt::format("graph node handle {} is reserved or already in use", node));
      return false;
    }
    for (auto d : deps) {
      auto i = s_.nodes.find(d);
      if (i == s_.nodes.end() || i->second.first != graph) {
        fail(CUDA_ERROR_INVALID_VALUE,
             fmt::format("dependency {} is not a node of graph {}", d, graph));
        return false;
      }
      out.push_back(i->second.second);
    }
    return true;
  }

  /// Fills `p` from `k`; `storage` receives the 16-byte aligned argument
  /// buffer and `args` one pointer per parameter into it.
  bool kernel_params(const proto::KernelNodeParams& k, CUDA_KERNEL_NODE_PARAMS& p,
                     std::vector<uint64_t>& storage, std::vector<void*>& args) {
    auto* f = lookup_function(k.module(), k.function());
    if (f == nullptr)
      return false;
    uint64_t end = 0;
    for (const auto& slot : f->params)
      end = std::max<uint64_t>(end, uint64_t{slot.offset} + slot.size);
    if (k.params().size() < end) {
      fail(CUDA_ERROR_INVALID_VALUE,
           fmt::format("kernel node of '{}': parameter buffer of {} bytes, but "
                       "its layout ends at {} bytes; pack the arguments by the "
                       "layout ModuleLoad returned",
                       k.function(), k.params().size(), end));
      return false;
    }
    storage.assign((k.params().size() + 15) / 16 * 2, 0);
    if (!k.params().empty())
      std::memcpy(storage.data(), k.params().data(), k.params().size());
    auto* base = reinterpret_cast<char*>(storage.data());
    args.resize(f->params.size());
    for (size_t i = 0; i < f->params.size(); ++i)
      args[i] = base + f->params[i].offset;
    std::memset(&p, 0, sizeof(p));
    p.func = f->handle;
    p.gridDimX = k.grid_x();
    p.gridDimY = k.grid_y();
    p.gridDimZ = k.grid_z();
    p.blockDimX = k.block_x();
    p.blockDimY = k.block_y();
    p.blockDimZ = k.block_z();
    p.sharedMemBytes = k.shared_mem();
    p.kernelParams = args.empty() ? nullptr : args.data();
    return true;
  }

  void graph_add_kernel_node(const proto::GraphAddKernelNode& op) {
    CUgraph g = nullptr;
    std::vector<CUgraphNode> deps;
    CUDA_KERNEL_NODE_PARAMS p;
    std::vector<uint64_t> storage;
    std::vector<void*> args;
    if (!node_target(op.graph(), op.node(), op.dependencies(), g, deps)
        || !kernel_params(op.kernel(), p, storage, args))
      return;
    CUgraphNode n = nullptr;
    if (check(api_.cuGraphAddKernelNode(&n, g, deps.data(), deps.size(), &p),
              "cuGraphAddKernelNode"))
      s_.nodes[op.node()] = {op.graph(), n};
  }

  void graph_add_memset_node(const proto::GraphAddMemsetNode& op) {
    CUgraph g = nullptr;
    std::vector<CUgraphNode> deps;
    if (!node_target(op.graph(), op.node(), op.dependencies(), g, deps))
      return;
    proto::MemsetNodeParams m;
    m.set_dst(op.dst());
    m.set_value(op.value());
    m.set_element_size(op.element_size());
    m.set_width(op.width());
    m.set_height(op.height());
    m.set_pitch(op.pitch());
    CUDA_MEMSET_NODE_PARAMS p;
    if (!memset_node_params(s_, m, p, r_))
      return;
    CUcontext ctx = nullptr;
    if (!check(api_.cuCtxGetCurrent(&ctx), "cuCtxGetCurrent"))
      return;
    CUgraphNode n = nullptr;
    if (check(api_.cuGraphAddMemsetNode(&n, g, deps.data(), deps.size(), &p, ctx),
              "cuGraphAddMemsetNode"))
      s_.nodes[op.node()] = {op.graph(), n};
  }

  void graph_add_empty_node(const proto::GraphAddEmptyNode& op) {
    CUgraph g = nullptr;
    std::vector<CUgraphNode> deps;
    if (!node_target(op.graph(), op.node(), op.dependencies(), g, deps))
      return;
    CUgraphNode n = nullptr;
    if (check(api_.cuGraphAddEmptyNode(&n, g, deps.data(), deps.size()), "cuGraphAddEmptyNode"))
      s_.nodes[op.node()] = {op.graph(), n};
  }

  bool lookup_node(uint64_t handle, CUgraphNode& out) {
    auto i = s_.nodes.find(handle);
    if (i != s_.nodes.end()) {
      out = i->second.second;
      return true;
    }
    fail(CUDA_ERROR_INVALID_VALUE,
         fmt::format("graph node handle {} is not a node of this session", handle));
    return false;
  }

  void graph_add_dependencies(const proto::GraphAddDependencies& op) {
    CUgraph g = nullptr;
    if (!lookup_graph(op.graph(), g))
      return;
    if (op.from_size() != op.to_size()) {
      fail(CUDA_ERROR_INVALID_VALUE,
           fmt::format("GraphAddDependencies: {} sources for {} targets",
                       op.from_size(), op.to_size()));
      return;
    }
    std::vector<CUgraphNode> from(op.from_size());
    std::vector<CUgraphNode> to(op.to_size());
    for (int i = 0; i < op.from_size(); ++i)
      if (!lookup_node(op.from(i), from[i]) || !lookup_node(op.to(i), to[i]))
        return;
    check(api_.cuGraphAddDependencies(g, from.data(), to.data(), nullptr, from.size()),
          "cuGraphAddDependencies");
  }

  void graph_kernel_node_set_params(const proto::GraphKernelNodeSetParams& op) {
    CUgraphNode n = nullptr;
    CUDA_KERNEL_NODE_PARAMS p;
    std::vector<uint64_t> storage;
    std::vector<void*> args;
    if (lookup_node(op.node(), n) && kernel_params(op.kernel(), p, storage, args))
      check(api_.cuGraphKernelNodeSetParams(n, &p), "cuGraphKernelNodeSetParams");
  }

  void graph_exec_kernel_node_set_params(const proto::GraphExecKernelNodeSetParams& op) {
    CUgraphExec e = nullptr;
    CUgraphNode n = nullptr;
    CUDA_KERNEL_NODE_PARAMS p;
    std::vector<uint64_t> storage;
    std::vector<void*> args;
    if (lookup_exec(op.exec(), e) && lookup_node(op.node(), n)
        && kernel_params(op.kernel(), p, storage, args))
      check(api_.cuGraphExecKernelNodeSetParams(e, n, &p), "cuGraphExecKernelNodeSetParams");
  }

  // --- host functions in graphs --------------------------------------------

  /// The driver's host function of every Gleam host node: asks the client
  /// to run its function and returns once it did (host_call_port::call).
  static void CUDA_CB run_host_call(void* data) {
    auto* t = static_cast<host_call_target*>(data);
    t->port->call(t->session, t->callback);
  }

  /// Fills `p` for a host node that runs the client's `callback`; false
  /// (with the result set) when this server has no way back to its clients.
  bool host_params(uint64_t callback, CUDA_HOST_NODE_PARAMS& p) {
    if (s_.back_channel == nullptr) {
      fail(CUDA_ERROR_NOT_SUPPORTED,
           "host nodes need a way back to the client, and this executor has none "
           "(executor::set_host_calls)");
      return false;
    }
    if (callback == 0) {
      fail(CUDA_ERROR_INVALID_VALUE, "host node: callback 0 names no client function");
      return false;
    }
    auto& t = s_.host_calls[callback];
    t.port = s_.back_channel;
    t.session = s_.id;
    t.callback = callback;
    std::memset(&p, 0, sizeof(p));
    p.fn = &op_runner::run_host_call;
    p.userData = &t;
    return true;
  }

  void graph_add_host_node(const proto::GraphAddHostNode& op) {
    CUgraph g = nullptr;
    std::vector<CUgraphNode> deps;
    CUDA_HOST_NODE_PARAMS p;
    if (!node_target(op.graph(), op.node(), op.dependencies(), g, deps)
        || !host_params(op.callback(), p))
      return;
    CUgraphNode n = nullptr;
    if (check(api_.cuGraphAddHostNode(&n, g, deps.data(), deps.size(), &p),
              "cuGraphAddHostNode"))
      s_.nodes[op.node()] = {op.graph(), n};
  }

  void graph_host_node_set_params(const proto::GraphHostNodeSetParams& op) {
    CUgraphNode n = nullptr;
    CUDA_HOST_NODE_PARAMS p;
    if (lookup_node(op.node(), n) && host_params(op.callback(), p))
      check(api_.cuGraphHostNodeSetParams(n, &p), "cuGraphHostNodeSetParams");
  }

  void graph_exec_host_node_set_params(const proto::GraphExecHostNodeSetParams& op) {
    CUgraphExec e = nullptr;
    CUgraphNode n = nullptr;
    CUDA_HOST_NODE_PARAMS p;
    if (lookup_exec(op.exec(), e) && lookup_node(op.node(), n) && host_params(op.callback(), p))
      check(api_.cuGraphExecHostNodeSetParams(e, n, &p), "cuGraphExecHostNodeSetParams");
  }

  /// cudaLaunchHostFunc into a capturing stream: the capture gets a host
  /// node. Outside a capture the client runs its host functions itself
  /// (after a stream sync), so this op is refused there.
  void stream_host_func(const proto::StreamHostFunc& op) {
    CUstream stream = nullptr;
    CUDA_HOST_NODE_PARAMS p;
    if (!lookup_stream(op.stream(), stream))
      return;
    CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
    if (!check(api_.cuStreamIsCapturing(stream, &status), "cuStreamIsCapturing"))
      return;
    if (status != CU_STREAM_CAPTURE_STATUS_ACTIVE) {
      fail(status == CU_STREAM_CAPTURE_STATUS_INVALIDATED ? CUDA_ERROR_STREAM_CAPTURE_INVALIDATED
                                                          : CUDA_ERROR_INVALID_VALUE,
           fmt::format("StreamHostFunc on stream {}, which does not capture: host functions "
                       "outside a capture run in the client",
                       op.stream()));
      return;
    }
    if (host_params(op.callback(), p))
      check(api_.cuLaunchHostFunc(stream, p.fn, p.userData), "cuLaunchHostFunc");
  }

  // --- graph memory --------------------------------------------------------

  /// Registers graph memory [p, p + size). The driver may give a graph the
  /// address of graph memory whose lifetime ended (its free node ran, or
  /// its graph is gone): such entries are dropped first.
  bool register_graph_allocation(CUdeviceptr p, uint64_t size) {
    std::vector<uint64_t> stale;
    for (const auto& e : s_.memory.entries())
      if (e.kind == range_kind::graph_allocation && e.base < p + size && p < e.base + e.size)
        stale.push_back(e.base);
    for (auto base : stale)
      static_cast<void>(s_.memory.erase(base));
    if (!s_.memory.insert(range_entry{p, size, range_kind::graph_allocation, 0})) {
      fail(CUDA_ERROR_INVALID_VALUE,
           fmt::format("graph memory at {:#x} + {} bytes overlaps memory this session holds",
                       p, size));
      return false;
    }
    r_.set_dptr(p);
    return true;
  }

  /// cudaMallocAsync / cudaMallocFromPoolAsync: on a capturing stream an
  /// allocation node of the capture; otherwise stream-ordered memory of the
  /// session, from its pool `op.pool()` when one is named.
  void mem_alloc_async(const proto::MemAllocAsync& op) {
    CUstream stream = nullptr;
    CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
    if (!lookup_stream(op.stream(), stream)
        || !check(api_.cuStreamIsCapturing(stream, &status), "cuStreamIsCapturing"))
      return;
    if (op.size() == 0) {
      fail(CUDA_ERROR_INVALID_VALUE, "MemAllocAsync of 0 bytes");
      return;
    }
    CUmemoryPool pool = nullptr;
    if (op.pool() != 0 && (pool = find_pool(s_, op.pool())) == nullptr) {
      fail(CUDA_ERROR_INVALID_VALUE,
           fmt::format("MemAllocAsync: memory pool handle {} is not a pool of this session",
                       op.pool()));
      return;
    }
    CUdeviceptr p = 0;
    if (pool != nullptr
          ? !check(api_.cuMemAllocFromPoolAsync(&p, op.size(), pool, stream),
                   "cuMemAllocFromPoolAsync")
          : !check(api_.cuMemAllocAsync(&p, op.size(), stream), "cuMemAllocAsync"))
      return;
    if (status != CU_STREAM_CAPTURE_STATUS_NONE) {
      register_graph_allocation(p, op.size());
    } else if (register_allocation(p, op.size())) {
      r_.set_dptr(p);
    }
  }

  /// cudaFreeAsync: on a capturing stream a free node of graph memory.
  void mem_free_async(const proto::MemFreeAsync& op) {
    CUstream stream = nullptr;
    if (!lookup_stream(op.stream(), stream))
      return;
    auto e = s_.memory.find_base(op.dptr());
    if (!e || (e->kind != range_kind::allocation && e->kind != range_kind::graph_allocation)) {
      fail(CUDA_ERROR_INVALID_VALUE,
           fmt::format("cuMemFreeAsync: address {:#x} is not the start of an allocation of "
                       "this session",
                       op.dptr()));
      return;
    }
    if (check(api_.cuMemFreeAsync(static_cast<CUdeviceptr>(op.dptr()), stream),
              "cuMemFreeAsync"))
      static_cast<void>(s_.memory.erase(op.dptr()));
  }

  void graph_add_mem_alloc_node(const proto::GraphAddMemAllocNode& op) {
    CUgraph g = nullptr;
    std::vector<CUgraphNode> deps;
    if (!node_target(op.graph(), op.node(), op.dependencies(), g, deps))
      return;
    if (op.size() == 0) {
      fail(CUDA_ERROR_INVALID_VALUE, "memory allocation node of 0 bytes");
      return;
    }
    CUDA_MEM_ALLOC_NODE_PARAMS p;
    std::memset(&p, 0, sizeof(p));
    p.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    p.poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    p.poolProps.location.id = static_cast<int>(device_);
    p.bytesize = op.size();
    CUgraphNode n = nullptr;
    if (check(api_.cuGraphAddMemAllocNode(&n, g, deps.data(), deps.size(), &p),
              "cuGraphAddMemAllocNode")
        && register_graph_allocation(p.dptr, op.size()))
      s_.nodes[op.node()] = {op.graph(), n};
  }

  void graph_add_mem_free_node(const proto::GraphAddMemFreeNode& op) {
    CUgraph g = nullptr;
    std::vector<CUgraphNode> deps;
    if (!node_target(op.graph(), op.node(), op.dependencies(), g, deps))
      return;
    auto e = s_.memory.find_base(op.dptr());
    if (!e || e->kind != range_kind::graph_allocation) {
      fail(CUDA_ERROR_INVALID_VALUE,
           fmt::format("memory free node: address {:#x} is not graph memory of this session",
                       op.dptr()));
      return;
    }
    CUgraphNode n = nullptr;
    if (check(api_.cuGraphAddMemFreeNode(&n, g, deps.data(), deps.size(),
                                         static_cast<CUdeviceptr>(op.dptr())),
              "cuGraphAddMemFreeNode")) {
      s_.nodes[op.node()] = {op.graph(), n};
      static_cast<void>(s_.memory.erase(op.dptr()));
    }
  }

  void graph_exec_update(const proto::GraphExecUpdate& op) {
    CUgraphExec e = nullptr;
    CUgraph g = nullptr;
    if (!lookup_exec(op.exec(), e) || !lookup_graph(op.graph(), g))
      return;
    CUgraphExecUpdateResultInfo info;
    std::memset(&info, 0, sizeof(info));
    auto rc = api_.cuGraphExecUpdate(e, g, &info);
    // The update result travels with failures too: it says why.
    check(rc, "cuGraphExecUpdate");
    r_.mutable_graph_update()->set_result(static_cast<int32_t>(info.result));
  }

  void stream_capture_info(const proto::StreamCaptureInfo& op) {
    CUstream stream = nullptr;
    if (!lookup_stream(op.stream(), stream))
      return;
    CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
    cuuint64_t id = 0;
    if (!check(api_.cuStreamGetCaptureInfo(stream, &status, &id, nullptr,
                                           nullptr, nullptr, nullptr),
               "cuStreamGetCaptureInfo"))
      return;
    auto* info = r_.mutable_capture_info();
    info->set_status(static_cast<int32_t>(status));
    info->set_id(id);
  }

  // --- device -------------------------------------------------------------

  void ctx_set_limit(const proto::CtxSetLimit& op) {
    check(api_.cuCtxSetLimit(static_cast<CUlimit>(op.limit()), op.value()),
          "cuCtxSetLimit");
  }

  void ctx_get_limit(const proto::CtxGetLimit& op) {
    size_t value = 0;
    if (check(api_.cuCtxGetLimit(&value, static_cast<CUlimit>(op.limit())),
              "cuCtxGetLimit"))
      r_.set_value(static_cast<int64_t>(value));
  }

  driver_api& api_;
  blas_api* blas_;
  session& s_;
  proto::OpResult& r_;
  weight_cache* cache_;
  CUdevice device_; // this executor's GPU
  capture_judge* judge_;
};

} // namespace

// --- executor ---------------------------------------------------------------

executor::executor(driver_api& api, int ordinal, CUdevice device,
                   CUcontext context)
  : api_(api), ordinal_(ordinal), device_(device), context_(context) {
}

caf::expected<std::unique_ptr<executor>> executor::make(driver_api& api,
                                                        int ordinal) {
  int count = 0;
  if (auto rc = api.cuDeviceGetCount(&count); rc != CUDA_SUCCESS)
    return make_error(error_code::driver_call_failed,
                      "cuDeviceGetCount failed: " + api.describe(rc));
  if (ordinal < 0 || ordinal >= count)
    return make_error(error_code::no_such_device,
                      fmt::format("GPU ordinal {} does not exist: this host "
                                  "has {} GPU(s); configure an ordinal "
                                  "below {}",
                                  ordinal, count, count));
  CUdevice device = 0;
  if (auto rc = api.cuDeviceGet(&device, ordinal); rc != CUDA_SUCCESS)
    return make_error(error_code::driver_call_failed,
                      fmt::format("cuDeviceGet({}) failed: {}", ordinal,
                                  api.describe(rc)));
  CUcontext context = nullptr;
  if (auto rc = api.cuDevicePrimaryCtxRetain(&context, device);
      rc != CUDA_SUCCESS)
    return make_error(error_code::driver_call_failed,
                      fmt::format("cuDevicePrimaryCtxRetain on GPU {} failed: "
                                  "{}; check nvidia-smi for the GPU's compute "
                                  "mode and health",
                                  ordinal, api.describe(rc)));
  std::unique_ptr<executor> self{new executor(api, ordinal, device, context)};
  if (auto rc = self->make_current(); rc != CUDA_SUCCESS)
    return make_error(error_code::driver_call_failed,
                      fmt::format("cuCtxSetCurrent on GPU {} failed: {}",
                                  ordinal, api.describe(rc)));
  auto& info = self->device_info_;
  info.set_ordinal(static_cast<uint32_t>(ordinal));
  char name[256] = {};
  if (api.cuDeviceGetName(name, sizeof(name) - 1, device) == CUDA_SUCCESS)
    info.set_name(name);
  CUuuid uuid;
  if (api.cuDeviceGetUuid(&uuid, device) == CUDA_SUCCESS)
    info.set_uuid(std::string(uuid.bytes, sizeof(uuid.bytes)));
  size_t total = 0;
  if (api.cuDeviceTotalMem(&total, device) == CUDA_SUCCESS)
    info.set_total_memory(total);
  auto& attrs = *info.mutable_attributes();
  for (int a = 1; a < CU_DEVICE_ATTRIBUTE_MAX; ++a) {
    int value = 0;
    if (api.cuDeviceGetAttribute(&value, static_cast<CUdevice_attribute>(a),
                                 device)
        == CUDA_SUCCESS)
      attrs[a] = value;
  }
  if (api.cuDriverGetVersion(&self->driver_version_) != CUDA_SUCCESS)
    self->driver_version_ = 0;
  return self;
}

executor::~executor() {
  if (make_current() == CUDA_SUCCESS)
    for (auto& kv : sessions_)
      static_cast<void>(release_session_resources(api_, kv.second, cache_.get(), device_));
  sessions_.clear();
  graves_.bury(true);
  judge_.release();
  static_cast<void>(api_.cuDevicePrimaryCtxRelease(device_));
}

bool executor::any_capture() const {
  for (const auto& kv : sessions_)
    if (!kv.second.captures.empty())
      return true;
  return false;
}

CUresult executor::make_current() const {
  // The executor's own work never takes part in an app's capture rules: its
  // thread runs in relaxed capture interaction mode, and only ops marked
  // capture_checked are judged (capture_judge, from op_runner::run).
  if (api_.cuThreadExchangeStreamCaptureMode != nullptr) {
    CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
    static_cast<void>(api_.cuThreadExchangeStreamCaptureMode(&mode));
  }
  return api_.cuCtxSetCurrent(context_);
}

caf::expected<proto::SessionOpened>
executor::open_session(const proto::OpenSession& request, const std::string& tenant) {
  if (auto rc = make_current(); rc != CUDA_SUCCESS)
    return make_error(error_code::driver_call_failed,
                      fmt::format("cuCtxSetCurrent on GPU {} failed: {}",
                                  ordinal_, api_.describe(rc)));
  // 0: a caller that states no version (the executor's own tests).
  if (request.protocol_version() != 0)
    if (auto why = wire::protocol_mismatch(request.protocol_version(), wire::protocol_version);
        !why.empty())
      return make_error(error_code::protocol_mismatch, why);
  uint64_t id = request.resume_session();
  const session* opened = nullptr;
  if (id != 0) {
    // The same answer whether the id is unknown, of another tenant or
    // presented with another secret: a resume says nothing about sessions
    // it cannot prove its own.
    auto i = sessions_.find(id);
    auto* s = i == sessions_.end() ? nullptr : &i->second;
    if (!proves(s, request.resume_secret()) || s->tenant != tenant)
      return make_error(error_code::unknown_session, refusal_text(id)
                                                       + " with resume_session = 0");
    ++s->resumes;
    opened = s;
  } else {
    auto secret = make_session_secret();
    if (!secret)
      return std::move(secret.error());
    id = next_session_++;
    auto& s = sessions_[id];
    s.id = id;
    s.secret = std::move(*secret);
    s.client_id = request.client_id();
    s.task_signature = request.task_signature();
    s.gpu_uuid = uuid_string(device_info_.uuid());
    s.tenant = tenant;
    s.opened_time_ns = now_ns();
    s.back_channel = host_calls_.get();
    s.graves = &graves_;
    s.library_overrides = &library_overrides_;
    opened = &s;
  }
  proto::SessionOpened out;
  out.set_session(id);
  out.set_secret(opened->secret);
  out.set_driver_version(driver_version_);
  out.set_protocol_version(wire::protocol_version);
  *out.add_devices() = device_info_;
  return out;
}

proto::BatchReply executor::execute(const proto::OpBatch& batch) {
  proto::BatchReply reply;
  reply.set_session(batch.session());
  auto first_seq = batch.ops_size() > 0 ? batch.ops(0).seq() : uint64_t{0};
  auto i = sessions_.find(batch.session());
  if (!proves(i == sessions_.end() ? nullptr : &i->second, batch.session_secret())) {
    auto* r = reply.add_results();
    r->set_seq(first_seq);
    r->set_status(CUDA_ERROR_INVALID_CONTEXT);
    r->set_error(refusal_text(batch.session()));
    return reply;
  }
  auto& s = i->second;
  s.replies.confirmed_through(batch.replied_through());
  auto last_seq = batch.ops_size() > 0 ? batch.ops(batch.ops_size() - 1).seq() : uint64_t{0};
  // A batch re-sent after a reconnect whose reply was lost: answered again,
  // with the results it had (also one a sticky error cut short); nothing
  // runs twice.
  if (last_seq != 0)
    if (const auto* earlier = s.replies.find(last_seq))
      return *earlier;
  reply.set_executed_through(s.executed_through);
  if (auto rc = make_current(); rc != CUDA_SUCCESS) {
    auto* r = reply.add_results();
    r->set_seq(first_seq);
    r->set_status(static_cast<int32_t>(rc));
    r->set_error(fmt::format("cuCtxSetCurrent on GPU {} failed: {}", ordinal_,
                             api_.describe(rc)));
    return reply;
  }
  for (const auto& op : batch.ops()) {
    if (op.seq() <= s.executed_through)
      continue;
    auto* r = reply.add_results();
    r->set_seq(op.seq());
    op_runner{api_, blas_, s, *r, cache_.get(), device_, &judge_}.run(op);
    s.executed_through = op.seq();
    ++s.ops_executed;
    if (is_sticky(static_cast<CUresult>(r->status())))
      break;
  }
  reply.set_executed_through(s.executed_through);
  graves_.bury();
  if (last_seq != 0)
    s.replies.record(last_seq, reply);
  return reply;
}

void executor::close_session(uint64_t id) {
  auto i = sessions_.find(id);
  if (i == sessions_.end())
    return;
  if (make_current() == CUDA_SUCCESS)
    static_cast<void>(release_session_resources(api_, i->second, cache_.get(), device_));
  sessions_.erase(i);
  graves_.bury();
}

std::vector<proto::SessionSummary> executor::sessions() const {
  std::vector<proto::SessionSummary> out;
  out.reserve(sessions_.size());
  for (const auto& kv : sessions_) {
    const auto& s = kv.second;
    proto::SessionSummary x;
    x.set_session(s.id);
    x.set_client_id(s.client_id);
    x.set_gpu_index(static_cast<uint32_t>(ordinal_));
    x.set_ops_executed(s.ops_executed);
    x.set_allocated_bytes(s.device_bytes());
    x.set_opened_time_ns(s.opened_time_ns);
    x.set_resumes(s.resumes);
    out.push_back(std::move(x));
  }
  return out;
}

proto::GpuInfo executor::gpu_info() const {
  proto::GpuInfo out;
  out.set_index(static_cast<uint32_t>(ordinal_));
  out.set_name(device_info_.name());
  out.set_uuid(uuid_string(device_info_.uuid()));
  out.set_total_memory(device_info_.total_memory());
  size_t free = 0;
  size_t total = 0;
  if (make_current() == CUDA_SUCCESS
      && api_.cuMemGetInfo(&free, &total) == CUDA_SUCCESS)
    out.set_free_memory(free);
  auto attr = [this](CUdevice_attribute a) -> uint32_t {
    auto i = device_info_.attributes().find(static_cast<int32_t>(a));
    return i == device_info_.attributes().end() ? 0u
                                                : static_cast<uint32_t>(i->second);
  };
  out.set_sm_count(attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT));
  out.set_cc_major(attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR));
  out.set_cc_minor(attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR));
  return out;
}

std::unique_ptr<cache_store::tier> executor::make_device_tier(uint64_t capacity) {
  return std::make_unique<device_memory_tier>(api_, context_, capacity,
                                              fmt::format("gpu {} memory", ordinal_));
}

bool executor::proves(const session* s, std::string_view secret) const {
  // An unknown id is compared too, against a secret no session has, so
  // that the time taken does not say whether the id exists.
  static const std::string none(session_secret_bytes, '\0');
  bool match = session_secret_matches(s != nullptr ? s->secret : none, secret);
  return s != nullptr && match;
}

bool executor::authenticate(uint64_t id, std::string_view secret) const {
  auto i = sessions_.find(id);
  return proves(i == sessions_.end() ? nullptr : &i->second, secret);
}

std::string executor::refusal_text(uint64_t id) const {
  return fmt::format("no session {} with the secret presented is open on GPU {}: it was "
                     "closed, its grace period expired, or the session's secret does not "
                     "match (each batch, resume and close carries the secret its "
                     "SessionOpened gave); open a new session",
                     id, ordinal_);
}

const session* executor::find_session(uint64_t id) const {
  auto i = sessions_.find(id);
  return i == sessions_.end() ? nullptr : &i->second;
}

} // namespace gleam::executor
