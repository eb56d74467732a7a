// Device code for the executor's GPU tests, built into kernels.fatbin.

/// y[i] = a * x[i] + b, rounded once (fused), so a CPU std::fma matches
/// bit for bit.
extern "C" __global__ void saxpb(float* y, const float* x, float a, float b,
                                 int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = __fmaf_rn(a, x[i], b);
}

/// A module variable the tests copy to and from.
extern "C" {
__device__ int counters[4];
}

/// counters[threadIdx.x] += v.
extern "C" __global__ void add_to_counters(int v) {
  counters[threadIdx.x] += v;
}
