// A kernel that faults (a store to address 0x8): the launch itself
// succeeds, the sticky cudaErrorIllegalAddress surfaces at the next
// synchronization and every later call returns it. Not in programs.txt: it
// ruins its CUDA context, so it runs only against a gleamd of its own
// (tests/interpose_runtime end_to_end_test, [gpu]).
#include "common.cuh"

__global__ void fault(int* p) {
  p[threadIdx.x] = 1;
}

int main() {
  int* dev = nullptr;
  GLEAM_PROGRAM_CHECK(cudaMalloc(&dev, 4096));
  GLEAM_PROGRAM_CHECK(cudaMemsetAsync(dev, 0, 4096, nullptr));
  fault<<<1, 32>>>(reinterpret_cast<int*>(0x8));
  std::printf("launch=%s\n", cudaGetErrorName(cudaGetLastError()));
  int word = 0;
  std::printf("sync=%s\n", cudaGetErrorName(cudaMemcpy(&word, dev, sizeof(word),
                                                       cudaMemcpyDeviceToHost)));
  std::printf("again=%s\n", cudaGetErrorName(cudaDeviceSynchronize()));
  void* more = nullptr;
  std::printf("malloc=%s\n", cudaGetErrorName(cudaMalloc(&more, 64)));
  return 0;
}
