// Bulk copy throughput: H2D and D2H of --mib MiB from pinned host memory,
// fresh content per round (so no cache can answer), best of --rounds.
// Usage: bulk [--mib N] [--rounds R] [--seed S]
#include "bench_util.cuh"

int main(int argc, char** argv) {
  size_t mib = std::strtoull(bench::arg(argc, argv, "--mib", "256").c_str(), nullptr, 10);
  int rounds = std::atoi(bench::arg(argc, argv, "--rounds", "3").c_str());
  uint64_t seed = std::strtoull(bench::arg(argc, argv, "--seed", "1").c_str(), nullptr, 10);
  size_t bytes = mib << 20;
  void* host = nullptr;
  void* dev = nullptr;
  GLEAM_BENCH_CHECK(cudaMallocHost(&host, bytes));
  GLEAM_BENCH_CHECK(cudaMalloc(&dev, bytes));
  double best_h2d = 0;
  double best_d2h = 0;
  for (int r = 0; r < rounds; ++r) {
    bench::fill(host, bytes, seed * 1000 + static_cast<uint64_t>(r));
    double t0 = bench::now_us();
    GLEAM_BENCH_CHECK(cudaMemcpy(dev, host, bytes, cudaMemcpyHostToDevice));
    GLEAM_BENCH_CHECK(cudaDeviceSynchronize());
    double t1 = bench::now_us();
    GLEAM_BENCH_CHECK(cudaMemcpy(host, dev, bytes, cudaMemcpyDeviceToHost));
    double t2 = bench::now_us();
    best_h2d = std::max(best_h2d, static_cast<double>(bytes) * 8 / ((t1 - t0) * 1e3));
    best_d2h = std::max(best_d2h, static_cast<double>(bytes) * 8 / ((t2 - t1) * 1e3));
  }
  GLEAM_BENCH_CHECK(cudaFree(dev));
  GLEAM_BENCH_CHECK(cudaFreeHost(host));
  bench::result("h2d_gbit_s", best_h2d);
  bench::result("d2h_gbit_s", best_d2h);
  return 0;
}
