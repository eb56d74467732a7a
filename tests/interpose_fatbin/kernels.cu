// Device code of the fatbin fixtures: a few kernels and variables, enough to
// give every fatbin entry real content.
struct odd_record {
  char tag;
  double weight;
  short count;
};

__device__ int fixture_counter;
__constant__ float fixture_table[16];

__global__ void fixture_scale(float* data, float factor, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    data[i] = data[i] * factor + fixture_table[i % 16];
}

__global__ void fixture_pack(odd_record r, long long* out) {
  out[0] = r.tag + static_cast<long long>(r.weight) + r.count;
  atomicAdd(&fixture_counter, 1);
}
