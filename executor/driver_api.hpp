#pragma once

#include <memory>
#include <string>

#include <caf/expected.hpp>
#include <cuda.h>

namespace gleam::executor {

/// Every CUDA driver entry point the executor calls. Each X(name) names the
/// driver function as <cuda.h> spells it; the member has the type of that
/// declaration, so the ABI version (_v2, ...) is the one of CUDA 13.
#define GLEAM_EXECUTOR_DRIVER_FUNCTIONS(X)                                    \
  X(cuInit)                                                                    \
  X(cuDriverGetVersion)                                                        \
  X(cuGetErrorName)                                                            \
  X(cuGetErrorString)                                                          \
  X(cuDeviceGet)                                                               \
  X(cuDeviceGetCount)                                                          \
  X(cuDeviceGetName)                                                           \
  X(cuDeviceGetUuid)                                                           \
  X(cuDeviceTotalMem)                                                          \
  X(cuDeviceGetAttribute)                                                      \
  X(cuDevicePrimaryCtxRetain)                                                  \
  X(cuDevicePrimaryCtxRelease)                                                 \
  X(cuCtxSetCurrent)                                                           \
  X(cuCtxSynchronize)                                                          \
  X(cuCtxSetLimit)                                                             \
  X(cuCtxGetLimit)                                                             \
  X(cuMemAlloc)                                                                \
  X(cuMemAllocPitch)                                                           \
  X(cuMemFree)                                                                 \
  X(cuMemGetInfo)                                                              \
  X(cuMemcpyHtoD)                                                              \
  X(cuMemcpyDtoH)                                                              \
  X(cuMemcpyDtoD)                                                              \
  X(cuMemcpyHtoDAsync)                                                         \
  X(cuMemcpyDtoHAsync)                                                         \
  X(cuMemcpyDtoDAsync)                                                         \
  X(cuMemcpy2D)                                                                \
  X(cuMemcpy2DAsync)                                                           \
  X(cuMemsetD8)                                                                \
  X(cuMemsetD16)                                                               \
  X(cuMemsetD32)                                                               \
  X(cuMemsetD2D8)                                                              \
  X(cuMemsetD2D16)                                                             \
  X(cuMemsetD2D32)                                                             \
  X(cuMemsetD8Async)                                                           \
  X(cuMemsetD16Async)                                                          \
  X(cuMemsetD32Async)                                                          \
  X(cuMemsetD2D8Async)                                                         \
  X(cuMemsetD2D16Async)                                                        \
  X(cuMemsetD2D32Async)                                                        \
  X(cuMemHostAlloc)                                                            \
  X(cuMemFreeHost)                                                             \
  X(cuModuleLoadData)                                                          \
  X(cuModuleUnload)                                                            \
  X(cuModuleGetFunction)                                                       \
  X(cuModuleGetFunctionCount)                                                  \
  X(cuModuleEnumerateFunctions)                                                \
  X(cuFuncGetName)                                                             \
  X(cuModuleGetGlobal)                                                         \
  X(cuFuncGetParamInfo)                                                        \
  X(cuFuncGetAttribute)                                                        \
  X(cuFuncSetAttribute)                                                        \
  X(cuFuncSetCacheConfig)                                                      \
  X(cuLaunchKernelEx)                                                          \
  X(cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags)                      \
  X(cuStreamCreateWithPriority)                                                \
  X(cuStreamDestroy)                                                           \
  X(cuStreamSynchronize)                                                       \
  X(cuStreamQuery)                                                             \
  X(cuStreamWaitEvent)                                                         \
  X(cuEventCreate)                                                             \
  X(cuEventDestroy)                                                            \
  X(cuEventRecordWithFlags)                                                    \
  X(cuEventSynchronize)                                                        \
  X(cuEventQuery)                                                              \
  X(cuEventElapsedTime)                                                        \
  X(cuStreamBeginCapture)                                                      \
  X(cuStreamEndCapture)                                                        \
  X(cuStreamIsCapturing)                                                       \
  X(cuStreamGetCaptureInfo)                                                    \
  X(cuThreadExchangeStreamCaptureMode)                                         \
  X(cuGraphInstantiateWithFlags)                                               \
  X(cuGraphLaunch)                                                             \
  X(cuGraphUpload)                                                             \
  X(cuGraphExecDestroy)                                                        \
  X(cuGraphDestroy)                                                            \
  X(cuGraphExecUpdate)                                                         \
  X(cuGraphCreate)                                                             \
  X(cuGraphAddKernelNode)                                                      \
  X(cuGraphAddMemsetNode)                                                      \
  X(cuGraphMemsetNodeSetParams)                                                \
  X(cuGraphExecMemsetNodeSetParams)                                            \
  X(cuGraphAddMemcpyNode)                                                      \
  X(cuGraphMemcpyNodeSetParams)                                                \
  X(cuGraphExecMemcpyNodeSetParams)                                            \
  X(cuGraphAddChildGraphNode)                                                  \
  X(cuGraphChildGraphNodeGetGraph)                                             \
  X(cuGraphExecChildGraphNodeSetParams)                                        \
  X(cuGraphGetNodes)                                                           \
  X(cuGraphNodeGetType)                                                        \
  X(cuGraphNodeGetDependencies)                                                \
  X(cuMemcpy3DAsync)                                                           \
  X(cuGraphAddEmptyNode)                                                       \
  X(cuGraphAddDependencies)                                                    \
  X(cuGraphKernelNodeSetParams)                                                \
  X(cuGraphExecKernelNodeSetParams)                                            \
  X(cuGraphAddHostNode)                                                        \
  X(cuGraphHostNodeSetParams)                                                  \
  X(cuGraphExecHostNodeSetParams)                                              \
  X(cuLaunchHostFunc)                                                          \
  X(cuMemAllocAsync)                                                           \
  X(cuMemFreeAsync)                                                            \
  X(cuGraphAddMemAllocNode)                                                    \
  X(cuGraphAddMemFreeNode)                                                     \
  X(cuDeviceGraphMemTrim)                                                      \
  X(cuMemPoolCreate)                                                           \
  X(cuMemPoolDestroy)                                                          \
  X(cuMemPoolSetAttribute)                                                     \
  X(cuMemPoolGetAttribute)                                                     \
  X(cuMemPoolTrimTo)                                                           \
  X(cuMemPoolSetAccess)                                                        \
  X(cuMemPoolGetAccess)                                                        \
  X(cuMemAllocFromPoolAsync)                                                   \
  X(cuGraphClone)                                                              \
  X(cuGraphNodeFindInClone)                                                    \
  X(cuMemGetAllocationGranularity)                                             \
  X(cuMemAddressReserve)                                                       \
  X(cuMemAddressFree)                                                          \
  X(cuMemCreate)                                                               \
  X(cuMemRelease)                                                              \
  X(cuMemMap)                                                                  \
  X(cuMemUnmap)                                                                \
  X(cuMemSetAccess)                                                            \
  X(cuCtxGetCurrent)

/// The CUDA driver, loaded at run time: libcuda.so.1 is opened with dlopen
/// and every entry point is resolved with dlsym under the symbol its <cuda.h>
/// declaration names (legacy default stream semantics). No binary links
/// the driver, so every gleam binary also starts on hosts without a GPU.
///
/// Members are plain function pointers named after the driver functions,
/// called as `api.cuMemAlloc(&p, n)`. A default-constructed driver_api has
/// every pointer null; tests may fill in their own functions.
/// Thread safety: the pointers never change after load(); calling them is as
/// thread-safe as the driver is.
class driver_api {
public:
#define GLEAM_EXECUTOR_DRIVER_MEMBER(name) decltype(&::name) name = nullptr;
  GLEAM_EXECUTOR_DRIVER_FUNCTIONS(GLEAM_EXECUTOR_DRIVER_MEMBER)
#undef GLEAM_EXECUTOR_DRIVER_MEMBER

  /// Every entry point null, no library held.
  driver_api() = default;

  driver_api(const driver_api&) = delete;
  driver_api& operator=(const driver_api&) = delete;

  /// Closes the library handle (if load() opened one).
  ~driver_api();

  /// Opens `library` (default "libcuda.so.1"), resolves every entry point
  /// and calls cuInit(0). Errors: no_driver when the library cannot be
  /// opened, missing_symbol when an entry point is absent (driver older than
  /// CUDA 13), driver_call_failed when cuInit fails (its CUresult in the
  /// message).
  [[nodiscard]] static caf::expected<std::unique_ptr<driver_api>>
  load(const std::string& library = "libcuda.so.1");

  /// "CUDA_ERROR_X (explanation)" for `rc`, from the driver when it can say,
  /// else "CUresult <rc>".
  [[nodiscard]] std::string describe(CUresult rc) const;

private:
  void* handle_ = nullptr;
};

} // namespace gleam::executor
