// A memory pool over the driver's virtual memory management, as ggml's CUDA
// backend builds it (ggml_cuda_pool_vmm, linked with -lcuda): the device's
// VMM attribute, the recommended granularity, one 32 GiB reservation, and
// the pool grown by physical allocations mapped one after the other, each
// released right after its map and made readable and writable; buffers
// carved from the pool straddle those mappings. Kernels, copies and
// memsets on them, pointer attributes, then every mapping unmapped and the
// reservation freed, as the pool's destructor does.
#include <cuda.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "common.cuh"

#define DRV_CHECK(call) GLEAM_PROGRAM_CHECK_DRIVER(call, cuGetErrorName)

namespace {

/// ggml's pool: a bump allocator over a reservation that grows by whole
/// granules (CUDA_POOL_VMM_MAX_SIZE = 32 GiB).
class vmm_pool {
public:
  explicit vmm_pool(CUdevice device) : device_(device) {
    CUmemAllocationProp prop = {};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = device_;
    DRV_CHECK(cuMemGetAllocationGranularity(&granularity_, &prop,
                                            CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
  }

  ~vmm_pool() {
    for (const auto& m : mappings_)
      DRV_CHECK(cuMemUnmap(m.first, m.second));
    if (base_ != 0)
      DRV_CHECK(cuMemAddressFree(base_, max_size));
  }

  size_t granularity() const {
    return granularity_;
  }

  size_t mappings() const {
    return mappings_.size();
  }

  void* alloc(size_t size) {
    size = (size + 127) / 128 * 128;
    if (used_ + size > mapped_) {
      auto grow = (used_ + size - mapped_ + granularity_ - 1) / granularity_ * granularity_;
      CUmemAllocationProp prop = {};
      prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
      prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
      prop.location.id = device_;
      CUmemGenericAllocationHandle handle = 0;
      DRV_CHECK(cuMemCreate(&handle, grow, &prop, 0));
      if (base_ == 0)
        DRV_CHECK(cuMemAddressReserve(&base_, max_size, 0, 0, 0));
      DRV_CHECK(cuMemMap(base_ + mapped_, grow, 0, handle, 0));
      // ggml releases at once: the memory lives until its unmap.
      DRV_CHECK(cuMemRelease(handle));
      CUmemAccessDesc access = {};
      access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
      access.location.id = device_;
      access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
      DRV_CHECK(cuMemSetAccess(base_ + mapped_, grow, &access, 1));
      mappings_.emplace_back(base_ + mapped_, grow);
      mapped_ += grow;
    }
    void* p = reinterpret_cast<void*>(base_ + used_);
    used_ += size;
    return p;
  }

  void free(size_t size) {
    used_ -= (size + 127) / 128 * 128;
  }

private:
  static constexpr size_t max_size = size_t{1} << 35;
  CUdevice device_;
  size_t granularity_ = 0;
  CUdeviceptr base_ = 0;
  size_t mapped_ = 0;
  size_t used_ = 0;
  std::vector<std::pair<CUdeviceptr, size_t>> mappings_;
};

__global__ void fill(uint32_t* p, size_t n, uint32_t seed) {
  size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x;
  if (i < n)
    p[i] = static_cast<uint32_t>(i) * 2654435761u ^ seed;
}

__global__ void add(uint32_t* out, const uint32_t* a, const uint32_t* b, size_t n) {
  size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x;
  if (i < n)
    out[i] = a[i] + b[i];
}

unsigned blocks(size_t n) {
  return static_cast<unsigned>((n + 255) / 256);
}

} // namespace

int main() {
  gleam_program::checksum sum;
  GLEAM_PROGRAM_CHECK(cudaFree(nullptr));
  DRV_CHECK(cuInit(0));
  CUdevice device = -1;
  DRV_CHECK(cuDeviceGet(&device, 0));
  int vmm = 0;
  DRV_CHECK(
    cuDeviceGetAttribute(&vmm, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, device));
  std::printf("virtual memory management supported: %d\n", vmm != 0);
  GLEAM_PROGRAM_EXPECT(vmm != 0, "the device supports VMM");
  {
    vmm_pool pool{device};
    auto g = pool.granularity();
    std::printf("granularity is a multiple of 2 MiB: %d\n", g % (size_t{2} << 20) == 0);

    // Three buffers whose sizes are not multiples of the granularity: the
    // pool grows for each, and each starts inside the previous mapping.
    const size_t na = (3 * g) / 8 / sizeof(uint32_t) + 37;
    const size_t nb = (5 * g) / 4 / sizeof(uint32_t) + 11;
    const size_t nc = na < nb ? na : nb;
    auto* a = static_cast<uint32_t*>(pool.alloc(na * sizeof(uint32_t)));
    auto* b = static_cast<uint32_t*>(pool.alloc(nb * sizeof(uint32_t)));
    auto* c = static_cast<uint32_t*>(pool.alloc(nc * sizeof(uint32_t)));
    std::printf("pool mappings after three buffers: %zu\n", pool.mappings());

    fill<<<blocks(na), 256>>>(a, na, 0x1234u);
    GLEAM_PROGRAM_CHECK_LAUNCH();
    fill<<<blocks(nb), 256>>>(b, nb, 0xbeefu);
    GLEAM_PROGRAM_CHECK_LAUNCH();
    add<<<blocks(nc), 256>>>(c, a, b, nc);
    GLEAM_PROGRAM_CHECK_LAUNCH();
    auto out = gleam_program::to_host(c, nc);
    for (size_t i = 0; i < nc; i += 997) {
      uint32_t x = static_cast<uint32_t>(i) * 2654435761u;
      GLEAM_PROGRAM_EXPECT(out[i] == ((x ^ 0x1234u) + (x ^ 0xbeefu)), "a + b");
    }
    sum.add(out.data(), out.size() * sizeof(uint32_t));
    std::printf("c[0]=%u c[%zu]=%u\n", out[0], nc - 1, out[nc - 1]);

    // Host bytes into b across its mappings, a device-to-device copy into
    // a, and a memset over the end of c; all read back.
    std::vector<uint32_t> host(nb);
    uint32_t state = 99;
    for (auto& v : host)
      v = gleam_program::next_random(state);
    GLEAM_PROGRAM_CHECK(cudaMemcpy(b, host.data(), nb * sizeof(uint32_t), cudaMemcpyDefault));
    cudaStream_t stream = nullptr;
    GLEAM_PROGRAM_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    GLEAM_PROGRAM_CHECK(
      cudaMemcpyAsync(a, b, na * sizeof(uint32_t), cudaMemcpyDeviceToDevice, stream));
    GLEAM_PROGRAM_CHECK(cudaMemsetAsync(c + nc - 100, 0x5a, 100 * sizeof(uint32_t), stream));
    GLEAM_PROGRAM_CHECK(cudaStreamSynchronize(stream));
    auto a_back = gleam_program::to_host(a, na);
    auto b_back = gleam_program::to_host(b, nb);
    auto c_back = gleam_program::to_host(c, nc);
    GLEAM_PROGRAM_EXPECT(b_back == host, "b holds the host's bytes");
    GLEAM_PROGRAM_EXPECT(std::equal(a_back.begin(), a_back.end(), host.begin()), "a = b");
    GLEAM_PROGRAM_EXPECT(c_back[nc - 1] == 0x5a5a5a5au, "memset");
    sum.add(a_back.data(), a_back.size() * sizeof(uint32_t));
    sum.add(c_back.data(), c_back.size() * sizeof(uint32_t));
    GLEAM_PROGRAM_CHECK(cudaStreamDestroy(stream));

    // What the process says about pool memory.
    cudaPointerAttributes attrs{};
    GLEAM_PROGRAM_CHECK(cudaPointerGetAttributes(&attrs, b + 5));
    unsigned memory_type = 0;
    DRV_CHECK(cuPointerGetAttribute(&memory_type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                    reinterpret_cast<CUdeviceptr>(b + 5)));
    unsigned long long access = 0;
    CUmemLocation here = {};
    here.type = CU_MEM_LOCATION_TYPE_DEVICE;
    here.id = device;
    DRV_CHECK(cuMemGetAccess(&access, &here, reinterpret_cast<CUdeviceptr>(c)));
    std::printf("pool memory: runtime type %d, driver type %u, access flags %llu\n",
                static_cast<int>(attrs.type), memory_type, access);
    sum.add_value(static_cast<int>(attrs.type));
    sum.add_value(memory_type);

    // A copy past the mapped end of the pool fails at the call.
    auto* end = reinterpret_cast<char*>(c + nc);
    std::vector<char> scratch(64);
    cudaError_t past = cudaMemcpy(end + 3 * g, scratch.data(), scratch.size(),
                                  cudaMemcpyHostToDevice);
    gleam_program::print_code("copy into the reservation past the pool's mappings", past, sum);

    pool.free(nc * sizeof(uint32_t));
    pool.free(nb * sizeof(uint32_t));
    pool.free(na * sizeof(uint32_t));
  }
  GLEAM_PROGRAM_CHECK(cudaDeviceSynchronize());
  sum.print("vmm_pool");
  return 0;
}
