// Per-call latency: a synchronizing call (4-byte cudaMemcpy D2H, one round
// trip through Gleam), an asynchronous call (empty kernel launch, returns
// at once with async forwarding) and a launch followed by a sync.
// Usage: call_latency [--iters N]
#include "bench_util.cuh"

__global__ void empty_kernel() {
}

int main(int argc, char** argv) {
  int iters = std::atoi(bench::arg(argc, argv, "--iters", "1000").c_str());
  int* dev = nullptr;
  int host = 0;
  GLEAM_BENCH_CHECK(cudaMalloc(&dev, sizeof(int)));
  GLEAM_BENCH_CHECK(cudaMemset(dev, 0, sizeof(int)));
  empty_kernel<<<1, 1>>>();
  GLEAM_BENCH_CHECK(cudaDeviceSynchronize());
  std::vector<double> sync_us, async_us, launch_sync_us;
  for (int i = 0; i < iters; ++i) {
    double t0 = bench::now_us();
    GLEAM_BENCH_CHECK(cudaMemcpy(&host, dev, sizeof(int), cudaMemcpyDeviceToHost));
    sync_us.push_back(bench::now_us() - t0);
  }
  for (int i = 0; i < iters; ++i) {
    double t0 = bench::now_us();
    empty_kernel<<<1, 1>>>();
    async_us.push_back(bench::now_us() - t0);
  }
  GLEAM_BENCH_CHECK(cudaGetLastError());
  GLEAM_BENCH_CHECK(cudaDeviceSynchronize());
  for (int i = 0; i < iters; ++i) {
    double t0 = bench::now_us();
    empty_kernel<<<1, 1>>>();
    GLEAM_BENCH_CHECK(cudaStreamSynchronize(0));
    launch_sync_us.push_back(bench::now_us() - t0);
  }
  GLEAM_BENCH_CHECK(cudaFree(dev));
  bench::result("sync_call_us", bench::median(sync_us));
  bench::result("async_call_us", bench::median(async_us));
  bench::result("launch_sync_us", bench::median(launch_sync_us));
  return 0;
}
