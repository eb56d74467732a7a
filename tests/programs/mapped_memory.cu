// Mapped (zero-copy) host memory: cudaHostAlloc(cudaHostAllocMapped) and
// cudaHostRegister(cudaHostRegisterMapped) with cudaHostGetDevicePointer and
// cudaHostGetFlags; host writes read by a kernel through the device pointer,
// the kernel's writes read by the host after a sync, several rounds; a
// kernel writing mapped memory that a cudaMemcpy then reads; pointer
// attributes; the codes of refused calls.
#include "common.cuh"
#include "scale_add.cuh"

using gleam_program::print_code;
using gleam_program::print_ints;
using gleam_program::scale_add;

namespace {

__global__ void sum_into(const int* in, int n, int* out) {
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    int total = 0;
    for (int i = 0; i < n; ++i)
      total += in[i];
    *out = total;
  }
}

} // namespace

int main() {
  gleam_program::checksum sum;
  constexpr int n = 5000;
  int* h = nullptr;
  GLEAM_PROGRAM_CHECK(cudaHostAlloc(&h, n * sizeof(int), cudaHostAllocMapped));
  int* d = nullptr;
  GLEAM_PROGRAM_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&d), h, 0));
  unsigned flags = 0;
  GLEAM_PROGRAM_CHECK(cudaHostGetFlags(&flags, h));
  std::printf("flags mapped: %d\n", (flags & cudaHostAllocMapped) != 0);
  cudaPointerAttributes attr{};
  GLEAM_PROGRAM_CHECK(cudaPointerGetAttributes(&attr, h));
  std::printf("attributes: host %d\n", attr.type == cudaMemoryTypeHost);

  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < n; ++i)
      h[i] = i + round;
    scale_add<<<(n + 255) / 256, 256>>>(d, n, 2, round);
    GLEAM_PROGRAM_CHECK_LAUNCH();
    GLEAM_PROGRAM_CHECK(cudaDeviceSynchronize());
    char label[32];
    std::snprintf(label, sizeof(label), "round %d", round);
    print_ints(label, h + n - 6, 6, sum);
    for (int i = 0; i < n; ++i)
      GLEAM_PROGRAM_EXPECT(h[i] == 2 * (i + round) + round, "kernel result on mapped memory");
  }

  // A kernel reads mapped memory and writes device memory; another writes
  // mapped memory that a cudaMemcpy reads.
  int* out = nullptr;
  GLEAM_PROGRAM_CHECK(cudaMalloc(&out, sizeof(int)));
  sum_into<<<1, 1>>>(d, 100, out);
  int total = 0;
  GLEAM_PROGRAM_CHECK(cudaMemcpy(&total, out, sizeof(int), cudaMemcpyDeviceToHost));
  std::printf("sum of mapped: %d\n", total);
  sum.add_value(total);
  scale_add<<<1, 32>>>(d, 32, 1, 1000);
  std::vector<int> back(4);
  GLEAM_PROGRAM_CHECK(cudaMemcpy(back.data(), d, 4 * sizeof(int), cudaMemcpyDefault));
  print_ints("copied from mapped", back.data(), 4, sum);

  // Registered app memory, mapped.
  std::vector<int> app(3000);
  for (int i = 0; i < 3000; ++i)
    app[i] = 3 * i;
  GLEAM_PROGRAM_CHECK(cudaHostRegister(app.data(), app.size() * sizeof(int),
                                       cudaHostRegisterMapped));
  int* rd = nullptr;
  GLEAM_PROGRAM_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&rd), app.data(), 0));
  scale_add<<<(3000 + 255) / 256, 256>>>(rd, 3000, 1, 7);
  GLEAM_PROGRAM_CHECK(cudaDeviceSynchronize());
  print_ints("registered", app.data() + 1000, 4, sum);
  app[5] = -5;
  scale_add<<<1, 32>>>(rd, 8, -1, 0);
  GLEAM_PROGRAM_CHECK(cudaDeviceSynchronize());
  print_ints("registered again", app.data(), 8, sum);
  GLEAM_PROGRAM_CHECK(cudaHostUnregister(app.data()));

  // Refused calls.
  void* p = nullptr;
  print_code("cudaHostAlloc flags 0x100", cudaHostAlloc(&p, 64, 0x100), sum);
  print_code("cudaHostGetDevicePointer flags 1",
             cudaHostGetDevicePointer(reinterpret_cast<void**>(&rd), h, 1), sum);
  print_code("cudaHostUnregister again", cudaHostUnregister(app.data()), sum);

  GLEAM_PROGRAM_CHECK(cudaFree(out));
  GLEAM_PROGRAM_CHECK(cudaFreeHost(h));
  sum.print("mapped_memory");
  return 0;
}
