// gleamd_memory_probe LIB MIB [HOLD_MS]: loads LIB (a libcudart.so.13) with
// dlopen, as an app would, and asks for MIB MiB of device memory with
// cudaMalloc. Prints "malloc=<error name>" at once; on success holds the
// memory HOLD_MS milliseconds (0: until killed), then frees it and prints
// "free=<error name>". For the tests of tenants' memory rules.
#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include <cuda_runtime_api.h>

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: gleamd_memory_probe LIB MIB [HOLD_MS]\n");
    return 2;
  }
  void* lib = ::dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    std::fprintf(stderr, "cannot load %s: %s\n", argv[1], ::dlerror());
    return 2;
  }
  auto malloc_fn = reinterpret_cast<cudaError_t (*)(void**, size_t)>(::dlsym(lib, "cudaMalloc"));
  auto free_fn = reinterpret_cast<cudaError_t (*)(void*)>(::dlsym(lib, "cudaFree"));
  auto name_fn =
    reinterpret_cast<const char* (*)(cudaError_t)>(::dlsym(lib, "cudaGetErrorName"));
  if (malloc_fn == nullptr || free_fn == nullptr || name_fn == nullptr) {
    std::fprintf(stderr, "%s lacks cudaMalloc, cudaFree or cudaGetErrorName\n", argv[1]);
    return 2;
  }
  auto bytes = std::strtoull(argv[2], nullptr, 10) << 20;
  long hold_ms = argc > 3 ? std::atol(argv[3]) : 0;
  void* p = nullptr;
  auto err = malloc_fn(&p, bytes);
  std::printf("malloc=%s\n", name_fn(err));
  std::fflush(stdout);
  if (err != cudaSuccess)
    return 0;
  if (hold_ms == 0)
    for (;;)
      ::pause();
  ::usleep(static_cast<useconds_t>(hold_ms) * 1000);
  std::printf("free=%s\n", name_fn(free_fn(p)));
  return 0;
}
