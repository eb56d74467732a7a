// The three launch paths: <<<>>>, cudaLaunchKernel with an argument array,
// and cudaLaunchKernelExC with a plain config and with a cluster-dimension
// attribute (sm_90 thread block clusters).
#include "common.cuh"

#include <cooperative_groups.h>

#include <vector>

namespace cg = cooperative_groups;

__global__ void affine(int* out, int a, int b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = a * i + b;
}

// Each block writes its rank within the cluster and the cluster size.
__global__ void cluster_ranks(int* out) {
  cg::cluster_group cluster = cg::this_cluster();
  if (threadIdx.x == 0) {
    out[2 * blockIdx.x] = static_cast<int>(cluster.block_rank());
    out[2 * blockIdx.x + 1] = static_cast<int>(cluster.num_blocks());
  }
}

int main() {
  constexpr int n = 4096;
  gleam_program::checksum sum;
  int* dev = nullptr;
  GLEAM_PROGRAM_CHECK(cudaMalloc(&dev, n * sizeof(int)));
  std::vector<int> host(n);
  cudaStream_t stream;
  GLEAM_PROGRAM_CHECK(cudaStreamCreate(&stream));

  affine<<<n / 128, 128, 0, stream>>>(dev, 3, 1, n);
  GLEAM_PROGRAM_CHECK_LAUNCH();
  GLEAM_PROGRAM_CHECK(cudaMemcpyAsync(host.data(), dev, n * sizeof(int),
                                      cudaMemcpyDeviceToHost, stream));
  GLEAM_PROGRAM_CHECK(cudaStreamSynchronize(stream));
  GLEAM_PROGRAM_EXPECT(host[100] == 301, "<<<>>> launch");
  sum.add(host.data(), n * sizeof(int));
  std::printf("<<<>>>: out[100] = %d\n", host[100]);

  int a = -7, b = 1000, count = n;
  void* args[] = {&dev, &a, &b, &count};
  GLEAM_PROGRAM_CHECK(cudaLaunchKernel(reinterpret_cast<const void*>(affine),
                                       dim3(n / 256), dim3(256), args, 0,
                                       stream));
  GLEAM_PROGRAM_CHECK(cudaMemcpyAsync(host.data(), dev, n * sizeof(int),
                                      cudaMemcpyDeviceToHost, stream));
  GLEAM_PROGRAM_CHECK(cudaStreamSynchronize(stream));
  GLEAM_PROGRAM_EXPECT(host[100] == 300, "cudaLaunchKernel");
  sum.add(host.data(), n * sizeof(int));
  std::printf("cudaLaunchKernel: out[100] = %d\n", host[100]);

  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(n / 64);
  config.blockDim = dim3(64);
  config.dynamicSmemBytes = 0;
  config.stream = stream;
  config.attrs = nullptr;
  config.numAttrs = 0;
  a = 5;
  b = -3;
  GLEAM_PROGRAM_CHECK(cudaLaunchKernelExC(
      &config, reinterpret_cast<const void*>(affine), args));
  GLEAM_PROGRAM_CHECK(cudaMemcpyAsync(host.data(), dev, n * sizeof(int),
                                      cudaMemcpyDeviceToHost, stream));
  GLEAM_PROGRAM_CHECK(cudaStreamSynchronize(stream));
  GLEAM_PROGRAM_EXPECT(host[100] == 497, "cudaLaunchKernelExC plain");
  sum.add(host.data(), n * sizeof(int));
  std::printf("cudaLaunchKernelExC: out[100] = %d\n", host[100]);

  constexpr int blocks = 16;
  constexpr int cluster = 4;
  int* ranks = nullptr;
  GLEAM_PROGRAM_CHECK(cudaMalloc(&ranks, 2 * blocks * sizeof(int)));
  GLEAM_PROGRAM_CHECK(cudaMemset(ranks, 0xff, 2 * blocks * sizeof(int)));
  cudaLaunchAttribute attr = {};
  attr.id = cudaLaunchAttributeClusterDimension;
  attr.val.clusterDim.x = cluster;
  attr.val.clusterDim.y = 1;
  attr.val.clusterDim.z = 1;
  cudaLaunchConfig_t cluster_config = {};
  cluster_config.gridDim = dim3(blocks);
  cluster_config.blockDim = dim3(32);
  cluster_config.stream = stream;
  cluster_config.attrs = &attr;
  cluster_config.numAttrs = 1;
  void* cluster_args[] = {&ranks};
  GLEAM_PROGRAM_CHECK(cudaLaunchKernelExC(
      &cluster_config, reinterpret_cast<const void*>(cluster_ranks),
      cluster_args));
  std::vector<int> rank_host(2 * blocks);
  GLEAM_PROGRAM_CHECK(cudaMemcpyAsync(rank_host.data(), ranks,
                                      rank_host.size() * sizeof(int),
                                      cudaMemcpyDeviceToHost, stream));
  GLEAM_PROGRAM_CHECK(cudaStreamSynchronize(stream));
  for (int i = 0; i < blocks; ++i) {
    GLEAM_PROGRAM_EXPECT(rank_host[2 * i] == i % cluster, "cluster rank");
    GLEAM_PROGRAM_EXPECT(rank_host[2 * i + 1] == cluster, "cluster size");
  }
  sum.add(rank_host.data(), rank_host.size() * sizeof(int));
  std::printf("cluster launch: %d blocks in clusters of %d\n", blocks, cluster);

  GLEAM_PROGRAM_CHECK(cudaStreamDestroy(stream));
  GLEAM_PROGRAM_CHECK(cudaFree(ranks));
  GLEAM_PROGRAM_CHECK(cudaFree(dev));
  sum.print("launch_apis");
  return 0;
}
