// Kernels that tests/programs/driver_api loads through the driver API
// (cuModuleLoadData): compiled by nvcc -fatbin, embedded with bin2c.

/// Incremented once per element by scale_add.
__device__ int driver_counter;

/// out[i] = a * in[i] + i for i < n.
extern "C" __global__ void scale_add(float* out, const float* in, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    out[i] = a * in[i] + static_cast<float>(i);
    atomicAdd(&driver_counter, 1);
  }
}

/// Sums pairs: out[i] = x[i] + y[i] (a second function of the same module).
extern "C" __global__ void add_pairs(int* out, const int* x, const int* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = x[i] + y[i];
}
