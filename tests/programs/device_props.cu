// Device management and properties: count, properties, attributes, the
// current device, and error names/strings of a few codes.
#include "common.cuh"

int main() {
  gleam_program::checksum sum;
  int count = 0;
  GLEAM_PROGRAM_CHECK(cudaGetDeviceCount(&count));
  GLEAM_PROGRAM_EXPECT(count >= 1, "at least one device");
  std::printf("devices >= 1: yes\n");

  GLEAM_PROGRAM_CHECK(cudaSetDevice(0));
  int current = -1;
  GLEAM_PROGRAM_CHECK(cudaGetDevice(&current));
  GLEAM_PROGRAM_EXPECT(current == 0, "current device is 0");
  sum.add_value(current);

  cudaDeviceProp prop;
  GLEAM_PROGRAM_CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("name %s\n", prop.name);
  std::printf("compute capability %d.%d\n", prop.major, prop.minor);
  std::printf("multiprocessors %d warp %d max threads/block %d\n",
              prop.multiProcessorCount, prop.warpSize,
              prop.maxThreadsPerBlock);
  sum.add(prop.name, std::strlen(prop.name));
  sum.add_value(prop.major);
  sum.add_value(prop.minor);
  sum.add_value(prop.multiProcessorCount);
  sum.add_value(prop.warpSize);
  sum.add_value(prop.maxThreadsPerBlock);
  sum.add_value(prop.maxThreadsDim);
  sum.add_value(prop.sharedMemPerBlock);
  sum.add_value(prop.regsPerBlock);

  const cudaDeviceAttr attrs[] = {
      cudaDevAttrComputeCapabilityMajor, cudaDevAttrComputeCapabilityMinor,
      cudaDevAttrMultiProcessorCount,    cudaDevAttrWarpSize,
      cudaDevAttrMaxThreadsPerBlock,     cudaDevAttrMaxSharedMemoryPerBlockOptin,
      cudaDevAttrMaxBlockDimX,           cudaDevAttrMaxGridDimX,
      cudaDevAttrConcurrentKernels,      cudaDevAttrUnifiedAddressing,
  };
  for (auto attr : attrs) {
    int value = 0;
    GLEAM_PROGRAM_CHECK(cudaDeviceGetAttribute(&value, attr, 0));
    sum.add_value(value);
  }
  int major = 0;
  GLEAM_PROGRAM_CHECK(
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0));
  GLEAM_PROGRAM_EXPECT(major == prop.major, "attribute matches property");

  // A device index past the end is an error the program sees and survives.
  cudaError_t bad = cudaSetDevice(count);
  std::printf("cudaSetDevice(count) -> %s\n", cudaGetErrorName(bad));
  GLEAM_PROGRAM_EXPECT(bad == cudaErrorInvalidDevice, "invalid device");
  sum.add_value(static_cast<int>(bad));
  GLEAM_PROGRAM_EXPECT(cudaGetLastError() == cudaErrorInvalidDevice,
                       "last error after the failed call");
  GLEAM_PROGRAM_CHECK(cudaGetDevice(&current));
  GLEAM_PROGRAM_EXPECT(current == 0, "current device unchanged");

  const cudaError_t codes[] = {cudaSuccess, cudaErrorInvalidValue,
                               cudaErrorMemoryAllocation,
                               cudaErrorInvalidConfiguration};
  for (auto code : codes) {
    const char* name = cudaGetErrorName(code);
    const char* text = cudaGetErrorString(code);
    std::printf("%d %s: %s\n", static_cast<int>(code), name, text);
    sum.add(name, std::strlen(name));
    sum.add(text, std::strlen(text));
  }
  GLEAM_PROGRAM_CHECK(cudaDeviceSynchronize());
  sum.print("device_props");
  return 0;
}
