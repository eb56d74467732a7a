// Decode-like loop: each iteration launches --kernels kernels and then reads
// back 4 bytes (one synchronization per iteration), like an LLM decode step
// fetching the next token before it can issue the next step.
//
// --kernel-us U makes every kernel busy the GPU for U microseconds (all SMs
// spin on the global timer, then do an axpy over the activations), so that
// an iteration costs what a token of a real model costs on the GPU: the
// decode_loop scenario uses 32 kernels x 156 us = 5.0 ms, the GPU time of a
// token of a ~1B-parameter fp16 model in an eager framework on a big GPU
// (see tools/bench/README.md). --kernel-us 0 launches tiny kernels only (the
// launch_storm scenario: launch cost and round trips, nothing to hide them).
// Usage: decode_loop [--iters N] [--kernels K] [--kernel-us U]
#include "bench_util.cuh"

__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void layer(float* y, const float* x, float a, int n, unsigned long long spin_ns) {
  if (spin_ns != 0) {
    auto start = global_ns();
    while (global_ns() - start < spin_ns) {
    }
  }
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    y[i] = a * x[i] + y[i];
}

int main(int argc, char** argv) {
  int iters = std::atoi(bench::arg(argc, argv, "--iters", "200").c_str());
  int kernels = std::atoi(bench::arg(argc, argv, "--kernels", "32").c_str());
  double kernel_us = std::atof(bench::arg(argc, argv, "--kernel-us", "0").c_str());
  auto spin_ns = static_cast<unsigned long long>(kernel_us * 1000);
  const int n = 4096;
  int sms = 1;
  GLEAM_BENCH_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  // Busy kernels occupy every SM; tiny ones are a handful of blocks.
  int blocks = spin_ns != 0 ? sms : (n + 255) / 256;
  float* x = nullptr;
  float* y = nullptr;
  GLEAM_BENCH_CHECK(cudaMalloc(&x, n * sizeof(float)));
  GLEAM_BENCH_CHECK(cudaMalloc(&y, n * sizeof(float)));
  GLEAM_BENCH_CHECK(cudaMemset(x, 0, n * sizeof(float)));
  GLEAM_BENCH_CHECK(cudaMemset(y, 0, n * sizeof(float)));
  std::vector<double> iter_us;
  float token = 0;
  double t_start = bench::now_us();
  for (int it = 0; it < iters; ++it) {
    double t0 = bench::now_us();
    for (int k = 0; k < kernels; ++k)
      layer<<<blocks, 256>>>(y, x, 0.5f, n, spin_ns);
    GLEAM_BENCH_CHECK(cudaGetLastError());
    GLEAM_BENCH_CHECK(cudaMemcpy(&token, y, sizeof(float), cudaMemcpyDeviceToHost));
    iter_us.push_back(bench::now_us() - t0);
  }
  double total_s = (bench::now_us() - t_start) / 1e6;
  GLEAM_BENCH_CHECK(cudaFree(x));
  GLEAM_BENCH_CHECK(cudaFree(y));
  bench::result("iter_us", bench::median(iter_us));
  bench::result("iters_per_s", iters / total_s);
  return 0;
}
