// A multi-kernel pipeline over a few MB: fp32 matmul (tiled, fixed
// summation order), an exclusive prefix sum (block scan + block offsets),
// and a tree reduction. Every stage is deterministic on a given GPU.
#include "common.cuh"

#include <cmath>
#include <vector>

constexpr int tile = 16;

__global__ void matmul(const float* a, const float* b, float* c, int n) {
  __shared__ float as[tile][tile];
  __shared__ float bs[tile][tile];
  int row = blockIdx.y * tile + threadIdx.y;
  int col = blockIdx.x * tile + threadIdx.x;
  float acc = 0.0f;
  for (int t = 0; t < n / tile; ++t) {
    as[threadIdx.y][threadIdx.x] = a[row * n + t * tile + threadIdx.x];
    bs[threadIdx.y][threadIdx.x] = b[(t * tile + threadIdx.y) * n + col];
    __syncthreads();
    for (int k = 0; k < tile; ++k)
      acc = fmaf(as[threadIdx.y][k], bs[k][threadIdx.x], acc);
    __syncthreads();
  }
  c[row * n + col] = acc;
}

// Converts to fixed point so that the scan is exact integer arithmetic.
__global__ void quantize(const float* in, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = static_cast<int>(lrintf(in[i] * 16.0f)) & 0xffff;
}

constexpr int scan_block = 512;

// Exclusive scan of each 512-element block; block totals to `sums`.
__global__ void block_scan(const int* in, long long* out, long long* sums) {
  __shared__ long long s[scan_block];
  int i = blockIdx.x * scan_block + threadIdx.x;
  s[threadIdx.x] = in[i];
  __syncthreads();
  for (int offset = 1; offset < scan_block; offset *= 2) {
    long long v = threadIdx.x >= offset ? s[threadIdx.x - offset] : 0;
    __syncthreads();
    s[threadIdx.x] += v;
    __syncthreads();
  }
  out[i] = s[threadIdx.x] - in[i];
  if (threadIdx.x == scan_block - 1)
    sums[blockIdx.x] = s[threadIdx.x];
}

// Sequential scan of the block totals (few of them), then add offsets.
__global__ void scan_sums(long long* sums, int blocks) {
  long long running = 0;
  for (int b = 0; b < blocks; ++b) {
    long long v = sums[b];
    sums[b] = running;
    running += v;
  }
}

__global__ void add_offsets(long long* out, const long long* sums) {
  out[blockIdx.x * scan_block + threadIdx.x] += sums[blockIdx.x];
}

// Tree reduction of doubles, one partial sum per block, fixed order.
__global__ void reduce(const float* in, double* partial, int n) {
  __shared__ double s[256];
  double acc = 0.0;
  for (int i = blockIdx.x * 256 + threadIdx.x; i < n; i += gridDim.x * 256)
    acc += static_cast<double>(in[i]);
  s[threadIdx.x] = acc;
  __syncthreads();
  for (int stride = 128; stride > 0; stride /= 2) {
    if (threadIdx.x < stride)
      s[threadIdx.x] += s[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0)
    partial[blockIdx.x] = s[0];
}

int main() {
  constexpr int n = 512;  // 512x512 fp32 matrices: 1 MiB each
  constexpr int elems = n * n;
  gleam_program::checksum sum;
  std::vector<float> a(elems), b(elems);
  uint32_t state = 2024;
  for (int i = 0; i < elems; ++i) {
    a[i] = static_cast<float>(gleam_program::next_random(state) % 2001) / 1000.0f - 1.0f;
    b[i] = static_cast<float>(gleam_program::next_random(state) % 2001) / 1000.0f - 1.0f;
  }
  float *da = nullptr, *db = nullptr, *dc = nullptr;
  GLEAM_PROGRAM_CHECK(cudaMalloc(&da, elems * sizeof(float)));
  GLEAM_PROGRAM_CHECK(cudaMalloc(&db, elems * sizeof(float)));
  GLEAM_PROGRAM_CHECK(cudaMalloc(&dc, elems * sizeof(float)));
  GLEAM_PROGRAM_CHECK(cudaMemcpy(da, a.data(), elems * sizeof(float), cudaMemcpyHostToDevice));
  GLEAM_PROGRAM_CHECK(cudaMemcpy(db, b.data(), elems * sizeof(float), cudaMemcpyHostToDevice));

  cudaStream_t stream;
  GLEAM_PROGRAM_CHECK(cudaStreamCreate(&stream));
  matmul<<<dim3(n / tile, n / tile), dim3(tile, tile), 0, stream>>>(da, db, dc, n);
  GLEAM_PROGRAM_CHECK_LAUNCH();

  int* quant = nullptr;
  long long *scan = nullptr, *sums = nullptr;
  constexpr int blocks = elems / scan_block;
  GLEAM_PROGRAM_CHECK(cudaMalloc(&quant, elems * sizeof(int)));
  GLEAM_PROGRAM_CHECK(cudaMalloc(&scan, elems * sizeof(long long)));
  GLEAM_PROGRAM_CHECK(cudaMalloc(&sums, blocks * sizeof(long long)));
  quantize<<<elems / 256, 256, 0, stream>>>(dc, quant, elems);
  GLEAM_PROGRAM_CHECK_LAUNCH();
  block_scan<<<blocks, scan_block, 0, stream>>>(quant, scan, sums);
  GLEAM_PROGRAM_CHECK_LAUNCH();
  scan_sums<<<1, 1, 0, stream>>>(sums, blocks);
  GLEAM_PROGRAM_CHECK_LAUNCH();
  add_offsets<<<blocks, scan_block, 0, stream>>>(scan, sums);
  GLEAM_PROGRAM_CHECK_LAUNCH();

  constexpr int reduce_blocks = 64;
  double* partial = nullptr;
  GLEAM_PROGRAM_CHECK(cudaMalloc(&partial, reduce_blocks * sizeof(double)));
  reduce<<<reduce_blocks, 256, 0, stream>>>(dc, partial, elems);
  GLEAM_PROGRAM_CHECK_LAUNCH();

  std::vector<float> c(elems);
  std::vector<int> q(elems);
  std::vector<long long> prefix(elems);
  std::vector<double> parts(reduce_blocks);
  GLEAM_PROGRAM_CHECK(cudaMemcpyAsync(c.data(), dc, elems * sizeof(float), cudaMemcpyDeviceToHost, stream));
  GLEAM_PROGRAM_CHECK(cudaMemcpyAsync(q.data(), quant, elems * sizeof(int), cudaMemcpyDeviceToHost, stream));
  GLEAM_PROGRAM_CHECK(cudaMemcpyAsync(prefix.data(), scan, elems * sizeof(long long), cudaMemcpyDeviceToHost, stream));
  GLEAM_PROGRAM_CHECK(cudaMemcpyAsync(parts.data(), partial, reduce_blocks * sizeof(double), cudaMemcpyDeviceToHost, stream));
  GLEAM_PROGRAM_CHECK(cudaStreamSynchronize(stream));

  // Spot-check the matmul against the host (tolerance: fma vs. host order).
  for (int probe : {0, 1234, elems - 1}) {
    int row = probe / n, col = probe % n;
    double ref = 0.0;
    for (int k = 0; k < n; ++k)
      ref += static_cast<double>(a[row * n + k]) * b[k * n + col];
    GLEAM_PROGRAM_EXPECT(std::fabs(ref - c[probe]) < 1e-2, "matmul value");
  }
  long long running = 0;
  for (int i = 0; i < elems; ++i) {
    GLEAM_PROGRAM_EXPECT(prefix[i] == running, "exclusive prefix sum");
    running += q[i];
  }
  double total = 0.0;
  for (double p : parts)
    total += p;
  std::printf("matmul %dx%d, scan total %lld, reduction sign %s\n", n, n,
              running, total >= 0.0 ? "+" : "-");
  sum.add(c.data(), elems * sizeof(float));
  sum.add(prefix.data(), elems * sizeof(long long));
  sum.add(parts.data(), reduce_blocks * sizeof(double));

  GLEAM_PROGRAM_CHECK(cudaStreamDestroy(stream));
  for (void* p : {static_cast<void*>(da), static_cast<void*>(db),
                  static_cast<void*>(dc), static_cast<void*>(quant),
                  static_cast<void*>(scan), static_cast<void*>(sums),
                  static_cast<void*>(partial)})
    GLEAM_PROGRAM_CHECK(cudaFree(p));
  sum.print("pipeline");
  return 0;
}
