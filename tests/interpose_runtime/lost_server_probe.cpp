// interpose_runtime_lost_server_probe LIB: dlopens LIB (libcudart.so.13),
// allocates once (answered), prints "ready", then calls cudaMalloc of 4242
// bytes (the fake server never answers it) and prints the error it got and
// how long the call took: "error=NAME waited_ms=N". Exit status 0.
// With a second argument "loop" it instead allocates and frees 1 MiB in a
// loop until a call fails (for a real gleamd killed mid-run), then prints
// the same line for the failing call. Every cudaMalloc here is a round trip
// (GLEAM_ALLOC_SLAB=0: none is carved from a slab), so the call that meets
// the dead server is the one timed.
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include <dlfcn.h>

#include <cuda_runtime_api.h>

int main(int argc, char** argv) {
  if (argc != 2 && argc != 3) {
    std::fprintf(stderr, "usage: %s LIBCUDART [loop]\n", argv[0]);
    return 2;
  }
  ::setenv("GLEAM_ALLOC_SLAB", "0", 1);
  void* lib = ::dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    std::fprintf(stderr, "dlopen: %s\n", ::dlerror());
    return 2;
  }
  using malloc_fn = cudaError_t (*)(void**, size_t);
  using name_fn = const char* (*)(cudaError_t);
  auto cuda_malloc = reinterpret_cast<malloc_fn>(::dlsym(lib, "cudaMalloc"));
  auto name = reinterpret_cast<name_fn>(::dlsym(lib, "cudaGetErrorName"));
  if (cuda_malloc == nullptr || name == nullptr)
    return 2;
  void* p = nullptr;
  auto first = cuda_malloc(&p, 64);
  std::printf("ready first=%s\n", name(first));
  std::fflush(stdout);
  auto start = std::chrono::steady_clock::now();
  cudaError_t err = cudaSuccess;
  if (argc == 3) {
    using free_fn = cudaError_t (*)(void*);
    auto cuda_free = reinterpret_cast<free_fn>(::dlsym(lib, "cudaFree"));
    if (cuda_free == nullptr)
      return 2;
    for (;;) {
      start = std::chrono::steady_clock::now();
      err = cuda_malloc(&p, size_t{1} << 20);
      if (err != cudaSuccess)
        break;
      start = std::chrono::steady_clock::now();
      err = cuda_free(p);
      if (err != cudaSuccess)
        break;
    }
  } else {
    err = cuda_malloc(&p, 4242);
  }
  auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(
    std::chrono::steady_clock::now() - start);
  std::printf("error=%s waited_ms=%lld\n", name(err), static_cast<long long>(waited.count()));
  return 0;
}
