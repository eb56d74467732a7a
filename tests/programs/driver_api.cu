// Driver-API use as PyTorch makes it: functions from
// cudaGetDriverEntryPointByVersion and from dlopen("libcuda.so.1"); a fatbin
// loaded with cuModuleLoadData, kernels launched with cuLaunchKernel
// (kernelParams), a __device__ variable through cuModuleGetGlobal, device
// queries, primary-context state, pointer attributes and error names.
#include <dlfcn.h>

#include <cuda.h>
#include <vector>

#include "common.cuh"
#include "driver_kernels_fatbin.h"

#define DRV_CHECK(call) GLEAM_PROGRAM_CHECK_DRIVER(call, get_error_name)

namespace {

decltype(&cuGetErrorName) get_error_name = nullptr;

template <class F>
F entry(const char* name) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult status = cudaDriverEntryPointSymbolNotFound;
  GLEAM_PROGRAM_CHECK(
    cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &status));
  GLEAM_PROGRAM_EXPECT(status == cudaDriverEntryPointSuccess && fn != nullptr, name);
  return reinterpret_cast<F>(fn);
}

template <class F>
F symbol(void* lib, const char* name) {
  void* fn = dlsym(lib, name);
  GLEAM_PROGRAM_EXPECT(fn != nullptr, name);
  return reinterpret_cast<F>(fn);
}

} // namespace

int main() {
  gleam_program::checksum sum;
  GLEAM_PROGRAM_CHECK(cudaFree(nullptr));

  // Through the runtime's entry points (c10/cuda/driver_api.cpp's way).
  get_error_name = entry<decltype(&cuGetErrorName)>("cuGetErrorName");
  auto load = entry<decltype(&cuModuleLoadData)>("cuModuleLoadData");
  auto get_function = entry<decltype(&cuModuleGetFunction)>("cuModuleGetFunction");
  auto get_global = entry<decltype(&cuModuleGetGlobal)>("cuModuleGetGlobal");
  auto launch = entry<decltype(&cuLaunchKernel)>("cuLaunchKernel");
  auto func_attr = entry<decltype(&cuFuncGetAttribute)>("cuFuncGetAttribute");
  auto occupancy = entry<decltype(&cuOccupancyMaxActiveBlocksPerMultiprocessor)>(
    "cuOccupancyMaxActiveBlocksPerMultiprocessor");
  auto ctx_current = entry<decltype(&cuCtxGetCurrent)>("cuCtxGetCurrent");
  void* missing = &sum;
  cudaDriverEntryPointQueryResult missing_status = cudaDriverEntryPointSuccess;
  GLEAM_PROGRAM_CHECK(cudaGetDriverEntryPointByVersion("cuNoSuchFunction", &missing, 12000,
                                                       cudaEnableDefault, &missing_status));
  std::printf("unknown entry point: %s, status %d\n", missing ? "found" : "null",
              static_cast<int>(missing_status));

  // Through dlopen, as ATen's lazy NVRTC stub does.
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  GLEAM_PROGRAM_EXPECT(lib != nullptr, dlerror());
  auto device_get = symbol<decltype(&cuDeviceGet)>(lib, "cuDeviceGet");
  auto device_name = symbol<decltype(&cuDeviceGetName)>(lib, "cuDeviceGetName");
  auto device_attr = symbol<decltype(&cuDeviceGetAttribute)>(lib, "cuDeviceGetAttribute");
  auto primary_state =
    symbol<decltype(&cuDevicePrimaryCtxGetState)>(lib, "cuDevicePrimaryCtxGetState");
  auto mem_alloc = symbol<decltype(&cuMemAlloc)>(lib, "cuMemAlloc_v2");
  auto mem_free = symbol<decltype(&cuMemFree)>(lib, "cuMemFree_v2");
  auto htod = symbol<decltype(&cuMemcpyHtoD)>(lib, "cuMemcpyHtoD_v2");
  auto dtoh = symbol<decltype(&cuMemcpyDtoH)>(lib, "cuMemcpyDtoH_v2");
  auto stream_create = symbol<decltype(&cuStreamCreate)>(lib, "cuStreamCreate");
  auto stream_sync = symbol<decltype(&cuStreamSynchronize)>(lib, "cuStreamSynchronize");
  auto stream_destroy = symbol<decltype(&cuStreamDestroy)>(lib, "cuStreamDestroy_v2");
  auto unload = symbol<decltype(&cuModuleUnload)>(lib, "cuModuleUnload");
  auto pointer_attr = symbol<decltype(&cuPointerGetAttribute)>(lib, "cuPointerGetAttribute");
  auto address_range = symbol<decltype(&cuMemGetAddressRange)>(lib, "cuMemGetAddressRange_v2");
  auto get_limit = symbol<decltype(&cuCtxGetLimit)>(lib, "cuCtxGetLimit");
  auto set_limit = symbol<decltype(&cuCtxSetLimit)>(lib, "cuCtxSetLimit");

  CUdevice dev = -1;
  DRV_CHECK(device_get(&dev, 0));
  char name[256] = {};
  DRV_CHECK(device_name(name, sizeof(name), dev));
  int major = 0, minor = 0, sms = 0;
  DRV_CHECK(device_attr(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev));
  DRV_CHECK(device_attr(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev));
  DRV_CHECK(device_attr(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));
  std::printf("device %d: %s, sm_%d%d, %d SMs\n", dev, name, major, minor, sms);
  unsigned flags = 0;
  int active = 0;
  DRV_CHECK(primary_state(dev, &flags, &active));
  CUcontext ctx = nullptr;
  DRV_CHECK(ctx_current(&ctx));
  std::printf("primary context active %d, current context %s\n", active,
              ctx != nullptr ? "set" : "null");

  // Limits, as Triton reads and sets them (the stack size: it may change
  // after kernels ran, which the printf FIFO may not).
  size_t stack = 0, stack_after = 0;
  DRV_CHECK(get_limit(&stack, CU_LIMIT_STACK_SIZE));
  DRV_CHECK(set_limit(CU_LIMIT_STACK_SIZE, stack + 1024));
  DRV_CHECK(get_limit(&stack_after, CU_LIMIT_STACK_SIZE));
  const char* unknown = nullptr;
  get_error_name(get_limit(&stack, static_cast<CUlimit>(0x7fff)), &unknown);
  std::printf("stack size raised by %zu; unknown limit -> %s\n", stack_after - stack,
              unknown != nullptr ? unknown : "?");
  sum.add_value(static_cast<uint64_t>(stack_after - stack));
  DRV_CHECK(set_limit(CU_LIMIT_STACK_SIZE, stack));

  // The image in 8-byte aligned memory, as the driver expects it.
  std::vector<unsigned long long> image(sizeof(driver_kernels_fatbin) / 8 + 1);
  std::memcpy(image.data(), driver_kernels_fatbin, sizeof(driver_kernels_fatbin));
  CUmodule module = nullptr;
  DRV_CHECK(load(&module, image.data()));
  CUfunction scale_add = nullptr, add_pairs = nullptr, none = nullptr;
  DRV_CHECK(get_function(&scale_add, module, "scale_add"));
  DRV_CHECK(get_function(&add_pairs, module, "add_pairs"));
  CUresult r = get_function(&none, module, "no_such_kernel");
  const char* rname = nullptr;
  get_error_name(r, &rname);
  std::printf("missing kernel: %s\n", rname ? rname : "?");
  int max_threads = 0, num_regs_ok = 0, regs = 0;
  DRV_CHECK(func_attr(&max_threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, scale_add));
  DRV_CHECK(func_attr(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, scale_add));
  num_regs_ok = regs > 0 && regs <= 255;
  int blocks = 0;
  DRV_CHECK(occupancy(&blocks, scale_add, 256, 0));
  std::printf("scale_add: max threads %d, registers in range %d, blocks/SM at 256 > 0: %d\n",
              max_threads, num_regs_ok, blocks > 0);

  constexpr int n = 10000;
  std::vector<float> in(n), out(n);
  uint32_t seed = 12345;
  for (int i = 0; i < n; ++i)
    in[i] = static_cast<float>(gleam_program::next_random(seed) % 1000) / 8.0f;
  CUdeviceptr d_in = 0, d_out = 0;
  DRV_CHECK(mem_alloc(&d_in, n * sizeof(float)));
  DRV_CHECK(mem_alloc(&d_out, n * sizeof(float)));
  unsigned mem_type = 0;
  DRV_CHECK(pointer_attr(&mem_type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, d_in + 40));
  CUdeviceptr base = 0;
  size_t range = 0;
  DRV_CHECK(address_range(&base, &range, d_in + 40));
  std::printf("allocation: memory type %u, range base matches %d, size covers it %d\n",
              mem_type, base == d_in, range >= n * sizeof(float));
  DRV_CHECK(htod(d_in, in.data(), n * sizeof(float)));
  CUdeviceptr d_counter = 0;
  size_t counter_size = 0;
  DRV_CHECK(get_global(&d_counter, &counter_size, module, "driver_counter"));
  int zero = 0;
  DRV_CHECK(htod(d_counter, &zero, sizeof(zero)));
  CUstream stream = nullptr;
  DRV_CHECK(stream_create(&stream, CU_STREAM_NON_BLOCKING));
  float a = 1.5f;
  int count = n;
  void* params[] = {&d_out, &d_in, &a, &count};
  DRV_CHECK(launch(scale_add, (n + 255) / 256, 1, 1, 256, 1, 1, 0, stream, params, nullptr));
  DRV_CHECK(stream_sync(stream));
  DRV_CHECK(dtoh(out.data(), d_out, n * sizeof(float)));
  int counter = 0;
  DRV_CHECK(dtoh(&counter, d_counter, sizeof(counter)));
  for (int i = 0; i < n; ++i)
    GLEAM_PROGRAM_EXPECT(out[i] == a * in[i] + static_cast<float>(i), "scale_add value");
  std::printf("scale_add: out[0]=%g out[%d]=%g counter=%d (size %zu)\n", out[0], n - 1,
              out[n - 1], counter, counter_size);
  sum.add(out.data(), n * sizeof(float));
  sum.add_value(counter);

  std::vector<int> x(n), y(n), z(n);
  for (int i = 0; i < n; ++i) {
    x[i] = i * 3;
    y[i] = 7 - i;
  }
  CUdeviceptr d_x = 0, d_y = 0, d_z = 0;
  DRV_CHECK(mem_alloc(&d_x, n * sizeof(int)));
  DRV_CHECK(mem_alloc(&d_y, n * sizeof(int)));
  DRV_CHECK(mem_alloc(&d_z, n * sizeof(int)));
  DRV_CHECK(htod(d_x, x.data(), n * sizeof(int)));
  DRV_CHECK(htod(d_y, y.data(), n * sizeof(int)));
  void* pair_params[] = {&d_z, &d_x, &d_y, &count};
  DRV_CHECK(launch(add_pairs, (n + 127) / 128, 1, 1, 128, 1, 1, 0, nullptr, pair_params,
                   nullptr));
  DRV_CHECK(dtoh(z.data(), d_z, n * sizeof(int)));
  for (int i = 0; i < n; ++i)
    GLEAM_PROGRAM_EXPECT(z[i] == 2 * i + 7, "add_pairs value");
  std::printf("add_pairs: z[0]=%d z[%d]=%d\n", z[0], n - 1, z[n - 1]);
  sum.add(z.data(), n * sizeof(int));

  // The runtime sees the same allocations and stream.
  std::vector<int> via_runtime(4);
  GLEAM_PROGRAM_CHECK(cudaMemcpy(via_runtime.data(), reinterpret_cast<void*>(d_z),
                                 4 * sizeof(int), cudaMemcpyDeviceToHost));
  std::printf("runtime reads driver memory: %d %d %d %d\n", via_runtime[0], via_runtime[1],
              via_runtime[2], via_runtime[3]);

  DRV_CHECK(stream_destroy(stream));
  for (CUdeviceptr p : {d_in, d_out, d_x, d_y, d_z})
    DRV_CHECK(mem_free(p));
  DRV_CHECK(unload(module));
  sum.print("driver_api");
  return 0;
}
