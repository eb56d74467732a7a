// interpose_features_probe LIB SCENARIO: loads LIB (a libcudart.so.13) with
// dlopen, as an app would, and runs one scenario against a server
// (fake_gpu_server in the CPU tests). Prints one "key=value" line per
// observation; exit code 0 unless the library could not be used.
//
//   launch_ex  a kernel registered from a fatbin built here (one PTX entry
//              "k"), launched by cudaLaunchKernelExC with every attribute
//              kind, refused with an unknown id and an unknown event, and by
//              the driver's cuLaunchKernelEx (lib/driver/libcuda.so.1 next
//              to LIB); the fake server writes each launch to its stats
//   props      every cudaGetDeviceProperties field (prop.FIELD=value) and
//              how many cudaDeviceGetAttribute values differ from the fake
//              server's (100000 + the attribute's number)
//   pools      the memory pool calls: default and current pool, created
//              pools, attributes, cudaMallocAsync / cudaMallocFromPoolAsync
//              seen in UsedMemCurrent, frees, trims, access, and the calls
//              CUDA refuses
//   graphs     an explicit graph (kernel node "kp" with arguments, empty
//              nodes, an added edge) queried: nodes, root nodes, edges,
//              dependencies, dependents, kernel node parameters; its clone
//              and the clone's nodes; a captured graph's queries refused
//   managed    cudaMallocManaged: host writes, kernel "kp" (the fake adds 1
//              to its bytes), sync, host reads; copies of every kind;
//              prefetch, advice and attachment checks; the refusals
//   graph_copies memcpy nodes (host to device, device to device, device
//              to host) replayed with the host's bytes of each replay,
//              their parameters read, set on the graph and the exec;
//              memset node parameters; the refusals; cudaMemcpyAsync and
//              cudaMemcpy2DAsync with pageable memory captured and replayed
//   mapped     cudaHostAlloc(Mapped) and cudaHostRegister(Mapped) with
//              cudaHostGetDevicePointer: host writes seen by "kp", its
//              writes seen after a sync; pinned and pageable memory refused
//   mapped_neighbour  registered app memory whose pages another thread of
//              the app keeps writing next to the registered bytes (as an
//              allocator does): rounds of host write, "kp", sync, each
//              seeing the other side's bytes
//
// With GLEAM_PROBE_DEADLINE_S=N set, a probe still running after N seconds
// says so on stderr and exits with 124, so a hang fails a test.
#include <dlfcn.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <cuda.h>
#include <cuda_runtime_api.h>

namespace {

void* lib = nullptr;

template <class F>
F sym(const char* name) {
  auto* p = dlsym(lib, name);
  if (p == nullptr) {
    std::fprintf(stderr, "missing %s\n", name);
    std::exit(3);
  }
  return reinterpret_cast<F>(p);
}

#define GLEAM_PROBE_FN(name) static auto name##_ = sym<decltype(&name)>(#name)

const char* err_name(cudaError_t e) {
  GLEAM_PROBE_FN(cudaGetErrorName);
  return cudaGetErrorName_(e);
}

void print(const char* key, cudaError_t e) {
  std::printf("%s=%s\n", key, err_name(e));
}

// --- a fatbin with one PTX entry, as nvcc's host code registers it --------

struct fatbin_wrapper {
  int32_t magic;
  int32_t version;
  const void* data;
  const void* filename;
};

std::vector<char>& fatbin_image() {
  static std::vector<char> image;
  return image;
}

void put(std::vector<char>& b, size_t at, const void* p, size_t n) {
  std::memcpy(b.data() + at, p, n);
}

/// Registers a module holding kernel "k" (no parameters) under host stub
/// `stub`; returns the module handle.
void** register_kernel(const void* stub) {
  std::string ptx = ".version 8.0\n.target sm_90\n.address_size 64\n"
                    ".visible .entry k()\n{\n\tret;\n}\n";
  uint64_t payload = (ptx.size() + 1 + 7) / 8 * 8;
  auto& b = fatbin_image();
  b.assign(16 + 64 + payload, 0);
  uint32_t magic = 0xba55ed50;
  uint16_t version = 1, header = 16;
  uint64_t fat_size = 64 + payload;
  put(b, 0, &magic, 4);
  put(b, 4, &version, 2);
  put(b, 6, &header, 2);
  put(b, 8, &fat_size, 8);
  uint16_t kind = 1, entry_version = 0x0101, minor = 0, major = 8;
  uint32_t entry_header = 64, arch = 90;
  uint64_t flags = 0x11;
  put(b, 16 + 0, &kind, 2);
  put(b, 16 + 2, &entry_version, 2);
  put(b, 16 + 4, &entry_header, 4);
  put(b, 16 + 8, &payload, 8);
  put(b, 16 + 24, &minor, 2);
  put(b, 16 + 26, &major, 2);
  put(b, 16 + 28, &arch, 4);
  put(b, 16 + 40, &flags, 8);
  put(b, 16 + 64, ptx.data(), ptx.size());
  static fatbin_wrapper wrapper{0x466243b1, 1, nullptr, nullptr};
  wrapper.data = b.data();
  using register_fatbin_t = void** (*)(void*);
  using register_function_t = void (*)(void**, const char*, char*, const char*, int, uint3*,
                                       uint3*, dim3*, dim3*, int*);
  auto handle = sym<register_fatbin_t>("__cudaRegisterFatBinary")(&wrapper);
  static char name[] = "k";
  sym<register_function_t>("__cudaRegisterFunction")(handle, static_cast<const char*>(stub),
                                                     name, name, -1, nullptr, nullptr,
                                                     nullptr, nullptr, nullptr);
  return handle;
}

char kernel_stub;

cudaLaunchAttribute attribute(cudaLaunchAttributeID id) {
  cudaLaunchAttribute a;
  std::memset(&a, 0, sizeof(a));
  a.id = id;
  return a;
}

void launch_ex(const std::string& lib_path) {
  GLEAM_PROBE_FN(cudaLaunchKernelExC);
  GLEAM_PROBE_FN(cudaEventCreateWithFlags);
  GLEAM_PROBE_FN(cudaStreamCreate);
  GLEAM_PROBE_FN(cudaMalloc);
  GLEAM_PROBE_FN(cudaDeviceSynchronize);
  register_kernel(&kernel_stub);
  cudaStream_t stream = nullptr;
  cudaEvent_t event = nullptr;
  void* buffer = nullptr;
  print("setup", cudaStreamCreate_(&stream) != cudaSuccess ? cudaErrorUnknown
                 : cudaEventCreateWithFlags_(&event, cudaEventDisableTiming) != cudaSuccess
                   ? cudaErrorUnknown
                   : cudaMalloc_(&buffer, 4096));
  std::printf("event=%llu\n", static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(event)));
  std::printf("buffer=%llu\n",
              static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(buffer)));
  std::vector<cudaLaunchAttribute> attrs;
  auto a = attribute(cudaLaunchAttributeProgrammaticStreamSerialization);
  a.val.programmaticStreamSerializationAllowed = 1;
  attrs.push_back(a);
  a = attribute(cudaLaunchAttributeClusterDimension);
  a.val.clusterDim = {2, 1, 1};
  attrs.push_back(a);
  a = attribute(cudaLaunchAttributeProgrammaticEvent);
  a.val.programmaticEvent.event = event;
  a.val.programmaticEvent.triggerAtBlockStart = 1;
  attrs.push_back(a);
  a = attribute(cudaLaunchAttributeLaunchCompletionEvent);
  a.val.launchCompletionEvent.event = event;
  attrs.push_back(a);
  a = attribute(cudaLaunchAttributePriority);
  a.val.priority = -2;
  attrs.push_back(a);
  a = attribute(cudaLaunchAttributeAccessPolicyWindow);
  a.val.accessPolicyWindow.base_ptr = buffer;
  a.val.accessPolicyWindow.num_bytes = 4096;
  attrs.push_back(a);
  a = attribute(cudaLaunchAttributeMemSyncDomainMap);
  a.val.memSyncDomainMap.default_ = 1;
  attrs.push_back(a);
  attrs.push_back(attribute(cudaLaunchAttributeIgnore));
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(4);
  config.blockDim = dim3(32);
  config.stream = stream;
  config.attrs = attrs.data();
  config.numAttrs = static_cast<unsigned>(attrs.size());
  print("launch_all", cudaLaunchKernelExC_(&config, &kernel_stub, nullptr));
  auto bad_id = attribute(static_cast<cudaLaunchAttributeID>(15));
  config.attrs = &bad_id;
  config.numAttrs = 1;
  print("launch_unknown_id", cudaLaunchKernelExC_(&config, &kernel_stub, nullptr));
  auto bad_event = attribute(cudaLaunchAttributeProgrammaticEvent);
  bad_event.val.programmaticEvent.event = reinterpret_cast<cudaEvent_t>(uintptr_t{0xbad});
  config.attrs = &bad_event;
  print("launch_unknown_event", cudaLaunchKernelExC_(&config, &kernel_stub, nullptr));
  config.attrs = nullptr;
  print("launch_null_attrs", cudaLaunchKernelExC_(&config, &kernel_stub, nullptr));

  // The driver surface: cuLaunchKernelEx with a CUfunction of the runtime.
  auto dir = lib_path.substr(0, lib_path.rfind('/') + 1);
  void* driver = dlopen((dir + "driver/libcuda.so.1").c_str(), RTLD_NOW);
  if (driver == nullptr) {
    std::printf("driver=missing\n");
  } else {
    auto cu_launch = reinterpret_cast<decltype(&cuLaunchKernelEx)>(dlsym(driver, "cuLaunchKernelEx"));
    using get_kernel_t = cudaError_t (*)(cudaKernel_t*, const void*);
    cudaKernel_t kernel = nullptr;
    print("get_kernel", sym<get_kernel_t>("__cudaGetKernel")(&kernel, &kernel_stub));
    CUlaunchAttribute da;
    std::memset(&da, 0, sizeof(da));
    da.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    da.value.programmaticStreamSerializationAllowed = 1;
    CUlaunchConfig dc;
    std::memset(&dc, 0, sizeof(dc));
    dc.gridDimX = dc.gridDimY = dc.gridDimZ = 1;
    dc.blockDimX = 64;
    dc.blockDimY = dc.blockDimZ = 1;
    dc.hStream = reinterpret_cast<CUstream>(stream);
    dc.attrs = &da;
    dc.numAttrs = 1;
    std::printf("cu_launch=%d\n",
                static_cast<int>(cu_launch(&dc, reinterpret_cast<CUfunction>(kernel), nullptr,
                                           nullptr)));
    da.id = static_cast<CUlaunchAttributeID>(99);
    std::printf("cu_launch_unknown_id=%d\n",
                static_cast<int>(cu_launch(&dc, reinterpret_cast<CUfunction>(kernel), nullptr,
                                           nullptr)));
  }
  print("sync", cudaDeviceSynchronize_());
}

void props() {
  GLEAM_PROBE_FN(cudaGetDeviceProperties);
  GLEAM_PROBE_FN(cudaDeviceGetAttribute);
  cudaDeviceProp p;
  print("get_properties", cudaGetDeviceProperties_(&p, 0));
#define P(field) std::printf("prop." #field "=%lld\n", static_cast<long long>(p.field))
#define P2(field) P(field[0]), P(field[1])
#define P3(field) P(field[0]), P(field[1]), P(field[2])
  P(totalGlobalMem), P(sharedMemPerBlock), P(regsPerBlock), P(warpSize), P(memPitch);
  P(maxThreadsPerBlock), P3(maxThreadsDim), P3(maxGridSize), P(totalConstMem), P(major);
  P(minor), P(textureAlignment), P(texturePitchAlignment), P(multiProcessorCount);
  P(integrated), P(canMapHostMemory), P(maxTexture1D), P(maxTexture1DMipmap);
  P2(maxTexture2D), P2(maxTexture2DMipmap), P3(maxTexture2DLinear), P2(maxTexture2DGather);
  P3(maxTexture3D), P3(maxTexture3DAlt), P(maxTextureCubemap), P2(maxTexture1DLayered);
  P3(maxTexture2DLayered), P2(maxTextureCubemapLayered), P(maxSurface1D), P2(maxSurface2D);
  P3(maxSurface3D), P2(maxSurface1DLayered), P3(maxSurface2DLayered), P(maxSurfaceCubemap);
  P2(maxSurfaceCubemapLayered), P(surfaceAlignment), P(concurrentKernels), P(ECCEnabled);
  P(pciBusID), P(pciDeviceID), P(pciDomainID), P(tccDriver), P(asyncEngineCount);
  P(unifiedAddressing), P(memoryBusWidth), P(l2CacheSize), P(persistingL2CacheMaxSize);
  P(maxThreadsPerMultiProcessor), P(streamPrioritiesSupported), P(globalL1CacheSupported);
  P(localL1CacheSupported), P(sharedMemPerMultiprocessor), P(regsPerMultiprocessor);
  P(managedMemory), P(isMultiGpuBoard), P(multiGpuBoardGroupID), P(hostNativeAtomicSupported);
  P(pageableMemoryAccess), P(concurrentManagedAccess), P(computePreemptionSupported);
  P(canUseHostPointerForRegisteredMem), P(cooperativeLaunch), P(sharedMemPerBlockOptin);
  P(pageableMemoryAccessUsesHostPageTables), P(directManagedMemAccessFromHost);
  P(maxBlocksPerMultiProcessor), P(accessPolicyMaxWindowSize), P(reservedSharedMemPerBlock);
  P(hostRegisterSupported), P(sparseCudaArraySupported), P(hostRegisterReadOnlySupported);
  P(timelineSemaphoreInteropSupported), P(memoryPoolsSupported), P(gpuDirectRDMASupported);
  P(gpuDirectRDMAFlushWritesOptions), P(gpuDirectRDMAWritesOrdering);
  P(memoryPoolSupportedHandleTypes), P(deferredMappingCudaArraySupported);
  P(ipcEventSupported), P(clusterLaunch), P(unifiedFunctionPointers), P(deviceNumaConfig);
  P(deviceNumaId), P(mpsEnabled), P(hostNumaId), P(gpuPciDeviceID), P(gpuPciSubsystemID);
  P(hostNumaMultinodeIpcSupported);
#undef P
#undef P2
#undef P3
  int differ = 0;
  for (int a = 1; a < CU_DEVICE_ATTRIBUTE_MAX; ++a) {
    int v = 0;
    auto e = cudaDeviceGetAttribute_(&v, static_cast<cudaDeviceAttr>(a), 0);
    bool fixed = a == 1 || a == 10 || a == 16;
    if (e != cudaSuccess || (!fixed && v != 100000 + a))
      ++differ;
  }
  std::printf("attributes_differing=%d\n", differ);
}

void pools() {
  GLEAM_PROBE_FN(cudaDeviceGetDefaultMemPool);
  GLEAM_PROBE_FN(cudaDeviceGetMemPool);
  GLEAM_PROBE_FN(cudaDeviceSetMemPool);
  GLEAM_PROBE_FN(cudaMemPoolCreate);
  GLEAM_PROBE_FN(cudaMemPoolDestroy);
  GLEAM_PROBE_FN(cudaMemPoolSetAttribute);
  GLEAM_PROBE_FN(cudaMemPoolGetAttribute);
  GLEAM_PROBE_FN(cudaMemPoolTrimTo);
  GLEAM_PROBE_FN(cudaMemPoolSetAccess);
  GLEAM_PROBE_FN(cudaMemPoolGetAccess);
  GLEAM_PROBE_FN(cudaMallocFromPoolAsync);
  GLEAM_PROBE_FN(cudaMallocAsync);
  GLEAM_PROBE_FN(cudaFreeAsync);
  GLEAM_PROBE_FN(cudaStreamSynchronize);
  GLEAM_PROBE_FN(cudaMemPoolExportToShareableHandle);
  auto used = [&](cudaMemPool_t pool) {
    cuuint64_t v = 0;
    auto e = cudaMemPoolGetAttribute_(pool, cudaMemPoolAttrUsedMemCurrent, &v);
    return e == cudaSuccess ? static_cast<long long>(v) : -static_cast<long long>(e);
  };
  // Before the app holds a pool, cudaMallocAsync is cudaMalloc.
  void* early = nullptr;
  print("malloc_async_early", cudaMallocAsync_(&early, 1000, nullptr));
  cudaMemPool_t def = nullptr, def2 = nullptr, current = nullptr;
  print("get_default", cudaDeviceGetDefaultMemPool_(&def, 0));
  print("get_default_again", cudaDeviceGetDefaultMemPool_(&def2, 0));
  std::printf("default_stable=%d\n", def == def2 && def != nullptr);
  print("get_default_bad_device", cudaDeviceGetDefaultMemPool_(&def2, 7));
  GLEAM_PROBE_FN(cudaMemGetDefaultMemPool);
  cudaMemLocation device0{};
  device0.type = cudaMemLocationTypeDevice;
  device0.id = 0;
  cudaMemPool_t by_location = nullptr;
  print("mem_get_default", cudaMemGetDefaultMemPool_(&by_location, &device0,
                                                     cudaMemAllocationTypePinned));
  std::printf("mem_get_default_same=%d\n", by_location == def);
  cudaMemLocation host_location{};
  host_location.type = cudaMemLocationTypeHost;
  print("mem_get_default_host", cudaMemGetDefaultMemPool_(&by_location, &host_location,
                                                          cudaMemAllocationTypePinned));
  print("get_current", cudaDeviceGetMemPool_(&current, 0));
  std::printf("current_is_default=%d\n", current == def);
  std::printf("used_default_start=%lld\n", used(def));
  void* a = nullptr;
  print("malloc_async", cudaMallocAsync_(&a, 3000, nullptr));
  std::printf("used_default_after_malloc=%lld\n", used(def));
  print("free_async", cudaFreeAsync_(a, nullptr));
  print("free_async_early", cudaFreeAsync_(early, nullptr));
  print("sync", cudaStreamSynchronize_(nullptr));
  std::printf("used_default_after_free=%lld\n", used(def));

  cudaMemPoolProps props{};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = 0;
  cudaMemPool_t mine = nullptr;
  print("create", cudaMemPoolCreate_(&mine, &props));
  cuuint64_t threshold = 1ull << 32;
  print("set_threshold", cudaMemPoolSetAttribute_(mine, cudaMemPoolAttrReleaseThreshold, &threshold));
  int reuse = 0;
  print("set_reuse", cudaMemPoolSetAttribute_(mine, cudaMemPoolReuseAllowOpportunistic, &reuse));
  cuuint64_t got = 0;
  print("get_threshold", cudaMemPoolGetAttribute_(mine, cudaMemPoolAttrReleaseThreshold, &got));
  std::printf("threshold=%llu\n", static_cast<unsigned long long>(got));
  int got_reuse = 7;
  print("get_reuse", cudaMemPoolGetAttribute_(mine, cudaMemPoolReuseAllowOpportunistic, &got_reuse));
  std::printf("reuse=%d\n", got_reuse);
  print("set_used", cudaMemPoolSetAttribute_(mine, cudaMemPoolAttrUsedMemCurrent, &threshold));
  print("get_bad_attr", cudaMemPoolGetAttribute_(mine, static_cast<cudaMemPoolAttr>(42), &got));
  void* b = nullptr;
  print("malloc_from_pool", cudaMallocFromPoolAsync_(&b, 5000, mine, nullptr));
  std::printf("used_mine=%lld\n", used(mine));
  print("set_current", cudaDeviceSetMemPool_(0, mine));
  print("get_current_mine", cudaDeviceGetMemPool_(&current, 0));
  std::printf("current_is_mine=%d\n", current == mine);
  void* c = nullptr;
  print("malloc_async_mine", cudaMallocAsync_(&c, 700, nullptr));
  std::printf("used_mine_after_malloc_async=%lld\n", used(mine));
  print("trim", cudaMemPoolTrimTo_(mine, 0));
  cudaMemAccessDesc desc{};
  desc.location.type = cudaMemLocationTypeDevice;
  desc.location.id = 0;
  desc.flags = cudaMemAccessFlagsProtReadWrite;
  print("set_access", cudaMemPoolSetAccess_(mine, &desc, 1));
  cudaMemAccessFlags flags = cudaMemAccessFlagsProtNone;
  print("get_access", cudaMemPoolGetAccess_(&flags, mine, &desc.location));
  std::printf("access=%d\n", static_cast<int>(flags));
  desc.location.type = cudaMemLocationTypeHost;
  print("set_access_host", cudaMemPoolSetAccess_(mine, &desc, 1));
  print("free_b", cudaFreeAsync_(b, nullptr));
  print("free_c", cudaFreeAsync_(c, nullptr));
  std::printf("used_mine_after_free=%lld\n", used(mine));
  print("destroy_default", cudaMemPoolDestroy_(def));
  print("destroy", cudaMemPoolDestroy_(mine));
  print("get_current_after_destroy", cudaDeviceGetMemPool_(&current, 0));
  std::printf("current_is_default_again=%d\n", current == def);
  print("destroy_again", cudaMemPoolDestroy_(mine));
  print("malloc_from_destroyed", cudaMallocFromPoolAsync_(&b, 16, mine, nullptr));
  props.location.type = cudaMemLocationTypeHost;
  cudaMemPool_t host_pool = nullptr;
  print("create_host", cudaMemPoolCreate_(&host_pool, &props));
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = 5;
  print("create_bad_device", cudaMemPoolCreate_(&host_pool, &props));
  int handle = 0;
  print("export", cudaMemPoolExportToShareableHandle_(&handle, def,
                                                       cudaMemHandleTypePosixFileDescriptor, 0));
  print("final_sync", cudaStreamSynchronize_(nullptr));
}

char kp_stub;

/// Registers kernel "kp" (a pointer and an int: the fake adds 1 to that
/// many bytes at the pointer) once, in a module of its own.
void register_kp() {
  static bool done = false;
  if (done)
    return;
  done = true;
  static char module_stub;
  auto handle = register_kernel(&module_stub);
  using register_function_t = void (*)(void**, const char*, char*, const char*, int, uint3*,
                                       uint3*, dim3*, dim3*, int*);
  static char kp_name[] = "kp";
  sym<register_function_t>("__cudaRegisterFunction")(handle, &kp_stub, kp_name, kp_name, -1,
                                                     nullptr, nullptr, nullptr, nullptr,
                                                     nullptr);
}

/// Launches "kp" on `p` for `n` bytes.
cudaError_t launch_kp(void* p, int n, cudaStream_t stream = nullptr) {
  GLEAM_PROBE_FN(cudaLaunchKernel);
  register_kp();
  void* args[] = {&p, &n};
  return cudaLaunchKernel_(&kp_stub, dim3(1), dim3(1), args, 0, stream);
}

/// The bytes [p, p + n) as hex.
void print_bytes(const char* key, const void* p, size_t n) {
  std::printf("%s=", key);
  for (size_t i = 0; i < n; ++i)
    std::printf("%02x", static_cast<const unsigned char*>(p)[i]);
  std::printf("\n");
}

void managed() {
  GLEAM_PROBE_FN(cudaMallocManaged);
  GLEAM_PROBE_FN(cudaFree);
  GLEAM_PROBE_FN(cudaDeviceSynchronize);
  GLEAM_PROBE_FN(cudaStreamSynchronize);
  GLEAM_PROBE_FN(cudaPointerGetAttributes);
  GLEAM_PROBE_FN(cudaMemcpy);
  GLEAM_PROBE_FN(cudaMemset);
  GLEAM_PROBE_FN(cudaMemPrefetchAsync);
  GLEAM_PROBE_FN(cudaMemAdvise);
  GLEAM_PROBE_FN(cudaStreamAttachMemAsync);
  GLEAM_PROBE_FN(cudaMalloc);
  char* m = nullptr;
  print("null_ptr", cudaMallocManaged_(nullptr, 64, cudaMemAttachGlobal));
  m = reinterpret_cast<char*>(1);
  print("zero_size", cudaMallocManaged_(reinterpret_cast<void**>(&m), 0, cudaMemAttachGlobal));
  std::printf("zero_size_null=%d\n", m == nullptr);
  print("bad_flags", cudaMallocManaged_(reinterpret_cast<void**>(&m), 64, 4));
  constexpr size_t size = 3 * 4096 + 100;
  print("alloc", cudaMallocManaged_(reinterpret_cast<void**>(&m), size, cudaMemAttachGlobal));
  print_bytes("fresh", m, 4);
  cudaPointerAttributes attr{};
  print("attributes", cudaPointerGetAttributes_(&attr, m + 10));
  std::printf("attributes_values=%d %d %d\n", attr.type == cudaMemoryTypeManaged,
              attr.devicePointer == m + 10, attr.hostPointer == m + 10);
  // Host writes, a kernel, a sync, host reads: the kernel's writes.
  for (int i = 0; i < 8; ++i)
    m[i] = static_cast<char>(0x10 * i);
  m[size - 1] = 0x40;
  print("launch", launch_kp(m, 8));
  print("launch_tail", launch_kp(m + size - 1, 1));
  print("sync", cudaDeviceSynchronize_());
  print_bytes("after_kernel", m, 8);
  print_bytes("after_kernel_tail", m + size - 1, 1);
  // A second round on a page read back: written, launched, synced again.
  m[0] = 0x70;
  print("launch2", launch_kp(m, 1));
  print("sync2", cudaStreamSynchronize_(nullptr));
  print_bytes("after_second", m, 2);
  // Host only.
  m[5000] = 0x5a;
  print_bytes("host_only", m + 5000, 1);
  // Copies of every kind from and to managed memory.
  char host[4] = {1, 2, 3, 4};
  print("copy_in_default", cudaMemcpy_(m + 100, host, 4, cudaMemcpyDefault));
  print_bytes("copied_in", m + 100, 4);
  print("copy_in_htod", cudaMemcpy_(m + 200, host, 4, cudaMemcpyHostToDevice));
  print_bytes("copied_in_htod", m + 200, 4);
  char back[4] = {};
  m[300] = 9;
  print("copy_out_dtoh", cudaMemcpy_(back, m + 300, 1, cudaMemcpyDeviceToHost));
  std::printf("copied_out=%d\n", back[0]);
  print("copy_hth", cudaMemcpy_(back, m + 100, 4, cudaMemcpyHostToHost));
  print_bytes("copied_hth", back, 4);
  char* d = nullptr;
  print("malloc", cudaMalloc_(reinterpret_cast<void**>(&d), 16));
  print("copy_dtod", cudaMemcpy_(d, m + 100, 4, cudaMemcpyDefault));
  print("memset", cudaMemset_(m + 400, 0x33, 2));
  print("copy_back", cudaMemcpy_(m + 402, d, 2, cudaMemcpyDeviceToDevice));
  print("sync3", cudaDeviceSynchronize_());
  print_bytes("memset_and_copy", m + 400, 4);
  // The hints: checked, and changing nothing.
  cudaMemLocation dev{cudaMemLocationTypeDevice, 0};
  cudaMemLocation host_loc{cudaMemLocationTypeHost, 0};
  cudaMemLocation bad_dev{cudaMemLocationTypeDevice, 7};
  print("prefetch_device", cudaMemPrefetchAsync_(m, size, dev, 0, nullptr));
  print("prefetch_host", cudaMemPrefetchAsync_(m, size, host_loc, 0, nullptr));
  print("prefetch_too_long", cudaMemPrefetchAsync_(m, size + 1, dev, 0, nullptr));
  print("prefetch_flags", cudaMemPrefetchAsync_(m, size, dev, 1, nullptr));
  print("prefetch_not_managed", cudaMemPrefetchAsync_(d, 16, dev, 0, nullptr));
  print("prefetch_bad_device", cudaMemPrefetchAsync_(m, size, bad_dev, 0, nullptr));
  print("advise", cudaMemAdvise_(m, size, cudaMemAdviseSetPreferredLocation, dev));
  print("advise_read_mostly", cudaMemAdvise_(m, size, cudaMemAdviseSetReadMostly, dev));
  print("advise_bad", cudaMemAdvise_(m, size, static_cast<cudaMemoryAdvise>(99), dev));
  print("advise_bad_device",
        cudaMemAdvise_(m, size, cudaMemAdviseSetAccessedBy, bad_dev));
  print("attach", cudaStreamAttachMemAsync_(nullptr, m, 0, cudaMemAttachHost));
  print("attach_length", cudaStreamAttachMemAsync_(nullptr, m, 5, cudaMemAttachHost));
  print("attach_flags", cudaStreamAttachMemAsync_(nullptr, m, 0, 8));
  print("sync4", cudaDeviceSynchronize_());
  print_bytes("after_hints", m, 2);
  print("free_inner", cudaFree_(m + 1));
  print("free", cudaFree_(m));
  print("free_device", cudaFree_(d));
  // The host writes one byte of a page while a kernel writes another: the
  // upload sends only the host's byte, and both survive.
  char* shared = nullptr;
  print("alloc_shared", cudaMallocManaged_(reinterpret_cast<void**>(&shared), 64,
                                           cudaMemAttachGlobal));
  shared[0] = 0x10;
  print("launch_shared", launch_kp(shared + 1, 1));
  shared[0] = 0x20;
  print("sync_shared", cudaDeviceSynchronize_());
  print_bytes("shared_page", shared, 2);
  print("free_shared", cudaFree_(shared));
  // A device reset takes managed memory with it; new allocations work.
  GLEAM_PROBE_FN(cudaDeviceReset);
  char* r = nullptr;
  print("alloc_before_reset", cudaMallocManaged_(reinterpret_cast<void**>(&r), 64,
                                                 cudaMemAttachGlobal));
  r[0] = 1;
  print("reset", cudaDeviceReset_());
  print("attributes_after_reset", cudaPointerGetAttributes_(&attr, r));
  std::printf("after_reset_unregistered=%d\n", attr.type == cudaMemoryTypeUnregistered);
  print("alloc_after_reset", cudaMallocManaged_(reinterpret_cast<void**>(&r), 64,
                                                cudaMemAttachGlobal));
  r[1] = 2;
  print("launch_after_reset", launch_kp(r, 2));
  print("sync_after_reset", cudaDeviceSynchronize_());
  print_bytes("after_reset", r, 2);
  print("final_sync", cudaDeviceSynchronize_());
}

void mapped() {
  GLEAM_PROBE_FN(cudaHostAlloc);
  GLEAM_PROBE_FN(cudaMallocHost);
  GLEAM_PROBE_FN(cudaFreeHost);
  GLEAM_PROBE_FN(cudaFree);
  GLEAM_PROBE_FN(cudaHostGetDevicePointer);
  GLEAM_PROBE_FN(cudaHostGetFlags);
  GLEAM_PROBE_FN(cudaHostRegister);
  GLEAM_PROBE_FN(cudaHostUnregister);
  GLEAM_PROBE_FN(cudaDeviceSynchronize);
  GLEAM_PROBE_FN(cudaPointerGetAttributes);
  char* h = nullptr;
  print("bad_flags", cudaHostAlloc_(reinterpret_cast<void**>(&h), 64, 0x100));
  print("alloc", cudaHostAlloc_(reinterpret_cast<void**>(&h), 64, cudaHostAllocMapped));
  void* dp = nullptr;
  print("device_pointer", cudaHostGetDevicePointer_(&dp, h, 0));
  std::printf("device_pointer_same=%d\n", dp == h);
  print("device_pointer_flags", cudaHostGetDevicePointer_(&dp, h, 1));
  unsigned flags = 0;
  print("flags", cudaHostGetFlags_(&flags, h));
  std::printf("flags_value=%u\n", flags);
  cudaPointerAttributes attr{};
  print("attributes", cudaPointerGetAttributes_(&attr, h));
  std::printf("attributes_host=%d\n", attr.type == cudaMemoryTypeHost);
  for (int i = 0; i < 4; ++i)
    h[i] = static_cast<char>(i + 1);
  print("launch", launch_kp(dp, 4));
  print("sync", cudaDeviceSynchronize_());
  print_bytes("after_kernel", h, 4);
  print("free_wrong", cudaFree_(h));
  print("free", cudaFreeHost_(h));

  // Pinned memory that is not mapped, pageable memory.
  char* pinned = nullptr;
  print("pinned", cudaMallocHost_(reinterpret_cast<void**>(&pinned), 64));
  print("pinned_device_pointer", cudaHostGetDevicePointer_(&dp, pinned, 0));
  static char pageable[64];
  print("pageable_device_pointer", cudaHostGetDevicePointer_(&dp, pageable, 0));
  print("free_pinned", cudaFreeHost_(pinned));

  // App memory registered as mapped: a device pointer of its own.
  static char buffer[10000];
  print("register_bad_flags", cudaHostRegister_(buffer, sizeof(buffer), 0x100));
  print("register", cudaHostRegister_(buffer + 8, 5000, cudaHostRegisterMapped));
  print("register_twice", cudaHostRegister_(buffer + 8, 5000, cudaHostRegisterMapped));
  void* rp = nullptr;
  print("registered_pointer", cudaHostGetDevicePointer_(&rp, buffer + 8 + 4096, 0));
  buffer[8 + 4096] = 0x20;
  buffer[8] = 0x30;
  print("launch_registered", launch_kp(rp, 1));
  print("launch_registered_start", launch_kp(static_cast<char*>(rp) - 4096, 1));
  print("sync_registered", cudaDeviceSynchronize_());
  std::printf("registered_after=%02x %02x %02x\n", buffer[8] & 0xff,
              buffer[8 + 4096] & 0xff, buffer[7] & 0xff);
  print("registered_attributes", cudaPointerGetAttributes_(&attr, rp));
  std::printf("registered_attributes_values=%d %d\n", attr.type == cudaMemoryTypeHost,
              attr.hostPointer == buffer + 8 + 4096);
  print("free_registered_device", cudaFree_(rp));
  print("unregister", cudaHostUnregister_(buffer + 8));
  print("unregister_again", cudaHostUnregister_(buffer + 8));
  buffer[9] = 0x44; // the app's memory again, unprotected
  std::printf("registered_final=%02x\n", buffer[9] & 0xff);

  // Heap memory registered: the allocator's own data shares its pages and
  // changes while the mirror protects them.
  std::vector<char> heap(6000, 0);
  print("register_heap", cudaHostRegister_(heap.data() + 1, 5000, cudaHostRegisterMapped));
  void* hp = nullptr;
  print("heap_pointer", cudaHostGetDevicePointer_(&hp, heap.data() + 1, 0));
  cudaError_t heap_rounds = cudaSuccess;
  for (int round = 0; round < 20; ++round) {
    std::vector<std::string> churn(50, std::string(100, 'x'));
    heap[1 + round] = static_cast<char>(round);
    if (auto e = launch_kp(static_cast<char*>(hp) + round, 1); e != cudaSuccess)
      heap_rounds = e;
    if (auto e = cudaDeviceSynchronize_(); e != cudaSuccess)
      heap_rounds = e;
  }
  print("heap_rounds", heap_rounds);
  print_bytes("heap_after", heap.data() + 1, 20);
  print("unregister_heap", cudaHostUnregister_(heap.data() + 1));
  print("final_sync", cudaDeviceSynchronize_());
}

void mapped_neighbour() {
  GLEAM_PROBE_FN(cudaHostRegister);
  GLEAM_PROBE_FN(cudaHostUnregister);
  GLEAM_PROBE_FN(cudaHostGetDevicePointer);
  GLEAM_PROBE_FN(cudaDeviceSynchronize);
  // Registered: [buffer + 64, buffer + 64 + 4096), two pages whose other
  // bytes stay the app's; a second thread writes those while the rounds run.
  alignas(4096) static char buffer[2 * 4096];
  constexpr size_t offset = 64;
  constexpr size_t size = 4096;
  print("register", cudaHostRegister_(buffer + offset, size, cudaHostRegisterMapped));
  void* dp = nullptr;
  print("device_pointer", cudaHostGetDevicePointer_(&dp, buffer + offset, 0));
  std::atomic<bool> stop{false};
  std::atomic<long> writes{0};
  std::thread neighbour{[&] {
    auto* before = reinterpret_cast<volatile char*>(buffer);
    auto* after = reinterpret_cast<volatile char*>(buffer + offset + size);
    for (unsigned n = 0; !stop.load(std::memory_order_relaxed); ++n) {
      before[n % offset] = static_cast<char>(n);
      after[n % (sizeof(buffer) - offset - size)] = static_cast<char>(n);
      writes.fetch_add(1, std::memory_order_relaxed);
      std::this_thread::yield();
    }
  }};
  // The neighbour is writing before the first round starts.
  while (writes.load() == 0)
    std::this_thread::yield();
  cudaError_t rounds = cudaSuccess;
  for (int round = 0; round < 20; ++round) {
    buffer[offset + round] = static_cast<char>(round);
    buffer[offset + size - 1 - round] = static_cast<char>(0x40 + round);
    if (auto e = launch_kp(static_cast<char*>(dp) + round, 1); e != cudaSuccess)
      rounds = e;
    if (auto e = cudaDeviceSynchronize_(); e != cudaSuccess)
      rounds = e;
  }
  stop = true;
  neighbour.join();
  print("rounds", rounds);
  print_bytes("after", buffer + offset, 20);
  print_bytes("after_tail", buffer + offset + size - 4, 4);
  print("unregister", cudaHostUnregister_(buffer + offset));
  print("final_sync", cudaDeviceSynchronize_());
}

void graph_copies() {
  GLEAM_PROBE_FN(cudaMalloc);
  GLEAM_PROBE_FN(cudaGraphCreate);
  GLEAM_PROBE_FN(cudaGraphAddMemcpyNode);
  GLEAM_PROBE_FN(cudaGraphAddMemcpyNode1D);
  GLEAM_PROBE_FN(cudaGraphAddMemsetNode);
  GLEAM_PROBE_FN(cudaGraphMemcpyNodeGetParams);
  GLEAM_PROBE_FN(cudaGraphMemcpyNodeSetParams1D);
  GLEAM_PROBE_FN(cudaGraphExecMemcpyNodeSetParams1D);
  GLEAM_PROBE_FN(cudaGraphMemsetNodeGetParams);
  GLEAM_PROBE_FN(cudaGraphMemsetNodeSetParams);
  GLEAM_PROBE_FN(cudaGraphExecMemsetNodeSetParams);
  GLEAM_PROBE_FN(cudaGraphNodeGetType);
  GLEAM_PROBE_FN(cudaGraphInstantiate);
  GLEAM_PROBE_FN(cudaGraphLaunch);
  GLEAM_PROBE_FN(cudaStreamSynchronize);
  GLEAM_PROBE_FN(cudaStreamCreate);
  GLEAM_PROBE_FN(cudaStreamBeginCapture);
  GLEAM_PROBE_FN(cudaStreamEndCapture);
  GLEAM_PROBE_FN(cudaMemcpyAsync);
  GLEAM_PROBE_FN(cudaMemcpy2DAsync);
  GLEAM_PROBE_FN(cudaGraphDestroy);
  GLEAM_PROBE_FN(cudaGraphExecDestroy);
  char* d = nullptr;
  print("malloc", cudaMalloc_(reinterpret_cast<void**>(&d), 256));
  static char in[16], out[16], out_b[16];
  for (int i = 0; i < 16; ++i)
    in[i] = static_cast<char>(i + 1);
  cudaGraph_t g = nullptr;
  print("create", cudaGraphCreate_(&g, 0));
  cudaGraphNode_t h2d = nullptr, d2d = nullptr, d2h = nullptr, ms = nullptr;
  print("add_h2d", cudaGraphAddMemcpyNode1D_(&h2d, g, nullptr, 0, d, in, 16,
                                            cudaMemcpyHostToDevice));
  cudaMemcpy3DParms p3{};
  p3.srcPtr = cudaPitchedPtr{d, 16, 16, 1};
  p3.dstPtr = cudaPitchedPtr{d + 32, 16, 16, 1};
  p3.extent = cudaExtent{16, 1, 1};
  p3.kind = cudaMemcpyDeviceToDevice;
  print("add_d2d", cudaGraphAddMemcpyNode_(&d2d, g, &h2d, 1, &p3));
  print("add_d2h", cudaGraphAddMemcpyNode1D_(&d2h, g, &d2d, 1, out, d + 32, 16,
                                            cudaMemcpyDefault));
  cudaMemsetParams mp{};
  mp.dst = d + 128;
  mp.value = 7;
  mp.elementSize = 1;
  mp.width = 16;
  mp.height = 1;
  print("add_memset", cudaGraphAddMemsetNode_(&ms, g, nullptr, 0, &mp));
  cudaGraphNode_t bad = nullptr;
  print("add_bad_kind", cudaGraphAddMemcpyNode1D_(&bad, g, nullptr, 0, d, in, 16,
                                                 static_cast<cudaMemcpyKind>(7)));
  print("add_zero", cudaGraphAddMemcpyNode1D_(&bad, g, nullptr, 0, d, in, 0,
                                             cudaMemcpyHostToDevice));
  print("add_host_to_host", cudaGraphAddMemcpyNode1D_(&bad, g, nullptr, 0, out_b, in, 16,
                                                     cudaMemcpyHostToHost));
  auto* nowhere = reinterpret_cast<char*>(uintptr_t{0x1000});
  print("add_outside", cudaGraphAddMemcpyNode1D_(&bad, g, nullptr, 0, nowhere, in, 16,
                                                cudaMemcpyHostToDevice));
  GLEAM_PROBE_FN(cudaGraphAddMemcpyNodeToSymbol);
  static int not_a_symbol = 0;
  print("add_to_unknown_symbol", cudaGraphAddMemcpyNodeToSymbol_(&bad, g, nullptr, 0,
                                                                 &not_a_symbol, in, 4, 0,
                                                                 cudaMemcpyHostToDevice));
  print("add_to_symbol_wrong_kind", cudaGraphAddMemcpyNodeToSymbol_(&bad, g, nullptr, 0,
                                                                    &not_a_symbol, in, 4, 0,
                                                                    cudaMemcpyDeviceToHost));
  cudaGraphNodeType type = cudaGraphNodeTypeCount;
  print("type", cudaGraphNodeGetType_(d2h, &type));
  std::printf("type_memcpy=%d\n", type == cudaGraphNodeTypeMemcpy);
  cudaMemcpy3DParms got{};
  print("get", cudaGraphMemcpyNodeGetParams_(d2h, &got));
  std::printf("get_values=%d %zu %zu %d\n", got.dstPtr.ptr == out, got.extent.width,
              got.extent.height, static_cast<int>(got.kind));
  print("get_memset_as_memcpy", cudaGraphMemcpyNodeGetParams_(ms, &got));
  cudaMemsetParams mgot{};
  print("memset_get", cudaGraphMemsetNodeGetParams_(ms, &mgot));
  std::printf("memset_values=%u %zu\n", mgot.value, mgot.width);
  mp.value = 9;
  print("memset_set", cudaGraphMemsetNodeSetParams_(ms, &mp));
  print("memset_get2", cudaGraphMemsetNodeGetParams_(ms, &mgot));
  std::printf("memset_values2=%u\n", mgot.value);
  mp.elementSize = 3;
  print("memset_set_bad", cudaGraphMemsetNodeSetParams_(ms, &mp));
  mp.elementSize = 1;

  cudaGraphExec_t e = nullptr;
  print("instantiate", cudaGraphInstantiate_(&e, g, 0));
  print("launch1", cudaGraphLaunch_(e, nullptr));
  print("sync1", cudaStreamSynchronize_(nullptr));
  print_bytes("out1", out, 16);
  // Every replay carries the host bytes of that moment.
  for (int i = 0; i < 16; ++i)
    in[i] = static_cast<char>(0x40 + i);
  print("launch2", cudaGraphLaunch_(e, nullptr));
  print("sync2", cudaStreamSynchronize_(nullptr));
  print_bytes("out2", out, 16);
  // The node was added with cudaMemcpyDefault: another kind is refused.
  print("exec_set_kind", cudaGraphExecMemcpyNodeSetParams1D_(e, d2h, out_b, d + 32, 16,
                                                            cudaMemcpyDeviceToHost));
  print("exec_set_to_device", cudaGraphExecMemcpyNodeSetParams1D_(e, d2h, d + 48, d + 32, 16,
                                                                 cudaMemcpyDefault));
  print("exec_set", cudaGraphExecMemcpyNodeSetParams1D_(e, d2h, out_b, d + 32, 16,
                                                       cudaMemcpyDefault));
  print("exec_memset_set", cudaGraphExecMemsetNodeSetParams_(e, ms, &mp));
  in[0] = 0x7f;
  print("launch3", cudaGraphLaunch_(e, nullptr));
  print("sync3", cudaStreamSynchronize_(nullptr));
  print_bytes("out_b", out_b, 4);
  print_bytes("out_kept", out, 4);
  print("graph_set", cudaGraphMemcpyNodeSetParams1D_(h2d, d, out_b, 8,
                                                     cudaMemcpyHostToDevice));
  print("get_after_set", cudaGraphMemcpyNodeGetParams_(h2d, &got));
  std::printf("get_after_set_width=%zu\n", got.extent.width);
  print("exec_destroy", cudaGraphExecDestroy_(e));
  print("destroy", cudaGraphDestroy_(g));

  // Captured copies between device and pageable host memory.
  cudaStream_t s = nullptr;
  cudaStreamCreate_(&s);
  static char cin[8], cout_[8];
  print("begin", cudaStreamBeginCapture_(s, cudaStreamCaptureModeGlobal));
  print("capture_h2d", cudaMemcpyAsync_(d + 64, cin, 8, cudaMemcpyHostToDevice, s));
  print("capture_d2h", cudaMemcpy2DAsync_(cout_, 4, d + 64, 4, 4, 2, cudaMemcpyDeviceToHost,
                                          s));
  cudaGraph_t cg = nullptr;
  print("end", cudaStreamEndCapture_(s, &cg));
  cudaGraphExec_t ce = nullptr;
  print("captured_instantiate", cudaGraphInstantiate_(&ce, cg, 0));
  for (int round = 0; round < 2; ++round) {
    for (int i = 0; i < 8; ++i)
      cin[i] = static_cast<char>(0x10 * round + i);
    print(round == 0 ? "captured_launch1" : "captured_launch2", cudaGraphLaunch_(ce, s));
    print(round == 0 ? "captured_sync1" : "captured_sync2", cudaStreamSynchronize_(s));
    print_bytes(round == 0 ? "captured_out1" : "captured_out2", cout_, 8);
  }
}

void graphs() {
  GLEAM_PROBE_FN(cudaGraphCreate);
  GLEAM_PROBE_FN(cudaGraphAddKernelNode);
  GLEAM_PROBE_FN(cudaGraphAddEmptyNode);
  GLEAM_PROBE_FN(cudaGraphAddDependencies);
  GLEAM_PROBE_FN(cudaGraphGetNodes);
  GLEAM_PROBE_FN(cudaGraphGetRootNodes);
  GLEAM_PROBE_FN(cudaGraphGetEdges);
  GLEAM_PROBE_FN(cudaGraphNodeGetDependencies);
  GLEAM_PROBE_FN(cudaGraphNodeGetDependentNodes);
  GLEAM_PROBE_FN(cudaGraphKernelNodeGetParams);
  GLEAM_PROBE_FN(cudaGraphKernelNodeSetParams);
  GLEAM_PROBE_FN(cudaGraphClone);
  GLEAM_PROBE_FN(cudaGraphNodeFindInClone);
  GLEAM_PROBE_FN(cudaGraphNodeGetType);
  GLEAM_PROBE_FN(cudaGraphDestroy);
  GLEAM_PROBE_FN(cudaStreamCreate);
  GLEAM_PROBE_FN(cudaStreamBeginCapture);
  GLEAM_PROBE_FN(cudaStreamEndCapture);
  register_kp();
  cudaGraph_t g = nullptr;
  print("create", cudaGraphCreate_(&g, 0));
  uint64_t ptr_arg = 0x1234;
  int int_arg = 77;
  void* args[] = {&ptr_arg, &int_arg};
  cudaKernelNodeParams kp{};
  kp.func = &kp_stub;
  kp.gridDim = dim3(3);
  kp.blockDim = dim3(64);
  kp.kernelParams = args;
  cudaGraphNode_t k = nullptr, e1 = nullptr, e2 = nullptr;
  print("add_kernel", cudaGraphAddKernelNode_(&k, g, nullptr, 0, &kp));
  print("add_e1", cudaGraphAddEmptyNode_(&e1, g, &k, 1));
  print("add_e2", cudaGraphAddEmptyNode_(&e2, g, nullptr, 0));
  print("add_edge", cudaGraphAddDependencies_(g, &e2, &e1, nullptr, 1));
  // The app's argument storage changes; the node keeps its own copy.
  ptr_arg = 0;
  int_arg = 0;
  auto index = [&](cudaGraphNode_t n) {
    return n == k ? "k" : n == e1 ? "e1" : n == e2 ? "e2" : n == nullptr ? "null" : "?";
  };
  size_t count = 0;
  print("nodes_count", cudaGraphGetNodes_(g, nullptr, &count));
  std::printf("nodes=%zu\n", count);
  cudaGraphNode_t nodes[4] = {};
  count = 4;
  print("nodes_get", cudaGraphGetNodes_(g, nodes, &count));
  std::printf("nodes_listed=%zu %s %s %s %s\n", count, index(nodes[0]), index(nodes[1]),
              index(nodes[2]), index(nodes[3]));
  count = 1;
  print("nodes_one", cudaGraphGetNodes_(g, nodes, &count));
  std::printf("nodes_first=%zu %s\n", count, index(nodes[0]));
  count = 4;
  print("roots", cudaGraphGetRootNodes_(g, nodes, &count));
  std::printf("roots_listed=%zu %s %s\n", count, index(nodes[0]), index(nodes[1]));
  cudaGraphNode_t from[4] = {}, to[4] = {};
  count = 0;
  print("edges_count", cudaGraphGetEdges_(g, nullptr, nullptr, nullptr, &count));
  std::printf("edges=%zu\n", count);
  count = 4;
  print("edges_get", cudaGraphGetEdges_(g, from, to, nullptr, &count));
  std::printf("edges_listed=%zu %s>%s %s>%s\n", count, index(from[0]), index(to[0]),
              index(from[1]), index(to[1]));
  print("edges_half_null", cudaGraphGetEdges_(g, from, nullptr, nullptr, &count));
  count = 4;
  print("deps", cudaGraphNodeGetDependencies_(e1, nodes, nullptr, &count));
  std::printf("deps_listed=%zu %s %s\n", count, index(nodes[0]), index(nodes[1]));
  count = 4;
  print("dependents", cudaGraphNodeGetDependentNodes_(k, nodes, nullptr, &count));
  std::printf("dependents_listed=%zu %s\n", count, index(nodes[0]));
  cudaKernelNodeParams got{};
  print("kernel_params", cudaGraphKernelNodeGetParams_(k, &got));
  std::printf("kernel_params_values=%d %u %u %llx %d\n", got.func == &kp_stub, got.gridDim.x,
              got.blockDim.x,
              static_cast<unsigned long long>(*static_cast<uint64_t*>(got.kernelParams[0])),
              *static_cast<int*>(got.kernelParams[1]));
  print("kernel_params_of_empty", cudaGraphKernelNodeGetParams_(e1, &got));
  int_arg = 5;
  kp.gridDim = dim3(9);
  print("kernel_set", cudaGraphKernelNodeSetParams_(k, &kp));
  print("kernel_params_again", cudaGraphKernelNodeGetParams_(k, &got));
  std::printf("kernel_params_after_set=%u %d\n", got.gridDim.x,
              *static_cast<int*>(got.kernelParams[1]));

  cudaGraph_t copy = nullptr;
  print("clone", cudaGraphClone_(&copy, g));
  cudaGraphNode_t k2 = nullptr, e12 = nullptr;
  print("find_k", cudaGraphNodeFindInClone_(&k2, k, copy));
  print("find_e1", cudaGraphNodeFindInClone_(&e12, e1, copy));
  std::printf("clone_nodes_distinct=%d\n", k2 != k && k2 != nullptr && e12 != e1);
  count = 4;
  print("clone_deps", cudaGraphNodeGetDependencies_(e12, nodes, nullptr, &count));
  std::printf("clone_deps_first_is_k2=%d count=%zu\n", nodes[0] == k2, count);
  cudaGraphNodeType type = cudaGraphNodeTypeCount;
  print("clone_type", cudaGraphNodeGetType_(k2, &type));
  std::printf("clone_type_kernel=%d\n", type == cudaGraphNodeTypeKernel);
  print("clone_kernel_params", cudaGraphKernelNodeGetParams_(k2, &got));
  std::printf("clone_kernel_int=%d\n", *static_cast<int*>(got.kernelParams[1]));
  print("find_in_original", cudaGraphNodeFindInClone_(&k2, k, g));
  print("destroy_clone", cudaGraphDestroy_(copy));
  print("find_after_destroy", cudaGraphNodeFindInClone_(&k2, k, copy));

  cudaStream_t stream = nullptr;
  cudaStreamCreate_(&stream);
  cudaGraph_t captured = nullptr;
  print("begin", cudaStreamBeginCapture_(stream, cudaStreamCaptureModeGlobal));
  print("end", cudaStreamEndCapture_(stream, &captured));
  count = 0;
  print("captured_nodes", cudaGraphGetNodes_(captured, nullptr, &count));
  print("unknown_graph_nodes",
        cudaGraphGetNodes_(reinterpret_cast<cudaGraph_t>(uintptr_t{0x5}), nullptr, &count));
  print("destroy", cudaGraphDestroy_(g));
  print("node_after_destroy", cudaGraphNodeGetDependencies_(e1, nullptr, nullptr, &count));
}

} // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s LIB SCENARIO\n", argv[0]);
    return 2;
  }
  lib = dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL);
  if (lib == nullptr) {
    std::fprintf(stderr, "dlopen %s: %s\n", argv[1], dlerror());
    return 2;
  }
  if (const char* deadline = std::getenv("GLEAM_PROBE_DEADLINE_S")) {
    ::signal(SIGALRM, [](int) {
      static const char message[] = "features probe: still running at GLEAM_PROBE_DEADLINE_S\n";
      static_cast<void>(::write(2, message, sizeof(message) - 1));
      ::_exit(124);
    });
    ::alarm(static_cast<unsigned>(std::atoi(deadline)));
  }
  std::string scenario = argv[2];
  if (scenario == "launch_ex")
    launch_ex(argv[1]);
  else if (scenario == "props")
    props();
  else if (scenario == "pools")
    pools();
  else if (scenario == "graphs")
    graphs();
  else if (scenario == "managed")
    managed();
  else if (scenario == "graph_copies")
    graph_copies();
  else if (scenario == "mapped")
    mapped();
  else if (scenario == "mapped_neighbour")
    mapped_neighbour();
  else {
    std::fprintf(stderr, "unknown scenario %s\n", argv[2]);
    return 2;
  }
  std::fflush(stdout);
  return 0;
}
