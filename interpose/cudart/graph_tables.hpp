#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <cuda_runtime_api.h>

#include "actors/proto/ops.pb.h"
#include "interpose/runtime.hpp"

namespace gleam::interpose {

/// The client's record of the graphs, executable graphs and nodes the app
/// holds (client handles, mapped by the server). Graphs built with the
/// explicit API are known here node by node and edge by edge, so that the
/// graph queries (cudaGraphGetNodes, GetEdges, node dependencies, kernel
/// node parameters) are answered without the server; captured graphs are
/// only known by handle. Every member is guarded by `mutex`.
struct graph_tables {
  std::mutex mutex;
  std::set<uint64_t> graphs;
  std::set<uint64_t> execs;
  /// Graphs whose every node and edge is recorded here: made by
  /// cudaGraphCreate, or cloned from such a graph.
  std::set<uint64_t> explicit_graphs;
  /// Nodes built through the explicit API: handle -> (graph, type). Handles
  /// grow with creation, so this order is the order the nodes were added.
  std::map<uint64_t, std::pair<uint64_t, cudaGraphNodeType>> nodes;
  /// Edges of each graph in the order they were made: (from, to).
  std::map<uint64_t, std::vector<std::pair<uint64_t, uint64_t>>> edges;
  /// Host nodes built through the explicit API: handle -> the callback id
  /// of their (function, user data) (interpose/host_calls.hpp).
  std::map<uint64_t, uint64_t> host_nodes;
  /// Memory allocation nodes built through the explicit API: handle -> the
  /// parameters given (dptr filled in), with their access descriptors.
  struct mem_alloc_node {
    cudaMemAllocNodeParams params;
    std::vector<cudaMemAccessDesc> access;
  };
  std::map<uint64_t, mem_alloc_node> mem_alloc_nodes;
  /// Memory free nodes: handle -> the address they free.
  std::map<uint64_t, void*> mem_free_nodes;
  /// Kernel nodes: the parameters last given, their arguments copied by the
  /// function's layout (`pointers` point into `arguments`, one per
  /// parameter), for cudaGraphKernelNodeGetParams.
  struct kernel_node {
    cudaKernelNodeParams params{};
    std::string arguments;
    std::vector<void*> pointers;
  };
  std::map<uint64_t, kernel_node> kernel_nodes;
  /// Memcpy and memset nodes built through the explicit API: the
  /// parameters last given, for their GetParams.
  std::map<uint64_t, cudaMemcpy3DParms> memcpy_nodes;
  std::map<uint64_t, cudaMemsetParams> memset_nodes;
  /// (clone graph, original node) -> the node's copy in the clone.
  std::map<std::pair<uint64_t, uint64_t>, uint64_t> clones;

  /// Records an edge to `node` from each of `deps` in `graph`.
  void add_edges(uint64_t graph, const std::vector<uint64_t>& deps, uint64_t node) {
    for (auto d : deps)
      edges[graph].emplace_back(d, node);
  }

  /// Forgets `graph` with its nodes and edges.
  void forget_graph(uint64_t graph);
};

/// The process's graph tables; never destroyed.
graph_tables& tables();

/// The client handle behind a graph, node, exec or event pointer.
inline uint64_t handle_of(const void* p) {
  return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p));
}

/// The dependencies a node-adding op names (empty for other ops).
std::vector<uint64_t> dependencies_of(const proto::Op& op);

/// Whether the app holds executable graph `e` / node `n` (client handles).
bool known_exec(cudaGraphExec_t e);
bool known_node(cudaGraphNode_t n);

/// Checks `graph` and `deps` for a new node; fills the op's dependency list.
cudaError_t node_deps(cudaGraph_t graph, const cudaGraphNode_t* deps, size_t n,
                      google::protobuf::RepeatedField<uint64_t>* out);

/// The part every node-adding op `a` shares: checks `graph` and `deps`,
/// fills graph, dependencies and a new node handle, returned in `*node`.
template <class AddOp>
cudaError_t new_node(AddOp* a, cudaGraph_t graph, const cudaGraphNode_t* deps, size_t n,
                     uint64_t* node) {
  if (auto err = node_deps(graph, deps, n, a->mutable_dependencies()); err != cudaSuccess)
    return err;
  *node = next_handle();
  a->set_graph(handle_of(graph));
  a->set_node(*node);
  return cudaSuccess;
}

/// Runs the op that adds node `node` of `type` to `graph`, records it.
cudaError_t add_node(proto::Op op, uint64_t node, cudaGraph_t graph, cudaGraphNodeType type,
                     cudaGraphNode_t* out);

/// Records the parameters of kernel node `node` for
/// cudaGraphKernelNodeGetParams: the function, shape and a copy of the
/// arguments packed by the function's layout. Takes the tables' mutex.
void remember_kernel_params(uint64_t node, const cudaKernelNodeParams& p);

/// Records memset node `node`'s parameters for cudaGraphMemsetNodeGetParams.
/// Takes the tables' mutex.
void remember_memset_params(uint64_t node, const cudaMemsetParams& p);

} // namespace gleam::interpose
