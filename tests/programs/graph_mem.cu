// Graph memory: cudaMallocAsync / cudaFreeAsync outside a capture (100
// rounds of allocate, fill, read back, free); captured between two kernels
// (an allocation and a free node), replayed 1000 times; an explicit graph
// of an allocation node, two kernel nodes and a free node, replayed 100
// times, its node parameters read back; a captured allocation the graph
// leaves allocated, read and freed with cudaFree after the launch;
// cudaDeviceGraphMemTrim.
#include "common.cuh"

namespace {

constexpr int n = 4096;

} // namespace

__global__ void fill(unsigned* x, unsigned v, int count) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count)
    x[i] = v + static_cast<unsigned>(i);
}

__global__ void twice(unsigned* dst, const unsigned* src, int count) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count)
    dst[i] = 2 * src[i];
}

__global__ void add_into(unsigned* dst, const unsigned* src, int count) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count)
    dst[i] += src[i];
}

namespace {

void show(const char* what, const unsigned* d, gleam_program::checksum& sum) {
  unsigned h[n];
  GLEAM_PROGRAM_CHECK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
  std::printf("%s: [0]=%u [%d]=%u\n", what, h[0], n - 1, h[n - 1]);
  sum.add(h, sizeof h);
}

} // namespace

int main() {
  gleam_program::checksum sum;
  cudaStream_t s = nullptr;
  GLEAM_PROGRAM_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

  // Stream-ordered allocations outside a capture.
  unsigned total = 0;
  for (int r = 0; r < 100; ++r) {
    unsigned* p = nullptr;
    GLEAM_PROGRAM_CHECK(cudaMallocAsync(reinterpret_cast<void**>(&p), n * sizeof(unsigned), s));
    fill<<<n / 256, 256, 0, s>>>(p, static_cast<unsigned>(r), n);
    GLEAM_PROGRAM_CHECK_LAUNCH();
    unsigned last = 0;
    GLEAM_PROGRAM_CHECK(cudaMemcpyAsync(&last, p + n - 1, sizeof last, cudaMemcpyDeviceToHost, s));
    GLEAM_PROGRAM_CHECK(cudaFreeAsync(p, s));
    GLEAM_PROGRAM_CHECK(cudaStreamSynchronize(s));
    total += last;
  }
  std::printf("stream-ordered: 100 rounds, sum of last values %u\n", total);
  sum.add_value(total);

  // Captured: tmp = 2x in graph memory, x += tmp, tmp freed in the graph.
  unsigned* x = nullptr;
  GLEAM_PROGRAM_CHECK(cudaMalloc(&x, n * sizeof(unsigned)));
  fill<<<n / 256, 256, 0, s>>>(x, 1, n);
  GLEAM_PROGRAM_CHECK_LAUNCH();
  GLEAM_PROGRAM_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  unsigned* tmp = nullptr;
  GLEAM_PROGRAM_CHECK(cudaMallocAsync(reinterpret_cast<void**>(&tmp), n * sizeof(unsigned), s));
  GLEAM_PROGRAM_EXPECT(tmp != nullptr, "an address for the captured allocation");
  twice<<<n / 256, 256, 0, s>>>(tmp, x, n);
  GLEAM_PROGRAM_CHECK_LAUNCH();
  add_into<<<n / 256, 256, 0, s>>>(x, tmp, n);
  GLEAM_PROGRAM_CHECK_LAUNCH();
  GLEAM_PROGRAM_CHECK(cudaFreeAsync(tmp, s));
  cudaGraph_t captured = nullptr;
  GLEAM_PROGRAM_CHECK(cudaStreamEndCapture(s, &captured));
  cudaGraphExec_t exec = nullptr;
  GLEAM_PROGRAM_CHECK(cudaGraphInstantiate(&exec, captured, 0));
  for (int r = 0; r < 1000; ++r)
    GLEAM_PROGRAM_CHECK(cudaGraphLaunch(exec, s));
  GLEAM_PROGRAM_CHECK(cudaStreamSynchronize(s));
  show("captured x*3 1000 times", x, sum);

  // Explicit: alloc -> fill(tmp, 5) -> x += tmp -> free.
  cudaGraph_t graph = nullptr;
  GLEAM_PROGRAM_CHECK(cudaGraphCreate(&graph, 0));
  cudaMemAllocNodeParams ap{};
  ap.poolProps.allocType = cudaMemAllocationTypePinned;
  ap.poolProps.location.type = cudaMemLocationTypeDevice;
  ap.poolProps.location.id = 0;
  ap.bytesize = n * sizeof(unsigned);
  cudaGraphNode_t alloc_node = nullptr, fill_node = nullptr, add_node = nullptr,
                  free_node = nullptr;
  GLEAM_PROGRAM_CHECK(cudaGraphAddMemAllocNode(&alloc_node, graph, nullptr, 0, &ap));
  auto* g_tmp = static_cast<unsigned*>(ap.dptr);
  unsigned five = 5;
  int count_arg = n;
  void* fill_args[] = {&g_tmp, &five, &count_arg};
  void* add_args[] = {&x, &g_tmp, &count_arg};
  auto fp = gleam_program::kernel_node(reinterpret_cast<void*>(fill), fill_args, n);
  auto addp = gleam_program::kernel_node(reinterpret_cast<void*>(add_into), add_args, n);
  GLEAM_PROGRAM_CHECK(cudaGraphAddKernelNode(&fill_node, graph, &alloc_node, 1, &fp));
  GLEAM_PROGRAM_CHECK(cudaGraphAddKernelNode(&add_node, graph, &fill_node, 1, &addp));
  GLEAM_PROGRAM_CHECK(cudaGraphAddMemFreeNode(&free_node, graph, &add_node, 1, g_tmp));
  cudaMemAllocNodeParams got{};
  GLEAM_PROGRAM_CHECK(cudaGraphMemAllocNodeGetParams(alloc_node, &got));
  void* freed = nullptr;
  GLEAM_PROGRAM_CHECK(cudaGraphMemFreeNodeGetParams(free_node, &freed));
  std::printf("alloc node: %zu bytes, same address %d; free node frees it %d\n", got.bytesize,
              got.dptr == ap.dptr, freed == ap.dptr);
  cudaGraphNodeType type{};
  GLEAM_PROGRAM_CHECK(cudaGraphNodeGetType(free_node, &type));
  GLEAM_PROGRAM_EXPECT(type == cudaGraphNodeTypeMemFree, "a free node");
  cudaGraphExec_t exec2 = nullptr;
  GLEAM_PROGRAM_CHECK(cudaGraphInstantiate(&exec2, graph, 0));
  for (int r = 0; r < 100; ++r)
    GLEAM_PROGRAM_CHECK(cudaGraphLaunch(exec2, s));
  GLEAM_PROGRAM_CHECK(cudaStreamSynchronize(s));
  show("explicit x += 5+i 100 times", x, sum);

  // Captured allocation without a free: the app frees it after the launch.
  GLEAM_PROGRAM_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  unsigned* kept = nullptr;
  GLEAM_PROGRAM_CHECK(cudaMallocAsync(reinterpret_cast<void**>(&kept), n * sizeof(unsigned), s));
  fill<<<n / 256, 256, 0, s>>>(kept, 7, n);
  GLEAM_PROGRAM_CHECK_LAUNCH();
  cudaGraph_t keeps = nullptr;
  GLEAM_PROGRAM_CHECK(cudaStreamEndCapture(s, &keeps));
  cudaGraphExec_t exec3 = nullptr;
  GLEAM_PROGRAM_CHECK(cudaGraphInstantiate(&exec3, keeps, 0));
  GLEAM_PROGRAM_CHECK(cudaGraphLaunch(exec3, s));
  GLEAM_PROGRAM_CHECK(cudaStreamSynchronize(s));
  show("left allocated by its graph", kept, sum);
  GLEAM_PROGRAM_CHECK(cudaFree(kept));

  GLEAM_PROGRAM_CHECK(cudaGraphExecDestroy(exec));
  GLEAM_PROGRAM_CHECK(cudaGraphExecDestroy(exec2));
  GLEAM_PROGRAM_CHECK(cudaGraphExecDestroy(exec3));
  GLEAM_PROGRAM_CHECK(cudaGraphDestroy(captured));
  GLEAM_PROGRAM_CHECK(cudaGraphDestroy(graph));
  GLEAM_PROGRAM_CHECK(cudaGraphDestroy(keeps));
  GLEAM_PROGRAM_CHECK(cudaDeviceGraphMemTrim(0));
  GLEAM_PROGRAM_CHECK(cudaStreamDestroy(s));
  GLEAM_PROGRAM_CHECK(cudaFree(x));
  sum.print("graph_mem");
  return 0;
}
