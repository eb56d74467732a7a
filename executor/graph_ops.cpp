// The graphs family: stream capture (always relaxed on the server,
// executor/capture_judge.hpp), captured and created graphs, their
// executable graphs, the explicit graph API's kernel, memset, empty and
// host nodes, and graph memory (allocation and free nodes, stream-ordered
// allocations on capturing streams). Memcpy nodes are
// executor/graph_copies.cpp, GraphClone executor/graph_clone.cpp.

#include <cstring>
#include <iterator>
#include <vector>

#include <fmt/format.h>

#include "executor/graph_copies.hpp"
#include "executor/mem_pools.hpp"
#include "executor/op_table.hpp"

namespace gleam::executor {

namespace {

// --- stream capture and graphs -----------------------------------------

void capture_status(op_context& cx, CUstream stream) {
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  cuuint64_t id = 0;
  if (cx.api.cuStreamGetCaptureInfo(stream, &status, &id, nullptr, nullptr,
                                    nullptr, nullptr)
      != CUDA_SUCCESS)
    return;
  auto* info = cx.r.mutable_capture_info();
  info->set_status(static_cast<int32_t>(status));
  info->set_id(id);
}

void stream_begin_capture(op_context& cx, const proto::StreamBeginCapture& op) {
  if (op.stream() == stream_handle::legacy_default || op.stream() == stream_handle::legacy) {
    cx.fail(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, "the legacy stream cannot be captured");
    return;
  }
  CUstream stream = nullptr;
  if (!cx.lookup_stream(op.stream(), stream))
    return;
  if (op.graph() <= stream_handle::per_thread || cx.s.graphs.count(op.graph()) != 0) {
    cx.fail(CUDA_ERROR_INVALID_VALUE,
            fmt::format("graph handle {} is reserved or already in use in "
                        "this session",
                        op.graph()));
    return;
  }
  // Relaxed whatever the app's mode: the app's mode binds the app's
  // threads, which the client knows; on the server it would bind the
  // thread every session shares (capture_judge.hpp).
  if (!cx.check(cx.api.cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_RELAXED),
                "cuStreamBeginCapture"))
    return;
  // The graph exists from the start of the capture; it is registered at
  // its end, when the driver hands it over.
  cx.s.captures[op.stream()] = op.graph();
  capture_status(cx, stream);
}

void stream_end_capture(op_context& cx, const proto::StreamEndCapture& op) {
  CUstream stream = nullptr;
  if (!cx.lookup_stream(op.stream(), stream))
    return;
  CUgraph g = nullptr;
  auto rc = cx.api.cuStreamEndCapture(stream, &g);
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  if (cx.api.cuStreamIsCapturing(stream, &status) == CUDA_SUCCESS
      && status == CU_STREAM_CAPTURE_STATUS_NONE)
    cx.s.captures.erase(op.stream());
  cx.r.mutable_capture_info()->set_status(static_cast<int32_t>(status));
  if (!cx.check(rc, "cuStreamEndCapture")) {
    if (g != nullptr)
      static_cast<void>(cx.api.cuGraphDestroy(g));
    return;
  }
  if (op.graph() <= stream_handle::per_thread || cx.s.graphs.count(op.graph()) != 0) {
    static_cast<void>(cx.api.cuGraphDestroy(g));
    cx.fail(CUDA_ERROR_INVALID_VALUE,
            fmt::format("graph handle {} is reserved or already in use in "
                        "this session",
                        op.graph()));
    return;
  }
  cx.s.graphs[op.graph()] = g;
}

void graph_instantiate(op_context& cx, const proto::GraphInstantiate& op) {
  CUgraph g = nullptr;
  if (!cx.lookup_graph(op.graph(), g))
    return;
  if (op.exec() <= stream_handle::per_thread || cx.s.execs.count(op.exec()) != 0) {
    cx.fail(CUDA_ERROR_INVALID_VALUE,
            fmt::format("graph exec handle {} is reserved or already in use "
                        "in this session",
                        op.exec()));
    return;
  }
  CUgraphExec e = nullptr;
  if (cx.check(cx.api.cuGraphInstantiateWithFlags(&e, g, op.flags()),
               "cuGraphInstantiateWithFlags"))
    cx.s.execs[op.exec()] = e;
}

void graph_launch(op_context& cx, const proto::GraphLaunch& op) {
  CUgraphExec e = nullptr;
  CUstream stream = nullptr;
  if (cx.lookup_exec(op.exec(), e) && cx.lookup_stream(op.stream(), stream))
    cx.check(cx.api.cuGraphLaunch(e, stream), "cuGraphLaunch");
}

void graph_upload(op_context& cx, const proto::GraphUpload& op) {
  CUgraphExec e = nullptr;
  CUstream stream = nullptr;
  if (cx.lookup_exec(op.exec(), e) && cx.lookup_stream(op.stream(), stream))
    cx.check(cx.api.cuGraphUpload(e, stream), "cuGraphUpload");
}

void graph_exec_destroy(op_context& cx, const proto::GraphExecDestroy& op) {
  CUgraphExec e = nullptr;
  if (cx.lookup_exec(op.exec(), e) && cx.check(cx.api.cuGraphExecDestroy(e), "cuGraphExecDestroy"))
    cx.s.execs.erase(op.exec());
}

void graph_destroy(op_context& cx, const proto::GraphDestroy& op) {
  CUgraph g = nullptr;
  if (!cx.lookup_graph(op.graph(), g) || !cx.check(cx.api.cuGraphDestroy(g), "cuGraphDestroy"))
    return;
  cx.s.graphs.erase(op.graph());
  for (auto i = cx.s.nodes.begin(); i != cx.s.nodes.end();)
    i = i->second.first == op.graph() ? cx.s.nodes.erase(i) : std::next(i);
}

// --- the explicit graph API ---------------------------------------------

void graph_create(op_context& cx, const proto::GraphCreate& op) {
  if (op.graph() <= stream_handle::per_thread || cx.s.graphs.count(op.graph()) != 0) {
    cx.fail(CUDA_ERROR_INVALID_VALUE,
            fmt::format("graph handle {} is reserved or already in use in this session",
                        op.graph()));
    return;
  }
  CUgraph g = nullptr;
  if (cx.check(cx.api.cuGraphCreate(&g, op.flags()), "cuGraphCreate"))
    cx.s.graphs[op.graph()] = g;
}

/// The graph and the driver nodes of `deps` for adding node `node`; false
/// (with the result set) when one is unknown or `node` is taken.
bool node_target(op_context& cx, uint64_t graph, uint64_t node,
                 const google::protobuf::RepeatedField<uint64_t>& deps, CUgraph& g,
                 std::vector<CUgraphNode>& out) {
  if (!cx.lookup_graph(graph, g))
    return false;
  if (node <= stream_handle::per_thread || cx.s.nodes.count(node) != 0) {
    cx.fail(CUDA_ERROR_INVALID_VALUE,
            fmt::format("graph node handle {} is reserved or already in use", node));
    return false;
  }
  for (auto d : deps) {
    auto i = cx.s.nodes.find(d);
    if (i == cx.s.nodes.end() || i->second.first != graph) {
      cx.fail(CUDA_ERROR_INVALID_VALUE,
              fmt::format("dependency {} is not a node of graph {}", d, graph));
      return false;
    }
    out.push_back(i->second.second);
  }
  return true;
}

/// Fills `p` from `k`; `storage` receives the 16-byte aligned argument
/// buffer and `args` one pointer per parameter into it.
bool kernel_params(op_context& cx, const proto::KernelNodeParams& k, CUDA_KERNEL_NODE_PARAMS& p,
                   std::vector<uint64_t>& storage, std::vector<void*>& args) {
  auto* f = cx.lookup_function(k.module(), k.function());
  if (f == nullptr)
    return false;
  uint64_t end = 0;
  for (const auto& slot : f->params)
    end = std::max<uint64_t>(end, uint64_t{slot.offset} + slot.size);
  if (k.params().size() < end) {
    cx.fail(CUDA_ERROR_INVALID_VALUE,
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

void graph_add_kernel_node(op_context& cx, const proto::GraphAddKernelNode& op) {
  CUgraph g = nullptr;
  std::vector<CUgraphNode> deps;
  CUDA_KERNEL_NODE_PARAMS p;
  std::vector<uint64_t> storage;
  std::vector<void*> args;
  if (!node_target(cx, op.graph(), op.node(), op.dependencies(), g, deps)
      || !kernel_params(cx, op.kernel(), p, storage, args))
    return;
  CUgraphNode n = nullptr;
  if (cx.check(cx.api.cuGraphAddKernelNode(&n, g, deps.data(), deps.size(), &p),
               "cuGraphAddKernelNode"))
    cx.s.nodes[op.node()] = {op.graph(), n};
}

void graph_add_memset_node(op_context& cx, const proto::GraphAddMemsetNode& op) {
  CUgraph g = nullptr;
  std::vector<CUgraphNode> deps;
  if (!node_target(cx, op.graph(), op.node(), op.dependencies(), g, deps))
    return;
  proto::MemsetNodeParams m;
  m.set_dst(op.dst());
  m.set_value(op.value());
  m.set_element_size(op.element_size());
  m.set_width(op.width());
  m.set_height(op.height());
  m.set_pitch(op.pitch());
  CUDA_MEMSET_NODE_PARAMS p;
  if (!memset_node_params(cx.s, m, p, cx.r))
    return;
  CUcontext ctx = nullptr;
  if (!cx.check(cx.api.cuCtxGetCurrent(&ctx), "cuCtxGetCurrent"))
    return;
  CUgraphNode n = nullptr;
  if (cx.check(cx.api.cuGraphAddMemsetNode(&n, g, deps.data(), deps.size(), &p, ctx),
               "cuGraphAddMemsetNode"))
    cx.s.nodes[op.node()] = {op.graph(), n};
}

void graph_add_empty_node(op_context& cx, const proto::GraphAddEmptyNode& op) {
  CUgraph g = nullptr;
  std::vector<CUgraphNode> deps;
  if (!node_target(cx, op.graph(), op.node(), op.dependencies(), g, deps))
    return;
  CUgraphNode n = nullptr;
  if (cx.check(cx.api.cuGraphAddEmptyNode(&n, g, deps.data(), deps.size()), "cuGraphAddEmptyNode"))
    cx.s.nodes[op.node()] = {op.graph(), n};
}

bool lookup_node(op_context& cx, uint64_t handle, CUgraphNode& out) {
  auto i = cx.s.nodes.find(handle);
  if (i != cx.s.nodes.end()) {
    out = i->second.second;
    return true;
  }
  cx.fail(CUDA_ERROR_INVALID_VALUE,
          fmt::format("graph node handle {} is not a node of this session", handle));
  return false;
}

void graph_add_dependencies(op_context& cx, const proto::GraphAddDependencies& op) {
  CUgraph g = nullptr;
  if (!cx.lookup_graph(op.graph(), g))
    return;
  if (op.from_size() != op.to_size()) {
    cx.fail(CUDA_ERROR_INVALID_VALUE,
            fmt::format("GraphAddDependencies: {} sources for {} targets",
                        op.from_size(), op.to_size()));
    return;
  }
  std::vector<CUgraphNode> from(op.from_size());
  std::vector<CUgraphNode> to(op.to_size());
  for (int i = 0; i < op.from_size(); ++i)
    if (!lookup_node(cx, op.from(i), from[i]) || !lookup_node(cx, op.to(i), to[i]))
      return;
  cx.check(cx.api.cuGraphAddDependencies(g, from.data(), to.data(), nullptr, from.size()),
           "cuGraphAddDependencies");
}

void graph_kernel_node_set_params(op_context& cx, const proto::GraphKernelNodeSetParams& op) {
  CUgraphNode n = nullptr;
  CUDA_KERNEL_NODE_PARAMS p;
  std::vector<uint64_t> storage;
  std::vector<void*> args;
  if (lookup_node(cx, op.node(), n) && kernel_params(cx, op.kernel(), p, storage, args))
    cx.check(cx.api.cuGraphKernelNodeSetParams(n, &p), "cuGraphKernelNodeSetParams");
}

void graph_exec_kernel_node_set_params(op_context& cx,
                                       const proto::GraphExecKernelNodeSetParams& op) {
  CUgraphExec e = nullptr;
  CUgraphNode n = nullptr;
  CUDA_KERNEL_NODE_PARAMS p;
  std::vector<uint64_t> storage;
  std::vector<void*> args;
  if (cx.lookup_exec(op.exec(), e) && lookup_node(cx, op.node(), n)
      && kernel_params(cx, op.kernel(), p, storage, args))
    cx.check(cx.api.cuGraphExecKernelNodeSetParams(e, n, &p), "cuGraphExecKernelNodeSetParams");
}

// --- host functions in graphs --------------------------------------------

/// The driver's host function of every Gleam host node: asks the client
/// to run its function and returns once it did (host_call_port::call).
void CUDA_CB run_host_call(void* data) {
  auto* t = static_cast<host_call_target*>(data);
  t->port->call(t->session, t->callback);
}

/// Fills `p` for a host node that runs the client's `callback`; false
/// (with the result set) when this server has no way back to its clients.
bool host_params(op_context& cx, uint64_t callback, CUDA_HOST_NODE_PARAMS& p) {
  if (cx.s.back_channel == nullptr) {
    cx.fail(CUDA_ERROR_NOT_SUPPORTED,
            "host nodes need a way back to the client, and this executor has none "
            "(executor::set_host_calls)");
    return false;
  }
  if (callback == 0) {
    cx.fail(CUDA_ERROR_INVALID_VALUE, "host node: callback 0 names no client function");
    return false;
  }
  auto& t = cx.s.host_calls[callback];
  t.port = cx.s.back_channel;
  t.session = cx.s.id;
  t.callback = callback;
  std::memset(&p, 0, sizeof(p));
  p.fn = &run_host_call;
  p.userData = &t;
  return true;
}

void graph_add_host_node(op_context& cx, const proto::GraphAddHostNode& op) {
  CUgraph g = nullptr;
  std::vector<CUgraphNode> deps;
  CUDA_HOST_NODE_PARAMS p;
  if (!node_target(cx, op.graph(), op.node(), op.dependencies(), g, deps)
      || !host_params(cx, op.callback(), p))
    return;
  CUgraphNode n = nullptr;
  if (cx.check(cx.api.cuGraphAddHostNode(&n, g, deps.data(), deps.size(), &p),
               "cuGraphAddHostNode"))
    cx.s.nodes[op.node()] = {op.graph(), n};
}

void graph_host_node_set_params(op_context& cx, const proto::GraphHostNodeSetParams& op) {
  CUgraphNode n = nullptr;
  CUDA_HOST_NODE_PARAMS p;
  if (lookup_node(cx, op.node(), n) && host_params(cx, op.callback(), p))
    cx.check(cx.api.cuGraphHostNodeSetParams(n, &p), "cuGraphHostNodeSetParams");
}

void graph_exec_host_node_set_params(op_context& cx, const proto::GraphExecHostNodeSetParams& op) {
  CUgraphExec e = nullptr;
  CUgraphNode n = nullptr;
  CUDA_HOST_NODE_PARAMS p;
  if (cx.lookup_exec(op.exec(), e) && lookup_node(cx, op.node(), n)
      && host_params(cx, op.callback(), p))
    cx.check(cx.api.cuGraphExecHostNodeSetParams(e, n, &p), "cuGraphExecHostNodeSetParams");
}

/// cudaLaunchHostFunc into a capturing stream: the capture gets a host
/// node. Outside a capture the client runs its host functions itself
/// (after a stream sync), so this op is refused there.
void stream_host_func(op_context& cx, const proto::StreamHostFunc& op) {
  CUstream stream = nullptr;
  CUDA_HOST_NODE_PARAMS p;
  if (!cx.lookup_stream(op.stream(), stream))
    return;
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  if (!cx.check(cx.api.cuStreamIsCapturing(stream, &status), "cuStreamIsCapturing"))
    return;
  if (status != CU_STREAM_CAPTURE_STATUS_ACTIVE) {
    cx.fail(status == CU_STREAM_CAPTURE_STATUS_INVALIDATED ? CUDA_ERROR_STREAM_CAPTURE_INVALIDATED
                                                        : CUDA_ERROR_INVALID_VALUE,
            fmt::format("StreamHostFunc on stream {}, which does not capture: host functions "
                        "outside a capture run in the client",
                        op.stream()));
    return;
  }
  if (host_params(cx, op.callback(), p))
    cx.check(cx.api.cuLaunchHostFunc(stream, p.fn, p.userData), "cuLaunchHostFunc");
}

// --- graph memory --------------------------------------------------------

/// Registers graph memory [p, p + size). The driver may give a graph the
/// address of graph memory whose lifetime ended (its free node ran, or
/// its graph is gone): such entries are dropped first.
bool register_graph_allocation(op_context& cx, CUdeviceptr p, uint64_t size) {
  std::vector<uint64_t> stale;
  for (const auto& e : cx.s.memory.entries())
    if (e.kind == range_kind::graph_allocation && e.base < p + size && p < e.base + e.size)
      stale.push_back(e.base);
  for (auto base : stale)
    static_cast<void>(cx.s.memory.erase(base));
  if (!cx.s.memory.insert(range_entry{p, size, range_kind::graph_allocation, 0})) {
    cx.fail(CUDA_ERROR_INVALID_VALUE,
            fmt::format("graph memory at {:#x} + {} bytes overlaps memory this session holds",
                        p, size));
    return false;
  }
  cx.r.set_dptr(p);
  return true;
}

/// cudaMallocAsync / cudaMallocFromPoolAsync: on a capturing stream an
/// allocation node of the capture; otherwise stream-ordered memory of the
/// session, from its pool `op.pool()` when one is named.
void mem_alloc_async(op_context& cx, const proto::MemAllocAsync& op) {
  CUstream stream = nullptr;
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  if (!cx.lookup_stream(op.stream(), stream)
      || !cx.check(cx.api.cuStreamIsCapturing(stream, &status), "cuStreamIsCapturing"))
    return;
  if (op.size() == 0) {
    cx.fail(CUDA_ERROR_INVALID_VALUE, "MemAllocAsync of 0 bytes");
    return;
  }
  CUmemoryPool pool = nullptr;
  if (op.pool() != 0 && (pool = find_pool(cx.s, op.pool())) == nullptr) {
    cx.fail(CUDA_ERROR_INVALID_VALUE,
            fmt::format("MemAllocAsync: memory pool handle {} is not a pool of this session",
                        op.pool()));
    return;
  }
  // Stream-ordered memory outside a capture is the session's now: its
  // quota and its tenant's rules judge it as they judge cuMemAlloc.
  if (status == CU_STREAM_CAPTURE_STATUS_NONE
      && !cx.check_quota(op.size(), pool != nullptr ? "cuMemAllocFromPoolAsync" : "cuMemAllocAsync"))
    return;
  CUdeviceptr p = 0;
  if (pool != nullptr
        ? !cx.check(cx.api.cuMemAllocFromPoolAsync(&p, op.size(), pool, stream),
                    "cuMemAllocFromPoolAsync")
        : !cx.check(cx.api.cuMemAllocAsync(&p, op.size(), stream), "cuMemAllocAsync"))
    return;
  if (status != CU_STREAM_CAPTURE_STATUS_NONE) {
    register_graph_allocation(cx, p, op.size());
  } else if (cx.register_allocation(p, op.size())) {
    cx.r.set_dptr(p);
  }
}

/// cudaFreeAsync: on a capturing stream a free node of graph memory.
void mem_free_async(op_context& cx, const proto::MemFreeAsync& op) {
  CUstream stream = nullptr;
  if (!cx.lookup_stream(op.stream(), stream))
    return;
  auto e = cx.s.memory.find_base(op.dptr());
  if (!e || (e->kind != range_kind::allocation && e->kind != range_kind::graph_allocation)) {
    cx.fail(CUDA_ERROR_INVALID_VALUE,
            fmt::format("cuMemFreeAsync: address {:#x} is not the start of an allocation of "
                        "this session",
                        op.dptr()));
    return;
  }
  if (cx.check(cx.api.cuMemFreeAsync(static_cast<CUdeviceptr>(op.dptr()), stream),
               "cuMemFreeAsync"))
    static_cast<void>(cx.s.memory.erase(op.dptr()));
}

void graph_add_mem_alloc_node(op_context& cx, const proto::GraphAddMemAllocNode& op) {
  CUgraph g = nullptr;
  std::vector<CUgraphNode> deps;
  if (!node_target(cx, op.graph(), op.node(), op.dependencies(), g, deps))
    return;
  if (op.size() == 0) {
    cx.fail(CUDA_ERROR_INVALID_VALUE, "memory allocation node of 0 bytes");
    return;
  }
  CUDA_MEM_ALLOC_NODE_PARAMS p;
  std::memset(&p, 0, sizeof(p));
  p.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  p.poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  p.poolProps.location.id = static_cast<int>(cx.device);
  p.bytesize = op.size();
  CUgraphNode n = nullptr;
  if (cx.check(cx.api.cuGraphAddMemAllocNode(&n, g, deps.data(), deps.size(), &p),
               "cuGraphAddMemAllocNode")
      && register_graph_allocation(cx, p.dptr, op.size()))
    cx.s.nodes[op.node()] = {op.graph(), n};
}

void graph_add_mem_free_node(op_context& cx, const proto::GraphAddMemFreeNode& op) {
  CUgraph g = nullptr;
  std::vector<CUgraphNode> deps;
  if (!node_target(cx, op.graph(), op.node(), op.dependencies(), g, deps))
    return;
  auto e = cx.s.memory.find_base(op.dptr());
  if (!e || e->kind != range_kind::graph_allocation) {
    cx.fail(CUDA_ERROR_INVALID_VALUE,
            fmt::format("memory free node: address {:#x} is not graph memory of this session",
                        op.dptr()));
    return;
  }
  CUgraphNode n = nullptr;
  if (cx.check(cx.api.cuGraphAddMemFreeNode(&n, g, deps.data(), deps.size(),
                                            static_cast<CUdeviceptr>(op.dptr())),
               "cuGraphAddMemFreeNode")) {
    cx.s.nodes[op.node()] = {op.graph(), n};
    static_cast<void>(cx.s.memory.erase(op.dptr()));
  }
}

void graph_exec_update(op_context& cx, const proto::GraphExecUpdate& op) {
  CUgraphExec e = nullptr;
  CUgraph g = nullptr;
  if (!cx.lookup_exec(op.exec(), e) || !cx.lookup_graph(op.graph(), g))
    return;
  CUgraphExecUpdateResultInfo info;
  std::memset(&info, 0, sizeof(info));
  auto rc = cx.api.cuGraphExecUpdate(e, g, &info);
  // The update result travels with failures too: it says why.
  cx.check(rc, "cuGraphExecUpdate");
  cx.r.mutable_graph_update()->set_result(static_cast<int32_t>(info.result));
}

void stream_capture_info(op_context& cx, const proto::StreamCaptureInfo& op) {
  CUstream stream = nullptr;
  if (!cx.lookup_stream(op.stream(), stream))
    return;
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  cuuint64_t id = 0;
  if (!cx.check(cx.api.cuStreamGetCaptureInfo(stream, &status, &id, nullptr,
                                              nullptr, nullptr, nullptr),
                "cuStreamGetCaptureInfo"))
    return;
  auto* info = cx.r.mutable_capture_info();
  info->set_status(static_cast<int32_t>(status));
  info->set_id(id);
}

void graph_mem_trim(op_context& cx, const proto::GraphMemTrim&) {
  cx.check(cx.api.cuDeviceGraphMemTrim(cx.device), "cuDeviceGraphMemTrim");
}

using k = proto::Op::KindCase;

constexpr op_route routes[] = {
  {k::kStreamBeginCapture, with_message<&proto::Op::stream_begin_capture, stream_begin_capture>},
  {k::kStreamEndCapture, with_message<&proto::Op::stream_end_capture, stream_end_capture>},
  {k::kGraphInstantiate, with_message<&proto::Op::graph_instantiate, graph_instantiate>},
  {k::kGraphLaunch, with_message<&proto::Op::graph_launch, graph_launch>},
  {k::kGraphUpload, with_message<&proto::Op::graph_upload, graph_upload>},
  {k::kGraphExecDestroy, with_message<&proto::Op::graph_exec_destroy, graph_exec_destroy>},
  {k::kGraphDestroy, with_message<&proto::Op::graph_destroy, graph_destroy>},
  {k::kGraphExecUpdate, with_message<&proto::Op::graph_exec_update, graph_exec_update>},
  {k::kStreamCaptureInfo, with_message<&proto::Op::stream_capture_info, stream_capture_info>},
  {k::kGraphCreate, with_message<&proto::Op::graph_create, graph_create>},
  {k::kGraphAddKernelNode, with_message<&proto::Op::graph_add_kernel_node, graph_add_kernel_node>},
  {k::kGraphAddMemsetNode, with_message<&proto::Op::graph_add_memset_node, graph_add_memset_node>},
  {k::kGraphAddEmptyNode, with_message<&proto::Op::graph_add_empty_node, graph_add_empty_node>},
  {k::kGraphAddDependencies,
   with_message<&proto::Op::graph_add_dependencies, graph_add_dependencies>},
  {k::kGraphKernelNodeSetParams,
   with_message<&proto::Op::graph_kernel_node_set_params, graph_kernel_node_set_params>},
  {k::kGraphExecKernelNodeSetParams,
   with_message<&proto::Op::graph_exec_kernel_node_set_params,
                graph_exec_kernel_node_set_params>},
  {k::kGraphAddHostNode, with_message<&proto::Op::graph_add_host_node, graph_add_host_node>},
  {k::kGraphHostNodeSetParams,
   with_message<&proto::Op::graph_host_node_set_params, graph_host_node_set_params>},
  {k::kGraphExecHostNodeSetParams,
   with_message<&proto::Op::graph_exec_host_node_set_params, graph_exec_host_node_set_params>},
  {k::kStreamHostFunc, with_message<&proto::Op::stream_host_func, stream_host_func>},
  {k::kMemAllocAsync, with_message<&proto::Op::mem_alloc_async, mem_alloc_async>},
  {k::kMemFreeAsync, with_message<&proto::Op::mem_free_async, mem_free_async>},
  {k::kGraphAddMemAllocNode,
   with_message<&proto::Op::graph_add_mem_alloc_node, graph_add_mem_alloc_node>},
  {k::kGraphAddMemFreeNode,
   with_message<&proto::Op::graph_add_mem_free_node, graph_add_mem_free_node>},
  {k::kGraphMemTrim, with_message<&proto::Op::graph_mem_trim, graph_mem_trim>},
};

} // namespace

const op_family graph_family = make_family(routes);

} // namespace gleam::executor
