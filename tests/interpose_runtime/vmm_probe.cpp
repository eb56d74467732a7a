// interpose_vmm_probe LIB SCENARIO: loads LIB (a libcudart.so.13) and Gleam's
// driver surface next to it (driver/libcuda.so.1) with dlopen, as an app
// would, and runs one scenario of the virtual memory management API against
// a server (fake_gpu_server in the CPU tests). Prints one "key=value" line
// per observation: driver calls as CUresult numbers, runtime calls as error
// names; exit code 0 unless the libraries could not be used.
//
//   ggml     the sequence of ggml's VMM pool: granularity, a 32 GiB
//            reservation, an allocation mapped and released at once, access
//            set, copies in and out (runtime and driver copies, the default
//            kind, a stream), the pool grown by a second mapping next to
//            the first, a copy and a kernel ("kp", which adds 1 to its
//            bytes on the fake) across the two, memsets, pointer attributes
//            and address ranges, a copy past the mapped range refused, the
//            unmaps, copies refused after them, the reservation freed
//   errors   the calls CUDA refuses, each with its CUresult (a creation
//            larger than the device: out of memory at the call), and
//            nothing left for a later call to report
//   forwards driver functions with a runtime twin (pitched memory and 2D
//            copies, the default memory pool and an allocation from it,
//            stream flags) and a created context, destroyed and refused
//   retain   cuMemRetainAllocationHandle, cuMemGetAllocationPropertiesFromHandle,
//            cuMemGetAccess, a release per reference, the memory kept
//            while mapped
//
// With GLEAM_PROBE_DEADLINE_S=N set, a probe still running after N seconds
// says so on stderr and exits with 124, so a hang fails a test.
#include <dlfcn.h>
#include <signal.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <cuda.h>
#include <cuda_runtime_api.h>

namespace {

void* runtime = nullptr;
void* driver = nullptr;

void* must(void* lib, const char* name) {
  auto* p = dlsym(lib, name);
  if (p == nullptr) {
    std::fprintf(stderr, "missing %s\n", name);
    std::exit(3);
  }
  return p;
}

#define RT(name) static auto name##_ = reinterpret_cast<decltype(&name)>(must(runtime, #name))
#define DRV(name, symbol)                                                                    \
  static auto name##_ = reinterpret_cast<decltype(&name)>(must(driver, symbol))

void print_rt(const char* key, cudaError_t e) {
  RT(cudaGetErrorName);
  std::printf("%s=%s\n", key, cudaGetErrorName_(e));
}

void print_cu(const char* key, CUresult rc) {
  std::printf("%s=%d\n", key, static_cast<int>(rc));
}

void print_value(const char* key, unsigned long long v) {
  std::printf("%s=%llu\n", key, v);
}

void* dev(CUdeviceptr p) {
  return reinterpret_cast<void*>(static_cast<uintptr_t>(p));
}

std::string pattern(size_t n, unsigned seed) {
  std::string out(n, '\0');
  for (size_t i = 0; i < n; ++i)
    out[i] = static_cast<char>((i * 131 + seed) & 0xff);
  return out;
}

uint64_t fnv1a(const std::string& bytes, uint64_t hash) {
  for (unsigned char c : bytes) {
    hash ^= c;
    hash *= 0x100000001b3ull;
  }
  return hash;
}

CUmemAllocationProp device_prop(int device = 0) {
  CUmemAllocationProp prop;
  std::memset(&prop, 0, sizeof(prop));
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = device;
  return prop;
}

CUmemAccessDesc read_write(int device = 0) {
  CUmemAccessDesc d;
  std::memset(&d, 0, sizeof(d));
  d.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  d.location.id = device;
  d.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  return d;
}

// The driver functions every scenario uses.
struct vmm_api {
  decltype(&cuMemGetAllocationGranularity) granularity;
  decltype(&cuMemAddressReserve) reserve;
  decltype(&cuMemAddressFree) address_free;
  decltype(&cuMemCreate) create;
  decltype(&cuMemRelease) release;
  decltype(&cuMemMap) map;
  decltype(&cuMemUnmap) unmap;
  decltype(&cuMemSetAccess) set_access;
  decltype(&cuMemGetAccess) get_access;
  decltype(&cuMemRetainAllocationHandle) retain;
  decltype(&cuMemGetAllocationPropertiesFromHandle) properties;
};

vmm_api load_vmm() {
  vmm_api v;
  v.granularity = reinterpret_cast<decltype(v.granularity)>(
    must(driver, "cuMemGetAllocationGranularity"));
  v.reserve = reinterpret_cast<decltype(v.reserve)>(must(driver, "cuMemAddressReserve"));
  v.address_free = reinterpret_cast<decltype(v.address_free)>(must(driver, "cuMemAddressFree"));
  v.create = reinterpret_cast<decltype(v.create)>(must(driver, "cuMemCreate"));
  v.release = reinterpret_cast<decltype(v.release)>(must(driver, "cuMemRelease"));
  v.map = reinterpret_cast<decltype(v.map)>(must(driver, "cuMemMap"));
  v.unmap = reinterpret_cast<decltype(v.unmap)>(must(driver, "cuMemUnmap"));
  v.set_access = reinterpret_cast<decltype(v.set_access)>(must(driver, "cuMemSetAccess"));
  v.get_access = reinterpret_cast<decltype(v.get_access)>(must(driver, "cuMemGetAccess"));
  v.retain = reinterpret_cast<decltype(v.retain)>(must(driver, "cuMemRetainAllocationHandle"));
  v.properties = reinterpret_cast<decltype(v.properties)>(
    must(driver, "cuMemGetAllocationPropertiesFromHandle"));
  return v;
}

/// Copies `n` bytes at device address `src` back with cudaMemcpy.
std::string read_back(CUdeviceptr src, size_t n) {
  RT(cudaMemcpy);
  std::string out(n, '\0');
  if (cudaMemcpy_(&out[0], dev(src), n, cudaMemcpyDeviceToHost) != cudaSuccess)
    return {};
  return out;
}

void ggml() {
  RT(cudaMemcpy);
  RT(cudaMemcpyAsync);
  RT(cudaMemset);
  RT(cudaStreamCreate);
  RT(cudaStreamSynchronize);
  RT(cudaDeviceSynchronize);
  RT(cudaPointerGetAttributes);
  RT(cudaFree);
  DRV(cuInit, "cuInit");
  DRV(cuDeviceGet, "cuDeviceGet");
  DRV(cuDeviceGetAttribute, "cuDeviceGetAttribute");
  DRV(cuMemcpyDtoH, "cuMemcpyDtoH_v2");
  DRV(cuMemsetD32, "cuMemsetD32_v2");
  DRV(cuModuleLoadData, "cuModuleLoadData");
  DRV(cuModuleGetFunction, "cuModuleGetFunction");
  DRV(cuLaunchKernel, "cuLaunchKernel");
  DRV(cuPointerGetAttribute, "cuPointerGetAttribute");
  DRV(cuMemGetAddressRange, "cuMemGetAddressRange_v2");
  auto v = load_vmm();
  uint64_t sum = 0xcbf29ce484222325ull;

  print_cu("init", cuInit_(0));
  CUdevice device = -1;
  print_cu("device_get", cuDeviceGet_(&device, 0));
  int supported = 0;
  print_cu("vmm_attribute",
           cuDeviceGetAttribute_(&supported,
                                 CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, device));
  print_value("vmm_supported", supported != 0 ? 1 : 0);

  auto prop = device_prop(device);
  size_t g = 0, gmin = 0;
  print_cu("granularity",
           v.granularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
  print_cu("granularity_min", v.granularity(&gmin, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  print_value("granularity_bytes", g);
  if (g == 0)
    return;

  CUdeviceptr pool = 0;
  const size_t pool_max = size_t{1} << 35;
  print_cu("reserve", v.reserve(&pool, pool_max, 0, 0, 0));
  CUmemGenericAllocationHandle h1 = 0;
  print_cu("create", v.create(&h1, 2 * g, &prop, 0));
  print_cu("map", v.map(pool, 2 * g, 0, h1, 0));
  print_cu("release", v.release(h1));
  auto rw = read_write(device);
  print_cu("set_access", v.set_access(pool, 2 * g, &rw, 1));

  auto bytes = pattern(4096, 7);
  print_rt("h2d", cudaMemcpy_(dev(pool + 1000), bytes.data(), bytes.size(),
                              cudaMemcpyHostToDevice));
  auto back = read_back(pool + 1000, bytes.size());
  print_value("d2h_equal", back == bytes ? 1 : 0);
  sum = fnv1a(back, sum);
  auto other = pattern(2048, 9);
  print_rt("h2d_default", cudaMemcpy_(dev(pool + 8192), other.data(), other.size(),
                                      cudaMemcpyDefault));
  std::string driver_back(other.size(), '\0');
  print_cu("driver_d2h", cuMemcpyDtoH_(&driver_back[0], pool + 8192, other.size()));
  print_value("driver_d2h_equal", driver_back == other ? 1 : 0);
  sum = fnv1a(driver_back, sum);

  // The pool grows: the next allocation mapped right after the first.
  CUmemGenericAllocationHandle h2 = 0;
  print_cu("create_2", v.create(&h2, g, &prop, 0));
  print_cu("map_2", v.map(pool + 2 * g, g, 0, h2, 0));
  print_cu("release_2", v.release(h2));
  print_cu("set_access_2", v.set_access(pool + 2 * g, g, &rw, 1));
  auto across = pattern(512, 3);
  print_rt("h2d_across", cudaMemcpy_(dev(pool + 2 * g - 256), across.data(), across.size(),
                                     cudaMemcpyHostToDevice));
  cudaStream_t stream = nullptr;
  print_rt("stream", cudaStreamCreate_(&stream));
  std::string across_back(across.size(), '\0');
  print_rt("d2h_async", cudaMemcpyAsync_(&across_back[0], dev(pool + 2 * g - 256),
                                         across.size(), cudaMemcpyDeviceToHost, stream));
  print_rt("stream_sync", cudaStreamSynchronize_(stream));
  print_value("across_equal", across_back == across ? 1 : 0);
  sum = fnv1a(across_back, sum);

  print_rt("memset", cudaMemset_(dev(pool + 2 * g + 100), 0x7f, 64));
  print_cu("memset_d32", cuMemsetD32_(pool + 2 * g + 4096, 0x01020304u, 16));
  auto set = read_back(pool + 2 * g + 100, 64);
  auto words = read_back(pool + 2 * g + 4096, 64);
  bool words_ok = words.size() == 64;
  for (size_t i = 0; words_ok && i < 64; i += 4)
    words_ok = words[i] == 4 && words[i + 1] == 3 && words[i + 2] == 2 && words[i + 3] == 1;
  print_value("memset_equal", set == std::string(64, '\x7f') && words_ok ? 1 : 0);
  sum = fnv1a(set, sum);
  sum = fnv1a(words, sum);

  // A kernel over bytes on both sides of the boundary ("kp" adds 1 to each
  // of its int's bytes at its pointer, on the fake server).
  static const char ptx[] =
    ".version 8.0\n.target sm_90\n.address_size 64\n"
    ".visible .entry kp(.param .u64 p, .param .u32 n)\n{\n  ret;\n}\n";
  CUmodule module = nullptr;
  CUfunction kp = nullptr;
  print_cu("module", cuModuleLoadData_(&module, ptx));
  print_cu("function", cuModuleGetFunction_(&kp, module, "kp"));
  CUdeviceptr at = pool + 2 * g - 2;
  int n = 4;
  void* params[] = {&at, &n};
  auto before = read_back(at, 4);
  print_cu("launch", cuLaunchKernel_(kp, 1, 1, 1, 1, 1, 1, 0, nullptr, params, nullptr));
  print_rt("launch_sync", cudaDeviceSynchronize_());
  auto after = read_back(at, 4);
  bool added = before.size() == 4 && after.size() == 4;
  for (size_t i = 0; added && i < 4; ++i)
    added = static_cast<unsigned char>(after[i])
            == static_cast<unsigned char>(static_cast<unsigned char>(before[i]) + 1);
  print_value("kernel_equal", added ? 1 : 0);
  sum = fnv1a(after, sum);

  // What the process says about the mapped addresses.
  cudaPointerAttributes attrs;
  print_rt("attributes", cudaPointerGetAttributes_(&attrs, dev(pool + 5)));
  print_value("attributes_type", static_cast<unsigned>(attrs.type));
  print_value("attributes_device_pointer",
              attrs.devicePointer == dev(pool + 5) ? 1 : 0);
  CUdeviceptr start = 0;
  size_t range = 0;
  print_cu("range_start", cuPointerGetAttribute_(&start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
                                                  pool + 2 * g + 5));
  print_cu("range_size", cuPointerGetAttribute_(&range, CU_POINTER_ATTRIBUTE_RANGE_SIZE,
                                                 pool + 2 * g + 5));
  print_value("range_is_mapping", start == pool + 2 * g && range == g ? 1 : 0);
  unsigned memory_type = 0;
  print_cu("memory_type", cuPointerGetAttribute_(&memory_type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                                  pool + 10));
  print_value("memory_type_value", memory_type);
  CUdeviceptr base = 0;
  size_t size = 0;
  print_cu("address_range", cuMemGetAddressRange_(&base, &size, pool + 12345));
  print_value("address_range_is_mapping", base == pool && size == 2 * g ? 1 : 0);
  unsigned long long flags = 0;
  CUmemLocation location = rw.location;
  print_cu("get_access", v.get_access(&flags, &location, pool + 2 * g));
  print_value("get_access_flags", flags);

  // Past the mapped range, refused at the call.
  auto tail = pattern(16, 1);
  print_rt("past_end", cudaMemcpy_(dev(pool + 3 * g - 8), tail.data(), tail.size(),
                                   cudaMemcpyHostToDevice));
  std::string tail_back(16, '\0');
  print_rt("past_end_d2h", cudaMemcpy_(&tail_back[0], dev(pool + 3 * g - 8), 16,
                                       cudaMemcpyDeviceToHost));
  print_rt("free_mapping", cudaFree_(dev(pool)));

  std::printf("checksum=%016llx\n", static_cast<unsigned long long>(sum));

  // As ggml's pool ends: every mapping unmapped, then the reservation freed.
  print_cu("unmap", v.unmap(pool, 2 * g));
  print_cu("unmap_2", v.unmap(pool + 2 * g, g));
  print_rt("after_unmap", cudaMemcpy_(dev(pool + 1000), bytes.data(), 16,
                                      cudaMemcpyHostToDevice));
  print_rt("after_unmap_d2h", cudaMemcpy_(&tail_back[0], dev(pool + 1000), 16,
                                          cudaMemcpyDeviceToHost));
  print_rt("after_unmap_default", cudaMemcpy_(dev(pool + 1000), bytes.data(), 16,
                                              cudaMemcpyDefault));
  print_rt("attributes_unmapped", cudaPointerGetAttributes_(&attrs, dev(pool + 5)));
  print_value("attributes_unmapped_type", static_cast<unsigned>(attrs.type));
  print_cu("address_free", v.address_free(pool, pool_max));
  print_rt("sync", cudaDeviceSynchronize_());
}

/// cuInit and the minimum granularity of device memory (0 when it failed),
/// both printed.
size_t start(const vmm_api& v) {
  DRV(cuInit, "cuInit");
  print_cu("init", cuInit_(0));
  auto prop = device_prop();
  size_t g = 0;
  print_cu("granularity", v.granularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  return g;
}

void errors() {
  RT(cudaMemcpy);
  RT(cudaFree);
  RT(cudaDeviceSynchronize);
  auto v = load_vmm();
  auto g = start(v);
  if (g == 0)
    return;
  auto prop = device_prop();
  print_cu("granularity_null_prop", v.granularity(&g, nullptr, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  print_cu("granularity_option",
           v.granularity(&g, &prop, static_cast<CUmemAllocationGranularity_flags>(7)));
  auto far = device_prop(5);
  print_cu("granularity_device", v.granularity(&g, &far, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  auto host = device_prop();
  host.location.type = CU_MEM_LOCATION_TYPE_HOST;
  print_cu("granularity_host", v.granularity(&g, &host, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  auto untyped = device_prop();
  untyped.type = CU_MEM_ALLOCATION_TYPE_INVALID;
  print_cu("granularity_type", v.granularity(&g, &untyped, CU_MEM_ALLOC_GRANULARITY_MINIMUM));

  CUdeviceptr va = 0;
  print_cu("reserve_empty", v.reserve(&va, 0, 0, 0, 0));
  print_cu("reserve_alignment", v.reserve(&va, 2 * g, 3, 0, 0));
  print_cu("reserve", v.reserve(&va, 8 * g, 0, 0, 0));

  CUmemGenericAllocationHandle h = 0, h2 = 0, none = 0;
  print_cu("create_unaligned", v.create(&none, 4096, &prop, 0));
  print_cu("create_flags", v.create(&none, g, &prop, 1));
  print_cu("create_device", v.create(&none, g, &far, 0));
  print_cu("create_empty", v.create(&none, 0, &prop, 0));
  // More than the device holds: out of memory at the call.
  print_cu("create_too_big", v.create(&none, (size_t{1} << 40) + g, &prop, 0));
  print_cu("create", v.create(&h, 2 * g, &prop, 0));
  print_cu("create_2", v.create(&h2, g, &prop, 0));

  print_cu("map_unknown_handle", v.map(va, g, 0, 0xdead, 0));
  print_cu("map_unaligned", v.map(va + 4096, g, 0, h2, 0));
  print_cu("map_past_allocation", v.map(va, 2 * g, 0, h2, 0));
  print_cu("map_outside", v.map(va + 8 * g, g, 0, h2, 0));
  print_cu("map_flags", v.map(va, g, 0, h2, 1));
  print_cu("map", v.map(va, 2 * g, 0, h, 0));
  print_cu("map_over", v.map(va + g, g, 0, h2, 0));

  auto bytes = pattern(16, 4);
  print_rt("copy_without_access", cudaMemcpy_(dev(va), bytes.data(), bytes.size(),
                                              cudaMemcpyHostToDevice));
  auto rw = read_write();
  print_cu("access_part", v.set_access(va, g, &rw, 1));
  print_cu("access_unmapped", v.set_access(va + 4 * g, g, &rw, 1));
  auto rw_far = read_write(2);
  print_cu("access_device", v.set_access(va, 2 * g, &rw_far, 1));
  auto odd = read_write();
  odd.flags = static_cast<CUmemAccess_flags>(2);
  print_cu("access_flags", v.set_access(va, 2 * g, &odd, 1));
  auto rw_host = read_write();
  rw_host.location.type = CU_MEM_LOCATION_TYPE_HOST;
  print_cu("access_host", v.set_access(va, 2 * g, &rw_host, 1));
  print_cu("access_none", v.set_access(va, 2 * g, &rw, 0));

  print_cu("unmap_part", v.unmap(va, g));
  print_cu("unmap_unmapped", v.unmap(va + 4 * g, g));
  print_cu("address_free_size", v.address_free(va, 4 * g));
  print_cu("address_free_mapped", v.address_free(va, 8 * g));
  print_cu("release_unknown", v.release(0xdead));
  unsigned long long flags = 0;
  CUmemLocation location = rw.location;
  print_cu("get_access_unmapped", v.get_access(&flags, &location, va + 4 * g));
  CUmemAllocationProp got;
  print_cu("properties_unknown", v.properties(&got, 0xdead));
  CUmemGenericAllocationHandle retained = 0;
  print_cu("retain_unmapped", v.retain(&retained, dev(va + 4 * g)));
  print_rt("cuda_free_mapping", cudaFree_(dev(va)));

  print_cu("unmap", v.unmap(va, 2 * g));
  print_cu("release", v.release(h));
  print_cu("release_again", v.release(h));
  print_cu("release_2", v.release(h2));
  print_cu("address_free", v.address_free(va, 8 * g));
  print_cu("address_free_again", v.address_free(va, 8 * g));
  // Everything refused was refused at its call: nothing is left over.
  print_rt("sync", cudaDeviceSynchronize_());
}

/// Driver functions that forward to the runtime, and created contexts.
void forwards() {
  DRV(cuInit, "cuInit");
  DRV(cuDeviceGet, "cuDeviceGet");
  DRV(cuCtxCreate, "cuCtxCreate_v4");
  DRV(cuCtxDestroy, "cuCtxDestroy_v2");
  DRV(cuCtxGetCurrent, "cuCtxGetCurrent");
  DRV(cuCtxPushCurrent, "cuCtxPushCurrent_v2");
  DRV(cuMemAllocPitch, "cuMemAllocPitch_v2");
  DRV(cuMemcpy2D, "cuMemcpy2D_v2");
  DRV(cuMemFree, "cuMemFree_v2");
  DRV(cuDeviceGetDefaultMemPool, "cuDeviceGetDefaultMemPool");
  DRV(cuMemPoolSetAttribute, "cuMemPoolSetAttribute");
  DRV(cuMemPoolGetAttribute, "cuMemPoolGetAttribute");
  DRV(cuMemAllocFromPoolAsync, "cuMemAllocFromPoolAsync");
  DRV(cuMemFreeAsync, "cuMemFreeAsync");
  DRV(cuStreamCreateWithPriority, "cuStreamCreateWithPriority");
  DRV(cuStreamGetFlags, "cuStreamGetFlags");
  DRV(cuStreamSynchronize, "cuStreamSynchronize");
  DRV(cuMemcpyHtoD, "cuMemcpyHtoD_v2");
  DRV(cuMemcpyDtoH, "cuMemcpyDtoH_v2");
  print_cu("init", cuInit_(0));
  CUdevice device = -1;
  print_cu("device_get", cuDeviceGet_(&device, 0));

  CUcontext created = nullptr, current = nullptr;
  print_cu("ctx_create", cuCtxCreate_(&created, nullptr, 0, device));
  cuCtxGetCurrent_(&current);
  print_value("ctx_current_is_created", current == created ? 1 : 0);

  // A pitched allocation and a 2D copy up and back of a sub-rectangle.
  constexpr size_t width = 33, height = 7;
  CUdeviceptr pitched = 0;
  size_t pitch = 0;
  print_cu("alloc_pitch", cuMemAllocPitch_(&pitched, &pitch, width, height, 4));
  print_value("pitch_covers_width", pitch >= width ? 1 : 0);
  auto up = pattern(width * height, 7);
  CUDA_MEMCPY2D c{};
  c.srcMemoryType = CU_MEMORYTYPE_HOST;
  c.srcHost = up.data();
  c.srcPitch = width;
  c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  c.dstDevice = pitched;
  c.dstPitch = pitch;
  c.WidthInBytes = width;
  c.Height = height;
  print_cu("copy_2d_up", cuMemcpy2D_(&c));
  std::string back(5 * 3, '\0');
  CUDA_MEMCPY2D d{};
  d.srcMemoryType = CU_MEMORYTYPE_DEVICE;
  d.srcDevice = pitched;
  d.srcPitch = pitch;
  d.srcXInBytes = 4;
  d.srcY = 2;
  d.dstMemoryType = CU_MEMORYTYPE_HOST;
  d.dstHost = back.data();
  d.dstPitch = 5;
  d.WidthInBytes = 5;
  d.Height = 3;
  print_cu("copy_2d_down", cuMemcpy2D_(&d));
  bool same = true;
  for (size_t y = 0; y < 3; ++y)
    same = same && back.compare(y * 5, 5, up, (y + 2) * width + 4, 5) == 0;
  print_value("copy_2d_bytes_match", same ? 1 : 0);
  // A 3D copy of two slices of 4 x 3 bytes into a pitched 8 x 3 layout.
  using copy3d_t = decltype(&cuMemcpy3D);
  auto copy3d = reinterpret_cast<copy3d_t>(must(driver, "cuMemcpy3D_v2"));
  auto cube = pattern(2 * 3 * 4, 9);
  CUDA_MEMCPY3D c3{};
  c3.srcMemoryType = CU_MEMORYTYPE_HOST;
  c3.srcHost = cube.data();
  c3.srcPitch = 4;
  c3.srcHeight = 3;
  c3.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  c3.dstDevice = pitched;
  c3.dstPitch = 8;
  c3.dstHeight = 3;
  c3.WidthInBytes = 4;
  c3.Height = 3;
  c3.Depth = 2;
  print_cu("copy_3d", copy3d(&c3));
  std::string laid(2 * 3 * 8, '\0');
  print_cu("copy_3d_read", cuMemcpyDtoH_(laid.data(), pitched, laid.size()));
  bool cube_same = true;
  for (size_t row = 0; row < 6; ++row)
    cube_same = cube_same && laid.compare(row * 8, 4, cube, row * 4, 4) == 0;
  print_value("copy_3d_bytes_match", cube_same ? 1 : 0);
  print_cu("free_pitch", cuMemFree_(pitched));

  // The default pool keeps an attribute; an allocation from it carries bytes.
  CUmemoryPool pool = nullptr;
  print_cu("default_pool", cuDeviceGetDefaultMemPool_(&pool, device));
  cuuint64_t threshold = 1 << 20, got = 0;
  print_cu("pool_set", cuMemPoolSetAttribute_(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &threshold));
  print_cu("pool_get", cuMemPoolGetAttribute_(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &got));
  print_value("pool_threshold", got);
  CUstream stream = nullptr;
  print_cu("stream_create", cuStreamCreateWithPriority_(&stream, CU_STREAM_NON_BLOCKING, 0));
  unsigned flags = 0;
  print_cu("stream_flags", cuStreamGetFlags_(stream, &flags));
  print_value("stream_flags_value", flags);
  CUdeviceptr from_pool = 0;
  print_cu("alloc_from_pool", cuMemAllocFromPoolAsync_(&from_pool, 4096, pool, stream));
  print_cu("stream_sync", cuStreamSynchronize_(stream));
  auto bytes = pattern(4096, 11);
  std::string read(4096, '\0');
  print_cu("pool_htod", cuMemcpyHtoD_(from_pool, bytes.data(), bytes.size()));
  print_cu("pool_dtoh", cuMemcpyDtoH_(read.data(), from_pool, read.size()));
  print_value("pool_bytes_match", read == bytes ? 1 : 0);
  // The per-thread default stream variants carry the same bytes.
  using copy_up_t = decltype(&cuMemcpyHtoD);
  using copy_down_t = decltype(&cuMemcpyDtoH);
  using sync_t = decltype(&cuStreamSynchronize);
  auto up_ptds = reinterpret_cast<copy_up_t>(must(driver, "cuMemcpyHtoD_v2_ptds"));
  auto down_ptds = reinterpret_cast<copy_down_t>(must(driver, "cuMemcpyDtoH_v2_ptds"));
  auto sync_ptsz = reinterpret_cast<sync_t>(must(driver, "cuStreamSynchronize_ptsz"));
  auto other = pattern(4096, 12);
  std::string again(4096, '\0');
  print_cu("htod_ptds", up_ptds(from_pool, other.data(), other.size()));
  print_cu("sync_ptsz", sync_ptsz(nullptr));
  print_cu("dtoh_ptds", down_ptds(again.data(), from_pool, again.size()));
  print_value("ptds_bytes_match", again == other ? 1 : 0);
  // 16-bit memsets from an unaligned start over an odd count leave the
  // bytes around them alone; a 2D 32-bit memset fills rows of a pitch.
  using d16_t = decltype(&cuMemsetD16);
  using d2d32_t = decltype(&cuMemsetD2D32);
  auto d16 = reinterpret_cast<d16_t>(must(driver, "cuMemsetD16_v2"));
  auto d2d32 = reinterpret_cast<d2d32_t>(must(driver, "cuMemsetD2D32_v2"));
  auto zeros = std::string(64, '\0');
  print_cu("d16_clear", cuMemcpyHtoD_(from_pool, zeros.data(), zeros.size()));
  print_cu("d16", d16(from_pool + 2, 0xBEEF, 5));
  std::string d16_read(64, '\1');
  print_cu("d16_read", cuMemcpyDtoH_(d16_read.data(), from_pool, d16_read.size()));
  std::string d16_expect(64, '\0');
  for (int i = 0; i < 5; ++i) {
    d16_expect[2 + 2 * i] = static_cast<char>(0xEF);
    d16_expect[3 + 2 * i] = static_cast<char>(0xBE);
  }
  print_value("d16_bytes_match", d16_read == d16_expect ? 1 : 0);
  print_cu("d2d32_clear", cuMemcpyHtoD_(from_pool, zeros.data(), zeros.size()));
  print_cu("d2d32", d2d32(from_pool, 16, 0x01020304u, 2, 3));
  std::string d2d_read(64, '\1');
  print_cu("d2d32_read", cuMemcpyDtoH_(d2d_read.data(), from_pool, d2d_read.size()));
  std::string d2d_expect(64, '\0');
  for (int row = 0; row < 3; ++row)
    for (int k = 0; k < 2; ++k)
      for (int b = 0; b < 4; ++b)
        d2d_expect[row * 16 + k * 4 + b] = static_cast<char>(4 - b);
  print_value("d2d32_bytes_match", d2d_read == d2d_expect ? 1 : 0);

  // A driver-API graph: a memset node, instantiated and launched twice.
  DRV(cuGraphCreate, "cuGraphCreate");
  DRV(cuGraphAddMemsetNode, "cuGraphAddMemsetNode");
  DRV(cuGraphInstantiateWithFlags, "cuGraphInstantiateWithFlags");
  DRV(cuGraphLaunch, "cuGraphLaunch");
  DRV(cuGraphExecDestroy, "cuGraphExecDestroy");
  DRV(cuGraphDestroy, "cuGraphDestroy");
  DRV(cuGraphGetNodes, "cuGraphGetNodes");
  CUgraph graph = nullptr;
  print_cu("graph_create", cuGraphCreate_(&graph, 0));
  CUDA_MEMSET_NODE_PARAMS m{};
  m.dst = from_pool;
  m.value = 0x5A;
  m.elementSize = 1;
  m.width = 4096;
  m.height = 1;
  m.pitch = 4096;
  CUgraphNode node = nullptr;
  print_cu("graph_memset_node", cuGraphAddMemsetNode_(&node, graph, nullptr, 0, &m, nullptr));
  // A device-to-device copy node after it; its parameters read back.
  DRV(cuGraphAddMemcpyNode, "cuGraphAddMemcpyNode");
  DRV(cuGraphMemcpyNodeGetParams, "cuGraphMemcpyNodeGetParams");
  CUDA_MEMCPY3D copy{};
  copy.srcMemoryType = CU_MEMORYTYPE_DEVICE;
  copy.srcDevice = from_pool;
  copy.srcPitch = 4096;
  copy.srcHeight = 1;
  copy.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  copy.dstDevice = from_pool;
  copy.dstXInBytes = 2048;
  copy.dstPitch = 4096;
  copy.dstHeight = 1;
  copy.WidthInBytes = 1024;
  copy.Height = 1;
  copy.Depth = 1;
  CUgraphNode copy_node = nullptr;
  print_cu("graph_memcpy_node", cuGraphAddMemcpyNode_(&copy_node, graph, &node, 1, &copy, nullptr));
  CUDA_MEMCPY3D back_params{};
  print_cu("graph_memcpy_get", cuGraphMemcpyNodeGetParams_(copy_node, &back_params));
  print_value("graph_memcpy_same",
              std::memcmp(&back_params, &copy, sizeof copy) == 0 ? 1 : 0);
  size_t nodes = 0;
  print_cu("graph_nodes", cuGraphGetNodes_(graph, nullptr, &nodes));
  print_value("graph_node_count", nodes);
  CUgraphExec exec = nullptr;
  print_cu("graph_instantiate", cuGraphInstantiateWithFlags_(&exec, graph, 0));
  print_cu("graph_launch", cuGraphLaunch_(exec, stream));
  print_cu("graph_sync", cuStreamSynchronize_(stream));
  std::string memset_read(4096, '\0');
  print_cu("graph_dtoh", cuMemcpyDtoH_(memset_read.data(), from_pool, memset_read.size()));
  print_cu("graph_exec_destroy", cuGraphExecDestroy_(exec));
  print_cu("graph_destroy", cuGraphDestroy_(graph));
  print_cu("free_async", cuMemFreeAsync_(from_pool, stream));
  print_cu("stream_sync2", cuStreamSynchronize_(stream));

  // The static runtime's context-local storage for the created context:
  // destroying the context runs the entry's destructor callback.
  using export_table_t = CUresult (*)(const void**, const CUuuid*);
  auto export_table = reinterpret_cast<export_table_t>(must(driver, "cuGetExportTable"));
  const CUuuid storage_id = {{static_cast<char>(0xC6), static_cast<char>(0x93), 0x33, 0x6E, 0x11,
                              0x21, static_cast<char>(0xDF), 0x11, static_cast<char>(0xA8),
                              static_cast<char>(0xC3), 0x68, static_cast<char>(0xF3), 0x55,
                              static_cast<char>(0xD8), static_cast<char>(0x95),
                              static_cast<char>(0x93)}};
  const void* table = nullptr;
  print_cu("storage_table", export_table(&table, &storage_id));
  using dtor_t = void (*)(CUcontext, void*, void*);
  using put_t = CUresult (*)(CUcontext, void*, void*, dtor_t);
  static int key = 0, value = 0, destroyed = 0;
  auto put = reinterpret_cast<put_t>(static_cast<void* const*>(table)[0]);
  print_cu("storage_put", put(created, &key, &value, [](CUcontext, void* k, void* v) {
             destroyed += k == &key && v == &value ? 1 : 100;
           }));

  // Destroying the created context: its handle is refused afterwards.
  print_cu("ctx_destroy", cuCtxDestroy_(created));
  print_value("storage_destructors_run", static_cast<unsigned long long>(destroyed));
  print_cu("ctx_push_destroyed", cuCtxPushCurrent_(created));
}

void retain() {
  RT(cudaMemcpy);
  RT(cudaDeviceSynchronize);
  auto v = load_vmm();
  auto g = start(v);
  if (g == 0)
    return;
  auto prop = device_prop();
  CUdeviceptr va = 0;
  CUmemGenericAllocationHandle h = 0;
  print_cu("reserve", v.reserve(&va, 4 * g, 0, 0, 0));
  print_cu("create", v.create(&h, 2 * g, &prop, 0));
  print_cu("map", v.map(va, 2 * g, 0, h, 0));
  auto rw = read_write();
  print_cu("set_access", v.set_access(va, 2 * g, &rw, 1));
  CUmemGenericAllocationHandle again = 0;
  print_cu("retain", v.retain(&again, dev(va + g + 100)));
  print_value("retain_same", again == h ? 1 : 0);
  CUmemAllocationProp got;
  std::memset(&got, 0xff, sizeof(got));
  print_cu("properties", v.properties(&got, h));
  print_value("properties_type", static_cast<unsigned>(got.type));
  print_value("properties_location_type", static_cast<unsigned>(got.location.type));
  print_value("properties_location_id", static_cast<unsigned>(got.location.id));
  unsigned long long flags = 0;
  CUmemLocation location = rw.location;
  print_cu("get_access", v.get_access(&flags, &location, va + 5));
  print_value("get_access_flags", flags);
  print_cu("release", v.release(h));
  print_cu("release_retained", v.release(h));
  print_cu("release_again", v.release(h));
  print_cu("map_released", v.map(va + 2 * g, 2 * g, 0, h, 0));
  auto bytes = pattern(64, 8);
  print_rt("copy_after_release", cudaMemcpy_(dev(va + 64), bytes.data(), bytes.size(),
                                             cudaMemcpyHostToDevice));
  print_value("kept_equal", read_back(va + 64, bytes.size()) == bytes ? 1 : 0);
  print_cu("unmap", v.unmap(va, 2 * g));
  print_cu("retain_after_unmap", v.retain(&again, dev(va + 5)));
  print_cu("address_free", v.address_free(va, 4 * g));
  print_rt("sync", cudaDeviceSynchronize_());
}

} // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s LIB SCENARIO\n", argv[0]);
    return 2;
  }
  runtime = dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL);
  if (runtime == nullptr) {
    std::fprintf(stderr, "dlopen %s: %s\n", argv[1], dlerror());
    return 2;
  }
  std::string path = argv[1];
  auto driver_path = path.substr(0, path.rfind('/') + 1) + "driver/libcuda.so.1";
  driver = dlopen(driver_path.c_str(), RTLD_NOW);
  if (driver == nullptr) {
    std::fprintf(stderr, "dlopen %s: %s\n", driver_path.c_str(), dlerror());
    return 2;
  }
  if (const char* deadline = std::getenv("GLEAM_PROBE_DEADLINE_S")) {
    ::signal(SIGALRM, [](int) {
      static const char message[] = "vmm probe: still running at GLEAM_PROBE_DEADLINE_S\n";
      static_cast<void>(::write(2, message, sizeof(message) - 1));
      ::_exit(124);
    });
    ::alarm(static_cast<unsigned>(std::atoi(deadline)));
  }
  std::string scenario = argv[2];
  if (scenario == "ggml")
    ggml();
  else if (scenario == "errors")
    errors();
  else if (scenario == "retain")
    retain();
  else if (scenario == "forwards")
    forwards();
  else {
    std::fprintf(stderr, "unknown scenario %s\n", argv[2]);
    return 2;
  }
  std::fflush(stdout);
  return 0;
}
