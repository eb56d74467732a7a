// Queries of graphs built with the explicit API, answered from the client's
// record of them (interpose/cudart/graph_tables.hpp): nodes, root nodes,
// edges, a node's dependencies and dependents, kernel node parameters and
// node types; and cudaGraphClone, whose copy the server makes (GraphClone)
// while the client copies its record. Captured graphs are known here only
// by handle: their queries return cudaErrorNotSupported.
#define __CUDA_API_VERSION_INTERNAL
#include "interpose/export.hpp"

#include <algorithm>

#include "interpose/cudart/graph_tables.hpp"
#include "interpose/runtime.hpp"

using namespace gleam::interpose;
namespace proto = gleam::proto;

namespace gleam::interpose {

void graph_tables::forget_graph(uint64_t graph) {
  graphs.erase(graph);
  explicit_graphs.erase(graph);
  edges.erase(graph);
  for (auto i = nodes.begin(); i != nodes.end();) {
    if (i->second.first != graph) {
      ++i;
      continue;
    }
    host_nodes.erase(i->first);
    mem_alloc_nodes.erase(i->first);
    memcpy_nodes.erase(i->first);
    memset_nodes.erase(i->first);
    mem_free_nodes.erase(i->first);
    kernel_nodes.erase(i->first);
    i = nodes.erase(i);
  }
  for (auto i = clones.begin(); i != clones.end();)
    i = i->first.first == graph ? clones.erase(i) : std::next(i);
}

std::vector<uint64_t> dependencies_of(const proto::Op& op) {
  const google::protobuf::RepeatedField<uint64_t>* deps = nullptr;
  switch (op.kind_case()) {
    case proto::Op::kGraphAddKernelNode:
      deps = &op.graph_add_kernel_node().dependencies();
      break;
    case proto::Op::kGraphAddMemsetNode:
      deps = &op.graph_add_memset_node().dependencies();
      break;
    case proto::Op::kGraphAddEmptyNode:
      deps = &op.graph_add_empty_node().dependencies();
      break;
    case proto::Op::kGraphAddHostNode:
      deps = &op.graph_add_host_node().dependencies();
      break;
    case proto::Op::kGraphAddMemAllocNode:
      deps = &op.graph_add_mem_alloc_node().dependencies();
      break;
    case proto::Op::kGraphAddMemFreeNode:
      deps = &op.graph_add_mem_free_node().dependencies();
      break;
    case proto::Op::kGraphAddMemcpyNode:
      deps = &op.graph_add_memcpy_node().dependencies();
      break;
    default:
      return {};
  }
  return {deps->begin(), deps->end()};
}

void remember_kernel_params(uint64_t node, const cudaKernelNodeParams& p) {
  function_record* f = nullptr;
  if (resolve_function(p.func, &f) != cudaSuccess)
    return;
  auto arguments = pack_arguments(f->params, p.kernelParams);
  auto& t = tables();
  std::lock_guard<std::mutex> guard{t.mutex};
  auto& kept = t.kernel_nodes[node];
  kept.params = p;
  kept.params.extra = nullptr;
  kept.arguments = std::move(arguments);
  // Pointers into the node's own copy, made once it is in place.
  kept.pointers.clear();
  for (const auto& slot : f->params)
    kept.pointers.push_back(kept.arguments.data() + slot.offset());
  kept.params.kernelParams = kept.pointers.empty() ? nullptr : kept.pointers.data();
}

} // namespace gleam::interpose

namespace {

cudaGraphNode_t as_node(uint64_t h) {
  return reinterpret_cast<cudaGraphNode_t>(static_cast<uintptr_t>(h));
}

/// Whether `graph` is known; cudaErrorNotSupported (reported once) for a
/// captured graph, whose nodes the client does not know.
cudaError_t queryable(const graph_tables& t, uint64_t graph, const char* fn) {
  if (t.graphs.count(graph) == 0)
    return cudaErrorInvalidValue;
  if (t.explicit_graphs.count(graph) == 0) {
    report_unsupported(fn, "graphs made by stream capture are built on the server and their "
                           "nodes are not known to the client; query graphs built with "
                           "cudaGraphCreate and the cudaGraphAdd*Node calls");
    return cudaErrorNotSupported;
  }
  return cudaSuccess;
}

/// CUDA's array-out convention: `out` null: `*count` = how many there are;
/// else fill up to `*count` entries, NULL-pad the rest and say how many
/// were written when fewer exist than asked for.
template <class Fill>
void fill_out(size_t total, size_t* count, bool has_out, const Fill& fill) {
  if (!has_out) {
    *count = total;
    return;
  }
  size_t n = std::min(total, *count);
  for (size_t i = 0; i < *count; ++i)
    fill(i, i < n);
  if (*count > total)
    *count = total;
}

/// The dependencies (`incoming`) or dependents of `node`, in edge order.
cudaError_t neighbours(cudaGraphNode_t node, cudaGraphNode_t* out, cudaGraphEdgeData* data,
                       size_t* count, bool incoming, const char* fn) {
  if (count == nullptr)
    return cudaErrorInvalidValue;
  auto& t = tables();
  std::lock_guard<std::mutex> guard{t.mutex};
  auto n = t.nodes.find(handle_of(node));
  if (n == t.nodes.end())
    return cudaErrorInvalidValue;
  if (auto err = queryable(t, n->second.first, fn); err != cudaSuccess)
    return err;
  std::vector<uint64_t> found;
  for (const auto& [from, to] : t.edges[n->second.first]) {
    if (incoming && to == n->first)
      found.push_back(from);
    if (!incoming && from == n->first)
      found.push_back(to);
  }
  fill_out(found.size(), count, out != nullptr, [&](size_t i, bool present) {
    out[i] = present ? as_node(found[i]) : nullptr;
    if (data != nullptr)
      data[i] = cudaGraphEdgeData{};
  });
  return cudaSuccess;
}

cudaError_t clone(cudaGraph_t* out, cudaGraph_t original) {
  if (out == nullptr)
    return cudaErrorInvalidValue;
  auto copy = next_handle();
  proto::Op op;
  auto* c = op.mutable_graph_clone();
  c->set_graph(copy);
  c->set_original(handle_of(original));
  std::map<uint64_t, uint64_t> copies;
  {
    auto& t = tables();
    std::lock_guard<std::mutex> guard{t.mutex};
    if (t.graphs.count(handle_of(original)) == 0)
      return cudaErrorInvalidValue;
    for (const auto& [node, where] : t.nodes)
      if (where.first == handle_of(original)) {
        copies[node] = next_handle();
        c->add_original_nodes(node);
        c->add_nodes(copies[node]);
      }
  }
  if (auto err = run_op(std::move(op)); err != cudaSuccess)
    return err;
  auto& t = tables();
  std::lock_guard<std::mutex> guard{t.mutex};
  auto from = handle_of(original);
  t.graphs.insert(copy);
  if (t.explicit_graphs.count(from) != 0)
    t.explicit_graphs.insert(copy);
  for (const auto& [node, twin] : copies) {
    t.nodes[twin] = {copy, t.nodes[node].second};
    t.clones[{copy, node}] = twin;
    if (auto h = t.host_nodes.find(node); h != t.host_nodes.end())
      t.host_nodes[twin] = h->second;
    if (auto m = t.mem_alloc_nodes.find(node); m != t.mem_alloc_nodes.end())
      t.mem_alloc_nodes[twin] = m->second;
    if (auto c = t.memcpy_nodes.find(node); c != t.memcpy_nodes.end())
      t.memcpy_nodes[twin] = c->second;
    if (auto m = t.memset_nodes.find(node); m != t.memset_nodes.end())
      t.memset_nodes[twin] = m->second;
    if (auto m = t.mem_free_nodes.find(node); m != t.mem_free_nodes.end())
      t.mem_free_nodes[twin] = m->second;
    if (auto k = t.kernel_nodes.find(node); k != t.kernel_nodes.end()) {
      auto& kept = t.kernel_nodes[twin];
      kept = k->second;
      for (size_t i = 0; i < kept.pointers.size(); ++i)
        kept.pointers[i] = kept.arguments.data()
                           + (static_cast<char*>(k->second.pointers[i])
                              - k->second.arguments.data());
      kept.params.kernelParams = kept.pointers.empty() ? nullptr : kept.pointers.data();
    }
  }
  auto edges = t.edges[from];
  for (const auto& [a, b] : edges)
    t.edges[copy].emplace_back(copies[a], copies[b]);
  *out = reinterpret_cast<cudaGraph_t>(static_cast<uintptr_t>(copy));
  return cudaSuccess;
}

} // namespace

extern "C" {

GLEAM_INTERPOSE_EXPORT cudaError_t cudaGraphNodeGetType(cudaGraphNode_t node,
                                                        enum cudaGraphNodeType* pType) {
  return guarded([&] {
    if (pType == nullptr)
      return cudaErrorInvalidValue;
    auto& t = tables();
    std::lock_guard<std::mutex> guard{t.mutex};
    auto i = t.nodes.find(handle_of(node));
    if (i == t.nodes.end())
      return cudaErrorInvalidValue;
    *pType = i->second.second;
    return cudaSuccess;
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaGraphGetNodes(cudaGraph_t graph, cudaGraphNode_t* nodes,
                                                     size_t* numNodes) {
  return guarded([&] {
    if (numNodes == nullptr)
      return cudaErrorInvalidValue;
    auto& t = tables();
    std::lock_guard<std::mutex> guard{t.mutex};
    if (auto err = queryable(t, handle_of(graph), "cudaGraphGetNodes"); err != cudaSuccess)
      return err;
    std::vector<uint64_t> found;
    for (const auto& [node, where] : t.nodes)
      if (where.first == handle_of(graph))
        found.push_back(node);
    fill_out(found.size(), numNodes, nodes != nullptr, [&](size_t i, bool present) {
      nodes[i] = present ? as_node(found[i]) : nullptr;
    });
    return cudaSuccess;
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaGraphGetRootNodes(cudaGraph_t graph,
                                                         cudaGraphNode_t* pRootNodes,
                                                         size_t* pNumRootNodes) {
  return guarded([&] {
    if (pNumRootNodes == nullptr)
      return cudaErrorInvalidValue;
    auto& t = tables();
    std::lock_guard<std::mutex> guard{t.mutex};
    auto g = handle_of(graph);
    if (auto err = queryable(t, g, "cudaGraphGetRootNodes"); err != cudaSuccess)
      return err;
    std::vector<uint64_t> found;
    for (const auto& [node, where] : t.nodes) {
      if (where.first != g)
        continue;
      const auto& e = t.edges[g];
      if (std::none_of(e.begin(), e.end(), [&](const auto& x) { return x.second == node; }))
        found.push_back(node);
    }
    fill_out(found.size(), pNumRootNodes, pRootNodes != nullptr, [&](size_t i, bool present) {
      pRootNodes[i] = present ? as_node(found[i]) : nullptr;
    });
    return cudaSuccess;
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaGraphGetEdges(cudaGraph_t graph, cudaGraphNode_t* from,
                                                     cudaGraphNode_t* to,
                                                     cudaGraphEdgeData* edgeData,
                                                     size_t* numEdges) {
  return guarded([&] {
    if (numEdges == nullptr || (from == nullptr) != (to == nullptr))
      return cudaErrorInvalidValue;
    auto& t = tables();
    std::lock_guard<std::mutex> guard{t.mutex};
    if (auto err = queryable(t, handle_of(graph), "cudaGraphGetEdges"); err != cudaSuccess)
      return err;
    const auto& e = t.edges[handle_of(graph)];
    fill_out(e.size(), numEdges, from != nullptr, [&](size_t i, bool present) {
      from[i] = present ? as_node(e[i].first) : nullptr;
      to[i] = present ? as_node(e[i].second) : nullptr;
      if (edgeData != nullptr)
        edgeData[i] = cudaGraphEdgeData{};
    });
    return cudaSuccess;
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaGraphNodeGetDependencies(cudaGraphNode_t node,
                                                                cudaGraphNode_t* pDependencies,
                                                                cudaGraphEdgeData* edgeData,
                                                                size_t* pNumDependencies) {
  return guarded([&] {
    return neighbours(node, pDependencies, edgeData, pNumDependencies, true,
                      "cudaGraphNodeGetDependencies");
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaGraphNodeGetDependentNodes(
  cudaGraphNode_t node, cudaGraphNode_t* pDependentNodes, cudaGraphEdgeData* edgeData,
  size_t* pNumDependentNodes) {
  return guarded([&] {
    return neighbours(node, pDependentNodes, edgeData, pNumDependentNodes, false,
                      "cudaGraphNodeGetDependentNodes");
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaGraphKernelNodeGetParams(cudaGraphNode_t node,
                                                                cudaKernelNodeParams* pNodeParams) {
  return guarded([&] {
    if (pNodeParams == nullptr)
      return cudaErrorInvalidValue;
    auto& t = tables();
    std::lock_guard<std::mutex> guard{t.mutex};
    auto k = t.kernel_nodes.find(handle_of(node));
    if (k == t.kernel_nodes.end())
      return cudaErrorInvalidValue;
    *pNodeParams = k->second.params;
    return cudaSuccess;
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaGraphClone(cudaGraph_t* pGraphClone,
                                                  cudaGraph_t originalGraph) {
  return guarded([&] { return clone(pGraphClone, originalGraph); });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaGraphNodeFindInClone(cudaGraphNode_t* pNode,
                                                            cudaGraphNode_t originalNode,
                                                            cudaGraph_t clonedGraph) {
  return guarded([&] {
    if (pNode == nullptr)
      return cudaErrorInvalidValue;
    auto& t = tables();
    std::lock_guard<std::mutex> guard{t.mutex};
    auto i = t.clones.find({handle_of(clonedGraph), handle_of(originalNode)});
    if (i == t.clones.end())
      return cudaErrorInvalidValue;
    *pNode = as_node(i->second);
    return cudaSuccess;
  });
}

} // extern "C"
