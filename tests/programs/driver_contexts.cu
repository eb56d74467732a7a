// A driver-API-only program (no runtime call): a created context beside the
// primary one (cuCtxCreate, push/pop, destroy), a fatbin loaded with the
// library API (cuLibraryLoadData, cuLibraryGetKernel, cuKernelGetFunction,
// cuLibraryGetGlobal), launches through cuLaunchKernelEx with attributes,
// pitched memory and 2D copies, stream queries, a graph of a memset node
// and a kernel node replayed, and a stale context refused.
#include <cuda.h>

#include <cstring>
#include <vector>

#include "common.cuh"
#include "driver_kernels_fatbin.h"

#define DRV_CHECK(call) GLEAM_PROGRAM_CHECK_DRIVER(call, cuGetErrorName)

namespace {

const char* name_of(CUresult r) {
  const char* name = nullptr;
  cuGetErrorName(r, &name);
  return name != nullptr ? name : "?";
}

} // namespace

int main() {
  gleam_program::checksum sum;
  DRV_CHECK(cuInit(0));
  CUdevice dev = -1;
  DRV_CHECK(cuDeviceGet(&dev, 0));
  CUcontext primary = nullptr;
  DRV_CHECK(cuDevicePrimaryCtxRetain(&primary, dev));
  CUcontext created = nullptr;
  DRV_CHECK(cuCtxCreate(&created, nullptr, CU_CTX_SCHED_AUTO, dev));
  CUcontext current = nullptr;
  DRV_CHECK(cuCtxGetCurrent(&current));
  unsigned flags = 99;
  DRV_CHECK(cuCtxGetFlags(&flags));
  CUdevice ctx_dev = -1;
  DRV_CHECK(cuCtxGetDevice(&ctx_dev));
  std::printf("created context: current %d, differs from primary %d, flags %u, device %d\n",
              current == created, created != primary, flags, ctx_dev);
  DRV_CHECK(cuCtxPushCurrent(primary));
  DRV_CHECK(cuCtxGetCurrent(&current));
  std::printf("pushed primary: current is primary %d\n", current == primary);
  CUcontext popped = nullptr;
  DRV_CHECK(cuCtxPopCurrent(&popped));
  DRV_CHECK(cuCtxGetCurrent(&current));
  std::printf("popped primary %d, created current again %d\n", popped == primary,
              current == created);

  // The library API, as the static runtime loads a program's kernels.
  std::vector<unsigned long long> image(sizeof(driver_kernels_fatbin) / 8 + 1);
  std::memcpy(image.data(), driver_kernels_fatbin, sizeof(driver_kernels_fatbin));
  CUlibrary library = nullptr;
  DRV_CHECK(cuLibraryLoadData(&library, image.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
  CUkernel scale_add = nullptr, add_pairs = nullptr, none = nullptr;
  DRV_CHECK(cuLibraryGetKernel(&scale_add, library, "scale_add"));
  DRV_CHECK(cuLibraryGetKernel(&add_pairs, library, "add_pairs"));
  std::printf("missing kernel: %s\n", name_of(cuLibraryGetKernel(&none, library, "no_such")));
  CUfunction scale_fn = nullptr;
  DRV_CHECK(cuKernelGetFunction(&scale_fn, scale_add));
  const char* fn_name = nullptr;
  DRV_CHECK(cuFuncGetName(&fn_name, scale_fn));
  CUmodule fn_module = nullptr;
  DRV_CHECK(cuFuncGetModule(&fn_module, scale_fn));
  int cc_major = 0, cc_minor = 0;
  DRV_CHECK(cuDeviceGetAttribute(&cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev));
  DRV_CHECK(cuDeviceGetAttribute(&cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev));
  int min_grid = 0, best_block = 0;
  DRV_CHECK(cuOccupancyMaxPotentialBlockSize(&min_grid, &best_block, scale_fn, nullptr, 0, 0));
  std::printf("kernel name %s, has a module %d, compute %d.%d, potential block %d grid %d\n",
              fn_name, fn_module != nullptr, cc_major, cc_minor, best_block, min_grid);
  size_t offsets[4] = {}, sizes[4] = {};
  for (int i = 0; i < 4; ++i)
    DRV_CHECK(cuFuncGetParamInfo(scale_fn, i, &offsets[i], &sizes[i]));
  size_t past = 0;
  std::printf("parameters: %zu+%zu %zu+%zu %zu+%zu %zu+%zu, a fifth: %s\n", offsets[0], sizes[0],
              offsets[1], sizes[1], offsets[2], sizes[2], offsets[3], sizes[3],
              name_of(cuFuncGetParamInfo(scale_fn, 4, &past, nullptr)));
  int max_threads = 0;
  DRV_CHECK(cuKernelGetAttribute(&max_threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
                                 scale_add, dev));
  std::printf("scale_add: max threads %d\n", max_threads);
  CUdeviceptr d_counter = 0;
  size_t counter_size = 0;
  DRV_CHECK(cuLibraryGetGlobal(&d_counter, &counter_size, library, "driver_counter"));
  int zero = 0;
  DRV_CHECK(cuMemcpyHtoD(d_counter, &zero, sizeof(zero)));

  constexpr int n = 4096;
  std::vector<float> in(n), out(n);
  uint32_t seed = 777;
  for (int i = 0; i < n; ++i)
    in[i] = static_cast<float>(gleam_program::next_random(seed) % 1000) / 4.0f;
  CUdeviceptr d_in = 0, d_out = 0;
  DRV_CHECK(cuMemAlloc(&d_in, n * sizeof(float)));
  DRV_CHECK(cuMemAlloc(&d_out, n * sizeof(float)));
  DRV_CHECK(cuMemcpyHtoD(d_in, in.data(), n * sizeof(float)));
  CUstream stream = nullptr;
  DRV_CHECK(cuStreamCreateWithPriority(&stream, CU_STREAM_NON_BLOCKING, 0));
  unsigned stream_flags = 0;
  int priority = 1;
  DRV_CHECK(cuStreamGetFlags(stream, &stream_flags));
  DRV_CHECK(cuStreamGetPriority(stream, &priority));
  std::printf("stream flags %u priority %d\n", stream_flags, priority);

  float a = 0.5f;
  int count = n;
  void* params[] = {&d_out, &d_in, &a, &count};
  CUlaunchAttribute attrs[1] = {};
  attrs[0].id = CU_LAUNCH_ATTRIBUTE_PRIORITY;
  attrs[0].value.priority = 0;
  CUlaunchConfig config = {};
  config.gridDimX = (n + 255) / 256;
  config.gridDimY = config.gridDimZ = 1;
  config.blockDimX = 256;
  config.blockDimY = config.blockDimZ = 1;
  config.hStream = stream;
  config.attrs = attrs;
  config.numAttrs = 1;
  DRV_CHECK(cuLaunchKernelEx(&config, scale_fn, params, nullptr));
  DRV_CHECK(cuStreamSynchronize(stream));
  DRV_CHECK(cuMemcpyDtoH(out.data(), d_out, n * sizeof(float)));
  int counter = 0;
  DRV_CHECK(cuMemcpyDtoH(&counter, d_counter, sizeof(counter)));
  for (int i = 0; i < n; ++i)
    GLEAM_PROGRAM_EXPECT(out[i] == a * in[i] + static_cast<float>(i), "scale_add value");
  std::printf("scale_add via cuLaunchKernelEx: out[1]=%g counter=%d (size %zu)\n", out[1],
              counter, counter_size);
  sum.add(out.data(), n * sizeof(float));

  // Pitched memory and a 2D copy of a sub-rectangle back to the host.
  constexpr size_t width = 37, height = 11;
  CUdeviceptr pitched = 0;
  size_t pitch = 0;
  DRV_CHECK(cuMemAllocPitch(&pitched, &pitch, width * sizeof(int), height, sizeof(int)));
  std::vector<int> grid(width * height), back(width * height, -1);
  for (size_t i = 0; i < grid.size(); ++i)
    grid[i] = static_cast<int>(i * 7 + 3);
  CUDA_MEMCPY2D up = {};
  up.srcMemoryType = CU_MEMORYTYPE_HOST;
  up.srcHost = grid.data();
  up.srcPitch = width * sizeof(int);
  up.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  up.dstDevice = pitched;
  up.dstPitch = pitch;
  up.WidthInBytes = width * sizeof(int);
  up.Height = height;
  DRV_CHECK(cuMemcpy2D(&up));
  CUDA_MEMCPY2D down = {};
  down.srcMemoryType = CU_MEMORYTYPE_DEVICE;
  down.srcDevice = pitched;
  down.srcPitch = pitch;
  down.srcXInBytes = 2 * sizeof(int);
  down.srcY = 3;
  down.dstMemoryType = CU_MEMORYTYPE_HOST;
  down.dstHost = back.data();
  down.dstPitch = width * sizeof(int);
  down.WidthInBytes = 5 * sizeof(int);
  down.Height = 4;
  DRV_CHECK(cuMemcpy2DAsync(&down, stream));
  DRV_CHECK(cuStreamSynchronize(stream));
  for (size_t y = 0; y < 4; ++y)
    for (size_t x = 0; x < 5; ++x)
      GLEAM_PROGRAM_EXPECT(back[y * width + x] == grid[(y + 3) * width + x + 2], "2D copy");
  std::printf("pitch is a multiple of 4 bytes %d; 2D copy back: %d %d\n", pitch % 4 == 0,
              back[0], back[3 * width + 4]);
  sum.add(back.data(), back.size() * sizeof(int));

  // A driver-API graph: a memset node, then the kernel as a kernel node,
  // replayed twice (scale_add counts every element into driver_counter).
  CUgraph graph = nullptr;
  DRV_CHECK(cuGraphCreate(&graph, 0));
  CUDA_MEMSET_NODE_PARAMS memset_params = {};
  memset_params.dst = d_out;
  memset_params.value = 0;
  memset_params.elementSize = 4;
  memset_params.width = n;
  memset_params.height = 1;
  memset_params.pitch = n * sizeof(float);
  CUgraphNode memset_node = nullptr, kernel_node = nullptr;
  DRV_CHECK(cuGraphAddMemsetNode(&memset_node, graph, nullptr, 0, &memset_params, current));
  CUDA_KERNEL_NODE_PARAMS kernel_params = {};
  kernel_params.func = scale_fn;
  kernel_params.gridDimX = (n + 255) / 256;
  kernel_params.gridDimY = kernel_params.gridDimZ = 1;
  kernel_params.blockDimX = 256;
  kernel_params.blockDimY = kernel_params.blockDimZ = 1;
  float b = 2.0f;
  void* graph_params[] = {&d_out, &d_in, &b, &count};
  kernel_params.kernelParams = graph_params;
  DRV_CHECK(cuGraphAddKernelNode(&kernel_node, graph, &memset_node, 1, &kernel_params));
  // Then a device-to-device copy node into the second half of a buffer.
  CUdeviceptr d_copy = 0;
  DRV_CHECK(cuMemAlloc(&d_copy, 2 * n * sizeof(float)));
  DRV_CHECK(cuMemsetD32(d_copy, 0, 2 * n));
  CUDA_MEMCPY3D copy = {};
  copy.srcMemoryType = CU_MEMORYTYPE_DEVICE;
  copy.srcDevice = d_out;
  copy.srcPitch = n * sizeof(float);
  copy.srcHeight = 1;
  copy.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  copy.dstDevice = d_copy;
  copy.dstXInBytes = n * sizeof(float);
  copy.dstPitch = 2 * n * sizeof(float);
  copy.dstHeight = 1;
  copy.WidthInBytes = n * sizeof(float);
  copy.Height = 1;
  copy.Depth = 1;
  CUgraphNode copy_node = nullptr;
  DRV_CHECK(cuGraphAddMemcpyNode(&copy_node, graph, &kernel_node, 1, &copy, current));
  size_t edges = 0;
  DRV_CHECK(cuGraphGetEdges(graph, nullptr, nullptr, nullptr, &edges));
  CUgraphExec exec = nullptr;
  DRV_CHECK(cuGraphInstantiateWithFlags(&exec, graph, 0));
  DRV_CHECK(cuGraphLaunch(exec, stream));
  DRV_CHECK(cuGraphLaunch(exec, stream));
  DRV_CHECK(cuStreamSynchronize(stream));
  DRV_CHECK(cuMemcpyDtoH(out.data(), d_out, n * sizeof(float)));
  DRV_CHECK(cuMemcpyDtoH(&counter, d_counter, sizeof(counter)));
  for (int i = 0; i < n; ++i)
    GLEAM_PROGRAM_EXPECT(out[i] == b * in[i] + static_cast<float>(i), "graph scale_add value");
  std::vector<float> copied(2 * n, -1.0f);
  DRV_CHECK(cuMemcpyDtoH(copied.data(), d_copy, 2 * n * sizeof(float)));
  for (int i = 0; i < n; ++i)
    GLEAM_PROGRAM_EXPECT(copied[i] == 0.0f && copied[n + i] == out[i], "graph memcpy node");
  std::printf("graph: %zu edge(s), out[2]=%g, counter after two replays %d, copied[n+2]=%g\n",
              edges, out[2], counter, copied[n + 2]);
  sum.add(out.data(), n * sizeof(float));
  DRV_CHECK(cuMemFree(d_copy));
  DRV_CHECK(cuGraphExecDestroy(exec));
  DRV_CHECK(cuGraphDestroy(graph));

  DRV_CHECK(cuStreamDestroy(stream));
  for (CUdeviceptr p : {d_in, d_out, pitched})
    DRV_CHECK(cuMemFree(p));
  DRV_CHECK(cuLibraryUnload(library));

  // Destroying the created context leaves no current context. (Using the
  // destroyed handle afterwards is undefined: the driver does not promise
  // to refuse it, and CUDA 13 accepts a push of it.)
  DRV_CHECK(cuCtxDestroy(created));
  DRV_CHECK(cuCtxGetCurrent(&current));
  std::printf("after destroy: current %s\n", current == created ? "stale" : "not the created");
  std::printf("destroy primary: %s\n", name_of(cuCtxDestroy(primary)));
  DRV_CHECK(cuDevicePrimaryCtxRelease(dev));
  sum.print("driver_contexts");
  return 0;
}
