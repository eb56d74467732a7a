// Host nodes in CUDA graphs: an explicit graph of kernel, host, kernel, host
// nodes replayed 1000 times (the host functions run once per replay, in
// graph order); the host node's parameters read back and replaced on the
// executable graph; a host function captured with cudaLaunchHostFunc
// between two kernels and replayed 100 times; cudaStreamAddCallback inside
// a capture (refused, the capture is invalidated).
#include "common.cuh"

#include <mutex>
#include <string>

namespace {

constexpr int n = 1024;
constexpr int replays = 1000;

/// What the host functions saw: their tags in the order they ran.
struct host_log {
  std::mutex mutex;
  std::string tags;
};

struct tag_arg {
  host_log* log;
  char tag;
};

void CUDART_CB record(void* p) {
  auto* arg = static_cast<tag_arg*>(p);
  std::lock_guard<std::mutex> guard{arg->log->mutex};
  arg->log->tags += arg->tag;
}

/// Counts of each tag, and whether `tags` is `pattern` repeated.
void report(const char* what, const std::string& tags, const std::string& pattern,
            gleam_program::checksum& sum) {
  bool repeated = !pattern.empty() && tags.size() % pattern.size() == 0;
  for (size_t i = 0; repeated && i < tags.size(); ++i)
    repeated = tags[i] == pattern[i % pattern.size()];
  std::printf("%s: %zu host calls, pattern %s %s\n", what, tags.size(), pattern.c_str(),
              repeated ? "repeated" : "broken");
  GLEAM_PROGRAM_EXPECT(repeated, "host functions once per replay, in graph order");
  sum.add(tags.data(), tags.size());
}

} // namespace

__global__ void add_one(unsigned* x, int count) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count)
    x[i] += 1;
}

__global__ void times_three(unsigned* x, int count) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count)
    x[i] *= 3;
}

namespace {

/// x (from the device) into the checksum and its first value printed.
void show(const char* what, const unsigned* x, gleam_program::checksum& sum) {
  unsigned h[n];
  GLEAM_PROGRAM_CHECK(cudaMemcpy(h, x, sizeof h, cudaMemcpyDeviceToHost));
  std::printf("%s: x[0]=%u x[%d]=%u\n", what, h[0], n - 1, h[n - 1]);
  sum.add(h, sizeof h);
}

} // namespace

int main() {
  gleam_program::checksum sum;
  unsigned* x = nullptr;
  GLEAM_PROGRAM_CHECK(cudaMalloc(&x, n * sizeof(unsigned)));
  GLEAM_PROGRAM_CHECK(cudaMemset(x, 0, n * sizeof(unsigned)));
  cudaStream_t s = nullptr;
  GLEAM_PROGRAM_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  host_log log;
  tag_arg a{&log, 'a'}, b{&log, 'b'}, c{&log, 'c'}, d{&log, 'd'};
  int count = n;
  void* args[] = {&x, &count};

  // add_one -> host a -> times_three -> host b.
  cudaGraph_t graph = nullptr;
  GLEAM_PROGRAM_CHECK(cudaGraphCreate(&graph, 0));
  cudaGraphNode_t k1 = nullptr, h1 = nullptr, k2 = nullptr, h2 = nullptr;
  auto p1 = gleam_program::kernel_node(reinterpret_cast<void*>(add_one), args, n);
  auto p2 = gleam_program::kernel_node(reinterpret_cast<void*>(times_three), args, n);
  cudaHostNodeParams ha{record, &a}, hb{record, &b};
  GLEAM_PROGRAM_CHECK(cudaGraphAddKernelNode(&k1, graph, nullptr, 0, &p1));
  GLEAM_PROGRAM_CHECK(cudaGraphAddHostNode(&h1, graph, &k1, 1, &ha));
  GLEAM_PROGRAM_CHECK(cudaGraphAddKernelNode(&k2, graph, &h1, 1, &p2));
  GLEAM_PROGRAM_CHECK(cudaGraphAddHostNode(&h2, graph, &k2, 1, &hb));
  cudaGraphNodeType type{};
  GLEAM_PROGRAM_CHECK(cudaGraphNodeGetType(h1, &type));
  GLEAM_PROGRAM_EXPECT(type == cudaGraphNodeTypeHost, "a host node");
  cudaHostNodeParams got{};
  GLEAM_PROGRAM_CHECK(cudaGraphHostNodeGetParams(h2, &got));
  GLEAM_PROGRAM_EXPECT(got.fn == record && got.userData == &b, "host node parameters read back");
  cudaHostNodeParams none{nullptr, nullptr};
  cudaGraphNode_t bad = nullptr;
  std::printf("host node without a function: %s\n",
              cudaGetErrorName(cudaGraphAddHostNode(&bad, graph, nullptr, 0, &none)));
  cudaGetLastError();
  cudaGraphExec_t exec = nullptr;
  GLEAM_PROGRAM_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  for (int r = 0; r < replays; ++r)
    GLEAM_PROGRAM_CHECK(cudaGraphLaunch(exec, s));
  GLEAM_PROGRAM_CHECK(cudaStreamSynchronize(s));
  report("explicit graph", log.tags, "ab", sum);
  show("explicit graph", x, sum);

  // The second host node runs d on the executable graph; the graph keeps b.
  cudaHostNodeParams hd{record, &d};
  GLEAM_PROGRAM_CHECK(cudaGraphExecHostNodeSetParams(exec, h2, &hd));
  log.tags.clear();
  for (int r = 0; r < 10; ++r)
    GLEAM_PROGRAM_CHECK(cudaGraphLaunch(exec, s));
  GLEAM_PROGRAM_CHECK(cudaStreamSynchronize(s));
  report("exec set params", log.tags, "ad", sum);
  GLEAM_PROGRAM_CHECK(cudaGraphHostNodeSetParams(h1, &hd));
  cudaGraphExec_t exec2 = nullptr;
  GLEAM_PROGRAM_CHECK(cudaGraphInstantiate(&exec2, graph, 0));
  log.tags.clear();
  GLEAM_PROGRAM_CHECK(cudaGraphLaunch(exec2, s));
  GLEAM_PROGRAM_CHECK(cudaStreamSynchronize(s));
  report("graph set params", log.tags, "db", sum);

  // Captured: add_one, host c, times_three.
  GLEAM_PROGRAM_CHECK(cudaMemset(x, 0, n * sizeof(unsigned)));
  GLEAM_PROGRAM_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  add_one<<<n / 256, 256, 0, s>>>(x, n);
  GLEAM_PROGRAM_CHECK_LAUNCH();
  GLEAM_PROGRAM_CHECK(cudaLaunchHostFunc(s, record, &c));
  times_three<<<n / 256, 256, 0, s>>>(x, n);
  GLEAM_PROGRAM_CHECK_LAUNCH();
  cudaGraph_t captured = nullptr;
  GLEAM_PROGRAM_CHECK(cudaStreamEndCapture(s, &captured));
  cudaGraphExec_t exec3 = nullptr;
  GLEAM_PROGRAM_CHECK(cudaGraphInstantiate(&exec3, captured, 0));
  log.tags.clear();
  for (int r = 0; r < 100; ++r)
    GLEAM_PROGRAM_CHECK(cudaGraphLaunch(exec3, s));
  GLEAM_PROGRAM_CHECK(cudaStreamSynchronize(s));
  report("captured host function", log.tags, "c", sum);
  show("captured graph", x, sum);

  // A legacy stream callback cannot be captured.
  GLEAM_PROGRAM_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  auto added = cudaStreamAddCallback(
    s, [](cudaStream_t, cudaError_t, void*) {}, nullptr, 0);
  cudaGraph_t refused = nullptr;
  auto ended = cudaStreamEndCapture(s, &refused);
  std::printf("cudaStreamAddCallback in a capture: %s, end: %s\n", cudaGetErrorName(added),
              cudaGetErrorName(ended));
  cudaGetLastError();
  if (refused != nullptr)
    GLEAM_PROGRAM_CHECK(cudaGraphDestroy(refused));

  GLEAM_PROGRAM_CHECK(cudaGraphExecDestroy(exec));
  GLEAM_PROGRAM_CHECK(cudaGraphExecDestroy(exec2));
  GLEAM_PROGRAM_CHECK(cudaGraphExecDestroy(exec3));
  GLEAM_PROGRAM_CHECK(cudaGraphDestroy(graph));
  GLEAM_PROGRAM_CHECK(cudaGraphDestroy(captured));
  GLEAM_PROGRAM_CHECK(cudaStreamDestroy(s));
  GLEAM_PROGRAM_CHECK(cudaFree(x));
  sum.print("graph_host");
  return 0;
}
