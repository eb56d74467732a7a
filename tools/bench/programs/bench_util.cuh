// Helpers shared by the gleam-bench CUDA programs: error checks, a clock,
// argument parsing, result lines ("result NAME VALUE") that gleam-bench
// parses.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#define GLEAM_BENCH_CHECK(call)                                                  \
  do {                                                                           \
    cudaError_t gleam_bench_rc = (call);                                         \
    if (gleam_bench_rc != cudaSuccess) {                                         \
      std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, \
                   cudaGetErrorString(gleam_bench_rc));                          \
      std::exit(1);                                                              \
    }                                                                            \
  } while (0)

namespace bench {

inline double now_us() {
  using namespace std::chrono;
  return duration<double, std::micro>(steady_clock::now().time_since_epoch()).count();
}

inline double median(std::vector<double> v) {
  if (v.empty())
    return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/// Value of "--name V" in argv, or `fallback`.
inline std::string arg(int argc, char** argv, const char* name, const char* fallback) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], name) == 0)
      return argv[i + 1];
  return fallback;
}

inline void result(const char* name, double value) {
  std::printf("result %s %.6g\n", name, value);
  std::fflush(stdout);
}

/// Deterministic pseudo-random fill (xorshift64), seeded.
inline void fill(void* p, size_t bytes, uint64_t seed) {
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  auto* w = static_cast<uint64_t*>(p);
  for (size_t i = 0; i < bytes / 8; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    w[i] = x;
  }
}

} // namespace bench
