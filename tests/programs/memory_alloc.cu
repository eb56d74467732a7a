// Allocation APIs: cudaMalloc/Free, cudaMallocHost/FreeHost, cudaHostAlloc
// (portable), cudaHostGetFlags, cudaHostRegister/Unregister,
// cudaPointerGetAttributes and cudaMemGetInfo. A kernel fills device memory
// that is copied into each kind of host memory.
#include "common.cuh"

#include <vector>

__global__ void fill(unsigned* out, unsigned seed, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = seed * 2654435761u + static_cast<unsigned>(i) * 40503u;
}

int main() {
  constexpr int n = 1 << 16;
  constexpr size_t bytes = n * sizeof(unsigned);
  gleam_program::checksum sum;

  unsigned* dev = nullptr;
  GLEAM_PROGRAM_CHECK(cudaMalloc(&dev, bytes));
  cudaPointerAttributes attr;
  GLEAM_PROGRAM_CHECK(cudaPointerGetAttributes(&attr, dev));
  GLEAM_PROGRAM_EXPECT(attr.type == cudaMemoryTypeDevice, "device pointer");
  std::printf("cudaMalloc pointer type %d\n", static_cast<int>(attr.type));
  fill<<<n / 256, 256>>>(dev, 1, n);
  GLEAM_PROGRAM_CHECK_LAUNCH();

  unsigned* pinned = nullptr;
  GLEAM_PROGRAM_CHECK(cudaMallocHost(&pinned, bytes));
  GLEAM_PROGRAM_CHECK(cudaPointerGetAttributes(&attr, pinned));
  GLEAM_PROGRAM_EXPECT(attr.type == cudaMemoryTypeHost, "pinned host");
  GLEAM_PROGRAM_CHECK(cudaMemcpy(pinned, dev, bytes, cudaMemcpyDeviceToHost));
  sum.add(pinned, bytes);

  unsigned* portable = nullptr;
  GLEAM_PROGRAM_CHECK(cudaHostAlloc(&portable, bytes, cudaHostAllocPortable));
  GLEAM_PROGRAM_CHECK(cudaPointerGetAttributes(&attr, portable));
  GLEAM_PROGRAM_EXPECT(attr.type == cudaMemoryTypeHost, "cudaHostAlloc host");
  unsigned flags = 0;
  GLEAM_PROGRAM_CHECK(cudaHostGetFlags(&flags, portable));
  fill<<<n / 256, 256>>>(dev, 2, n);
  GLEAM_PROGRAM_CHECK_LAUNCH();
  GLEAM_PROGRAM_CHECK(cudaMemcpy(portable, dev, bytes, cudaMemcpyDeviceToHost));
  sum.add(portable, bytes);
  std::printf("cudaHostAlloc buffer filled by a copy: %u %u\n", portable[0],
              portable[n - 1]);

  std::vector<unsigned> pageable(n, 0);
  GLEAM_PROGRAM_CHECK(
      cudaHostRegister(pageable.data(), bytes, cudaHostRegisterDefault));
  GLEAM_PROGRAM_CHECK(cudaPointerGetAttributes(&attr, pageable.data()));
  GLEAM_PROGRAM_EXPECT(attr.type == cudaMemoryTypeHost, "registered host");
  fill<<<n / 256, 256>>>(dev, 3, n);
  GLEAM_PROGRAM_CHECK_LAUNCH();
  GLEAM_PROGRAM_CHECK(
      cudaMemcpy(pageable.data(), dev, bytes, cudaMemcpyDeviceToHost));
  GLEAM_PROGRAM_CHECK(cudaHostUnregister(pageable.data()));
  sum.add(pageable.data(), bytes);

  // Many small allocations, freed in a different order.
  std::vector<void*> blocks;
  for (int i = 0; i < 64; ++i) {
    void* p = nullptr;
    GLEAM_PROGRAM_CHECK(cudaMalloc(&p, 4096 + 512 * static_cast<size_t>(i)));
    GLEAM_PROGRAM_CHECK(cudaMemset(p, i, 4096));
    blocks.push_back(p);
  }
  unsigned char probe[16];
  GLEAM_PROGRAM_CHECK(
      cudaMemcpy(probe, blocks[37], sizeof probe, cudaMemcpyDeviceToHost));
  sum.add(probe, sizeof probe);
  for (int i = 0; i < 64; i += 2)
    GLEAM_PROGRAM_CHECK(cudaFree(blocks[i]));
  for (int i = 1; i < 64; i += 2)
    GLEAM_PROGRAM_CHECK(cudaFree(blocks[i]));
  std::printf("64 small allocations made and freed\n");

  size_t free_bytes = 0, total_bytes = 0;
  GLEAM_PROGRAM_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  GLEAM_PROGRAM_EXPECT(free_bytes <= total_bytes, "free <= total");

  GLEAM_PROGRAM_CHECK(cudaFreeHost(portable));
  GLEAM_PROGRAM_CHECK(cudaFreeHost(pinned));
  GLEAM_PROGRAM_CHECK(cudaFree(dev));
  GLEAM_PROGRAM_CHECK(cudaFree(nullptr));
  sum.print("memory_alloc");
  return 0;
}
