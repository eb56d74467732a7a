// Dynamic shared memory (below and above the 48 KiB default limit after
// cudaFuncSetAttribute), cudaFuncGetAttributes and occupancy queries.
#include "common.cuh"

#include <vector>

// Reverses each block's slice through dynamic shared memory.
__global__ void reverse_blocks(const unsigned* in, unsigned* out, int per_block) {
  extern __shared__ unsigned tile[];
  const unsigned* src = in + static_cast<size_t>(blockIdx.x) * per_block;
  unsigned* dst = out + static_cast<size_t>(blockIdx.x) * per_block;
  for (int i = threadIdx.x; i < per_block; i += blockDim.x)
    tile[i] = src[i];
  __syncthreads();
  for (int i = threadIdx.x; i < per_block; i += blockDim.x)
    dst[i] = tile[per_block - 1 - i] + blockIdx.x;
}

__global__ void static_tile(unsigned* out) {
  __shared__ unsigned tile[256];
  tile[threadIdx.x] = threadIdx.x * threadIdx.x;
  __syncthreads();
  out[threadIdx.x] = tile[255 - threadIdx.x];
}

int main() {
  gleam_program::checksum sum;
  cudaFuncAttributes attrs;
  GLEAM_PROGRAM_CHECK(
      cudaFuncGetAttributes(&attrs, reinterpret_cast<const void*>(static_tile)));
  std::printf("static_tile: static shared %zu bytes, max threads %d\n",
              attrs.sharedSizeBytes, attrs.maxThreadsPerBlock);
  GLEAM_PROGRAM_EXPECT(attrs.sharedSizeBytes == 256 * sizeof(unsigned),
                       "static shared size");
  sum.add_value(attrs.sharedSizeBytes);
  sum.add_value(attrs.maxThreadsPerBlock);
  GLEAM_PROGRAM_CHECK(cudaFuncGetAttributes(
      &attrs, reinterpret_cast<const void*>(reverse_blocks)));
  GLEAM_PROGRAM_EXPECT(attrs.sharedSizeBytes == 0, "no static shared memory");
  sum.add_value(attrs.ptxVersion);
  sum.add_value(attrs.binaryVersion);

  int optin = 0;
  GLEAM_PROGRAM_CHECK(
      cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0));
  constexpr int small_words = 8 * 1024;    // 32 KiB
  constexpr int large_words = 24 * 1024;   // 96 KiB, above the default 48 KiB
  GLEAM_PROGRAM_EXPECT(optin >= large_words * 4, "opt-in shared memory");
  constexpr int blocks = 64;
  size_t words = static_cast<size_t>(blocks) * large_words;
  std::vector<unsigned> host(words);
  for (size_t i = 0; i < words; ++i)
    host[i] = static_cast<unsigned>(i * 2654435761u);
  unsigned *in = nullptr, *out = nullptr;
  GLEAM_PROGRAM_CHECK(cudaMalloc(&in, words * sizeof(unsigned)));
  GLEAM_PROGRAM_CHECK(cudaMalloc(&out, words * sizeof(unsigned)));
  GLEAM_PROGRAM_CHECK(cudaMemcpy(in, host.data(), words * sizeof(unsigned),
                                 cudaMemcpyHostToDevice));

  reverse_blocks<<<blocks, 256, small_words * sizeof(unsigned)>>>(in, out,
                                                                  small_words);
  GLEAM_PROGRAM_CHECK_LAUNCH();
  std::vector<unsigned> back(words);
  GLEAM_PROGRAM_CHECK(cudaMemcpy(back.data(), out,
                                 blocks * small_words * sizeof(unsigned),
                                 cudaMemcpyDeviceToHost));
  GLEAM_PROGRAM_EXPECT(back[0] == host[small_words - 1], "32 KiB reverse");
  sum.add(back.data(), blocks * small_words * sizeof(unsigned));
  std::printf("32 KiB dynamic shared memory: ok\n");

  // Above 48 KiB the launch fails until the function opts in.
  reverse_blocks<<<blocks, 256, large_words * sizeof(unsigned)>>>(in, out,
                                                                  large_words);
  cudaError_t too_big = cudaGetLastError();
  std::printf("96 KiB without opt-in -> %s\n", cudaGetErrorName(too_big));
  GLEAM_PROGRAM_EXPECT(too_big == cudaErrorInvalidValue, "launch refused");
  sum.add_value(static_cast<int>(too_big));
  GLEAM_PROGRAM_CHECK(cudaFuncSetAttribute(
      reinterpret_cast<const void*>(reverse_blocks),
      cudaFuncAttributeMaxDynamicSharedMemorySize, large_words * 4));
  GLEAM_PROGRAM_CHECK(cudaFuncGetAttributes(
      &attrs, reinterpret_cast<const void*>(reverse_blocks)));
  GLEAM_PROGRAM_EXPECT(attrs.maxDynamicSharedSizeBytes == large_words * 4,
                       "attribute set");
  reverse_blocks<<<blocks, 256, large_words * sizeof(unsigned)>>>(in, out,
                                                                  large_words);
  GLEAM_PROGRAM_CHECK_LAUNCH();
  GLEAM_PROGRAM_CHECK(cudaMemcpy(back.data(), out, words * sizeof(unsigned),
                                 cudaMemcpyDeviceToHost));
  GLEAM_PROGRAM_EXPECT(back[large_words] == host[2 * large_words - 1] + 1,
                       "96 KiB reverse");
  sum.add(back.data(), words * sizeof(unsigned));
  std::printf("96 KiB dynamic shared memory after opt-in: ok\n");

  int active_small = 0, active_large = 0;
  GLEAM_PROGRAM_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &active_small, reverse_blocks, 256, small_words * sizeof(unsigned)));
  GLEAM_PROGRAM_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &active_large, reverse_blocks, 256, large_words * sizeof(unsigned)));
  std::printf("occupancy: %d blocks/SM at 32 KiB, %d at 96 KiB\n",
              active_small, active_large);
  GLEAM_PROGRAM_EXPECT(active_large >= 1 && active_small >= active_large,
                       "occupancy falls with shared memory");
  sum.add_value(active_small);
  sum.add_value(active_large);

  static_tile<<<1, 256>>>(out);
  GLEAM_PROGRAM_CHECK_LAUNCH();
  GLEAM_PROGRAM_CHECK(cudaMemcpy(back.data(), out, 256 * sizeof(unsigned),
                                 cudaMemcpyDeviceToHost));
  GLEAM_PROGRAM_EXPECT(back[0] == 255u * 255u, "static shared memory");
  sum.add(back.data(), 256 * sizeof(unsigned));

  GLEAM_PROGRAM_CHECK(cudaFree(in));
  GLEAM_PROGRAM_CHECK(cudaFree(out));
  sum.print("shared_memory");
  return 0;
}
