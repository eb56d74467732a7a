// Stream capture and CUDA graphs. Captures happen on the server: the ops the
// app issues into a capturing stream become nodes of the server's graph, and
// graph / graph-exec handles are chosen here and mapped by the server. The
// client mirrors which of its streams capture (interpose/capture_state.hpp)
// to answer cudaStreamIsCapturing locally and to mark the ops of threads the
// capture rules bind (the server then judges them in global mode).
#define __CUDA_API_VERSION_INTERNAL
#include "interpose/export.hpp"

#include <cuda.h>

#include <map>
#include <set>
#include <thread>
#include <vector>

#include "interpose/capture_state.hpp"
#include "interpose/cudart/graph_tables.hpp"
#include "interpose/host_calls.hpp"
#include "interpose/runtime.hpp"

using namespace gleam::interpose;
namespace proto = gleam::proto;

graph_tables& gleam::interpose::tables() {
  static auto* t = new graph_tables;
  return *t;
}

namespace gleam::interpose {

bool known_exec(cudaGraphExec_t e) {
  auto& t = tables();
  std::lock_guard<std::mutex> guard{t.mutex};
  return t.execs.count(handle_of(e)) != 0;
}

bool known_node(cudaGraphNode_t n) {
  auto& t = tables();
  std::lock_guard<std::mutex> guard{t.mutex};
  return t.nodes.count(handle_of(n)) != 0;
}

cudaError_t node_deps(cudaGraph_t graph, const cudaGraphNode_t* deps, size_t n,
                      google::protobuf::RepeatedField<uint64_t>* out) {
  {
    auto& t = tables();
    std::lock_guard<std::mutex> guard{t.mutex};
    if (t.graphs.count(handle_of(graph)) == 0 || (n != 0 && deps == nullptr))
      return cudaErrorInvalidValue;
    for (size_t i = 0; i < n; ++i) {
      auto d = t.nodes.find(handle_of(deps[i]));
      if (d == t.nodes.end() || d->second.first != handle_of(graph))
        return cudaErrorInvalidValue;
      out->Add(d->first);
    }
  }
  return cudaSuccess;
}

cudaError_t add_node(proto::Op op, uint64_t node, cudaGraph_t graph, cudaGraphNodeType type,
                     cudaGraphNode_t* out) {
  auto deps = dependencies_of(op);
  if (auto err = run_op(std::move(op)); err != cudaSuccess)
    return err;
  auto& t = tables();
  std::lock_guard<std::mutex> guard{t.mutex};
  t.nodes[node] = {handle_of(graph), type};
  t.add_edges(handle_of(graph), deps, node);
  *out = reinterpret_cast<cudaGraphNode_t>(static_cast<uintptr_t>(node));
  return cudaSuccess;
}

} // namespace gleam::interpose

namespace {

bool known_graph(cudaGraph_t g) {
  auto& t = tables();
  std::lock_guard<std::mutex> guard{t.mutex};
  return t.graphs.count(handle_of(g)) != 0;
}

cudaError_t begin_capture(cudaStream_t stream, cudaStreamCaptureMode mode) {
  if (mode != cudaStreamCaptureModeGlobal && mode != cudaStreamCaptureModeThreadLocal
      && mode != cudaStreamCaptureModeRelaxed)
    return cudaErrorInvalidValue;
  if (auto err = known_stream(stream); err != cudaSuccess)
    return err;
  auto graph = next_handle();
  proto::Op op;
  auto* b = op.mutable_stream_begin_capture();
  b->set_stream(wire_stream(stream));
  b->set_mode(static_cast<int32_t>(mode));
  b->set_graph(graph);
  proto::OpResult result;
  if (auto err = run_op(std::move(op), &result); err != cudaSuccess)
    return err;
  captures().begin(wire_stream(stream), graph, result.capture_info().id(), mode,
                   std::this_thread::get_id());
  return cudaSuccess;
}

cudaError_t end_capture(cudaStream_t stream, cudaGraph_t* out) {
  if (out == nullptr)
    return cudaErrorInvalidValue;
  if (auto err = known_stream(stream); err != cudaSuccess)
    return err;
  auto h = wire_stream(stream);
  auto c = captures().of_stream(h);
  if (c == nullptr)
    return cudaErrorIllegalState;
  // The server runs every capture on one thread; the wrong-thread rule is
  // the client's to apply.
  if (c->mode != cudaStreamCaptureModeRelaxed && c->owner != std::this_thread::get_id())
    return cudaErrorStreamCaptureWrongThread;
  // A joined stream that is not the origin: the server's driver answers
  // (cudaErrorStreamCaptureUnmatched) and says whether the capture goes on.
  bool client_invalidated = c->invalidated;
  proto::Op op;
  auto* e = op.mutable_stream_end_capture();
  e->set_stream(h);
  e->set_graph(c->graph);
  proto::OpResult result;
  auto err = run_op(std::move(op), &result);
  if (err == cudaErrorNoDevice || err == cudaErrorDevicesUnavailable)
    return err;
  if (result.capture_info().status() == CU_STREAM_CAPTURE_STATUS_NONE)
    captures().end(h);
  *out = nullptr;
  if (err != cudaSuccess)
    return err;
  if (client_invalidated) {
    // A call Gleam refused invalidated the capture: the server's graph lacks
    // that work, so it is dropped as CUDA drops an invalidated capture.
    proto::Op destroy;
    destroy.mutable_graph_destroy()->set_graph(c->graph);
    static_cast<void>(run_op(std::move(destroy)));
    return cudaErrorStreamCaptureInvalidated;
  }
  {
    auto& t = tables();
    std::lock_guard<std::mutex> guard{t.mutex};
    t.graphs.insert(c->graph);
  }
  *out = reinterpret_cast<cudaGraph_t>(static_cast<uintptr_t>(c->graph));
  return cudaSuccess;
}

cudaError_t capture_status(cudaStream_t stream, cudaStreamCaptureStatus* status,
                           unsigned long long* id) {
  if (status == nullptr)
    return cudaErrorInvalidValue;
  if (auto err = known_stream(stream); err != cudaSuccess)
    return err;
  auto h = wire_stream(stream);
  // Asking about the legacy stream while it depends on a capture is an
  // implicit dependency too, as in CUDA.
  if (legacy_capture_conflict(stream))
    return cudaErrorStreamCaptureImplicit;
  auto c = captures().of_stream(h);
  *status = captures().status(h);
  if (*status == cudaStreamCaptureStatusActive && captures().suspect()) {
    // A capture error came back since: ask the server whether this capture
    // survived it.
    proto::Op op;
    op.mutable_stream_capture_info()->set_stream(h);
    proto::OpResult result;
    if (auto err = run_op(std::move(op), &result); err != cudaSuccess)
      return err;
    if (result.capture_info().status() == CU_STREAM_CAPTURE_STATUS_INVALIDATED) {
      captures().invalidate(h);
      *status = cudaStreamCaptureStatusInvalidated;
    }
  }
  if (id != nullptr && c != nullptr)
    *id = c->id;
  return cudaSuccess;
}

cudaError_t instantiate(cudaGraphExec_t* out, cudaGraph_t graph, unsigned long long flags) {
  if (out == nullptr || !known_graph(graph))
    return cudaErrorInvalidValue;
  auto exec = next_handle();
  proto::Op op;
  auto* i = op.mutable_graph_instantiate();
  i->set_graph(handle_of(graph));
  i->set_exec(exec);
  i->set_flags(flags);
  if (auto err = run_op(std::move(op)); err != cudaSuccess)
    return err;
  {
    auto& t = tables();
    std::lock_guard<std::mutex> guard{t.mutex};
    t.execs.insert(exec);
  }
  *out = reinterpret_cast<cudaGraphExec_t>(static_cast<uintptr_t>(exec));
  return cudaSuccess;
}

cudaError_t graph_launch(cudaGraphExec_t exec, cudaStream_t stream, bool upload) {
  if (!known_exec(exec))
    return cudaErrorInvalidValue;
  if (auto err = known_stream(stream); err != cudaSuccess)
    return err;
  proto::Op op;
  if (upload) {
    op.mutable_graph_upload()->set_exec(handle_of(exec));
    op.mutable_graph_upload()->set_stream(wire_stream(stream));
  } else {
    op.mutable_graph_launch()->set_exec(handle_of(exec));
    op.mutable_graph_launch()->set_stream(wire_stream(stream));
  }
  return run_op(std::move(op));
}

/// Fills `out` from the app's kernel node parameters (packed by the
/// function's layout, as launches are).
cudaError_t pack_kernel_node(const cudaKernelNodeParams* p, proto::KernelNodeParams* out) {
  if (p == nullptr)
    return cudaErrorInvalidValue;
  if (p->extra != nullptr) {
    report_unsupported("cudaKernelNodeParams.extra",
                       "pass kernel arguments through kernelParams");
    return cudaErrorNotSupported;
  }
  if (auto err = connect(); err != cudaSuccess)
    return err;
  function_record* f = nullptr;
  if (auto err = resolve_function(p->func, &f); err != cudaSuccess)
    return err;
  out->set_module(f->module->handle);
  out->set_function(f->name);
  out->set_grid_x(p->gridDim.x);
  out->set_grid_y(p->gridDim.y);
  out->set_grid_z(p->gridDim.z);
  out->set_block_x(p->blockDim.x);
  out->set_block_y(p->blockDim.y);
  out->set_block_z(p->blockDim.z);
  out->set_shared_mem(p->sharedMemBytes);
  out->set_params(pack_arguments(f->params, p->kernelParams));
  return cudaSuccess;
}

/// The callback id for the app's host node parameters; 0 when they are
/// not usable (CUDA: cudaErrorInvalidValue).
uint64_t host_callback(const cudaHostNodeParams* p) {
  if (p == nullptr || p->fn == nullptr)
    return 0;
  return register_host_call(p->fn, p->userData);
}

/// Whether `n` is a host node the app built; its callback id in `*callback`.
bool known_host_node(cudaGraphNode_t n, uint64_t* callback = nullptr) {
  auto& t = tables();
  std::lock_guard<std::mutex> guard{t.mutex};
  auto i = t.host_nodes.find(handle_of(n));
  if (i == t.host_nodes.end())
    return false;
  if (callback != nullptr)
    *callback = i->second;
  return true;
}

} // namespace

extern "C" {

GLEAM_INTERPOSE_EXPORT cudaError_t cudaGraphCreate(cudaGraph_t* pGraph, unsigned int flags) {
  return guarded([&] {
    if (pGraph == nullptr || flags != 0)
      return cudaErrorInvalidValue;
    auto h = next_handle();
    proto::Op op;
    op.mutable_graph_create()->set_graph(h);
    op.mutable_graph_create()->set_flags(flags);
    if (auto err = run_op(std::move(op)); err != cudaSuccess)
      return err;
    auto& t = tables();
    std::lock_guard<std::mutex> guard{t.mutex};
    t.graphs.insert(h);
    t.explicit_graphs.insert(h);
    *pGraph = reinterpret_cast<cudaGraph_t>(static_cast<uintptr_t>(h));
    return cudaSuccess;
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaGraphAddKernelNode(cudaGraphNode_t* pGraphNode,
                                                          cudaGraph_t graph,
                                                          const cudaGraphNode_t* pDependencies,
                                                          size_t numDependencies,
                                                          const cudaKernelNodeParams* pNodeParams) {
  return guarded([&] {
    if (pGraphNode == nullptr)
      return cudaErrorInvalidValue;
    proto::Op op;
    auto* a = op.mutable_graph_add_kernel_node();
    uint64_t h = 0;
    if (auto err = new_node(a, graph, pDependencies, numDependencies, &h); err != cudaSuccess)
      return err;
    if (auto err = pack_kernel_node(pNodeParams, a->mutable_kernel()); err != cudaSuccess)
      return err;
    if (auto err = add_node(std::move(op), h, graph, cudaGraphNodeTypeKernel, pGraphNode);
        err != cudaSuccess)
      return err;
    remember_kernel_params(h, *pNodeParams);
    return cudaSuccess;
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaGraphAddMemsetNode(cudaGraphNode_t* pGraphNode,
                                                          cudaGraph_t graph,
                                                          const cudaGraphNode_t* pDependencies,
                                                          size_t numDependencies,
                                                          const cudaMemsetParams* pMemsetParams) {
  return guarded([&] {
    if (pGraphNode == nullptr || pMemsetParams == nullptr)
      return cudaErrorInvalidValue;
    proto::Op op;
    auto* a = op.mutable_graph_add_memset_node();
    uint64_t h = 0;
    if (auto err = new_node(a, graph, pDependencies, numDependencies, &h); err != cudaSuccess)
      return err;
    a->set_dst(reinterpret_cast<uintptr_t>(pMemsetParams->dst));
    a->set_value(pMemsetParams->value);
    a->set_element_size(pMemsetParams->elementSize);
    a->set_width(pMemsetParams->width);
    a->set_height(pMemsetParams->height);
    a->set_pitch(pMemsetParams->pitch);
    if (auto err = add_node(std::move(op), h, graph, cudaGraphNodeTypeMemset, pGraphNode);
        err != cudaSuccess)
      return err;
    remember_memset_params(h, *pMemsetParams);
    return cudaSuccess;
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaGraphAddEmptyNode(cudaGraphNode_t* pGraphNode,
                                                         cudaGraph_t graph,
                                                         const cudaGraphNode_t* pDependencies,
                                                         size_t numDependencies) {
  return guarded([&] {
    if (pGraphNode == nullptr)
      return cudaErrorInvalidValue;
    proto::Op op;
    auto* a = op.mutable_graph_add_empty_node();
    uint64_t h = 0;
    if (auto err = new_node(a, graph, pDependencies, numDependencies, &h); err != cudaSuccess)
      return err;
    return add_node(std::move(op), h, graph, cudaGraphNodeTypeEmpty, pGraphNode);
  });
}

// Host nodes: the function stays in this process, and the server's node
// asks for it at every replay (interpose/host_calls.hpp); the stream waits
// until it ran here, as a local host node holds its stream.
GLEAM_INTERPOSE_EXPORT cudaError_t cudaGraphAddHostNode(cudaGraphNode_t* pGraphNode,
                                                        cudaGraph_t graph,
                                                        const cudaGraphNode_t* pDependencies,
                                                        size_t numDependencies,
                                                        const cudaHostNodeParams* pNodeParams) {
  return guarded([&] {
    auto callback = host_callback(pNodeParams);
    if (pGraphNode == nullptr || callback == 0)
      return cudaErrorInvalidValue;
    proto::Op op;
    auto* a = op.mutable_graph_add_host_node();
    uint64_t h = 0;
    if (auto err = new_node(a, graph, pDependencies, numDependencies, &h); err != cudaSuccess)
      return err;
    a->set_callback(callback);
    if (auto err = add_node(std::move(op), h, graph, cudaGraphNodeTypeHost, pGraphNode);
        err != cudaSuccess)
      return err;
    auto& t = tables();
    std::lock_guard<std::mutex> guard{t.mutex};
    t.host_nodes[h] = callback;
    return cudaSuccess;
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaGraphHostNodeGetParams(cudaGraphNode_t node,
                                                              cudaHostNodeParams* pNodeParams) {
  return guarded([&] {
    uint64_t callback = 0;
    if (pNodeParams == nullptr || !known_host_node(node, &callback))
      return cudaErrorInvalidValue;
    if (!host_call_of(callback, &pNodeParams->fn, &pNodeParams->userData))
      return cudaErrorInvalidValue;
    return cudaSuccess;
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaGraphHostNodeSetParams(cudaGraphNode_t node,
                                                              const cudaHostNodeParams* pNodeParams) {
  return guarded([&] {
    auto callback = host_callback(pNodeParams);
    if (callback == 0 || !known_host_node(node))
      return cudaErrorInvalidValue;
    proto::Op op;
    auto* a = op.mutable_graph_host_node_set_params();
    a->set_node(handle_of(node));
    a->set_callback(callback);
    if (auto err = run_op(std::move(op)); err != cudaSuccess)
      return err;
    auto& t = tables();
    std::lock_guard<std::mutex> guard{t.mutex};
    t.host_nodes[handle_of(node)] = callback;
    return cudaSuccess;
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaGraphExecHostNodeSetParams(
  cudaGraphExec_t hGraphExec, cudaGraphNode_t node, const cudaHostNodeParams* pNodeParams) {
  return guarded([&] {
    auto callback = host_callback(pNodeParams);
    if (callback == 0 || !known_exec(hGraphExec) || !known_host_node(node))
      return cudaErrorInvalidValue;
    proto::Op op;
    auto* a = op.mutable_graph_exec_host_node_set_params();
    a->set_exec(handle_of(hGraphExec));
    a->set_node(handle_of(node));
    a->set_callback(callback);
    return run_op(std::move(op));
  });
}

// Graph memory: the server's allocation node picks the address, which comes
// back at once; it belongs to the graph until a free node (or cudaFree after
// a launch) frees it. Memory of this GPU only: peer access and other
// locations are not remoted.
GLEAM_INTERPOSE_EXPORT cudaError_t cudaGraphAddMemAllocNode(cudaGraphNode_t* pGraphNode,
                                                            cudaGraph_t graph,
                                                            const cudaGraphNode_t* pDependencies,
                                                            size_t numDependencies,
                                                            cudaMemAllocNodeParams* nodeParams) {
  return guarded([&] {
    if (pGraphNode == nullptr || nodeParams == nullptr || nodeParams->bytesize == 0)
      return cudaErrorInvalidValue;
    const auto& pool = nodeParams->poolProps;
    int device = reg().device;
    if (pool.allocType != cudaMemAllocationTypePinned
        || pool.location.type != cudaMemLocationTypeDevice || pool.location.id != device
        || pool.handleTypes != cudaMemHandleTypeNone
        || (nodeParams->accessDescCount != 0 && nodeParams->accessDescs == nullptr))
      return cudaErrorInvalidValue;
    for (size_t i = 0; i < nodeParams->accessDescCount; ++i) {
      const auto& d = nodeParams->accessDescs[i];
      if (d.location.type != cudaMemLocationTypeDevice || d.location.id != device
          || d.flags != cudaMemAccessFlagsProtReadWrite) {
        report_unsupported("cudaGraphAddMemAllocNode peer access",
                           "graph memory is remoted for its own GPU only; drop the "
                           "access descriptors of other devices");
        return cudaErrorNotSupported;
      }
    }
    proto::Op op;
    auto* a = op.mutable_graph_add_mem_alloc_node();
    uint64_t h = 0;
    if (auto err = new_node(a, graph, pDependencies, numDependencies, &h); err != cudaSuccess)
      return err;
    a->set_size(nodeParams->bytesize);
    auto deps = dependencies_of(op);
    proto::OpResult result;
    if (auto err = run_op(std::move(op), &result); err != cudaSuccess)
      return err;
    nodeParams->dptr = reinterpret_cast<void*>(static_cast<uintptr_t>(result.dptr()));
    {
      auto& r = reg();
      std::lock_guard<std::recursive_mutex> guard{r.mutex};
      r.allocations[result.dptr()] = nodeParams->bytesize;
    }
    auto& t = tables();
    std::lock_guard<std::mutex> guard{t.mutex};
    t.nodes[h] = {handle_of(graph), cudaGraphNodeTypeMemAlloc};
    t.add_edges(handle_of(graph), deps, h);
    auto& kept = t.mem_alloc_nodes[h];
    kept.params = *nodeParams;
    kept.access.assign(nodeParams->accessDescs,
                       nodeParams->accessDescs + nodeParams->accessDescCount);
    *pGraphNode = reinterpret_cast<cudaGraphNode_t>(static_cast<uintptr_t>(h));
    return cudaSuccess;
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaGraphAddMemFreeNode(cudaGraphNode_t* pGraphNode,
                                                           cudaGraph_t graph,
                                                           const cudaGraphNode_t* pDependencies,
                                                           size_t numDependencies, void* dptr) {
  return guarded([&] {
    auto addr = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(dptr));
    {
      auto& r = reg();
      std::lock_guard<std::recursive_mutex> guard{r.mutex};
      if (pGraphNode == nullptr || r.allocations.count(addr) == 0)
        return cudaErrorInvalidValue;
    }
    proto::Op op;
    auto* a = op.mutable_graph_add_mem_free_node();
    uint64_t h = 0;
    if (auto err = new_node(a, graph, pDependencies, numDependencies, &h); err != cudaSuccess)
      return err;
    a->set_dptr(addr);
    if (auto err = add_node(std::move(op), h, graph, cudaGraphNodeTypeMemFree, pGraphNode);
        err != cudaSuccess)
      return err;
    {
      auto& r = reg();
      std::lock_guard<std::recursive_mutex> guard{r.mutex};
      r.allocations.erase(addr);
    }
    auto& t = tables();
    std::lock_guard<std::mutex> guard{t.mutex};
    t.mem_free_nodes[h] = dptr;
    return cudaSuccess;
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaGraphMemAllocNodeGetParams(
  cudaGraphNode_t node, cudaMemAllocNodeParams* params_out) {
  return guarded([&] {
    auto& t = tables();
    std::lock_guard<std::mutex> guard{t.mutex};
    auto i = t.mem_alloc_nodes.find(handle_of(node));
    if (params_out == nullptr || i == t.mem_alloc_nodes.end())
      return cudaErrorInvalidValue;
    *params_out = i->second.params;
    params_out->accessDescs = i->second.access.empty() ? nullptr : i->second.access.data();
    return cudaSuccess;
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaGraphMemFreeNodeGetParams(cudaGraphNode_t node,
                                                                 void* dptr_out) {
  return guarded([&] {
    auto& t = tables();
    std::lock_guard<std::mutex> guard{t.mutex};
    auto i = t.mem_free_nodes.find(handle_of(node));
    if (dptr_out == nullptr || i == t.mem_free_nodes.end())
      return cudaErrorInvalidValue;
    *static_cast<void**>(dptr_out) = i->second;
    return cudaSuccess;
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaDeviceGraphMemTrim(int device) {
  return guarded([&] {
    if (auto err = connect(); err != cudaSuccess)
      return err;
    if (device < 0 || device >= session().devices_size())
      return cudaErrorInvalidDevice;
    proto::Op op;
    op.mutable_graph_mem_trim();
    return run_op(std::move(op));
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaGraphAddDependencies(cudaGraph_t graph,
                                                            const cudaGraphNode_t* from,
                                                            const cudaGraphNode_t* to,
                                                            const cudaGraphEdgeData* edgeData,
                                                            size_t numDependencies) {
  return guarded([&] {
    if (!known_graph(graph) || (numDependencies != 0 && (from == nullptr || to == nullptr)))
      return cudaErrorInvalidValue;
    if (edgeData != nullptr) {
      report_unsupported("cudaGraphAddDependencies edge data",
                         "only default edges are remoted; pass edgeData = NULL");
      return cudaErrorNotSupported;
    }
    proto::Op op;
    auto* a = op.mutable_graph_add_dependencies();
    a->set_graph(handle_of(graph));
    for (size_t i = 0; i < numDependencies; ++i) {
      if (!known_node(from[i]) || !known_node(to[i]))
        return cudaErrorInvalidValue;
      a->add_from(handle_of(from[i]));
      a->add_to(handle_of(to[i]));
    }
    if (auto err = run_op(std::move(op)); err != cudaSuccess)
      return err;
    auto& t = tables();
    std::lock_guard<std::mutex> guard{t.mutex};
    for (size_t i = 0; i < numDependencies; ++i)
      t.edges[handle_of(graph)].emplace_back(handle_of(from[i]), handle_of(to[i]));
    return cudaSuccess;
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaGraphKernelNodeSetParams(cudaGraphNode_t node,
                                                                const cudaKernelNodeParams* pNodeParams) {
  return guarded([&] {
    if (!known_node(node))
      return cudaErrorInvalidValue;
    proto::Op op;
    auto* a = op.mutable_graph_kernel_node_set_params();
    a->set_node(handle_of(node));
    if (auto err = pack_kernel_node(pNodeParams, a->mutable_kernel()); err != cudaSuccess)
      return err;
    if (auto err = run_op(std::move(op)); err != cudaSuccess)
      return err;
    remember_kernel_params(handle_of(node), *pNodeParams);
    return cudaSuccess;
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaGraphExecKernelNodeSetParams(
  cudaGraphExec_t hGraphExec, cudaGraphNode_t node, const cudaKernelNodeParams* pNodeParams) {
  return guarded([&] {
    if (!known_exec(hGraphExec) || !known_node(node))
      return cudaErrorInvalidValue;
    proto::Op op;
    auto* a = op.mutable_graph_exec_kernel_node_set_params();
    a->set_exec(handle_of(hGraphExec));
    a->set_node(handle_of(node));
    if (auto err = pack_kernel_node(pNodeParams, a->mutable_kernel()); err != cudaSuccess)
      return err;
    return run_op(std::move(op));
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaStreamBeginCapture(cudaStream_t stream,
                                                          enum cudaStreamCaptureMode mode) {
  return guarded([&] { return begin_capture(stream, mode); });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaStreamBeginCapture_ptsz(cudaStream_t stream,
                                                               enum cudaStreamCaptureMode mode) {
  return guarded([&] { return begin_capture(per_thread(stream), mode); });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t* pGraph) {
  return guarded([&] { return end_capture(stream, pGraph); });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaStreamEndCapture_ptsz(cudaStream_t stream,
                                                             cudaGraph_t* pGraph) {
  return guarded([&] { return end_capture(per_thread(stream), pGraph); });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaStreamIsCapturing(cudaStream_t stream,
                                                         enum cudaStreamCaptureStatus* pCaptureStatus) {
  return guarded([&] { return capture_status(stream, pCaptureStatus, nullptr); });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaStreamIsCapturing_ptsz(
  cudaStream_t stream, enum cudaStreamCaptureStatus* pCaptureStatus) {
  return guarded([&] { return capture_status(per_thread(stream), pCaptureStatus, nullptr); });
}

// Status, id and graph come from the client's mirror. The dependency set of
// an ongoing capture lives on the server and is not remoted: asking for it
// during a capture fails with cudaErrorNotSupported.
GLEAM_INTERPOSE_EXPORT cudaError_t cudaStreamGetCaptureInfo(
  cudaStream_t stream, enum cudaStreamCaptureStatus* captureStatus_out,
  unsigned long long* id_out, cudaGraph_t* graph_out,
  const cudaGraphNode_t** dependencies_out, const cudaGraphEdgeData** edgeData_out,
  size_t* numDependencies_out) {
  return guarded([&] {
    if (auto err = capture_status(stream, captureStatus_out, id_out); err != cudaSuccess)
      return err;
    bool capturing = *captureStatus_out != cudaStreamCaptureStatusNone;
    if (capturing && (dependencies_out != nullptr || edgeData_out != nullptr
                      || numDependencies_out != nullptr)) {
      report_unsupported("cudaStreamGetCaptureInfo dependencies",
                         "the dependency set of a capture stays on the server; "
                         "ask only for status, id and graph");
      return cudaErrorNotSupported;
    }
    if (graph_out != nullptr) {
      auto c = captures().of_stream(wire_stream(stream));
      *graph_out = c == nullptr ? nullptr
                                : reinterpret_cast<cudaGraph_t>(static_cast<uintptr_t>(c->graph));
    }
    if (dependencies_out != nullptr)
      *dependencies_out = nullptr;
    if (edgeData_out != nullptr)
      *edgeData_out = nullptr;
    if (numDependencies_out != nullptr)
      *numDependencies_out = 0;
    return cudaSuccess;
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaStreamGetCaptureInfo_ptsz(
  cudaStream_t stream, enum cudaStreamCaptureStatus* captureStatus_out,
  unsigned long long* id_out, cudaGraph_t* graph_out,
  const cudaGraphNode_t** dependencies_out, const cudaGraphEdgeData** edgeData_out,
  size_t* numDependencies_out) {
  return cudaStreamGetCaptureInfo(per_thread(stream), captureStatus_out, id_out, graph_out,
                                  dependencies_out, edgeData_out, numDependencies_out);
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaThreadExchangeStreamCaptureMode(
  enum cudaStreamCaptureMode* mode) {
  return guarded([&] {
    if (mode == nullptr)
      return cudaErrorInvalidValue;
    if (*mode != cudaStreamCaptureModeGlobal && *mode != cudaStreamCaptureModeThreadLocal
        && *mode != cudaStreamCaptureModeRelaxed)
      return cudaErrorInvalidValue;
    std::swap(thread_capture_mode(), *mode);
    return cudaSuccess;
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaGraphInstantiate(cudaGraphExec_t* pGraphExec,
                                                        cudaGraph_t graph,
                                                        unsigned long long flags) {
  return guarded([&] { return instantiate(pGraphExec, graph, flags); });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t* pGraphExec,
                                                                 cudaGraph_t graph,
                                                                 unsigned long long flags) {
  return guarded([&] { return instantiate(pGraphExec, graph, flags); });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaGraphLaunch(cudaGraphExec_t graphExec,
                                                   cudaStream_t stream) {
  return guarded([&] { return graph_launch(graphExec, stream, false); });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaGraphLaunch_ptsz(cudaGraphExec_t graphExec,
                                                        cudaStream_t stream) {
  return guarded([&] { return graph_launch(graphExec, per_thread(stream), false); });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaGraphUpload(cudaGraphExec_t graphExec,
                                                   cudaStream_t stream) {
  return guarded([&] { return graph_launch(graphExec, stream, true); });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaGraphUpload_ptsz(cudaGraphExec_t graphExec,
                                                        cudaStream_t stream) {
  return guarded([&] { return graph_launch(graphExec, per_thread(stream), true); });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaGraphExecUpdate(cudaGraphExec_t hGraphExec,
                                                       cudaGraph_t hGraph,
                                                       cudaGraphExecUpdateResultInfo* resultInfo) {
  return guarded([&] {
    if (!known_exec(hGraphExec) || !known_graph(hGraph))
      return cudaErrorInvalidValue;
    proto::Op op;
    op.mutable_graph_exec_update()->set_exec(handle_of(hGraphExec));
    op.mutable_graph_exec_update()->set_graph(handle_of(hGraph));
    proto::OpResult result;
    auto err = run_op(std::move(op), &result);
    if (resultInfo != nullptr) {
      // Node handles of the server's graph are not remoted: errorNode and
      // errorFromNode stay null.
      *resultInfo = cudaGraphExecUpdateResultInfo{};
      // cudaGraphExecUpdateResult values equal the CUgraphExecUpdateResult ones.
      resultInfo->result = static_cast<cudaGraphExecUpdateResult>(result.graph_update().result());
    }
    return err;
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaGraphExecDestroy(cudaGraphExec_t graphExec) {
  return guarded([&] {
    if (!known_exec(graphExec))
      return cudaErrorInvalidValue;
    proto::Op op;
    op.mutable_graph_exec_destroy()->set_exec(handle_of(graphExec));
    auto err = run_op(std::move(op));
    auto& t = tables();
    std::lock_guard<std::mutex> guard{t.mutex};
    t.execs.erase(handle_of(graphExec));
    return err;
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaGraphDestroy(cudaGraph_t graph) {
  return guarded([&] {
    if (!known_graph(graph))
      return cudaErrorInvalidValue;
    proto::Op op;
    op.mutable_graph_destroy()->set_graph(handle_of(graph));
    auto err = run_op(std::move(op));
    auto& t = tables();
    std::lock_guard<std::mutex> guard{t.mutex};
    t.forget_graph(handle_of(graph));
    return err;
  });
}

} // extern "C"
