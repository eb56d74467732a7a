// Stream capture: a sequence of kernels, a device-to-device copy and a memset
// captured in a stream (fork/join over a second stream through events),
// instantiated and replayed 1000 times; then a second capture with other
// kernel arguments applied by cudaGraphExecUpdate, and replayed again.
#include "common.cuh"

#include <vector>

namespace {

constexpr int n = 4096;
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

namespace {

/// Captures one step: x = x*a+b; tmp = copy of x (on a forked stream after a
/// memset); acc += tmp.
cudaGraph_t capture_step(cudaStream_t s, cudaStream_t side, cudaEvent_t fork,
                         cudaEvent_t join, unsigned* x, unsigned* tmp,
                         unsigned* acc, unsigned a, unsigned b) {
  GLEAM_PROGRAM_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  GLEAM_PROGRAM_CHECK(cudaStreamIsCapturing(s, &status));
  GLEAM_PROGRAM_EXPECT(status == cudaStreamCaptureStatusActive, "capturing");
  axpb<<<n / 256, 256, 0, s>>>(x, a, b, n);
  GLEAM_PROGRAM_CHECK_LAUNCH();
  GLEAM_PROGRAM_CHECK(cudaEventRecord(fork, s));
  GLEAM_PROGRAM_CHECK(cudaStreamWaitEvent(side, fork, 0));
  GLEAM_PROGRAM_CHECK(cudaStreamIsCapturing(side, &status));
  GLEAM_PROGRAM_EXPECT(status == cudaStreamCaptureStatusActive, "forked stream captures");
  GLEAM_PROGRAM_CHECK(cudaMemsetAsync(tmp, 0, n * sizeof(unsigned), side));
  GLEAM_PROGRAM_CHECK(cudaMemcpyAsync(tmp, x, n * sizeof(unsigned) / 2,
                                      cudaMemcpyDeviceToDevice, side));
  GLEAM_PROGRAM_CHECK(cudaEventRecord(join, side));
  GLEAM_PROGRAM_CHECK(cudaStreamWaitEvent(s, join, 0));
  add_into<<<n / 256, 256, 0, s>>>(acc, tmp, n);
  GLEAM_PROGRAM_CHECK_LAUNCH();
  cudaGraph_t graph = nullptr;
  GLEAM_PROGRAM_CHECK(cudaStreamEndCapture(s, &graph));
  GLEAM_PROGRAM_EXPECT(graph != nullptr, "a captured graph");
  GLEAM_PROGRAM_CHECK(cudaStreamIsCapturing(s, &status));
  GLEAM_PROGRAM_EXPECT(status == cudaStreamCaptureStatusNone, "capture ended");
  GLEAM_PROGRAM_CHECK(cudaStreamIsCapturing(side, &status));
  GLEAM_PROGRAM_EXPECT(status == cudaStreamCaptureStatusNone, "join ended the fork");
  return graph;
}

/// The same computation on the host, `rounds` times.
void reference(std::vector<unsigned>& x, std::vector<unsigned>& acc, unsigned a,
               unsigned b, int rounds) {
  for (int r = 0; r < rounds; ++r)
    for (int i = 0; i < n; ++i) {
      x[i] = x[i] * a + b;
      acc[i] += i < n / 2 ? x[i] : 0u;
    }
}

} // namespace

int main() {
  gleam_program::checksum sum;
  std::vector<unsigned> hx(n), hacc(n, 0);
  uint32_t state = 12345;
  for (auto& v : hx)
    v = gleam_program::next_random(state) & 0xffff;
  unsigned *x = nullptr, *tmp = nullptr, *acc = nullptr;
  GLEAM_PROGRAM_CHECK(cudaMalloc(&x, n * sizeof(unsigned)));
  GLEAM_PROGRAM_CHECK(cudaMalloc(&tmp, n * sizeof(unsigned)));
  GLEAM_PROGRAM_CHECK(cudaMalloc(&acc, n * sizeof(unsigned)));
  GLEAM_PROGRAM_CHECK(cudaMemcpy(x, hx.data(), n * sizeof(unsigned), cudaMemcpyHostToDevice));
  GLEAM_PROGRAM_CHECK(cudaMemset(acc, 0, n * sizeof(unsigned)));
  cudaStream_t s, side;
  GLEAM_PROGRAM_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  GLEAM_PROGRAM_CHECK(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
  cudaEvent_t fork, join;
  GLEAM_PROGRAM_CHECK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
  GLEAM_PROGRAM_CHECK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));

  // Capturing executes nothing.
  cudaGraph_t g1 = capture_step(s, side, fork, join, x, tmp, acc, 3, 7);
  std::vector<unsigned> out(n);
  GLEAM_PROGRAM_CHECK(cudaMemcpy(out.data(), x, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
  GLEAM_PROGRAM_EXPECT(out == hx, "capture ran nothing");

  cudaGraphExec_t exec = nullptr;
  GLEAM_PROGRAM_CHECK(cudaGraphInstantiate(&exec, g1, 0));
  GLEAM_PROGRAM_CHECK(cudaGraphUpload(exec, s));
  for (int r = 0; r < replays; ++r)
    GLEAM_PROGRAM_CHECK(cudaGraphLaunch(exec, s));
  GLEAM_PROGRAM_CHECK(cudaStreamSynchronize(s));
  reference(hx, hacc, 3, 7, replays);
  GLEAM_PROGRAM_CHECK(cudaMemcpy(out.data(), x, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
  GLEAM_PROGRAM_EXPECT(out == hx, "x after 1000 replays");
  sum.add(out.data(), n * sizeof(unsigned));
  GLEAM_PROGRAM_CHECK(cudaMemcpy(out.data(), acc, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
  GLEAM_PROGRAM_EXPECT(out == hacc, "acc after 1000 replays");
  sum.add(out.data(), n * sizeof(unsigned));
  std::printf("replayed %d times: x[0]=%u acc[1]=%u\n", replays, hx[0], hacc[1]);

  // Same topology, other arguments: the executable graph is updated in place.
  cudaGraph_t g2 = capture_step(s, side, fork, join, x, tmp, acc, 5, 1);
  cudaGraphExecUpdateResultInfo info;
  GLEAM_PROGRAM_CHECK(cudaGraphExecUpdate(exec, g2, &info));
  std::printf("update result %d\n", static_cast<int>(info.result));
  GLEAM_PROGRAM_EXPECT(info.result == cudaGraphExecUpdateSuccess, "update succeeded");
  for (int r = 0; r < replays; ++r)
    GLEAM_PROGRAM_CHECK(cudaGraphLaunch(exec, s));
  GLEAM_PROGRAM_CHECK(cudaStreamSynchronize(s));
  reference(hx, hacc, 5, 1, replays);
  GLEAM_PROGRAM_CHECK(cudaMemcpy(out.data(), x, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
  GLEAM_PROGRAM_EXPECT(out == hx, "x after the update");
  sum.add(out.data(), n * sizeof(unsigned));
  GLEAM_PROGRAM_CHECK(cudaMemcpy(out.data(), acc, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
  GLEAM_PROGRAM_EXPECT(out == hacc, "acc after the update");
  sum.add(out.data(), n * sizeof(unsigned));
  std::printf("updated and replayed %d times: x[0]=%u acc[1]=%u\n", replays, hx[0], hacc[1]);

  // A graph of a different topology does not update (the result says why).
  GLEAM_PROGRAM_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  axpb<<<n / 256, 256, 0, s>>>(x, 1, 0, n);
  GLEAM_PROGRAM_CHECK_LAUNCH();
  cudaGraph_t g3 = nullptr;
  GLEAM_PROGRAM_CHECK(cudaStreamEndCapture(s, &g3));
  cudaError_t bad = cudaGraphExecUpdate(exec, g3, &info);
  std::printf("mismatched update: %s, result %d\n", cudaGetErrorName(bad),
              static_cast<int>(info.result));
  GLEAM_PROGRAM_EXPECT(bad != cudaSuccess, "topology change refused");
  static_cast<void>(cudaGetLastError());

  GLEAM_PROGRAM_CHECK(cudaGraphExecDestroy(exec));
  GLEAM_PROGRAM_CHECK(cudaGraphDestroy(g1));
  GLEAM_PROGRAM_CHECK(cudaGraphDestroy(g2));
  GLEAM_PROGRAM_CHECK(cudaGraphDestroy(g3));
  GLEAM_PROGRAM_CHECK(cudaEventDestroy(fork));
  GLEAM_PROGRAM_CHECK(cudaEventDestroy(join));
  GLEAM_PROGRAM_CHECK(cudaStreamDestroy(s));
  GLEAM_PROGRAM_CHECK(cudaStreamDestroy(side));
  GLEAM_PROGRAM_CHECK(cudaFree(x));
  GLEAM_PROGRAM_CHECK(cudaFree(tmp));
  GLEAM_PROGRAM_CHECK(cudaFree(acc));
  sum.print("graph_capture");
  return 0;
}
