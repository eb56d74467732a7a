// Shared helpers of the CUDA test programs: error checking and the checksum
// line every program ends with.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <cuda_runtime.h>
#include <fcntl.h>
#include <unistd.h>

/// Checks a CUDA runtime call; on failure prints the call, the error name
/// and its text to stderr and exits with status 1.
#define GLEAM_PROGRAM_CHECK(call)                                             \
  do {                                                                        \
    cudaError_t gleam_status_ = (call);                                       \
    if (gleam_status_ != cudaSuccess) {                                       \
      std::fprintf(stderr, "%s:%d: %s failed: %s (%s)\n", __FILE__, __LINE__, \
                   #call, cudaGetErrorName(gleam_status_),                    \
                   cudaGetErrorString(gleam_status_));                        \
      std::exit(1);                                                           \
    }                                                                         \
  } while (false)

/// Checks a driver API call (for programs that include <cuda.h>); on
/// failure prints the call, its CUresult and the name `name_of` gives it
/// (cuGetErrorName, or a pointer to it) to stderr and exits with status 1.
#define GLEAM_PROGRAM_CHECK_DRIVER(call, name_of)                             \
  do {                                                                        \
    CUresult drv_status_ = (call);                                            \
    if (drv_status_ != CUDA_SUCCESS) {                                        \
      const char* drv_name_ = nullptr;                                        \
      name_of(drv_status_, &drv_name_);                                       \
      std::fprintf(stderr, "%s:%d: %s failed: %d (%s)\n", __FILE__, __LINE__, \
                   #call, static_cast<int>(drv_status_),                      \
                   drv_name_ ? drv_name_ : "?");                              \
      std::exit(1);                                                           \
    }                                                                         \
  } while (false)

/// Checks the launch just issued (configuration errors) without syncing.
#define GLEAM_PROGRAM_CHECK_LAUNCH() GLEAM_PROGRAM_CHECK(cudaGetLastError())

/// Exits with status 2 after printing `what` when `cond` is false: a wrong
/// result rather than a CUDA error.
#define GLEAM_PROGRAM_EXPECT(cond, what)                                  \
  do {                                                                    \
    if (!(cond)) {                                                        \
      std::fprintf(stderr, "%s:%d: expectation failed: %s (%s)\n",        \
                   __FILE__, __LINE__, #cond, what);                      \
      std::exit(2);                                                       \
    }                                                                     \
  } while (false)

/// Checks a call of a CUDA library that returns a status enum whose success
/// value is `ok`; on failure prints the call and the status number to
/// stderr and exits with status 1.
#define GLEAM_PROGRAM_CHECK_STATUS(call, ok)                                      \
  do {                                                                            \
    auto gleam_library_status_ = (call);                                          \
    if (gleam_library_status_ != (ok)) {                                          \
      std::fprintf(stderr, "%s:%d: %s failed: status %d\n", __FILE__, __LINE__,   \
                   #call, static_cast<int>(gleam_library_status_));               \
      std::exit(1);                                                               \
    }                                                                             \
  } while (false)

namespace gleam_program {

/// What `call` returns, with the diagnostic a vendor library prints for an
/// invalid argument (cuBLAS, cuSPARSE: to stdout or stderr) silenced: that
/// text is not part of the API's answer (the status is), so it stays out of
/// the local-vs-Gleam comparison, which reads both streams.
template <class F>
auto quietly(F call) -> decltype(call()) {
  std::fflush(stdout);
  std::fflush(stderr);
  int saved_out = dup(1), saved_err = dup(2);
  int null_fd = open("/dev/null", O_WRONLY);
  dup2(null_fd, 1);
  dup2(null_fd, 2);
  auto status = call();
  std::fflush(stdout);
  std::fflush(stderr);
  dup2(saved_out, 1);
  dup2(saved_err, 2);
  close(null_fd);
  close(saved_out);
  close(saved_err);
  return status;
}

/// FNV-1a 64-bit over `size` bytes, continuing from `hash`.
inline uint64_t fnv1a(const void* data, size_t size,
                      uint64_t hash = 0xcbf29ce484222325ull) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < size; ++i) {
    hash ^= p[i];
    hash *= 0x100000001b3ull;
  }
  return hash;
}

/// Accumulates the checksum of everything a program copied back.
class checksum {
public:
  /// Mixes `size` bytes at `data` into the checksum.
  void add(const void* data, size_t size) {
    hash_ = fnv1a(data, size, hash_);
  }

  /// Mixes one trivially copyable value into the checksum.
  template <class T>
  void add_value(const T& value) {
    add(&value, sizeof(T));
  }

  /// Prints the final line: "checksum <name> 0x<16 hex digits>".
  void print(const char* name) const {
    std::printf("checksum %s 0x%016llx\n", name,
                static_cast<unsigned long long>(hash_));
  }

private:
  uint64_t hash_ = 0xcbf29ce484222325ull;
};

/// Prints "what -> <error name>" for a call whose code is the result,
/// mixes the code into `sum` and clears the last error.
inline void print_code(const char* what, cudaError_t e, checksum& sum) {
  std::printf("%s -> %s\n", what, cudaGetErrorName(e));
  sum.add_value(static_cast<int>(e));
  cudaGetLastError();
}

/// Prints "what: v0 v1 ..." for `n` ints at host address `p` and mixes
/// them into `sum`.
inline void print_ints(const char* what, const int* p, int n, checksum& sum) {
  std::printf("%s:", what);
  for (int i = 0; i < n; ++i)
    std::printf(" %d", p[i]);
  std::printf("\n");
  sum.add(p, n * sizeof(int));
}

/// Parameters of a 1-D kernel node of `threads` threads (a multiple of
/// 256) over `args`.
inline cudaKernelNodeParams kernel_node(void* fn, void** args, unsigned threads) {
  cudaKernelNodeParams p{};
  p.func = fn;
  p.gridDim = dim3(threads / 256);
  p.blockDim = dim3(256);
  p.kernelParams = args;
  return p;
}

/// Deterministic pseudo-random 32-bit values (xorshift32), for test data.
inline uint32_t next_random(uint32_t& state) {
  state ^= state << 13;
  state ^= state >> 17;
  state ^= state << 5;
  return state;
}

/// A device copy of `v` (cudaMalloc + cudaMemcpy; exits on failure).
template <class T>
T* to_device(const std::vector<T>& v) {
  T* p = nullptr;
  GLEAM_PROGRAM_CHECK(cudaMalloc(&p, v.size() * sizeof(T)));
  GLEAM_PROGRAM_CHECK(cudaMemcpy(p, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
  return p;
}

/// The `n` elements at device address `p`, copied to the host.
template <class T>
std::vector<T> to_host(const T* p, size_t n) {
  std::vector<T> v(n);
  GLEAM_PROGRAM_CHECK(cudaMemcpy(v.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost));
  return v;
}

/// Prints the bytes of `v` as 32-bit hex words under `label` (exact,
/// whatever the element type) and adds them to `sum`.
template <class T>
void show_words(checksum& sum, const char* label, const std::vector<T>& v) {
  sum.add(v.data(), v.size() * sizeof(T));
  const auto* bytes = reinterpret_cast<const unsigned char*>(v.data());
  std::printf("%s:", label);
  for (size_t i = 0; i + 4 <= v.size() * sizeof(T); i += 4) {
    uint32_t w;
    std::memcpy(&w, bytes + i, 4);
    std::printf(" %08x", w);
  }
  std::printf("\n");
}

} // namespace gleam_program
