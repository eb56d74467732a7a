// cudaMemset, cudaMemsetAsync, cudaMemset2D and cudaMemset2DAsync, at odd
// offsets and sizes.
#include "common.cuh"

#include <vector>

int main() {
  constexpr size_t bytes = 3 * 1024 * 1024 + 13;
  gleam_program::checksum sum;
  unsigned char* dev = nullptr;
  GLEAM_PROGRAM_CHECK(cudaMalloc(&dev, bytes));
  GLEAM_PROGRAM_CHECK(cudaMemset(dev, 0x11, bytes));
  GLEAM_PROGRAM_CHECK(cudaMemset(dev + 7, 0xa5, 1001));
  cudaStream_t stream;
  GLEAM_PROGRAM_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  GLEAM_PROGRAM_CHECK(cudaMemsetAsync(dev + 4096, 0x3c, 65536 + 3, stream));
  GLEAM_PROGRAM_CHECK(cudaMemsetAsync(dev + bytes - 5, 0xff, 5, stream));
  GLEAM_PROGRAM_CHECK(cudaStreamSynchronize(stream));
  std::vector<unsigned char> host(bytes);
  GLEAM_PROGRAM_CHECK(cudaMemcpy(host.data(), dev, bytes, cudaMemcpyDeviceToHost));
  GLEAM_PROGRAM_EXPECT(host[0] == 0x11 && host[7] == 0xa5 && host[1007] == 0xa5
                           && host[1008] == 0x11,
                       "cudaMemset range");
  GLEAM_PROGRAM_EXPECT(host[4096] == 0x3c && host[4096 + 65536 + 2] == 0x3c
                           && host[4096 + 65536 + 3] == 0x11,
                       "cudaMemsetAsync range");
  GLEAM_PROGRAM_EXPECT(host[bytes - 1] == 0xff && host[bytes - 6] == 0x11,
                       "tail memset");
  sum.add(host.data(), host.size());
  std::printf("1D memsets: ok\n");

  constexpr int width = 513;
  constexpr int height = 97;
  unsigned char* pitched = nullptr;
  size_t pitch = 0;
  GLEAM_PROGRAM_CHECK(cudaMallocPitch(reinterpret_cast<void**>(&pitched),
                                      &pitch, width, height));
  GLEAM_PROGRAM_CHECK(cudaMemset2D(pitched, pitch, 0x42, width, height));
  GLEAM_PROGRAM_CHECK(cudaMemset2DAsync(pitched + 5 * pitch + 10, pitch, 0x99,
                                        100, 20, stream));
  GLEAM_PROGRAM_CHECK(cudaStreamSynchronize(stream));
  std::vector<unsigned char> rect(static_cast<size_t>(width) * height);
  GLEAM_PROGRAM_CHECK(cudaMemcpy2D(rect.data(), width, pitched, pitch, width,
                                   height, cudaMemcpyDeviceToHost));
  GLEAM_PROGRAM_EXPECT(rect[0] == 0x42 && rect[5 * width + 10] == 0x99
                           && rect[24 * width + 109] == 0x99
                           && rect[25 * width + 109] == 0x42
                           && rect[24 * width + 110] == 0x42,
                       "2D memset rectangle");
  sum.add(rect.data(), rect.size());
  std::printf("2D memsets: ok\n");

  GLEAM_PROGRAM_CHECK(cudaStreamDestroy(stream));
  GLEAM_PROGRAM_CHECK(cudaFree(pitched));
  GLEAM_PROGRAM_CHECK(cudaFree(dev));
  sum.print("memset_kinds");
  return 0;
}
