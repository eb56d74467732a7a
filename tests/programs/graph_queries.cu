// Queries of a graph built with the explicit API: cudaGraphGetNodes,
// cudaGraphGetRootNodes, cudaGraphGetEdges, cudaGraphNodeGetDependencies,
// cudaGraphNodeGetDependentNodes, cudaGraphKernelNodeGetParams (before and
// after cudaGraphKernelNodeSetParams), node types; cudaGraphClone with
// cudaGraphNodeFindInClone, the clone's own parameters changed, both graphs
// instantiated and replayed. Nodes print by name, sets sorted, so that the
// output does not depend on handle values or listing order.
#include "common.cuh"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

__global__ void scale(int* p, int factor, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    p[i] *= factor;
}

__global__ void offset(int* p, int add, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    p[i] += add;
}

namespace {

std::map<cudaGraphNode_t, std::string> names;

std::string name(cudaGraphNode_t n) {
  auto i = names.find(n);
  return n == nullptr ? "null" : i == names.end() ? "?" : i->second;
}

std::string sorted(const std::vector<cudaGraphNode_t>& nodes) {
  std::vector<std::string> s;
  for (auto n : nodes)
    s.push_back(name(n));
  std::sort(s.begin(), s.end());
  std::string out;
  for (const auto& x : s)
    out += " " + x;
  return out;
}

} // namespace

int main() {
  constexpr int n = 1 << 14;
  gleam_program::checksum sum;
  int* data = nullptr;
  GLEAM_PROGRAM_CHECK(cudaMalloc(&data, n * sizeof(int)));
  cudaGraph_t graph;
  GLEAM_PROGRAM_CHECK(cudaGraphCreate(&graph, 0));

  // memset -> scale(3) -> offset(7); empty -> offset.
  cudaMemsetParams ms = {};
  ms.dst = data;
  ms.value = 1;
  ms.elementSize = sizeof(int);
  ms.width = n;
  ms.height = 1;
  cudaGraphNode_t memset_node, scale_node, offset_node, empty_node;
  GLEAM_PROGRAM_CHECK(cudaGraphAddMemsetNode(&memset_node, graph, nullptr, 0, &ms));
  int factor = 3, add = 7, count = n;
  void* scale_args[] = {&data, &factor, &count};
  cudaKernelNodeParams kp = gleam_program::kernel_node(reinterpret_cast<void*>(scale), scale_args, n);
  GLEAM_PROGRAM_CHECK(cudaGraphAddKernelNode(&scale_node, graph, &memset_node, 1, &kp));
  void* offset_args[] = {&data, &add, &count};
  cudaKernelNodeParams op = gleam_program::kernel_node(reinterpret_cast<void*>(offset), offset_args, n);
  GLEAM_PROGRAM_CHECK(cudaGraphAddKernelNode(&offset_node, graph, &scale_node, 1, &op));
  GLEAM_PROGRAM_CHECK(cudaGraphAddEmptyNode(&empty_node, graph, nullptr, 0));
  GLEAM_PROGRAM_CHECK(cudaGraphAddDependencies(graph, &empty_node, &offset_node, nullptr, 1));
  names = {{memset_node, "memset"}, {scale_node, "scale"}, {offset_node, "offset"},
           {empty_node, "empty"}};
  // The app's argument storage changes: the nodes keep their own copies.
  factor = 100;
  add = 100;

  size_t num = 0;
  GLEAM_PROGRAM_CHECK(cudaGraphGetNodes(graph, nullptr, &num));
  std::vector<cudaGraphNode_t> nodes(num + 2);
  size_t asked = nodes.size();
  GLEAM_PROGRAM_CHECK(cudaGraphGetNodes(graph, nodes.data(), &asked));
  std::printf("nodes: %zu, listed %zu:%s, padding %s %s\n", num, asked,
              sorted({nodes.begin(), nodes.begin() + asked}).c_str(), name(nodes[num]).c_str(),
              name(nodes[num + 1]).c_str());
  sum.add_value(num);
  std::vector<cudaGraphNode_t> roots(4);
  size_t num_roots = roots.size();
  GLEAM_PROGRAM_CHECK(cudaGraphGetRootNodes(graph, roots.data(), &num_roots));
  roots.resize(num_roots);
  std::printf("roots:%s\n", sorted(roots).c_str());
  size_t num_edges = 0;
  GLEAM_PROGRAM_CHECK(cudaGraphGetEdges(graph, nullptr, nullptr, nullptr, &num_edges));
  std::vector<cudaGraphNode_t> from(num_edges), to(num_edges);
  GLEAM_PROGRAM_CHECK(cudaGraphGetEdges(graph, from.data(), to.data(), nullptr, &num_edges));
  std::vector<std::string> edges;
  for (size_t i = 0; i < num_edges; ++i)
    edges.push_back(name(from[i]) + ">" + name(to[i]));
  std::sort(edges.begin(), edges.end());
  std::printf("edges: %zu:", num_edges);
  for (const auto& e : edges)
    std::printf(" %s", e.c_str());
  std::printf("\n");
  sum.add_value(num_edges);
  std::vector<cudaGraphNode_t> deps(4);
  size_t num_deps = deps.size();
  GLEAM_PROGRAM_CHECK(cudaGraphNodeGetDependencies(offset_node, deps.data(), nullptr, &num_deps));
  deps.resize(num_deps);
  std::printf("offset depends on:%s\n", sorted(deps).c_str());
  std::vector<cudaGraphNode_t> dependents(4);
  size_t num_dependents = dependents.size();
  GLEAM_PROGRAM_CHECK(cudaGraphNodeGetDependentNodes(memset_node, dependents.data(), nullptr,
                                                     &num_dependents));
  dependents.resize(num_dependents);
  std::printf("memset's dependents:%s\n", sorted(dependents).c_str());
  cudaGraphNodeType type;
  GLEAM_PROGRAM_CHECK(cudaGraphNodeGetType(empty_node, &type));
  std::printf("empty node type: %d\n", static_cast<int>(type));

  cudaKernelNodeParams got = {};
  GLEAM_PROGRAM_CHECK(cudaGraphKernelNodeGetParams(scale_node, &got));
  GLEAM_PROGRAM_EXPECT(got.func == reinterpret_cast<void*>(scale), "the node's function");
  std::printf("scale node: grid %u block %u factor %d count %d\n", got.gridDim.x, got.blockDim.x,
              *static_cast<int*>(got.kernelParams[1]), *static_cast<int*>(got.kernelParams[2]));
  sum.add_value(*static_cast<int*>(got.kernelParams[1]));
  cudaError_t bad = cudaGraphKernelNodeGetParams(empty_node, &got);
  std::printf("kernel params of the empty node -> %s\n", cudaGetErrorName(bad));
  cudaGetLastError();

  // A clone, whose scale factor changes; the original stays.
  cudaGraph_t copy;
  GLEAM_PROGRAM_CHECK(cudaGraphClone(&copy, graph));
  cudaGraphNode_t scale_copy;
  GLEAM_PROGRAM_CHECK(cudaGraphNodeFindInClone(&scale_copy, scale_node, copy));
  GLEAM_PROGRAM_EXPECT(scale_copy != scale_node, "the clone's node is its own");
  int factor5 = 5;
  void* scale5_args[] = {&data, &factor5, &count};
  kp = gleam_program::kernel_node(reinterpret_cast<void*>(scale), scale5_args, n);
  GLEAM_PROGRAM_CHECK(cudaGraphKernelNodeSetParams(scale_copy, &kp));
  GLEAM_PROGRAM_CHECK(cudaGraphKernelNodeGetParams(scale_copy, &got));
  std::printf("clone's scale factor: %d\n", *static_cast<int*>(got.kernelParams[1]));
  GLEAM_PROGRAM_CHECK(cudaGraphKernelNodeGetParams(scale_node, &got));
  std::printf("original's scale factor: %d\n", *static_cast<int*>(got.kernelParams[1]));
  size_t clone_nodes = 0;
  GLEAM_PROGRAM_CHECK(cudaGraphGetNodes(copy, nullptr, &clone_nodes));
  std::printf("clone nodes: %zu\n", clone_nodes);

  cudaStream_t stream;
  GLEAM_PROGRAM_CHECK(cudaStreamCreate(&stream));
  std::vector<int> host(n);
  for (auto g : {graph, copy}) {
    cudaGraphExec_t exec;
    GLEAM_PROGRAM_CHECK(cudaGraphInstantiate(&exec, g, 0));
    for (int i = 0; i < 10; ++i)
      GLEAM_PROGRAM_CHECK(cudaGraphLaunch(exec, stream));
    GLEAM_PROGRAM_CHECK(cudaStreamSynchronize(stream));
    GLEAM_PROGRAM_CHECK(cudaMemcpy(host.data(), data, n * sizeof(int), cudaMemcpyDeviceToHost));
    sum.add(host.data(), n * sizeof(int));
    std::printf("%s replayed: data[0] = %d\n", g == graph ? "original" : "clone", host[0]);
    GLEAM_PROGRAM_CHECK(cudaGraphExecDestroy(exec));
  }
  GLEAM_PROGRAM_EXPECT(host[0] == 1 * 5 + 7, "clone computes with its factor");
  GLEAM_PROGRAM_CHECK(cudaGraphDestroy(copy));
  GLEAM_PROGRAM_CHECK(cudaGraphDestroy(graph));
  GLEAM_PROGRAM_CHECK(cudaStreamDestroy(stream));
  GLEAM_PROGRAM_CHECK(cudaFree(data));
  sum.print("graph_queries");
  return 0;
}
