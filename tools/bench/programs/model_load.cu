// Model load: reads a weights file as a sequence of tensors (sizes cycling
// 1, 4, 16, 64 MiB), allocates each on the device and uploads it, then
// checks a device-side checksum of every tensor against the host's. The file
// is read into memory first; load_s times the device side only, alloc_s and
// copy_s the part of it spent in cudaMalloc and in cudaMemcpy.
// Usage: model_load --file F
#include "bench_util.cuh"

__global__ void sum_words(const unsigned* p, size_t n, unsigned long long* out) {
  unsigned long long acc = 0;
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x)
    acc += p[i];
  atomicAdd(out, acc);
}

int main(int argc, char** argv) {
  auto path = bench::arg(argc, argv, "--file", "");
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    std::fprintf(stderr, "model_load: cannot open weights file '%s': pass --file F\n",
                 path.c_str());
    return 2;
  }
  const size_t sizes[] = {1u << 20, 4u << 20, 16u << 20, 64u << 20};
  // The file is read (and checksummed) before the clock starts: load_s is
  // the allocation, upload and device checksum only, what the link and the
  // weight cache decide.
  double r0 = bench::now_us();
  std::vector<std::vector<char>> host;
  unsigned long long host_sum = 0;
  for (size_t i = 0;; ++i) {
    std::vector<char> t(sizes[i % 4]);
    size_t got = std::fread(t.data(), 1, t.size(), f);
    got -= got % 4;
    if (got == 0)
      break;
    t.resize(got);
    auto* words = reinterpret_cast<const unsigned*>(t.data());
    for (size_t w = 0; w < got / 4; ++w)
      host_sum += words[w];
    host.push_back(std::move(t));
  }
  std::fclose(f);
  double r1 = bench::now_us();
  std::vector<void*> tensors;
  unsigned long long* dev_sum = nullptr;
  size_t total = 0;
  double t0 = bench::now_us();
  GLEAM_BENCH_CHECK(cudaMalloc(&dev_sum, sizeof(*dev_sum)));
  GLEAM_BENCH_CHECK(cudaMemset(dev_sum, 0, sizeof(*dev_sum)));
  double alloc_us = 0;
  double copy_us = 0;
  for (const auto& t : host) {
    void* dev = nullptr;
    double a0 = bench::now_us();
    GLEAM_BENCH_CHECK(cudaMalloc(&dev, t.size()));
    double a1 = bench::now_us();
    GLEAM_BENCH_CHECK(cudaMemcpy(dev, t.data(), t.size(), cudaMemcpyHostToDevice));
    copy_us += bench::now_us() - a1;
    alloc_us += a1 - a0;
    sum_words<<<64, 256>>>(static_cast<const unsigned*>(dev), t.size() / 4, dev_sum);
    tensors.push_back(dev);
    total += t.size();
  }
  unsigned long long dev_total = 0;
  GLEAM_BENCH_CHECK(cudaMemcpy(&dev_total, dev_sum, sizeof(dev_total), cudaMemcpyDeviceToHost));
  double t1 = bench::now_us();
  for (void* p : tensors)
    GLEAM_BENCH_CHECK(cudaFree(p));
  GLEAM_BENCH_CHECK(cudaFree(dev_sum));
  bench::result("read_s", (r1 - r0) / 1e6);
  bench::result("load_s", (t1 - t0) / 1e6);
  // Where load_s went: the cudaMalloc's and the cudaMemcpy's.
  bench::result("alloc_s", alloc_us / 1e6);
  bench::result("copy_s", copy_us / 1e6);
  bench::result("load_gbit_s", static_cast<double>(total) * 8 / ((t1 - t0) * 1e3));
  bench::result("bytes", static_cast<double>(total));
  bench::result("checksum_ok", dev_total == host_sum ? 1 : 0);
  return 0;
}
