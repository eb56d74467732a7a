// Contention probe: uploads --mb MiB of "weights" (the load phase), then
// runs --iters compute-bound kernels that fill the GPU, synchronizing after
// each (the compute phase). Several copies run concurrently on one GPU
// measure how co-located tasks slow each other down (deploy/contention-check.sh).
// Usage: contention [--mb N] [--iters N] [--inner N]
#include "bench_util.cuh"

__global__ void burn(float* out, int inner) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = static_cast<float>(i) * 1e-7f;
  for (int k = 0; k < inner; ++k)
    v = v * 0.9999999f + 1e-7f;
  out[i] = v;
}

int main(int argc, char** argv) {
  size_t mb = std::strtoull(bench::arg(argc, argv, "--mb", "256").c_str(), nullptr, 10);
  int iters = std::atoi(bench::arg(argc, argv, "--iters", "200").c_str());
  int inner = std::atoi(bench::arg(argc, argv, "--inner", "200000").c_str());
  const int blocks = 4096;
  const int threads = 256;
  double t0 = bench::now_us();
  std::vector<unsigned char> host(mb << 20);
  for (size_t i = 0; i < host.size(); ++i)
    host[i] = static_cast<unsigned char>(i * 131 + 7);
  unsigned char* weights = nullptr;
  float* out = nullptr;
  GLEAM_BENCH_CHECK(cudaMalloc(&weights, host.size() + 1));
  GLEAM_BENCH_CHECK(cudaMalloc(&out, sizeof(float) * blocks * threads));
  GLEAM_BENCH_CHECK(cudaMemcpy(weights, host.data(), host.size(), cudaMemcpyHostToDevice));
  double t1 = bench::now_us();
  for (int it = 0; it < iters; ++it) {
    burn<<<blocks, threads>>>(out, inner);
    GLEAM_BENCH_CHECK(cudaGetLastError());
    GLEAM_BENCH_CHECK(cudaDeviceSynchronize());
  }
  float probe = 0;
  GLEAM_BENCH_CHECK(cudaMemcpy(&probe, out, sizeof(float), cudaMemcpyDeviceToHost));
  double t2 = bench::now_us();
  GLEAM_BENCH_CHECK(cudaFree(weights));
  GLEAM_BENCH_CHECK(cudaFree(out));
  bench::result("load_s", (t1 - t0) / 1e6);
  bench::result("compute_s", (t2 - t1) / 1e6);
  bench::result("total_s", (t2 - t0) / 1e6);
  bench::result("probe", probe);
  return 0;
}
