// Pitched memory: cudaMallocPitch, cudaMemcpy2D in every direction,
// cudaMemcpy2DAsync on a stream, and a kernel that walks rows by pitch.
#include "common.cuh"

#include <vector>

__global__ void transform_rows(unsigned char* data, size_t pitch, int width,
                               int height) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y;
  if (x < width && y < height)
    data[y * pitch + x] = static_cast<unsigned char>(data[y * pitch + x] * 3 + y);
}

int main() {
  constexpr int width = 1000;  // bytes per row, not a multiple of the pitch
  constexpr int height = 300;
  gleam_program::checksum sum;
  std::vector<unsigned char> host(static_cast<size_t>(width) * height);
  uint32_t state = 777;
  for (auto& b : host)
    b = static_cast<unsigned char>(gleam_program::next_random(state));

  unsigned char* dev = nullptr;
  size_t pitch = 0;
  GLEAM_PROGRAM_CHECK(cudaMallocPitch(reinterpret_cast<void**>(&dev), &pitch,
                                      width, height));
  GLEAM_PROGRAM_EXPECT(pitch >= static_cast<size_t>(width), "pitch >= width");
  std::printf("pitch >= width: yes\n");
  GLEAM_PROGRAM_CHECK(cudaMemcpy2D(dev, pitch, host.data(), width, width,
                                   height, cudaMemcpyHostToDevice));
  transform_rows<<<dim3((width + 127) / 128, height), 128>>>(dev, pitch, width,
                                                             height);
  GLEAM_PROGRAM_CHECK_LAUNCH();

  unsigned char* dev2 = nullptr;
  size_t pitch2 = 0;
  GLEAM_PROGRAM_CHECK(cudaMallocPitch(reinterpret_cast<void**>(&dev2), &pitch2,
                                      width / 2, height));
  // Copy the right half of every row into a narrower pitched buffer.
  GLEAM_PROGRAM_CHECK(cudaMemcpy2D(dev2, pitch2, dev + width / 2, pitch,
                                   width / 2, height,
                                   cudaMemcpyDeviceToDevice));
  std::vector<unsigned char> back(static_cast<size_t>(width) * height);
  GLEAM_PROGRAM_CHECK(cudaMemcpy2D(back.data(), width, dev, pitch, width,
                                   height, cudaMemcpyDeviceToHost));
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) {
      size_t i = static_cast<size_t>(y) * width + x;
      GLEAM_PROGRAM_EXPECT(back[i] == static_cast<unsigned char>(host[i] * 3 + y),
                           "row transform");
    }
  sum.add(back.data(), back.size());

  std::vector<unsigned char> half(static_cast<size_t>(width / 2) * height);
  cudaStream_t stream;
  GLEAM_PROGRAM_CHECK(cudaStreamCreate(&stream));
  GLEAM_PROGRAM_CHECK(cudaMemcpy2DAsync(half.data(), width / 2, dev2, pitch2,
                                        width / 2, height,
                                        cudaMemcpyDeviceToHost, stream));
  GLEAM_PROGRAM_CHECK(cudaStreamSynchronize(stream));
  for (int y = 0; y < height; ++y)
    GLEAM_PROGRAM_EXPECT(half[static_cast<size_t>(y) * (width / 2)]
                             == back[static_cast<size_t>(y) * width + width / 2],
                         "half rows");
  sum.add(half.data(), half.size());

  // A sub-rectangle uploaded with cudaMemcpy2DAsync from pinned memory.
  unsigned char* pinned = nullptr;
  GLEAM_PROGRAM_CHECK(cudaMallocHost(&pinned, 64 * 32));
  for (int i = 0; i < 64 * 32; ++i)
    pinned[i] = static_cast<unsigned char>(i * 7);
  GLEAM_PROGRAM_CHECK(cudaMemcpy2DAsync(dev + 10 * pitch + 100, pitch, pinned,
                                        64, 64, 32, cudaMemcpyHostToDevice,
                                        stream));
  GLEAM_PROGRAM_CHECK(cudaMemcpy2DAsync(back.data(), width, dev, pitch, width,
                                        height, cudaMemcpyDeviceToHost,
                                        stream));
  GLEAM_PROGRAM_CHECK(cudaStreamSynchronize(stream));
  bool rect_ok = true;
  for (int r = 0; r < 32; ++r)
    for (int c = 0; c < 64; ++c)
      rect_ok = rect_ok && back[static_cast<size_t>(10 + r) * width + 100 + c] == pinned[r * 64 + c];
  GLEAM_PROGRAM_EXPECT(rect_ok, "sub-rectangle");
  sum.add(back.data(), back.size());
  std::printf("2D copies H2D D2D D2H async: ok\n");

  GLEAM_PROGRAM_CHECK(cudaStreamDestroy(stream));
  GLEAM_PROGRAM_CHECK(cudaFreeHost(pinned));
  GLEAM_PROGRAM_CHECK(cudaFree(dev2));
  GLEAM_PROGRAM_CHECK(cudaFree(dev));
  sum.print("memcpy_2d");
  return 0;
}
