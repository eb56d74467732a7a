// The explicit graph API: a graph of a memset node, two kernel nodes and an
// empty join node with explicit dependencies, instantiated and replayed 1000
// times; kernel node parameters changed in the executable graph
// (cudaGraphExecKernelNodeSetParams) and in the graph followed by
// cudaGraphExecUpdate. Host nodes are not used: Gleam does not remote them.
#include "common.cuh"

#include <vector>

namespace {

constexpr int n = 2048;
constexpr int replays = 1000;

} // namespace

__global__ void axpb(unsigned* x, unsigned a, unsigned b, int count) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count)
    x[i] = x[i] * a + b;
}

__global__ void add_into(unsigned* dst, const unsigned* src, int count) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count)
    dst[i] += src[i];
}

int main() {
  gleam_program::checksum sum;
  unsigned *x = nullptr, *tmp = nullptr, *acc = nullptr;
  GLEAM_PROGRAM_CHECK(cudaMalloc(&x, n * sizeof(unsigned)));
  GLEAM_PROGRAM_CHECK(cudaMalloc(&tmp, n * sizeof(unsigned)));
  GLEAM_PROGRAM_CHECK(cudaMalloc(&acc, n * sizeof(unsigned)));
  std::vector<unsigned> hx(n), hacc(n, 0);
  for (int i = 0; i < n; ++i)
    hx[i] = static_cast<unsigned>(i);
  GLEAM_PROGRAM_CHECK(cudaMemcpy(x, hx.data(), n * sizeof(unsigned), cudaMemcpyHostToDevice));
  GLEAM_PROGRAM_CHECK(cudaMemset(acc, 0, n * sizeof(unsigned)));

  cudaGraph_t graph = nullptr;
  GLEAM_PROGRAM_CHECK(cudaGraphCreate(&graph, 0));
  // tmp = 0x01010101 everywhere (memset node, 4-byte elements of value 7).
  cudaMemsetParams ms = {};
  ms.dst = tmp;
  ms.value = 7;
  ms.elementSize = 4;
  ms.width = n;
  ms.height = 1;
  cudaGraphNode_t memset_node = nullptr;
  GLEAM_PROGRAM_CHECK(cudaGraphAddMemsetNode(&memset_node, graph, nullptr, 0, &ms));
  // x = x*a + b, independent of the memset.
  unsigned a = 3, b = 1;
  int count = n;
  void* axpb_args[] = {&x, &a, &b, &count};
  cudaKernelNodeParams kp = {};
  kp.func = reinterpret_cast<void*>(axpb);
  kp.gridDim = dim3(n / 256);
  kp.blockDim = dim3(256);
  kp.kernelParams = axpb_args;
  cudaGraphNode_t axpb_node = nullptr;
  GLEAM_PROGRAM_CHECK(cudaGraphAddKernelNode(&axpb_node, graph, nullptr, 0, &kp));
  // A join of both, then acc += tmp; acc += x through a second add node.
  cudaGraphNode_t join = nullptr;
  cudaGraphNode_t both[] = {memset_node, axpb_node};
  GLEAM_PROGRAM_CHECK(cudaGraphAddEmptyNode(&join, graph, both, 2));
  void* add_tmp_args[] = {&acc, &tmp, &count};
  cudaKernelNodeParams add_tmp = {};
  add_tmp.func = reinterpret_cast<void*>(add_into);
  add_tmp.gridDim = dim3(n / 256);
  add_tmp.blockDim = dim3(256);
  add_tmp.kernelParams = add_tmp_args;
  cudaGraphNode_t add_tmp_node = nullptr;
  GLEAM_PROGRAM_CHECK(cudaGraphAddKernelNode(&add_tmp_node, graph, &join, 1, &add_tmp));
  void* add_x_args[] = {&acc, &x, &count};
  cudaKernelNodeParams add_x = add_tmp;
  add_x.kernelParams = add_x_args;
  cudaGraphNode_t add_x_node = nullptr;
  GLEAM_PROGRAM_CHECK(cudaGraphAddKernelNode(&add_x_node, graph, nullptr, 0, &add_x));
  GLEAM_PROGRAM_CHECK(cudaGraphAddDependencies(graph, &add_tmp_node, &add_x_node, nullptr, 1));
  cudaGraphNodeType type;
  GLEAM_PROGRAM_CHECK(cudaGraphNodeGetType(memset_node, &type));
  std::printf("memset node type %d\n", static_cast<int>(type));
  GLEAM_PROGRAM_CHECK(cudaGraphNodeGetType(add_x_node, &type));
  std::printf("kernel node type %d\n", static_cast<int>(type));

  cudaGraphExec_t exec = nullptr;
  GLEAM_PROGRAM_CHECK(cudaGraphInstantiateWithFlags(&exec, graph, 0));
  cudaStream_t s;
  GLEAM_PROGRAM_CHECK(cudaStreamCreate(&s));
  auto run = [&](unsigned ra, unsigned rb) {
    for (int r = 0; r < replays; ++r) {
      GLEAM_PROGRAM_CHECK(cudaGraphLaunch(exec, s));
      for (int i = 0; i < n; ++i) {
        hx[i] = hx[i] * ra + rb;
        hacc[i] += 7u + hx[i];
      }
    }
    GLEAM_PROGRAM_CHECK(cudaStreamSynchronize(s));
    std::vector<unsigned> out(n);
    GLEAM_PROGRAM_CHECK(cudaMemcpy(out.data(), x, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
    GLEAM_PROGRAM_EXPECT(out == hx, "x matches the host reference");
    sum.add(out.data(), n * sizeof(unsigned));
    GLEAM_PROGRAM_CHECK(cudaMemcpy(out.data(), acc, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
    GLEAM_PROGRAM_EXPECT(out == hacc, "acc matches the host reference");
    sum.add(out.data(), n * sizeof(unsigned));
    std::printf("a=%u b=%u: x[5]=%u acc[5]=%u\n", ra, rb, hx[5], hacc[5]);
  };
  run(3, 1);

  // New arguments straight into the executable graph.
  a = 5;
  b = 2;
  GLEAM_PROGRAM_CHECK(cudaGraphExecKernelNodeSetParams(exec, axpb_node, &kp));
  run(5, 2);

  // New arguments into the graph, then the executable graph updated from it.
  a = 7;
  b = 3;
  GLEAM_PROGRAM_CHECK(cudaGraphKernelNodeSetParams(axpb_node, &kp));
  cudaGraphExecUpdateResultInfo info;
  GLEAM_PROGRAM_CHECK(cudaGraphExecUpdate(exec, graph, &info));
  GLEAM_PROGRAM_EXPECT(info.result == cudaGraphExecUpdateSuccess, "update succeeded");
  run(7, 3);

  GLEAM_PROGRAM_CHECK(cudaGraphExecDestroy(exec));
  GLEAM_PROGRAM_CHECK(cudaGraphDestroy(graph));
  GLEAM_PROGRAM_CHECK(cudaStreamDestroy(s));
  GLEAM_PROGRAM_CHECK(cudaFree(x));
  GLEAM_PROGRAM_CHECK(cudaFree(tmp));
  GLEAM_PROGRAM_CHECK(cudaFree(acc));
  sum.print("graph_build");
  return 0;
}
