// A CUDA program that imports functions Gleam's libcudart.so.13 refuses
// (cudaCreateChannelDesc, cudaMallocArray: CUDA arrays are not remoted)
// next to a supported one; `gleam-run --doctor -- doctor_imports` must
// name them. It is only inspected, never run.
#include <cuda_runtime_api.h>

int main() {
  cudaArray_t array = nullptr;
  auto desc = cudaCreateChannelDesc(32, 0, 0, 0, cudaChannelFormatKindFloat);
  void* p = nullptr;
  if (cudaMalloc(&p, 16) != cudaSuccess)
    return 1;
  return cudaMallocArray(&array, &desc, 4, 4) == cudaSuccess ? 0 : 1;
}
