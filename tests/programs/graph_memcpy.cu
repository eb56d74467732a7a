// Memcpy and memset nodes: an explicit graph of a host-to-device copy from
// pageable memory, a kernel, a device-to-device copy, a memset node and a
// device-to-host copy into pageable memory, replayed 100 times with new
// host input each time; node parameters read back (cudaGraphMemcpyNodeGetParams,
// cudaGraphMemsetNodeGetParams); cudaGraphExecMemcpyNodeSetParams1D and
// cudaGraphExecMemsetNodeSetParams on the executable graph;
// cudaGraphMemcpyNodeSetParams1D then a new instantiation; a 2D memcpy node
// into pitched device memory; memcpy nodes to and from a __device__
// variable (the symbol forms); cudaMemcpyAsync to and from pageable memory
// captured around a kernel and replayed 10 times; the codes of refused
// parameters.
#include "common.cuh"

using gleam_program::print_code;
using gleam_program::print_ints;

namespace {

__device__ int table[16];

__global__ void twice_plus(const int* in, int* out, int n, int add) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = 2 * in[i] + add;
}

} // namespace

int main() {
  gleam_program::checksum sum;
  constexpr int n = 4096;
  constexpr size_t bytes = n * sizeof(int);
  std::vector<int> in(n), out(n), out_b(n);
  int *a = nullptr, *b = nullptr, *c = nullptr;
  GLEAM_PROGRAM_CHECK(cudaMalloc(&a, bytes));
  GLEAM_PROGRAM_CHECK(cudaMalloc(&b, bytes));
  GLEAM_PROGRAM_CHECK(cudaMalloc(&c, bytes + 64));

  cudaGraph_t g;
  GLEAM_PROGRAM_CHECK(cudaGraphCreate(&g, 0));
  cudaGraphNode_t h2d, kernel, d2d, ms, d2h;
  GLEAM_PROGRAM_CHECK(cudaGraphAddMemcpyNode1D(&h2d, g, nullptr, 0, a, in.data(), bytes,
                                               cudaMemcpyHostToDevice));
  int count = n, add = 3;
  void* args[] = {&a, &b, &count, &add};
  auto kp = gleam_program::kernel_node(reinterpret_cast<void*>(twice_plus), args, n);
  GLEAM_PROGRAM_CHECK(cudaGraphAddKernelNode(&kernel, g, &h2d, 1, &kp));
  cudaMemcpy3DParms p3{};
  p3.srcPtr = make_cudaPitchedPtr(b, bytes, bytes, 1);
  p3.dstPtr = make_cudaPitchedPtr(c, bytes, bytes, 1);
  p3.extent = make_cudaExtent(bytes, 1, 1);
  p3.kind = cudaMemcpyDeviceToDevice;
  GLEAM_PROGRAM_CHECK(cudaGraphAddMemcpyNode(&d2d, g, &kernel, 1, &p3));
  cudaMemsetParams mp{};
  mp.dst = c;
  mp.value = 0;
  mp.elementSize = 4;
  mp.width = 8;
  mp.height = 1;
  GLEAM_PROGRAM_CHECK(cudaGraphAddMemsetNode(&ms, g, &d2d, 1, &mp));
  GLEAM_PROGRAM_CHECK(cudaGraphAddMemcpyNode1D(&d2h, g, &ms, 1, out.data(), c, bytes,
                                               cudaMemcpyDefault));

  cudaMemcpy3DParms got{};
  GLEAM_PROGRAM_CHECK(cudaGraphMemcpyNodeGetParams(d2h, &got));
  std::printf("d2h node: dst is out %d, src is c %d, extent %zu x %zu x %zu\n",
              got.dstPtr.ptr == out.data(), got.srcPtr.ptr == c, got.extent.width,
              got.extent.height, got.extent.depth);
  cudaMemsetParams mgot{};
  GLEAM_PROGRAM_CHECK(cudaGraphMemsetNodeGetParams(ms, &mgot));
  std::printf("memset node: value %u, element %u, width %zu, height %zu\n", mgot.value,
              mgot.elementSize, mgot.width, mgot.height);
  cudaGraphNodeType type;
  GLEAM_PROGRAM_CHECK(cudaGraphNodeGetType(d2d, &type));
  std::printf("d2d node type memcpy: %d\n", type == cudaGraphNodeTypeMemcpy);

  cudaGraphExec_t e;
  GLEAM_PROGRAM_CHECK(cudaGraphInstantiate(&e, g, 0));
  long long total = 0;
  for (int round = 0; round < 100; ++round) {
    for (int i = 0; i < n; ++i)
      in[i] = round * 7 + i;
    GLEAM_PROGRAM_CHECK(cudaGraphLaunch(e, nullptr));
    GLEAM_PROGRAM_CHECK(cudaStreamSynchronize(nullptr));
    for (int i = 0; i < n; ++i) {
      int want = i < 8 ? 0 : 2 * (round * 7 + i) + 3;
      GLEAM_PROGRAM_EXPECT(out[i] == want, "replayed graph copies");
      total += out[i];
    }
  }
  std::printf("100 replays, total %lld\n", total);
  sum.add_value(total);
  print_ints("last replay", out.data() + 6, 6, sum);

  // Parameters of the executable graph.
  mp.value = 0x01010101;
  GLEAM_PROGRAM_CHECK(cudaGraphExecMemsetNodeSetParams(e, ms, &mp));
  // The node was added with cudaMemcpyDefault: CUDA refuses an update that
  // names another kind, even the one Default resolves to.
  print_code("exec parameters, kind changed",
             cudaGraphExecMemcpyNodeSetParams1D(e, d2h, out_b.data(), c, bytes,
                                                cudaMemcpyDeviceToHost),
             sum);
  GLEAM_PROGRAM_CHECK(
    cudaGraphExecMemcpyNodeSetParams1D(e, d2h, out_b.data(), c, bytes, cudaMemcpyDefault));
  for (int i = 0; i < n; ++i)
    in[i] = -i;
  GLEAM_PROGRAM_CHECK(cudaGraphLaunch(e, nullptr));
  GLEAM_PROGRAM_CHECK(cudaStreamSynchronize(nullptr));
  print_ints("exec parameters: out_b", out_b.data() + 6, 6, sum);
  print_ints("exec parameters: out kept", out.data() + 6, 6, sum);

  // Parameters of the graph, then a new instantiation.
  GLEAM_PROGRAM_CHECK(
    cudaGraphMemcpyNodeSetParams1D(h2d, a, out_b.data(), bytes / 2, cudaMemcpyHostToDevice));
  GLEAM_PROGRAM_CHECK(cudaGraphMemcpyNodeGetParams(h2d, &got));
  std::printf("h2d node after set: extent %zu, src is out_b %d\n", got.extent.width,
              got.srcPtr.ptr == out_b.data());
  cudaGraphExec_t e2;
  GLEAM_PROGRAM_CHECK(cudaGraphInstantiate(&e2, g, 0));
  GLEAM_PROGRAM_CHECK(cudaGraphLaunch(e2, nullptr));
  GLEAM_PROGRAM_CHECK(cudaStreamSynchronize(nullptr));
  print_ints("after graph set", out.data() + 6, 6, sum);
  print_ints("after graph set, second half", out.data() + n / 2, 4, sum);

  // A 2D memcpy node into pitched device memory and back.
  constexpr int w = 100, h = 20;
  int* pitched = nullptr;
  size_t pitch = 0;
  GLEAM_PROGRAM_CHECK(cudaMallocPitch(&pitched, &pitch, w * sizeof(int), h));
  std::vector<int> grid(w * h), grid_back(w * h);
  for (int i = 0; i < w * h; ++i)
    grid[i] = i * 3;
  cudaGraph_t g2;
  GLEAM_PROGRAM_CHECK(cudaGraphCreate(&g2, 0));
  cudaMemcpy3DParms up{};
  up.srcPtr = make_cudaPitchedPtr(grid.data(), w * sizeof(int), w * sizeof(int), h);
  up.dstPtr = make_cudaPitchedPtr(pitched, pitch, w * sizeof(int), h);
  up.extent = make_cudaExtent(w * sizeof(int), h, 1);
  up.kind = cudaMemcpyHostToDevice;
  cudaMemcpy3DParms down{};
  down.srcPtr = make_cudaPitchedPtr(pitched, pitch, w * sizeof(int), h);
  down.srcPos = make_cudaPos(4 * sizeof(int), 2, 0);
  down.dstPtr = make_cudaPitchedPtr(grid_back.data(), w * sizeof(int), w * sizeof(int), h);
  down.extent = make_cudaExtent(50 * sizeof(int), 10, 1);
  down.kind = cudaMemcpyDeviceToHost;
  cudaGraphNode_t n_up, n_down;
  GLEAM_PROGRAM_CHECK(cudaGraphAddMemcpyNode(&n_up, g2, nullptr, 0, &up));
  GLEAM_PROGRAM_CHECK(cudaGraphAddMemcpyNode(&n_down, g2, &n_up, 1, &down));
  cudaGraphExec_t e3;
  GLEAM_PROGRAM_CHECK(cudaGraphInstantiate(&e3, g2, 0));
  GLEAM_PROGRAM_CHECK(cudaGraphLaunch(e3, nullptr));
  GLEAM_PROGRAM_CHECK(cudaStreamSynchronize(nullptr));
  print_ints("2D row 0", grid_back.data(), 6, sum);
  print_ints("2D row 9", grid_back.data() + 9 * w, 6, sum);
  sum.add(grid_back.data(), grid_back.size() * sizeof(int));

  // Memcpy nodes to and from a __device__ variable, replayed twice.
  std::vector<int> to_table(16), from_table(16);
  cudaGraph_t g4;
  GLEAM_PROGRAM_CHECK(cudaGraphCreate(&g4, 0));
  cudaGraphNode_t n_to, n_from;
  GLEAM_PROGRAM_CHECK(cudaGraphAddMemcpyNodeToSymbol(&n_to, g4, nullptr, 0, table,
                                                     to_table.data(), 12 * sizeof(int),
                                                     2 * sizeof(int), cudaMemcpyHostToDevice));
  GLEAM_PROGRAM_CHECK(cudaGraphAddMemcpyNodeFromSymbol(&n_from, g4, &n_to, 1, from_table.data(),
                                                       table, 16 * sizeof(int), 0,
                                                       cudaMemcpyDeviceToHost));
  cudaGraphExec_t e4;
  GLEAM_PROGRAM_CHECK(cudaGraphInstantiate(&e4, g4, 0));
  for (int round = 0; round < 2; ++round) {
    for (int i = 0; i < 16; ++i)
      to_table[i] = 100 * round + i;
    GLEAM_PROGRAM_CHECK(cudaGraphLaunch(e4, nullptr));
    GLEAM_PROGRAM_CHECK(cudaStreamSynchronize(nullptr));
    print_ints(round == 0 ? "symbol round 0" : "symbol round 1", from_table.data(), 16, sum);
  }
  GLEAM_PROGRAM_CHECK(cudaGraphExecMemcpyNodeSetParamsFromSymbol(
    e4, n_from, from_table.data(), table, 4 * sizeof(int), 8 * sizeof(int),
    cudaMemcpyDeviceToHost));
  from_table.assign(16, -1);
  GLEAM_PROGRAM_CHECK(cudaGraphLaunch(e4, nullptr));
  GLEAM_PROGRAM_CHECK(cudaStreamSynchronize(nullptr));
  print_ints("symbol, exec parameters", from_table.data(), 6, sum);
  print_code("to a symbol, device to host",
             cudaGraphAddMemcpyNodeToSymbol(&n_to, g4, nullptr, 0, table, to_table.data(), 4, 0,
                                            cudaMemcpyDeviceToHost),
             sum);
  GLEAM_PROGRAM_CHECK(cudaGraphExecDestroy(e4));
  GLEAM_PROGRAM_CHECK(cudaGraphDestroy(g4));

  // cudaMemcpyAsync with pageable memory captured around a kernel.
  cudaStream_t s;
  GLEAM_PROGRAM_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaGraph_t cg;
  GLEAM_PROGRAM_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  GLEAM_PROGRAM_CHECK(cudaMemcpyAsync(a, in.data(), bytes, cudaMemcpyHostToDevice, s));
  twice_plus<<<n / 256, 256, 0, s>>>(a, b, n, 11);
  GLEAM_PROGRAM_CHECK(cudaMemcpyAsync(out.data(), b, bytes, cudaMemcpyDeviceToHost, s));
  GLEAM_PROGRAM_CHECK(cudaStreamEndCapture(s, &cg));
  cudaGraphExec_t ce;
  GLEAM_PROGRAM_CHECK(cudaGraphInstantiate(&ce, cg, 0));
  total = 0;
  for (int round = 0; round < 10; ++round) {
    for (int i = 0; i < n; ++i)
      in[i] = round * 1000 + i;
    GLEAM_PROGRAM_CHECK(cudaGraphLaunch(ce, s));
    GLEAM_PROGRAM_CHECK(cudaStreamSynchronize(s));
    for (int i = 0; i < n; ++i) {
      GLEAM_PROGRAM_EXPECT(out[i] == 2 * (round * 1000 + i) + 11, "captured copies");
      total += out[i];
    }
  }
  std::printf("captured copies, 10 replays, total %lld\n", total);
  sum.add_value(total);

  // Refused parameters.
  cudaGraphNode_t bad;
  print_code(
    "memcpy node kind 7",
    cudaGraphAddMemcpyNode1D(&bad, g, nullptr, 0, a, b, 16, static_cast<cudaMemcpyKind>(7)), sum);
  mp.elementSize = 3;
  print_code("memset node element size 3", cudaGraphMemsetNodeSetParams(ms, &mp), sum);
  print_code("memcpy parameters of a memset node", cudaGraphMemcpyNodeGetParams(ms, &got), sum);

  GLEAM_PROGRAM_CHECK(cudaGraphExecDestroy(ce));
  GLEAM_PROGRAM_CHECK(cudaGraphDestroy(cg));
  GLEAM_PROGRAM_CHECK(cudaStreamDestroy(s));
  GLEAM_PROGRAM_CHECK(cudaGraphExecDestroy(e3));
  GLEAM_PROGRAM_CHECK(cudaGraphDestroy(g2));
  GLEAM_PROGRAM_CHECK(cudaGraphExecDestroy(e2));
  GLEAM_PROGRAM_CHECK(cudaGraphExecDestroy(e));
  GLEAM_PROGRAM_CHECK(cudaGraphDestroy(g));
  GLEAM_PROGRAM_CHECK(cudaFree(pitched));
  GLEAM_PROGRAM_CHECK(cudaFree(c));
  GLEAM_PROGRAM_CHECK(cudaFree(b));
  GLEAM_PROGRAM_CHECK(cudaFree(a));
  sum.print("graph_memcpy");
  return 0;
}
