// Every cudaDeviceProp field of device 0 and every cudaDeviceGetAttribute
// value (or the error of an attribute the device refuses), one line each,
// so that a local and a remoted run compare line by line. The checksum
// covers the same values.
#include "common.cuh"

#include <cuda.h>

namespace {

gleam_program::checksum sum;

void show(const char* name, long long value) {
  std::printf("%s = %lld\n", name, value);
  sum.add_value(value);
}

#define P(field) show(#field, static_cast<long long>(prop.field))
#define P2(field) P(field[0]), P(field[1])
#define P3(field) P(field[0]), P(field[1]), P(field[2])

} // namespace

int main() {
  cudaDeviceProp prop;
  std::memset(&prop, 0, sizeof(prop));
  GLEAM_PROGRAM_CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("name = %s\n", prop.name);
  sum.add(prop.name, std::strlen(prop.name));
  std::printf("uuid =");
  for (int i = 0; i < 16; ++i)
    std::printf(" %02x", static_cast<unsigned char>(prop.uuid.bytes[i]));
  std::printf("\n");
  sum.add(prop.uuid.bytes, sizeof(prop.uuid.bytes));
  P(luidDeviceNodeMask);
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

  // Every attribute number up to the header's last one.
  int refused = 0;
  for (int a = 1; a < CU_DEVICE_ATTRIBUTE_MAX; ++a) {
    int value = 0;
    cudaError_t e = cudaDeviceGetAttribute(&value, static_cast<cudaDeviceAttr>(a), 0);
    if (e == cudaSuccess) {
      std::printf("attribute %d = %d\n", a, value);
      sum.add_value(value);
    } else {
      std::printf("attribute %d -> %s\n", a, cudaGetErrorName(e));
      sum.add_value(static_cast<int>(e));
      ++refused;
      cudaGetLastError();
    }
  }
  std::printf("attributes refused: %d\n", refused);
  // Properties of a device that does not exist.
  cudaError_t bad = cudaGetDeviceProperties(&prop, 64);
  std::printf("cudaGetDeviceProperties(64) -> %s\n", cudaGetErrorName(bad));
  cudaGetLastError();
  sum.print("device_props_full");
  return 0;
}
