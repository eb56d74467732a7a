// Asynchronous work in order and its errors: 256 launches, async memsets and
// async copies from a pageable buffer the program overwrites right after
// each call, all read back once; then a launch the driver refuses (a thread
// block cluster that does not divide the grid): its error is seen exactly
// once, whether at the launch (local CUDA) or at the next synchronization
// (Gleam's async forwarding); the work after it still succeeds.
#include "common.cuh"

#include <cstring>
#include <vector>

__global__ void add(int* data, int n, int v) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    data[i] += v;
}

__global__ void plain(int* data) {
  if (data != nullptr && threadIdx.x == 1u << 30)
    data[0] = 0;
}

int main() {
  gleam_program::checksum sum;
  constexpr int n = 1 << 16;
  int* dev = nullptr;
  GLEAM_PROGRAM_CHECK(cudaMalloc(&dev, n * sizeof(int)));
  GLEAM_PROGRAM_CHECK(cudaMemsetAsync(dev, 0, n * sizeof(int), nullptr));
  for (int k = 1; k <= 256; ++k)
    add<<<n / 256, 256>>>(dev, n, k);
  GLEAM_PROGRAM_CHECK_LAUNCH();
  // sum 1..256 = 32896 everywhere.
  std::vector<int> host(n, -1);
  GLEAM_PROGRAM_CHECK(cudaMemcpy(host.data(), dev, n * sizeof(int), cudaMemcpyDeviceToHost));
  GLEAM_PROGRAM_EXPECT(host[0] == 32896 && host[n - 1] == 32896, "256 launches in order");
  sum.add(host.data(), n * sizeof(int));
  std::printf("256 launches in order: ok\n");

  // Async copies from one pageable buffer, overwritten after every call:
  // each copy must carry the bytes of its own moment.
  std::vector<int> staging(1024);
  for (int k = 0; k < 64; ++k) {
    for (auto& x : staging)
      x = k;
    GLEAM_PROGRAM_CHECK(cudaMemcpyAsync(dev + k * 1024, staging.data(), 1024 * sizeof(int),
                                        cudaMemcpyHostToDevice, nullptr));
  }
  for (auto& x : staging)
    x = -7;
  GLEAM_PROGRAM_CHECK(cudaMemcpy(host.data(), dev, 64 * 1024 * sizeof(int),
                                 cudaMemcpyDeviceToHost));
  bool ok = true;
  for (int k = 0; k < 64; ++k)
    ok = ok && host[k * 1024] == k && host[k * 1024 + 1023] == k;
  GLEAM_PROGRAM_EXPECT(ok, "pageable sources captured at the call");
  sum.add(host.data(), 64 * 1024 * sizeof(int));
  std::printf("64 async copies from a reused pageable buffer: ok\n");

  // A cluster of 2 blocks over a grid of 3: refused by the driver.
  cudaLaunchAttribute attr = {};
  attr.id = cudaLaunchAttributeClusterDimension;
  attr.val.clusterDim.x = 2;
  attr.val.clusterDim.y = 1;
  attr.val.clusterDim.z = 1;
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(3);
  config.blockDim = dim3(32);
  config.attrs = &attr;
  config.numAttrs = 1;
  void* args[] = {&dev};
  cudaError_t at_launch =
    cudaLaunchKernelExC(&config, reinterpret_cast<const void*>(plain), args);
  cudaError_t at_peek = cudaPeekAtLastError();
  cudaError_t at_sync = cudaDeviceSynchronize();
  cudaError_t first = at_launch != cudaSuccess ? at_launch
                      : at_peek != cudaSuccess ? at_peek
                                               : at_sync;
  int seen = (at_launch != cudaSuccess || at_peek != cudaSuccess ? 1 : 0)
             + (at_sync != cudaSuccess ? 1 : 0);
  const char* name = cudaGetErrorName(first);
  std::printf("cluster 2 over grid 3 -> %s, seen %d time(s)\n", name, seen);
  sum.add(name, std::strlen(name));
  sum.add_value(seen);
  GLEAM_PROGRAM_EXPECT(first != cudaSuccess && seen == 1, "refused exactly once");
  (void)cudaGetLastError();
  GLEAM_PROGRAM_EXPECT(cudaDeviceSynchronize() == cudaSuccess, "not delivered twice");

  // The context is intact.
  add<<<n / 256, 256>>>(dev, n, 1);
  GLEAM_PROGRAM_CHECK_LAUNCH();
  GLEAM_PROGRAM_CHECK(cudaMemcpy(host.data(), dev, sizeof(int), cudaMemcpyDeviceToHost));
  GLEAM_PROGRAM_EXPECT(host[0] == 1, "work after the refused launch");
  std::printf("work after the refused launch: ok\n");
  GLEAM_PROGRAM_CHECK(cudaFree(dev));
  sum.print("async_work");
  return 0;
}
