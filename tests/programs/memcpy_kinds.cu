// Every cudaMemcpy kind (H2D, D2H, D2D, H2H, Default) synchronously and
// asynchronously on streams, from pageable and pinned memory.
#include "common.cuh"

#include <vector>

__global__ void add_index(unsigned* data, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    data[i] += static_cast<unsigned>(i);
}

int main() {
  constexpr int n = 1 << 18;
  constexpr size_t bytes = n * sizeof(unsigned);
  gleam_program::checksum sum;
  std::vector<unsigned> src(n), dst(n, 0);
  uint32_t state = 12345;
  for (auto& x : src)
    x = gleam_program::next_random(state);

  unsigned *a = nullptr, *b = nullptr;
  GLEAM_PROGRAM_CHECK(cudaMalloc(&a, bytes));
  GLEAM_PROGRAM_CHECK(cudaMalloc(&b, bytes));

  GLEAM_PROGRAM_CHECK(cudaMemcpy(a, src.data(), bytes, cudaMemcpyHostToDevice));
  GLEAM_PROGRAM_CHECK(cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice));
  add_index<<<n / 256, 256>>>(b, n);
  GLEAM_PROGRAM_CHECK_LAUNCH();
  GLEAM_PROGRAM_CHECK(cudaMemcpy(dst.data(), b, bytes, cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i)
    GLEAM_PROGRAM_EXPECT(dst[i] == src[i] + static_cast<unsigned>(i),
                         "H2D, D2D, kernel, D2H");
  sum.add(dst.data(), bytes);
  std::printf("H2D D2D D2H: ok\n");

  std::vector<unsigned> copy(n, 0);
  GLEAM_PROGRAM_CHECK(
      cudaMemcpy(copy.data(), dst.data(), bytes, cudaMemcpyHostToHost));
  GLEAM_PROGRAM_EXPECT(copy == dst, "H2H");

  // cudaMemcpyDefault infers the direction from the pointers.
  GLEAM_PROGRAM_CHECK(cudaMemcpy(a, copy.data(), bytes, cudaMemcpyDefault));
  add_index<<<n / 256, 256>>>(a, n);
  GLEAM_PROGRAM_CHECK_LAUNCH();
  GLEAM_PROGRAM_CHECK(cudaMemcpy(b, a, bytes, cudaMemcpyDefault));
  GLEAM_PROGRAM_CHECK(cudaMemcpy(dst.data(), b, bytes, cudaMemcpyDefault));
  sum.add(dst.data(), bytes);
  std::printf("cudaMemcpyDefault: ok\n");

  // Async copies on two streams, pinned buffers, halves in parallel.
  unsigned* pinned_in = nullptr;
  unsigned* pinned_out = nullptr;
  GLEAM_PROGRAM_CHECK(cudaMallocHost(&pinned_in, bytes));
  GLEAM_PROGRAM_CHECK(cudaMallocHost(&pinned_out, bytes));
  for (int i = 0; i < n; ++i)
    pinned_in[i] = src[i] ^ 0x5a5a5a5au;
  cudaStream_t streams[2];
  for (auto& s : streams)
    GLEAM_PROGRAM_CHECK(cudaStreamCreate(&s));
  constexpr int half = n / 2;
  for (int k = 0; k < 2; ++k) {
    size_t off = static_cast<size_t>(k) * half;
    GLEAM_PROGRAM_CHECK(cudaMemcpyAsync(a + off, pinned_in + off,
                                        half * sizeof(unsigned),
                                        cudaMemcpyHostToDevice, streams[k]));
    add_index<<<half / 256, 256, 0, streams[k]>>>(a + off, half);
    GLEAM_PROGRAM_CHECK_LAUNCH();
    GLEAM_PROGRAM_CHECK(cudaMemcpyAsync(b + off, a + off,
                                        half * sizeof(unsigned),
                                        cudaMemcpyDeviceToDevice, streams[k]));
    GLEAM_PROGRAM_CHECK(cudaMemcpyAsync(pinned_out + off, b + off,
                                        half * sizeof(unsigned),
                                        cudaMemcpyDefault, streams[k]));
  }
  for (auto s : streams)
    GLEAM_PROGRAM_CHECK(cudaStreamSynchronize(s));
  sum.add(pinned_out, bytes);

  // Async from pageable memory on the legacy default stream.
  GLEAM_PROGRAM_CHECK(cudaMemcpyAsync(a, src.data(), bytes,
                                      cudaMemcpyHostToDevice, 0));
  GLEAM_PROGRAM_CHECK(cudaMemcpyAsync(dst.data(), a, bytes,
                                      cudaMemcpyDeviceToHost, 0));
  GLEAM_PROGRAM_CHECK(cudaStreamSynchronize(0));
  GLEAM_PROGRAM_EXPECT(dst == src, "pageable async round trip");
  sum.add(dst.data(), bytes);
  std::printf("async copies on streams: ok\n");

  for (auto s : streams)
    GLEAM_PROGRAM_CHECK(cudaStreamDestroy(s));
  GLEAM_PROGRAM_CHECK(cudaFreeHost(pinned_in));
  GLEAM_PROGRAM_CHECK(cudaFreeHost(pinned_out));
  GLEAM_PROGRAM_CHECK(cudaFree(a));
  GLEAM_PROGRAM_CHECK(cudaFree(b));
  sum.print("memcpy_kinds");
  return 0;
}
