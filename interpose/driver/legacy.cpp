// The driver's legacy (v1) names whose ABI is the current function's: the
// static runtime resolves some of them by version through cuGetProcAddress,
// and old binaries link them by name. Each forwards to the current _v2
// function. cuGetProcAddress v1 lacks the last parameter of _v2.
#define __CUDA_API_VERSION_INTERNAL
#include "interpose/cuda_export.hpp"

extern "C" {

GLEAM_INTERPOSE_EXPORT CUresult cuDeviceGetUuid(CUuuid* uuid, CUdevice dev) {
  return cuDeviceGetUuid_v2(uuid, dev);
}

GLEAM_INTERPOSE_EXPORT CUresult cuDevicePrimaryCtxRelease(CUdevice dev) {
  return cuDevicePrimaryCtxRelease_v2(dev);
}

GLEAM_INTERPOSE_EXPORT CUresult cuDevicePrimaryCtxReset(CUdevice dev) {
  return cuDevicePrimaryCtxReset_v2(dev);
}

GLEAM_INTERPOSE_EXPORT CUresult cuDevicePrimaryCtxSetFlags(CUdevice dev, unsigned int flags) {
  return cuDevicePrimaryCtxSetFlags_v2(dev, flags);
}

GLEAM_INTERPOSE_EXPORT CUresult cuCtxPushCurrent(CUcontext ctx) {
  return cuCtxPushCurrent_v2(ctx);
}

GLEAM_INTERPOSE_EXPORT CUresult cuCtxPopCurrent(CUcontext* pctx) {
  return cuCtxPopCurrent_v2(pctx);
}

GLEAM_INTERPOSE_EXPORT CUresult cuEventElapsedTime(float* pMilliseconds, CUevent hStart,
                                                   CUevent hEnd) {
  return cuEventElapsedTime_v2(pMilliseconds, hStart, hEnd);
}

GLEAM_INTERPOSE_EXPORT CUresult cuStreamDestroy(CUstream hStream) {
  return cuStreamDestroy_v2(hStream);
}

GLEAM_INTERPOSE_EXPORT CUresult cuEventDestroy(CUevent hEvent) {
  return cuEventDestroy_v2(hEvent);
}

GLEAM_INTERPOSE_EXPORT CUresult cuMemHostRegister(void* p, size_t bytesize, unsigned int Flags) {
  return cuMemHostRegister_v2(p, bytesize, Flags);
}

GLEAM_INTERPOSE_EXPORT CUresult cuLinkCreate(unsigned int numOptions, CUjit_option* options,
                                             void** optionValues, CUlinkState* stateOut) {
  return cuLinkCreate_v2(numOptions, options, optionValues, stateOut);
}

GLEAM_INTERPOSE_EXPORT CUresult cuLinkAddData(CUlinkState state, CUjitInputType type, void* data,
                                              size_t size, const char* name,
                                              unsigned int numOptions, CUjit_option* options,
                                              void** optionValues) {
  return cuLinkAddData_v2(state, type, data, size, name, numOptions, options, optionValues);
}

GLEAM_INTERPOSE_EXPORT CUresult cuLinkAddFile(CUlinkState state, CUjitInputType type,
                                              const char* path, unsigned int numOptions,
                                              CUjit_option* options, void** optionValues) {
  return cuLinkAddFile_v2(state, type, path, numOptions, options, optionValues);
}

GLEAM_INTERPOSE_EXPORT CUresult cuGetProcAddress(const char* symbol, void** pfn, int cudaVersion,
                                                 cuuint64_t flags) {
  return cuGetProcAddress_v2(symbol, pfn, cudaVersion, flags, nullptr);
}

} // extern "C"
