// Errors the program sees and survives: an invalid cudaMemcpy, a launch with
// a bad configuration (sticky last error vs. peek), a bad free, error names
// and strings; afterwards normal work still succeeds.
#include "common.cuh"

#include <cstring>
#include <vector>

__global__ void iota(int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = i;
}

namespace {

void report(gleam_program::checksum& sum, const char* what, cudaError_t err) {
  const char* name = cudaGetErrorName(err);
  std::printf("%s -> %s (%s)\n", what, name, cudaGetErrorString(err));
  sum.add(name, std::strlen(name));
}

} // namespace

int main() {
  gleam_program::checksum sum;
  constexpr int n = 1024;
  int* dev = nullptr;
  GLEAM_PROGRAM_CHECK(cudaMalloc(&dev, n * sizeof(int)));
  std::vector<int> host(n, 0);

  // A copy far larger than the allocation.
  cudaError_t err = cudaMemcpy(host.data(), dev, size_t{1} << 40,
                               cudaMemcpyDeviceToHost);
  report(sum, "cudaMemcpy of 1 TiB from a 4 KiB allocation", err);
  GLEAM_PROGRAM_EXPECT(err != cudaSuccess, "oversized copy fails");
  (void)cudaGetLastError();

  // A copy kind that does not exist.
  err = cudaMemcpy(host.data(), dev, 16, static_cast<cudaMemcpyKind>(42));
  report(sum, "cudaMemcpy with kind 42", err);
  GLEAM_PROGRAM_EXPECT(err == cudaErrorInvalidMemcpyDirection, "bad kind");
  (void)cudaGetLastError();

  // A device-to-host copy from a pointer that is not device memory.
  err = cudaMemcpy(host.data(), reinterpret_cast<void*>(0x10), 16,
                   cudaMemcpyDeviceToHost);
  report(sum, "cudaMemcpy from address 0x10", err);
  GLEAM_PROGRAM_EXPECT(err != cudaSuccess, "bad pointer copy fails");
  (void)cudaGetLastError();

  void* huge = nullptr;
  err = cudaMalloc(&huge, size_t{1} << 50);
  report(sum, "cudaMalloc of 1 PiB", err);
  GLEAM_PROGRAM_EXPECT(err == cudaErrorMemoryAllocation,
                       "allocation fails");
  GLEAM_PROGRAM_EXPECT(cudaGetLastError() == cudaErrorMemoryAllocation,
                       "last error records the failed allocation");
  GLEAM_PROGRAM_EXPECT(cudaGetLastError() == cudaSuccess,
                       "reading the last error resets it");

  // Block of 2048 threads: the launch fails at configuration time. The code
  // is printed (and checksummed), so a remoted run must return the same one
  // as the local runtime does.
  iota<<<1, 2048>>>(dev, n);
  err = cudaPeekAtLastError();
  report(sum, "launch with 2048 threads per block (peek)", err);
  GLEAM_PROGRAM_EXPECT(err != cudaSuccess, "peek sees it");
  GLEAM_PROGRAM_EXPECT(cudaPeekAtLastError() == err, "peek does not reset");
  cudaError_t got = cudaGetLastError();
  report(sum, "launch with 2048 threads per block (get)", got);
  GLEAM_PROGRAM_EXPECT(got == err, "get sees it");
  GLEAM_PROGRAM_EXPECT(cudaGetLastError() == cudaSuccess, "get resets");

  // A grid with a zero dimension is also an invalid configuration.
  iota<<<dim3(0, 1, 1), 32>>>(dev, n);
  err = cudaGetLastError();
  report(sum, "launch with an empty grid", err);
  GLEAM_PROGRAM_EXPECT(err != cudaSuccess, "empty grid");

  err = cudaFree(reinterpret_cast<void*>(0x1234));
  report(sum, "cudaFree of a pointer never allocated", err);
  GLEAM_PROGRAM_EXPECT(err != cudaSuccess, "bad free fails");
  (void)cudaGetLastError();

  cudaStream_t not_a_stream = nullptr;
  err = cudaStreamQuery(not_a_stream);
  report(sum, "cudaStreamQuery on the idle default stream", err);
  GLEAM_PROGRAM_EXPECT(err == cudaSuccess, "default stream idle");

  err = cudaMemset(dev, 0, size_t{1} << 40);
  report(sum, "cudaMemset of 1 TiB", err);
  GLEAM_PROGRAM_EXPECT(err != cudaSuccess, "oversized memset fails");
  (void)cudaGetLastError();

  // The context is intact: normal work succeeds.
  iota<<<n / 256, 256>>>(dev, n);
  GLEAM_PROGRAM_CHECK_LAUNCH();
  GLEAM_PROGRAM_CHECK(cudaMemcpy(host.data(), dev, n * sizeof(int),
                                 cudaMemcpyDeviceToHost));
  GLEAM_PROGRAM_EXPECT(host[777] == 777, "work after errors");
  sum.add(host.data(), n * sizeof(int));
  std::printf("work after errors: ok\n");

  const char* unknown = cudaGetErrorName(static_cast<cudaError_t>(123456));
  std::printf("name of code 123456: %s\n", unknown);
  sum.add(unknown, std::strlen(unknown));

  GLEAM_PROGRAM_CHECK(cudaFree(dev));
  sum.print("error_handling");
  return 0;
}
