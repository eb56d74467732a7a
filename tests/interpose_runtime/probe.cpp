// interpose_runtime_probe LIB: loads LIB (a libcudart.so.13) with dlopen,
// prints the result of cudaGetDeviceCount as "count=N error=NAME", and exits
// normally (running the library's exit handlers).
#include <dlfcn.h>

#include <cstdio>

#include <cuda_runtime_api.h>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: interpose_runtime_probe LIB\n");
    return 2;
  }
  void* lib = ::dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    std::fprintf(stderr, "dlopen %s: %s\n", argv[1], ::dlerror());
    return 3;
  }
  using count_fn = cudaError_t (*)(int*);
  using name_fn = const char* (*)(cudaError_t);
  auto count = reinterpret_cast<count_fn>(::dlsym(lib, "cudaGetDeviceCount"));
  auto name = reinterpret_cast<name_fn>(::dlsym(lib, "cudaGetErrorName"));
  auto last = reinterpret_cast<cudaError_t (*)()>(::dlsym(lib, "cudaGetLastError"));
  if (count == nullptr || name == nullptr || last == nullptr) {
    std::fprintf(stderr, "missing symbols in %s\n", argv[1]);
    return 4;
  }
  int n = -1;
  auto err = count(&n);
  auto again = count(&n);
  std::printf("count=%d error=%s again=%s last=%s\n", n, name(err), name(again),
              name(last()));
  return 0;
}
