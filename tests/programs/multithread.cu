// Two host threads, each with its own stream and buffers, launching and
// copying concurrently; results are joined and checked on the main thread.
#include "common.cuh"

#include <functional>
#include <thread>
#include <vector>

__global__ void polynomial(const int* in, int* out, int n, int k) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = in[i] * in[i] * k + in[i] - k;
}

namespace {

struct worker_result {
  std::vector<int> out;
  cudaError_t status = cudaSuccess;
  const char* failed_call = nullptr;
};

#define GLEAM_WORKER_CHECK(call)    \
  do {                              \
    cudaError_t s_ = (call);        \
    if (s_ != cudaSuccess) {        \
      r.status = s_;                \
      r.failed_call = #call;        \
      return;                       \
    }                               \
  } while (false)

void work(int k, int n, worker_result& r) {
  GLEAM_WORKER_CHECK(cudaSetDevice(0));
  cudaStream_t stream;
  GLEAM_WORKER_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  std::vector<int> in(n);
  for (int i = 0; i < n; ++i)
    in[i] = (i * k) % 1000 - 500;
  int *din = nullptr, *dout = nullptr;
  GLEAM_WORKER_CHECK(cudaMalloc(&din, n * sizeof(int)));
  GLEAM_WORKER_CHECK(cudaMalloc(&dout, n * sizeof(int)));
  r.out.assign(n, 0);
  for (int round = 0; round < 20; ++round) {
    GLEAM_WORKER_CHECK(cudaMemcpyAsync(din, in.data(), n * sizeof(int),
                                       cudaMemcpyHostToDevice, stream));
    polynomial<<<(n + 255) / 256, 256, 0, stream>>>(din, dout, n, k + round);
    GLEAM_WORKER_CHECK(cudaPeekAtLastError());
    GLEAM_WORKER_CHECK(cudaMemcpyAsync(r.out.data(), dout, n * sizeof(int),
                                       cudaMemcpyDeviceToHost, stream));
    GLEAM_WORKER_CHECK(cudaStreamSynchronize(stream));
    in[round] = r.out[round] % 997;
  }
  GLEAM_WORKER_CHECK(cudaFree(din));
  GLEAM_WORKER_CHECK(cudaFree(dout));
  GLEAM_WORKER_CHECK(cudaStreamDestroy(stream));
}

} // namespace

int main() {
  constexpr int n = 1 << 17;
  gleam_program::checksum sum;
  // Create the context before the threads race to do so.
  GLEAM_PROGRAM_CHECK(cudaFree(nullptr));
  worker_result results[2];
  std::thread first(work, 3, n, std::ref(results[0]));
  std::thread second(work, 5, n, std::ref(results[1]));
  first.join();
  second.join();
  for (int t = 0; t < 2; ++t) {
    if (results[t].status != cudaSuccess) {
      std::fprintf(stderr, "thread %d: %s failed: %s\n", t,
                   results[t].failed_call,
                   cudaGetErrorName(results[t].status));
      return 1;
    }
    std::printf("thread %d: out[1] = %d\n", t, results[t].out[1]);
    sum.add(results[t].out.data(), results[t].out.size() * sizeof(int));
  }
  GLEAM_PROGRAM_CHECK(cudaDeviceSynchronize());
  sum.print("multithread");
  return 0;
}
