#pragma once

// The fake GPU of the executor's CPU tests, without a test framework (the
// fuzz targets use it too): device memory is host memory, streams and
// events are tokens that log into fake_device().

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <utility>
#include <vector>

#include "executor/driver_api.hpp"
#include "tests/executor/fake_stream_order.hpp"

namespace gleam::test {

/// What the fake device of install_fake_device saw: driver streams in
/// creation order, events recorded (event, stream) and waited for
/// (stream, event), in order. One per process (the driver's entry points
/// are plain function pointers); reset it at the start of a test.
struct fake_device_log {
  std::vector<CUstream> streams;
  std::vector<std::pair<CUevent, CUstream>> records;
  std::vector<std::pair<CUstream, CUevent>> waits;
};

inline fake_device_log& fake_device() {
  static fake_device_log log;
  return log;
}

/// Fills `api` with a GPU in host memory: one device, its primary context,
/// allocations that are host memory (addresses are host pointers, so a
/// fake library may write them directly), copies, streams and events that
/// log into fake_device(). Only what an executor and its library ops reach.
inline void install_fake_device(executor::driver_api& api) {
  api.cuDeviceGetCount = [](int* n) {
    *n = 1;
    return CUDA_SUCCESS;
  };
  api.cuDeviceGet = [](CUdevice* d, int o) {
    *d = o;
    return CUDA_SUCCESS;
  };
  api.cuDevicePrimaryCtxRetain = [](CUcontext* c, CUdevice) {
    *c = reinterpret_cast<CUcontext>(uintptr_t{0x1000});
    return CUDA_SUCCESS;
  };
  api.cuDevicePrimaryCtxRelease = [](CUdevice) { return CUDA_SUCCESS; };
  api.cuCtxSetCurrent = [](CUcontext) { return CUDA_SUCCESS; };
  api.cuCtxSynchronize = [] { return CUDA_SUCCESS; };
  api.cuDeviceGetName = [](char* name, int len, CUdevice) {
    std::strncpy(name, "Fake GPU", static_cast<size_t>(len));
    return CUDA_SUCCESS;
  };
  api.cuDeviceGetUuid = [](CUuuid* u, CUdevice) {
    std::memset(u->bytes, 0xab, sizeof(u->bytes));
    return CUDA_SUCCESS;
  };
  api.cuDeviceTotalMem = [](size_t* b, CUdevice) {
    *b = size_t{80} << 30;
    return CUDA_SUCCESS;
  };
  api.cuDeviceGetAttribute = [](int*, CUdevice_attribute, CUdevice) {
    return CUDA_ERROR_INVALID_VALUE;
  };
  api.cuDriverGetVersion = [](int* v) {
    *v = 13000;
    return CUDA_SUCCESS;
  };
  api.cuMemAlloc = [](CUdeviceptr* p, size_t n) {
    *p = reinterpret_cast<CUdeviceptr>(std::calloc(1, n));
    return *p != 0 ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
  };
  api.cuMemFree = [](CUdeviceptr p) {
    std::free(reinterpret_cast<void*>(static_cast<uintptr_t>(p)));
    return CUDA_SUCCESS;
  };
  api.cuMemcpyHtoD = [](CUdeviceptr dst, const void* src, size_t n) {
    std::memcpy(reinterpret_cast<void*>(static_cast<uintptr_t>(dst)), src, n);
    return CUDA_SUCCESS;
  };
  api.cuMemcpyHtoDAsync = [](CUdeviceptr dst, const void* src, size_t n, CUstream) {
    std::memcpy(reinterpret_cast<void*>(static_cast<uintptr_t>(dst)), src, n);
    return CUDA_SUCCESS;
  };
  api.cuMemcpyDtoH = [](void* dst, CUdeviceptr src, size_t n) {
    std::memcpy(dst, reinterpret_cast<void*>(static_cast<uintptr_t>(src)), n);
    return CUDA_SUCCESS;
  };
  api.cuMemcpyDtoHAsync = [](void* dst, CUdeviceptr src, size_t n, CUstream) {
    std::memcpy(dst, reinterpret_cast<void*>(static_cast<uintptr_t>(src)), n);
    return CUDA_SUCCESS;
  };
  install_fake_stream_order(api);
  api.cuStreamCreateWithPriority = [](CUstream* s, unsigned, int) {
    *s = reinterpret_cast<CUstream>(uintptr_t{0x5150} + fake_device().streams.size());
    fake_device().streams.push_back(*s);
    return CUDA_SUCCESS;
  };
  api.cuEventRecordWithFlags = [](CUevent e, CUstream s, unsigned) {
    fake_device().records.emplace_back(e, s);
    return CUDA_SUCCESS;
  };
  api.cuStreamWaitEvent = [](CUstream s, CUevent e, unsigned) {
    fake_device().waits.emplace_back(s, e);
    return CUDA_SUCCESS;
  };
  api.cuStreamDestroy = [](CUstream) { return CUDA_SUCCESS; };
  api.cuStreamSynchronize = [](CUstream) { return CUDA_SUCCESS; };
}

} // namespace gleam::test
