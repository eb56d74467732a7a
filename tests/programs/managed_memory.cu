// Managed memory (cudaMallocManaged): host writes, a kernel, a sync, host
// reads; kernels only (two kernels in a row, then the host reads); host
// only; cudaMemcpy of every kind (Default included) to and from managed
// memory; cudaMemset on it; a kernel on a stream of its own and
// cudaStreamSynchronize; cudaMemPrefetchAsync, cudaMemAdvise and
// cudaStreamAttachMemAsync, and the codes of refused calls; pointer
// attributes; a large allocation written by the host across many pages.
#include "common.cuh"
#include "scale_add.cuh"

using gleam_program::print_code;
using gleam_program::print_ints;
using gleam_program::scale_add;

namespace {

__global__ void fill(int* p, int n, int base) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    p[i] = base + i;
}

} // namespace

int main() {
  gleam_program::checksum sum;
  constexpr int n = 1000;
  int* m = nullptr;
  GLEAM_PROGRAM_CHECK(cudaMallocManaged(&m, n * sizeof(int)));
  cudaPointerAttributes attr{};
  GLEAM_PROGRAM_CHECK(cudaPointerGetAttributes(&attr, m + 3));
  std::printf("attributes: managed %d, device pointer same %d, host pointer same %d\n",
              attr.type == cudaMemoryTypeManaged, attr.devicePointer == m + 3,
              attr.hostPointer == m + 3);

  // Host writes, kernel, sync, host reads.
  for (int i = 0; i < n; ++i)
    m[i] = i;
  scale_add<<<(n + 255) / 256, 256>>>(m, n, 3, 1);
  GLEAM_PROGRAM_CHECK_LAUNCH();
  GLEAM_PROGRAM_CHECK(cudaDeviceSynchronize());
  print_ints("host, kernel, host", m, 8, sum);
  print_ints("tail", m + n - 4, 4, sum);
  for (int i = 0; i < n; ++i)
    GLEAM_PROGRAM_EXPECT(m[i] == 3 * i + 1, "kernel result on managed memory");

  // Kernels only, then the host reads.
  int* k = nullptr;
  GLEAM_PROGRAM_CHECK(cudaMallocManaged(&k, n * sizeof(int)));
  fill<<<(n + 255) / 256, 256>>>(k, n, 100);
  scale_add<<<(n + 255) / 256, 256>>>(k, n, 2, 0);
  GLEAM_PROGRAM_CHECK(cudaDeviceSynchronize());
  print_ints("kernels only", k, 8, sum);

  // Host only.
  int* h = nullptr;
  GLEAM_PROGRAM_CHECK(cudaMallocManaged(&h, 64 * sizeof(int), cudaMemAttachHost));
  for (int i = 0; i < 64; ++i)
    h[i] = i * i;
  int total = 0;
  for (int i = 0; i < 64; ++i)
    total += h[i];
  std::printf("host only: %d\n", total);
  sum.add_value(total);

  // Copies of every kind to and from managed memory.
  std::vector<int> host(16);
  for (int i = 0; i < 16; ++i)
    host[i] = -i;
  GLEAM_PROGRAM_CHECK(cudaMemcpy(m, host.data(), 16 * sizeof(int), cudaMemcpyHostToDevice));
  GLEAM_PROGRAM_CHECK(cudaMemcpy(m + 16, host.data(), 16 * sizeof(int), cudaMemcpyDefault));
  GLEAM_PROGRAM_CHECK(cudaMemcpy(m + 32, k, 16 * sizeof(int), cudaMemcpyDeviceToDevice));
  int* d = nullptr;
  GLEAM_PROGRAM_CHECK(cudaMalloc(&d, 16 * sizeof(int)));
  GLEAM_PROGRAM_CHECK(cudaMemcpy(d, m + 8, 16 * sizeof(int), cudaMemcpyDefault));
  GLEAM_PROGRAM_CHECK(cudaMemcpy(m + 48, d, 16 * sizeof(int), cudaMemcpyDefault));
  std::vector<int> back(16);
  GLEAM_PROGRAM_CHECK(cudaMemcpy(back.data(), m + 40, 16 * sizeof(int), cudaMemcpyDeviceToHost));
  print_ints("copied back", back.data(), 16, sum);
  GLEAM_PROGRAM_CHECK(cudaMemcpy(back.data(), m + 16, 16 * sizeof(int), cudaMemcpyDefault));
  print_ints("copied back (default)", back.data(), 16, sum);
  GLEAM_PROGRAM_CHECK(cudaDeviceSynchronize());
  print_ints("managed after copies", m, 64, sum);
  GLEAM_PROGRAM_CHECK(cudaMemset(m + 64, 0x7f, 4 * sizeof(int)));
  GLEAM_PROGRAM_CHECK(cudaDeviceSynchronize());
  print_ints("after memset", m + 62, 8, sum);

  // A stream of its own, with an attachment and prefetches.
  cudaStream_t s;
  GLEAM_PROGRAM_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  GLEAM_PROGRAM_CHECK(cudaStreamAttachMemAsync(s, k, 0, cudaMemAttachSingle));
  cudaMemLocation device{cudaMemLocationTypeDevice, 0};
  cudaMemLocation host_location{cudaMemLocationTypeHost, 0};
  GLEAM_PROGRAM_CHECK(cudaMemAdvise(k, n * sizeof(int), cudaMemAdviseSetPreferredLocation,
                                    device));
  GLEAM_PROGRAM_CHECK(cudaMemAdvise(k, n * sizeof(int), cudaMemAdviseSetAccessedBy, device));
  GLEAM_PROGRAM_CHECK(cudaStreamSynchronize(s));
  for (int i = 0; i < n; ++i)
    k[i] = 7 * i;
  GLEAM_PROGRAM_CHECK(cudaMemPrefetchAsync(k, n * sizeof(int), device, 0, s));
  scale_add<<<(n + 255) / 256, 256, 0, s>>>(k, n, 1, 5);
  GLEAM_PROGRAM_CHECK(cudaMemPrefetchAsync(k, n * sizeof(int), host_location, 0, s));
  GLEAM_PROGRAM_CHECK(cudaStreamSynchronize(s));
  print_ints("own stream", k + n - 8, 8, sum);

  // Refused calls.
  int* bad = nullptr;
  print_code("cudaMallocManaged size 0", cudaMallocManaged(&bad, 0), sum);
  print_code("cudaMallocManaged flags 4", cudaMallocManaged(&bad, 64, 4), sum);
  print_code("cudaMemAdvise advice 99",
             cudaMemAdvise(m, 64, static_cast<cudaMemoryAdvise>(99), device), sum);
  print_code("cudaMemPrefetchAsync flags 1", cudaMemPrefetchAsync(m, 64, device, 1, nullptr), sum);
  print_code("cudaStreamAttachMemAsync length",
             cudaStreamAttachMemAsync(s, k, 12, cudaMemAttachHost), sum);
  print_code("cudaStreamAttachMemAsync flags 8", cudaStreamAttachMemAsync(s, k, 0, 8), sum);
  print_code("cudaFree inside", cudaFree(m + 1), sum);

  // A large allocation written by the host across many pages, summed by
  // a kernel-free read back after a kernel scaled it.
  constexpr int big = 3 << 20; // 12 MiB of ints
  int* b = nullptr;
  GLEAM_PROGRAM_CHECK(cudaMallocManaged(&b, big * sizeof(int)));
  for (int i = 0; i < big; ++i)
    b[i] = i & 0xffff;
  scale_add<<<big / 256, 256>>>(b, big, 2, 1);
  GLEAM_PROGRAM_CHECK(cudaDeviceSynchronize());
  long long big_total = 0;
  for (int i = 0; i < big; ++i)
    big_total += b[i];
  std::printf("large: %lld\n", big_total);
  sum.add_value(big_total);

  GLEAM_PROGRAM_CHECK(cudaFree(b));
  GLEAM_PROGRAM_CHECK(cudaFree(d));
  GLEAM_PROGRAM_CHECK(cudaStreamDestroy(s));
  GLEAM_PROGRAM_CHECK(cudaFree(h));
  GLEAM_PROGRAM_CHECK(cudaFree(k));
  GLEAM_PROGRAM_CHECK(cudaFree(m));
  sum.print("managed_memory");
  return 0;
}
