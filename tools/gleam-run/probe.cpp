// gleam-probe: the CUDA session `gleam-run --doctor` opens through Gleam's
// interposer (it links Gleam's libcudart.so.13). Prints one "key value"
// line per finding: runtime and driver versions, the GPU, the median round
// trip of a 4-byte copy back from the GPU and the upload rate of fresh
// (uncacheable) bytes; on a failed call "error CALL NAME: DESCRIPTION" and
// exit status 1. Takes no arguments; the server comes from GLEAM_SERVER /
// GLEAM_CONFIG like any program's.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <vector>

namespace {

bool ok(cudaError_t e, const char* call) {
  if (e == cudaSuccess)
    return true;
  std::printf("error %s %s: %s\n", call, cudaGetErrorName(e), cudaGetErrorString(e));
  return false;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

} // namespace

int main() {
  int runtime = 0, driver = 0, devices = 0;
  if (!ok(cudaRuntimeGetVersion(&runtime), "cudaRuntimeGetVersion")
      || !ok(cudaGetDeviceCount(&devices), "cudaGetDeviceCount")
      || !ok(cudaDriverGetVersion(&driver), "cudaDriverGetVersion"))
    return 1;
  std::printf("runtime %d\ndriver %d\ndevices %d\n", runtime, driver, devices);
  cudaDeviceProp prop{};
  if (!ok(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties"))
    return 1;
  std::printf("gpu %s\nmemory %zu\ncompute %d.%d\n", prop.name, prop.totalGlobalMem, prop.major,
              prop.minor);
  constexpr size_t upload = size_t{32} << 20;
  void* d = nullptr;
  if (!ok(cudaMalloc(&d, upload), "cudaMalloc"))
    return 1;
  // Each copy back waits for its answer: one round trip a copy.
  std::vector<double> trips;
  uint32_t word = 0;
  for (int i = 0; i < 21; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    if (!ok(cudaMemcpy(&word, d, sizeof(word), cudaMemcpyDeviceToHost), "cudaMemcpy"))
      return 1;
    trips.push_back(seconds_since(t0));
  }
  std::sort(trips.begin(), trips.end());
  std::printf("rtt_us %.0f\n", trips[trips.size() / 2] * 1e6);
  // Bytes no cache has seen (seeded by the clock): the upload crosses the
  // link whole, as a first load of new weights does.
  std::vector<uint64_t> bytes(upload / sizeof(uint64_t));
  uint64_t x = static_cast<uint64_t>(
                 std::chrono::steady_clock::now().time_since_epoch().count())
               | 1;
  for (auto& b : bytes) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    b = x;
  }
  auto t0 = std::chrono::steady_clock::now();
  if (!ok(cudaMemcpy(d, bytes.data(), upload, cudaMemcpyHostToDevice), "cudaMemcpy")
      || !ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize"))
    return 1;
  std::printf("upload_mbit_s %.0f\n", static_cast<double>(upload) * 8 / 1e6 / seconds_since(t0));
  ok(cudaFree(d), "cudaFree");
  return 0;
}
