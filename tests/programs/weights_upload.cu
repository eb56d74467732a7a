// Uploads ~256 MiB of weight-like data (deterministic pseudo-random bf16-ish
// values in 64 tensors of 4 MiB) and checksums it on the GPU; the host
// computes the same checksum and compares. The pattern the weight cache is
// built for: large H2D copies of data that does not change between runs.
#include "common.cuh"

#include <vector>

constexpr int tensors = 64;
constexpr size_t tensor_bytes = size_t{4} << 20;
constexpr size_t words = tensor_bytes / sizeof(uint32_t);

// Per-tensor checksum: each block folds its slice into a 64-bit value with
// position-dependent mixing, one result per block; deterministic.
__device__ __host__ inline uint64_t mix(uint32_t word, uint64_t index) {
  uint64_t x = (static_cast<uint64_t>(word) << 1 | 1) * 0x9e3779b97f4a7c15ull;
  return x ^ (index * 0xbf58476d1ce4e5b9ull);
}

__global__ void fold(const uint32_t* data, size_t n, uint64_t* per_block) {
  __shared__ uint64_t s[256];
  uint64_t acc = 0;
  for (size_t i = blockIdx.x * 256ull + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * 256)
    acc += mix(data[i], i);
  s[threadIdx.x] = acc;
  __syncthreads();
  for (int stride = 128; stride > 0; stride /= 2) {
    if (threadIdx.x < stride)
      s[threadIdx.x] += s[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0)
    per_block[blockIdx.x] = s[0];
}

int main() {
  gleam_program::checksum sum;
  std::vector<uint32_t*> device(tensors, nullptr);
  std::vector<uint32_t> host(words);
  std::vector<uint64_t> expected(tensors, 0);
  for (int t = 0; t < tensors; ++t) {
    uint32_t state = 0x1234567u + static_cast<uint32_t>(t) * 7919u;
    for (size_t i = 0; i < words; ++i) {
      // Two bf16-like halves with small exponents, like trained weights.
      uint32_t r = gleam_program::next_random(state);
      host[i] = (r & 0x807f807fu) | 0x3c003c00u;
    }
    for (size_t i = 0; i < words; ++i)
      expected[t] += mix(host[i], i);
    GLEAM_PROGRAM_CHECK(cudaMalloc(&device[t], tensor_bytes));
    GLEAM_PROGRAM_CHECK(cudaMemcpy(device[t], host.data(), tensor_bytes,
                                   cudaMemcpyHostToDevice));
  }
  std::printf("uploaded %d tensors, %zu MiB\n", tensors,
              tensors * tensor_bytes >> 20);

  constexpr int blocks = 128;
  uint64_t* per_block = nullptr;
  GLEAM_PROGRAM_CHECK(cudaMalloc(&per_block, tensors * blocks * sizeof(uint64_t)));
  for (int t = 0; t < tensors; ++t) {
    fold<<<blocks, 256>>>(device[t], words, per_block + t * blocks);
    GLEAM_PROGRAM_CHECK_LAUNCH();
  }
  std::vector<uint64_t> folded(tensors * blocks);
  GLEAM_PROGRAM_CHECK(cudaMemcpy(folded.data(), per_block,
                                 folded.size() * sizeof(uint64_t),
                                 cudaMemcpyDeviceToHost));
  int matching = 0;
  for (int t = 0; t < tensors; ++t) {
    uint64_t gpu = 0;
    for (int b = 0; b < blocks; ++b)
      gpu += folded[t * blocks + b];
    matching += gpu == expected[t] ? 1 : 0;
    sum.add_value(gpu);
  }
  std::printf("tensors whose GPU checksum matches the host: %d of %d\n",
              matching, tensors);
  GLEAM_PROGRAM_EXPECT(matching == tensors, "GPU checksums");

  // Read one tensor back in full: the bytes must be the ones uploaded.
  GLEAM_PROGRAM_CHECK(cudaMemcpy(host.data(), device[tensors - 1], tensor_bytes,
                                 cudaMemcpyDeviceToHost));
  sum.add(host.data(), tensor_bytes);

  GLEAM_PROGRAM_CHECK(cudaFree(per_block));
  for (auto* p : device)
    GLEAM_PROGRAM_CHECK(cudaFree(p));
  sum.print("weights_upload");
  return 0;
}
