// Last-error state, error names and texts, versions, and the entry points
// that hand out driver internals (cudaGetDriverEntryPoint* is in
// driver_bridge.cpp).
#define __CUDA_API_VERSION_INTERNAL
#include "interpose/export.hpp"

#include "interpose/error_map.hpp"
#include "interpose/runtime.hpp"

using namespace gleam::interpose;
namespace proto = gleam::proto;

namespace {

cudaError_t no_driver_entry(const char* name) {
  report_unsupported(name,
                     "the driver's export tables are internal to the vendor "
                     "runtime; use cudaGetDriverEntryPoint");
  return cudaErrorNotSupported;
}

} // namespace

extern "C" {

GLEAM_INTERPOSE_EXPORT cudaError_t cudaGetLastError(void) {
  return last_error(true);
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaPeekAtLastError(void) {
  return last_error(false);
}

GLEAM_INTERPOSE_EXPORT const char* cudaGetErrorName(cudaError_t error) {
  const char* name = error_name(error);
  return name != nullptr ? name : "unrecognized error code";
}

GLEAM_INTERPOSE_EXPORT const char* cudaGetErrorString(cudaError_t error) {
  const char* text = error_text(error);
  return text != nullptr ? text : "unrecognized error code";
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaRuntimeGetVersion(int* runtimeVersion) {
  if (runtimeVersion == nullptr)
    return record(cudaErrorInvalidValue);
  *runtimeVersion = CUDART_VERSION;
  return cudaSuccess;
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaDriverGetVersion(int* driverVersion) {
  return guarded([&] {
    if (driverVersion == nullptr)
      return cudaErrorInvalidValue;
    if (connect() != cudaSuccess) {
      *driverVersion = 0;
      return cudaSuccess;
    }
    *driverVersion = session().driver_version();
    return cudaSuccess;
  });
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaProfilerStart(void) {
  return cudaSuccess;
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaProfilerStop(void) {
  return cudaSuccess;
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaGetExportTable(const void** ppExportTable,
                                                      const cudaUUID_t* pExportTableId) {
  if (ppExportTable != nullptr)
    *ppExportTable = nullptr;
  return record(no_driver_entry("cudaGetExportTable"));
}

} // extern "C"
