// Stream-ordered memory pools: the default pool (taken before the first
// cudaMallocAsync), its attributes and usage after cudaMallocAsync /
// cudaFreeAsync, a created pool with a release threshold, allocations from
// it with cudaMallocFromPoolAsync and, once current (cudaDeviceSetMemPool),
// with cudaMallocAsync; kernels and copies on pool memory across two
// streams, trims, access, destroy, and the codes of refused calls.
#include "common.cuh"

#include <vector>

using gleam_program::print_code;

namespace {

__global__ void fill(int* p, int n, int base) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    p[i] = base + i;
}

__global__ void add(const int* a, const int* b, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = a[i] + b[i];
}

unsigned long long attr64(cudaMemPool_t pool, cudaMemPoolAttr a) {
  uint64_t v = 0;
  GLEAM_PROGRAM_CHECK(cudaMemPoolGetAttribute(pool, a, &v));
  return static_cast<unsigned long long>(v);
}

int attr32(cudaMemPool_t pool, cudaMemPoolAttr a) {
  int v = -1;
  GLEAM_PROGRAM_CHECK(cudaMemPoolGetAttribute(pool, a, &v));
  return v;
}

} // namespace

int main() {
  constexpr int n = 1 << 18;
  constexpr size_t bytes = n * sizeof(int);
  gleam_program::checksum sum;
  cudaMemPool_t def = nullptr, current = nullptr;
  GLEAM_PROGRAM_CHECK(cudaDeviceGetDefaultMemPool(&def, 0));
  GLEAM_PROGRAM_CHECK(cudaDeviceGetMemPool(&current, 0));
  GLEAM_PROGRAM_EXPECT(current == def, "the default pool is current");
  std::printf("default pool: release threshold %llu, used %llu, reuse %d %d %d\n",
              attr64(def, cudaMemPoolAttrReleaseThreshold),
              attr64(def, cudaMemPoolAttrUsedMemCurrent),
              attr32(def, cudaMemPoolReuseFollowEventDependencies),
              attr32(def, cudaMemPoolReuseAllowOpportunistic),
              attr32(def, cudaMemPoolReuseAllowInternalDependencies));

  cudaStream_t s1, s2;
  GLEAM_PROGRAM_CHECK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
  GLEAM_PROGRAM_CHECK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
  int *a = nullptr, *b = nullptr, *c = nullptr;
  GLEAM_PROGRAM_CHECK(cudaMallocAsync(&a, bytes, s1));
  GLEAM_PROGRAM_CHECK(cudaMallocAsync(&b, bytes, s1));
  std::printf("default pool used after 2 x %zu B: %llu\n", bytes,
              attr64(def, cudaMemPoolAttrUsedMemCurrent));
  sum.add_value(attr64(def, cudaMemPoolAttrUsedMemCurrent));
  fill<<<n / 256, 256, 0, s1>>>(a, n, 1);
  fill<<<n / 256, 256, 0, s1>>>(b, n, 1000);

  // A pool of our own, with a release threshold, made current.
  cudaMemPoolProps props = {};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = 0;
  cudaMemPool_t mine = nullptr;
  GLEAM_PROGRAM_CHECK(cudaMemPoolCreate(&mine, &props));
  uint64_t threshold = 64ull << 20;
  GLEAM_PROGRAM_CHECK(cudaMemPoolSetAttribute(mine, cudaMemPoolAttrReleaseThreshold, &threshold));
  int off = 0;
  GLEAM_PROGRAM_CHECK(cudaMemPoolSetAttribute(mine, cudaMemPoolReuseAllowOpportunistic, &off));
  std::printf("my pool: release threshold %llu, opportunistic %d\n",
              attr64(mine, cudaMemPoolAttrReleaseThreshold),
              attr32(mine, cudaMemPoolReuseAllowOpportunistic));
  GLEAM_PROGRAM_CHECK(cudaMallocFromPoolAsync(&c, bytes, mine, s1));
  add<<<n / 256, 256, 0, s1>>>(a, b, c, n);
  cudaEvent_t done;
  GLEAM_PROGRAM_CHECK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
  GLEAM_PROGRAM_CHECK(cudaEventRecord(done, s1));
  GLEAM_PROGRAM_CHECK(cudaStreamWaitEvent(s2, done, 0));
  GLEAM_PROGRAM_CHECK(cudaFreeAsync(a, s2));
  GLEAM_PROGRAM_CHECK(cudaFreeAsync(b, s2));
  GLEAM_PROGRAM_CHECK(cudaDeviceSetMemPool(0, mine));
  GLEAM_PROGRAM_CHECK(cudaDeviceGetMemPool(&current, 0));
  GLEAM_PROGRAM_EXPECT(current == mine, "my pool is current");
  int* d = nullptr;
  GLEAM_PROGRAM_CHECK(cudaMallocAsync(&d, bytes, s1));
  add<<<n / 256, 256, 0, s1>>>(c, c, d, n);
  std::vector<int> host(n);
  GLEAM_PROGRAM_CHECK(cudaMemcpyAsync(host.data(), d, bytes, cudaMemcpyDeviceToHost, s1));
  GLEAM_PROGRAM_CHECK(cudaStreamSynchronize(s1));
  GLEAM_PROGRAM_CHECK(cudaStreamSynchronize(s2));
  GLEAM_PROGRAM_EXPECT(host[5] == 2 * (1 + 5 + 1000 + 5), "pool memory computes");
  sum.add(host.data(), bytes);
  std::printf("d[5] = %d\n", host[5]);
  std::printf("my pool used: %llu, high %llu; default pool used: %llu\n",
              attr64(mine, cudaMemPoolAttrUsedMemCurrent),
              attr64(mine, cudaMemPoolAttrUsedMemHigh),
              attr64(def, cudaMemPoolAttrUsedMemCurrent));
  sum.add_value(attr64(mine, cudaMemPoolAttrUsedMemCurrent));
  GLEAM_PROGRAM_CHECK(cudaFreeAsync(c, s1));
  GLEAM_PROGRAM_CHECK(cudaFreeAsync(d, s1));
  GLEAM_PROGRAM_CHECK(cudaStreamSynchronize(s1));
  std::printf("my pool used after frees: %llu, reserved <= threshold: %d\n",
              attr64(mine, cudaMemPoolAttrUsedMemCurrent),
              attr64(mine, cudaMemPoolAttrReservedMemCurrent) <= threshold);
  uint64_t zero = 0;
  GLEAM_PROGRAM_CHECK(cudaMemPoolSetAttribute(mine, cudaMemPoolAttrUsedMemHigh, &zero));
  GLEAM_PROGRAM_CHECK(cudaMemPoolTrimTo(mine, 0));
  GLEAM_PROGRAM_CHECK(cudaStreamSynchronize(s1));
  std::printf("after trim: reserved %llu, used high %llu\n",
              attr64(mine, cudaMemPoolAttrReservedMemCurrent),
              attr64(mine, cudaMemPoolAttrUsedMemHigh));

  cudaMemAccessDesc desc = {};
  desc.location.type = cudaMemLocationTypeDevice;
  desc.location.id = 0;
  desc.flags = cudaMemAccessFlagsProtReadWrite;
  GLEAM_PROGRAM_CHECK(cudaMemPoolSetAccess(mine, &desc, 1));
  cudaMemAccessFlags flags = cudaMemAccessFlagsProtNone;
  GLEAM_PROGRAM_CHECK(cudaMemPoolGetAccess(&flags, mine, &desc.location));
  std::printf("access from device 0: %d\n", static_cast<int>(flags));
  sum.add_value(static_cast<int>(flags));

  // Refused calls.
  uint64_t one = 1;
  print_code("set UsedMemCurrent",
             cudaMemPoolSetAttribute(mine, cudaMemPoolAttrUsedMemCurrent, &one), sum);
  print_code("set UsedMemHigh to 1",
             cudaMemPoolSetAttribute(mine, cudaMemPoolAttrUsedMemHigh, &one), sum);
  print_code("destroy the default pool", cudaMemPoolDestroy(def), sum);
  cudaMemPool_t none = nullptr;
  print_code("default pool of device 64", cudaDeviceGetDefaultMemPool(&none, 64), sum);
  print_code("set pool of device 64", cudaDeviceSetMemPool(64, mine), sum);

  GLEAM_PROGRAM_CHECK(cudaMemPoolDestroy(mine));
  GLEAM_PROGRAM_CHECK(cudaDeviceGetMemPool(&current, 0));
  GLEAM_PROGRAM_EXPECT(current == def, "the default pool is current again");
  std::printf("after destroy the default pool is current: yes\n");
  GLEAM_PROGRAM_CHECK(cudaEventDestroy(done));
  GLEAM_PROGRAM_CHECK(cudaStreamDestroy(s1));
  GLEAM_PROGRAM_CHECK(cudaStreamDestroy(s2));
  sum.print("mem_pools");
  return 0;
}
