// Memcpy nodes of the explicit graph API and memset node parameters. A
// node copying between device addresses is the server driver's memcpy node;
// one with a host end in this process carries the bytes at every replay
// (interpose/host_copies.hpp, executor/graph_copies.hpp). Managed memory
// and mapped memory of cudaHostAlloc count as device memory.
#define __CUDA_API_VERSION_INTERNAL
#include "interpose/export.hpp"

#include <mutex>

#include "interpose/cudart/graph_tables.hpp"
#include "interpose/host_copies.hpp"
#include "interpose/runtime.hpp"

using namespace gleam::interpose;
namespace proto = gleam::proto;

namespace {

/// The address of `pos` in linear memory `ptr` (x in bytes).
char* at(const cudaPitchedPtr& ptr, const cudaPos& pos) {
  return static_cast<char*>(ptr.ptr) + pos.z * ptr.pitch * ptr.ysize + pos.y * ptr.pitch + pos.x;
}

/// The wire parameters of the app's copy; the kind resolved, the host end
/// registered.
cudaError_t describe(const cudaMemcpy3DParms* p, proto::MemcpyNodeParams* out) {
  if (p == nullptr)
    return cudaErrorInvalidValue;
  if (p->srcArray != nullptr || p->dstArray != nullptr) {
    report_unsupported("memcpy nodes of CUDA arrays",
                       "CUDA arrays are not remoted; copy between linear memory");
    return cudaErrorNotSupported;
  }
  const auto& e = p->extent;
  if (e.width == 0 || e.height == 0 || e.depth == 0 || p->srcPtr.ptr == nullptr
      || p->dstPtr.ptr == nullptr)
    return cudaErrorInvalidValue;
  if (e.width > p->srcPtr.pitch || e.width > p->dstPtr.pitch)
    return cudaErrorInvalidPitchValue;
  if (e.depth > 1 && (p->srcPtr.ysize < e.height || p->dstPtr.ysize < e.height))
    return cudaErrorInvalidValue;
  auto* dst = at(p->dstPtr, p->dstPos);
  auto* src = at(p->srcPtr, p->srcPos);
  auto kind = effective_kind(dst, src, p->kind);
  if (kind == cudaMemcpyHostToHost) {
    report_unsupported("memcpy nodes between host buffers",
                       "the graph runs on the server, away from this host memory; copy "
                       "on the host before or after the launch");
    return cudaErrorNotSupported;
  }
  if (kind != cudaMemcpyHostToDevice && kind != cudaMemcpyDeviceToHost
      && kind != cudaMemcpyDeviceToDevice)
    return cudaErrorInvalidMemcpyDirection;
  describe_copy({dst, p->dstPtr.pitch, p->dstPtr.ysize}, {src, p->srcPtr.pitch, p->srcPtr.ysize},
                e.width, e.height, e.depth, kind, out);
  return cudaSuccess;
}

/// The 3D description of a 1D copy, as CUDA reports it for such a node.
cudaMemcpy3DParms one_d(void* dst, const void* src, size_t count, cudaMemcpyKind kind) {
  cudaMemcpy3DParms p{};
  p.dstPtr = make_cudaPitchedPtr(dst, count, count, 1);
  p.srcPtr = make_cudaPitchedPtr(const_cast<void*>(src), count, count, 1);
  p.extent = make_cudaExtent(count, 1, 1);
  p.kind = kind;
  return p;
}

/// Runs `then` with the 1D description of a copy between host or device
/// memory `ptr` and a variable, to it (`to_symbol`) or from it.
template <class F>
cudaError_t with_symbol(void* ptr, const void* symbol, size_t count, size_t offset,
                        cudaMemcpyKind kind, bool to_symbol, F&& then) {
  void* device = nullptr;
  if (auto err = symbol_end(symbol, offset, count, kind, to_symbol, &device);
      err != cudaSuccess)
    return err;
  auto p = to_symbol ? one_d(device, ptr, count, kind) : one_d(ptr, device, count, kind);
  return then(&p);
}

bool memcpy_node(cudaGraphNode_t node) {
  auto& t = tables();
  std::lock_guard<std::mutex> guard{t.mutex};
  return t.memcpy_nodes.count(handle_of(node)) != 0;
}

bool memset_node(cudaGraphNode_t node) {
  auto& t = tables();
  std::lock_guard<std::mutex> guard{t.mutex};
  return t.memset_nodes.count(handle_of(node)) != 0;
}

cudaError_t add_memcpy(cudaGraphNode_t* out, cudaGraph_t graph, const cudaGraphNode_t* deps,
                       size_t n, const cudaMemcpy3DParms* p) {
  if (out == nullptr)
    return cudaErrorInvalidValue;
  proto::Op op;
  auto* a = op.mutable_graph_add_memcpy_node();
  uint64_t h = 0;
  if (auto err = new_node(a, graph, deps, n, &h); err != cudaSuccess)
    return err;
  if (auto err = describe(p, a->mutable_copy()); err != cudaSuccess)
    return err;
  if (auto err = add_node(std::move(op), h, graph, cudaGraphNodeTypeMemcpy, out);
      err != cudaSuccess)
    return err;
  auto& t = tables();
  std::lock_guard<std::mutex> guard{t.mutex};
  t.memcpy_nodes[h] = *p;
  return cudaSuccess;
}

cudaError_t set_memcpy(cudaGraphNode_t node, const cudaMemcpy3DParms* p) {
  if (!memcpy_node(node))
    return cudaErrorInvalidValue;
  proto::Op op;
  auto* s = op.mutable_graph_memcpy_node_set_params();
  s->set_node(handle_of(node));
  if (auto err = describe(p, s->mutable_copy()); err != cudaSuccess)
    return err;
  if (auto err = run_op(std::move(op)); err != cudaSuccess)
    return err;
  auto& t = tables();
  std::lock_guard<std::mutex> guard{t.mutex};
  t.memcpy_nodes[handle_of(node)] = *p;
  return cudaSuccess;
}

cudaError_t exec_set_memcpy(cudaGraphExec_t exec, cudaGraphNode_t node,
                            const cudaMemcpy3DParms* p) {
  if (!known_exec(exec) || p == nullptr)
    return cudaErrorInvalidValue;
  cudaMemcpy3DParms before{};
  {
    auto& t = tables();
    std::lock_guard<std::mutex> guard{t.mutex};
    auto i = t.memcpy_nodes.find(handle_of(node));
    if (i == t.memcpy_nodes.end())
      return cudaErrorInvalidValue;
    before = i->second;
  }
  // CUDA refuses an update that changes the node's memcpy kind, explicit
  // or cudaMemcpyDefault, whatever the pointers (measured on CUDA 13).
  if (p->kind != before.kind)
    return cudaErrorInvalidValue;
  // Where an end moves between this host and the device, the server's
  // node changes shape (a copy with a host end is a child graph there),
  // which an executable graph cannot take.
  if (effective_kind(at(p->dstPtr, p->dstPos), at(p->srcPtr, p->srcPos), p->kind)
      != effective_kind(at(before.dstPtr, before.dstPos), at(before.srcPtr, before.srcPos),
                        before.kind)) {
    report_unsupported("cudaGraphExecMemcpyNodeSetParams moving an end between host and device",
                       "instantiate the graph again after cudaGraphMemcpyNodeSetParams");
    return cudaErrorNotSupported;
  }
  proto::Op op;
  auto* s = op.mutable_graph_exec_memcpy_node_set_params();
  s->set_exec(handle_of(exec));
  s->set_node(handle_of(node));
  if (auto err = describe(p, s->mutable_copy()); err != cudaSuccess)
    return err;
  return run_op(std::move(op));
}

/// The wire parameters of a memset node; cudaErrorInvalidValue as CUDA
/// checks them.
cudaError_t describe(const cudaMemsetParams* p, proto::MemsetNodeParams* out) {
  if (p == nullptr || p->dst == nullptr || p->width == 0
      || (p->elementSize != 1 && p->elementSize != 2 && p->elementSize != 4)
      || (p->height > 1 && p->width * p->elementSize > p->pitch))
    return cudaErrorInvalidValue;
  out->set_dst(reinterpret_cast<uintptr_t>(p->dst));
  out->set_value(p->value);
  out->set_element_size(p->elementSize);
  out->set_width(p->width);
  out->set_height(p->height);
  out->set_pitch(p->pitch);
  return cudaSuccess;
}

} // namespace

namespace gleam::interpose {

void remember_memset_params(uint64_t node, const cudaMemsetParams& p) {
  auto& t = tables();
  std::lock_guard<std::mutex> guard{t.mutex};
  t.memset_nodes[node] = p;
}

} // namespace gleam::interpose

extern "C" {

GLEAM_INTERPOSE_EXPORT cudaError_t cudaGraphAddMemcpyNode(cudaGraphNode_t* pGraphNode,
                                                          cudaGraph_t graph,
                                                          const cudaGraphNode_t* pDependencies,
                                                          size_t numDependencies,
                                                          const cudaMemcpy3DParms* pCopyParams) {
  return guarded([&] {
    return add_memcpy(pGraphNode, graph, pDependencies, numDependencies, pCopyParams);
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaGraphAddMemcpyNode1D(cudaGraphNode_t* pGraphNode,
                                                            cudaGraph_t graph,
                                                            const cudaGraphNode_t* pDependencies,
                                                            size_t numDependencies, void* dst,
                                                            const void* src, size_t count,
                                                            enum cudaMemcpyKind kind) {
  return guarded([&] {
    auto p = one_d(dst, src, count, kind);
    return add_memcpy(pGraphNode, graph, pDependencies, numDependencies, &p);
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaGraphAddMemcpyNodeToSymbol(
  cudaGraphNode_t* pGraphNode, cudaGraph_t graph, const cudaGraphNode_t* pDependencies,
  size_t numDependencies, const void* symbol, const void* src, size_t count, size_t offset,
  enum cudaMemcpyKind kind) {
  return guarded([&] {
    return with_symbol(const_cast<void*>(src), symbol, count, offset, kind, true, [&](auto* p) {
      return add_memcpy(pGraphNode, graph, pDependencies, numDependencies, p);
    });
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaGraphAddMemcpyNodeFromSymbol(
  cudaGraphNode_t* pGraphNode, cudaGraph_t graph, const cudaGraphNode_t* pDependencies,
  size_t numDependencies, void* dst, const void* symbol, size_t count, size_t offset,
  enum cudaMemcpyKind kind) {
  return guarded([&] {
    return with_symbol(dst, symbol, count, offset, kind, false, [&](auto* p) {
      return add_memcpy(pGraphNode, graph, pDependencies, numDependencies, p);
    });
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaGraphMemcpyNodeSetParamsToSymbol(
  cudaGraphNode_t node, const void* symbol, const void* src, size_t count, size_t offset,
  enum cudaMemcpyKind kind) {
  return guarded([&] {
    return with_symbol(const_cast<void*>(src), symbol, count, offset, kind, true,
                       [&](auto* p) { return set_memcpy(node, p); });
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaGraphMemcpyNodeSetParamsFromSymbol(
  cudaGraphNode_t node, void* dst, const void* symbol, size_t count, size_t offset,
  enum cudaMemcpyKind kind) {
  return guarded([&] {
    return with_symbol(dst, symbol, count, offset, kind, false,
                       [&](auto* p) { return set_memcpy(node, p); });
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaGraphExecMemcpyNodeSetParamsToSymbol(
  cudaGraphExec_t hGraphExec, cudaGraphNode_t node, const void* symbol, const void* src,
  size_t count, size_t offset, enum cudaMemcpyKind kind) {
  return guarded([&] {
    return with_symbol(const_cast<void*>(src), symbol, count, offset, kind, true,
                       [&](auto* p) { return exec_set_memcpy(hGraphExec, node, p); });
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaGraphExecMemcpyNodeSetParamsFromSymbol(
  cudaGraphExec_t hGraphExec, cudaGraphNode_t node, void* dst, const void* symbol,
  size_t count, size_t offset, enum cudaMemcpyKind kind) {
  return guarded([&] {
    return with_symbol(dst, symbol, count, offset, kind, false,
                       [&](auto* p) { return exec_set_memcpy(hGraphExec, node, p); });
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaGraphMemcpyNodeGetParams(cudaGraphNode_t node,
                                                                cudaMemcpy3DParms* pNodeParams) {
  return guarded([&] {
    auto& t = tables();
    std::lock_guard<std::mutex> guard{t.mutex};
    auto i = t.memcpy_nodes.find(handle_of(node));
    if (pNodeParams == nullptr || i == t.memcpy_nodes.end())
      return cudaErrorInvalidValue;
    *pNodeParams = i->second;
    return cudaSuccess;
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaGraphMemcpyNodeSetParams(
  cudaGraphNode_t node, const cudaMemcpy3DParms* pNodeParams) {
  return guarded([&] { return set_memcpy(node, pNodeParams); });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaGraphMemcpyNodeSetParams1D(cudaGraphNode_t node,
                                                                  void* dst, const void* src,
                                                                  size_t count,
                                                                  enum cudaMemcpyKind kind) {
  return guarded([&] {
    auto p = one_d(dst, src, count, kind);
    return set_memcpy(node, &p);
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaGraphExecMemcpyNodeSetParams(
  cudaGraphExec_t hGraphExec, cudaGraphNode_t node, const cudaMemcpy3DParms* pNodeParams) {
  return guarded([&] { return exec_set_memcpy(hGraphExec, node, pNodeParams); });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaGraphExecMemcpyNodeSetParams1D(
  cudaGraphExec_t hGraphExec, cudaGraphNode_t node, void* dst, const void* src, size_t count,
  enum cudaMemcpyKind kind) {
  return guarded([&] {
    auto p = one_d(dst, src, count, kind);
    return exec_set_memcpy(hGraphExec, node, &p);
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaGraphMemsetNodeGetParams(cudaGraphNode_t node,
                                                                cudaMemsetParams* pNodeParams) {
  return guarded([&] {
    auto& t = tables();
    std::lock_guard<std::mutex> guard{t.mutex};
    auto i = t.memset_nodes.find(handle_of(node));
    if (pNodeParams == nullptr || i == t.memset_nodes.end())
      return cudaErrorInvalidValue;
    *pNodeParams = i->second;
    return cudaSuccess;
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaGraphMemsetNodeSetParams(
  cudaGraphNode_t node, const cudaMemsetParams* pNodeParams) {
  return guarded([&] {
    if (!memset_node(node))
      return cudaErrorInvalidValue;
    proto::Op op;
    auto* s = op.mutable_graph_memset_node_set_params();
    s->set_node(handle_of(node));
    if (auto err = describe(pNodeParams, s->mutable_memset()); err != cudaSuccess)
      return err;
    if (auto err = run_op(std::move(op)); err != cudaSuccess)
      return err;
    remember_memset_params(handle_of(node), *pNodeParams);
    return cudaSuccess;
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaGraphExecMemsetNodeSetParams(
  cudaGraphExec_t hGraphExec, cudaGraphNode_t node, const cudaMemsetParams* pNodeParams) {
  return guarded([&] {
    if (!known_exec(hGraphExec) || !memset_node(node))
      return cudaErrorInvalidValue;
    proto::Op op;
    auto* s = op.mutable_graph_exec_memset_node_set_params();
    s->set_exec(handle_of(hGraphExec));
    s->set_node(handle_of(node));
    if (auto err = describe(pNodeParams, s->mutable_memset()); err != cudaSuccess)
      return err;
    return run_op(std::move(op));
  });
}

} // extern "C"
