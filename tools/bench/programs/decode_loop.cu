// Decode-like loop: each iteration launches --kernels small kernels and
// then reads back 4 bytes (one synchronization per iteration), like an LLM
// decode step fetching the next token.
// Usage: decode_loop [--iters N] [--kernels K]
#include "bench_util.cuh"

__global__ void axpy(float* y, const float* x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = a * x[i] + y[i];
}

int main(int argc, char** argv) {
  int iters = std::atoi(bench::arg(argc, argv, "--iters", "200").c_str());
  int kernels = std::atoi(bench::arg(argc, argv, "--kernels", "32").c_str());
  const int n = 4096;
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
      axpy<<<(n + 255) / 256, 256>>>(y, x, 0.5f, n);
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
