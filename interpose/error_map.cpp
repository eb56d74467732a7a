#include "interpose/error_map.hpp"

#include <cstddef>
#include <map>

namespace gleam::interpose {

namespace {

struct error_entry {
  int code;
  const char* name;
  const char* text;
};

// Derived from the enumerator comments of enum cudaError in the CUDA 13
// driver_types.h (first sentence of each).
constexpr error_entry error_table[] = {
    {0, "cudaSuccess", "The API call returned with no errors"},
    {1, "cudaErrorInvalidValue", "This indicates that one or more of the parameters passed to the API call is not within an acceptable range of values"},
    {2, "cudaErrorMemoryAllocation", "The API call failed because it was unable to allocate enough memory or other resources to perform the requested operation"},
    {3, "cudaErrorInitializationError", "The API call failed because the CUDA driver and runtime could not be initialized"},
    {4, "cudaErrorCudartUnloading", "This indicates that a CUDA Runtime API call cannot be executed because it is being called during process shut down, at a point in time after CUDA driver has been unloaded"},
    {5, "cudaErrorProfilerDisabled", "This indicates profiler is not initialized for this run"},
    {6, "cudaErrorProfilerNotInitialized", "This error return is deprecated as of CUDA 5.0"},
    {7, "cudaErrorProfilerAlreadyStarted", "This error return is deprecated as of CUDA 5.0"},
    {8, "cudaErrorProfilerAlreadyStopped", "This error return is deprecated as of CUDA 5.0"},
    {9, "cudaErrorInvalidConfiguration", "This indicates that a kernel launch is requesting resources that can never be satisfied by the current device"},
    {12, "cudaErrorInvalidPitchValue", "This indicates that one or more of the pitch-related parameters passed to the API call is not within the acceptable range for pitch"},
    {13, "cudaErrorInvalidSymbol", "This indicates that the symbol name/identifier passed to the API call is not a valid name or identifier"},
    {16, "cudaErrorInvalidHostPointer", "This indicates that at least one host pointer passed to the API call is not a valid host pointer"},
    {17, "cudaErrorInvalidDevicePointer", "This indicates that at least one device pointer passed to the API call is not a valid device pointer"},
    {18, "cudaErrorInvalidTexture", "This indicates that the texture passed to the API call is not a valid texture"},
    {19, "cudaErrorInvalidTextureBinding", "This indicates that the texture binding is not valid"},
    {20, "cudaErrorInvalidChannelDescriptor", "This indicates that the channel descriptor passed to the API call is not valid"},
    {21, "cudaErrorInvalidMemcpyDirection", "This indicates that the direction of the memcpy passed to the API call is not one of the types specified by cudaMemcpyKind"},
    {22, "cudaErrorAddressOfConstant", "This indicated that the user has taken the address of a constant variable, which was forbidden up until the CUDA 3.1 release"},
    {23, "cudaErrorTextureFetchFailed", "This indicated that a texture fetch was not able to be performed"},
    {24, "cudaErrorTextureNotBound", "This indicated that a texture was not bound for access"},
    {25, "cudaErrorSynchronizationError", "This indicated that a synchronization operation had failed"},
    {26, "cudaErrorInvalidFilterSetting", "This indicates that a non-float texture was being accessed with linear filtering"},
    {27, "cudaErrorInvalidNormSetting", "This indicates that an attempt was made to read an unsupported data type as a normalized float"},
    {28, "cudaErrorMixedDeviceExecution", "Mixing of device and device emulation code was not allowed"},
    {31, "cudaErrorNotYetImplemented", "This indicates that the API call is not yet implemented"},
    {32, "cudaErrorMemoryValueTooLarge", "This indicated that an emulated device pointer exceeded the 32-bit address range"},
    {34, "cudaErrorStubLibrary", "This indicates that the CUDA driver that the application has loaded is a stub library"},
    {35, "cudaErrorInsufficientDriver", "This indicates that the installed NVIDIA CUDA driver is older than the CUDA runtime library"},
    {36, "cudaErrorCallRequiresNewerDriver", "This indicates that the API call requires a newer CUDA driver than the one currently installed"},
    {37, "cudaErrorInvalidSurface", "This indicates that the surface passed to the API call is not a valid surface"},
    {43, "cudaErrorDuplicateVariableName", "This indicates that multiple global or constant variables (across separate CUDA source files in the application) share the same string name"},
    {44, "cudaErrorDuplicateTextureName", "This indicates that multiple textures (across separate CUDA source files in the application) share the same string name"},
    {45, "cudaErrorDuplicateSurfaceName", "This indicates that multiple surfaces (across separate CUDA source files in the application) share the same string name"},
    {46, "cudaErrorDevicesUnavailable", "This indicates that all CUDA devices are busy or unavailable at the current time"},
    {49, "cudaErrorIncompatibleDriverContext", "This indicates that the current context is not compatible with this the CUDA Runtime"},
    {52, "cudaErrorMissingConfiguration", "The device function being invoked (usually via cudaLaunchKernel()) was not previously configured via the cudaConfigureCall() function"},
    {53, "cudaErrorPriorLaunchFailure", "This indicated that a previous kernel launch failed"},
    {65, "cudaErrorLaunchMaxDepthExceeded", "This error indicates that a device runtime grid launch did not occur because the depth of the child grid would exceed the maximum supported number of nested grid launches"},
    {66, "cudaErrorLaunchFileScopedTex", "This error indicates that a grid launch did not occur because the kernel uses file-scoped textures which are unsupported by the device runtime"},
    {67, "cudaErrorLaunchFileScopedSurf", "This error indicates that a grid launch did not occur because the kernel uses file-scoped surfaces which are unsupported by the device runtime"},
    {68, "cudaErrorSyncDepthExceeded", "This error indicates that a call to cudaDeviceSynchronize made from the device runtime failed because the call was made at grid depth greater than than either the default (2 levels of grids) or use..."},
    {69, "cudaErrorLaunchPendingCountExceeded", "This error indicates that a device runtime grid launch failed because the launch would exceed the limit cudaLimitDevRuntimePendingLaunchCount"},
    {98, "cudaErrorInvalidDeviceFunction", "The requested device function does not exist or is not compiled for the proper device architecture"},
    {100, "cudaErrorNoDevice", "This indicates that no CUDA-capable devices were detected by the installed CUDA driver"},
    {101, "cudaErrorInvalidDevice", "This indicates that the device ordinal supplied by the user does not correspond to a valid CUDA device or that the action requested is invalid for the specified device"},
    {102, "cudaErrorDeviceNotLicensed", "This indicates that the device doesn't have a valid Grid License"},
    {103, "cudaErrorSoftwareValidityNotEstablished", "By default, the CUDA runtime may perform a minimal set of self-tests, as well as CUDA driver tests, to establish the validity of both"},
    {127, "cudaErrorStartupFailure", "This indicates an internal startup failure in the CUDA runtime"},
    {200, "cudaErrorInvalidKernelImage", "This indicates that the device kernel image is invalid"},
    {201, "cudaErrorDeviceUninitialized", "This most frequently indicates that there is no context bound to the current thread"},
    {205, "cudaErrorMapBufferObjectFailed", "This indicates that the buffer object could not be mapped"},
    {206, "cudaErrorUnmapBufferObjectFailed", "This indicates that the buffer object could not be unmapped"},
    {207, "cudaErrorArrayIsMapped", "This indicates that the specified array is currently mapped and thus cannot be destroyed"},
    {208, "cudaErrorAlreadyMapped", "This indicates that the resource is already mapped"},
    {209, "cudaErrorNoKernelImageForDevice", "This indicates that there is no kernel image available that is suitable for the device"},
    {210, "cudaErrorAlreadyAcquired", "This indicates that a resource has already been acquired"},
    {211, "cudaErrorNotMapped", "This indicates that a resource is not mapped"},
    {212, "cudaErrorNotMappedAsArray", "This indicates that a mapped resource is not available for access as an array"},
    {213, "cudaErrorNotMappedAsPointer", "This indicates that a mapped resource is not available for access as a pointer"},
    {214, "cudaErrorECCUncorrectable", "This indicates that an uncorrectable ECC error was detected during execution"},
    {215, "cudaErrorUnsupportedLimit", "This indicates that the cudaLimit passed to the API call is not supported by the active device"},
    {216, "cudaErrorDeviceAlreadyInUse", "This indicates that a call tried to access an exclusive-thread device that is already in use by a different thread"},
    {217, "cudaErrorPeerAccessUnsupported", "This error indicates that P2P access is not supported across the given devices"},
    {218, "cudaErrorInvalidPtx", "A PTX compilation failed"},
    {219, "cudaErrorInvalidGraphicsContext", "This indicates an error with the OpenGL or DirectX context"},
    {220, "cudaErrorNvlinkUncorrectable", "This indicates that an uncorrectable NVLink error was detected during the execution"},
    {221, "cudaErrorJitCompilerNotFound", "This indicates that the PTX JIT compiler library was not found"},
    {222, "cudaErrorUnsupportedPtxVersion", "This indicates that the provided PTX was compiled with an unsupported toolchain"},
    {223, "cudaErrorJitCompilationDisabled", "This indicates that the JIT compilation was disabled"},
    {224, "cudaErrorUnsupportedExecAffinity", "This indicates that the provided execution affinity is not supported by the device"},
    {225, "cudaErrorUnsupportedDevSideSync", "This indicates that the code to be compiled by the PTX JIT contains unsupported call to cudaDeviceSynchronize"},
    {226, "cudaErrorContained", "This indicates that an exception occurred on the device that is now contained by the GPU's error containment capability"},
    {300, "cudaErrorInvalidSource", "This indicates that the device kernel source is invalid"},
    {301, "cudaErrorFileNotFound", "This indicates that the file specified was not found"},
    {302, "cudaErrorSharedObjectSymbolNotFound", "This indicates that a link to a shared object failed to resolve"},
    {303, "cudaErrorSharedObjectInitFailed", "This indicates that initialization of a shared object failed"},
    {304, "cudaErrorOperatingSystem", "This error indicates that an OS call failed"},
    {400, "cudaErrorInvalidResourceHandle", "This indicates that a resource handle passed to the API call was not valid"},
    {401, "cudaErrorIllegalState", "This indicates that a resource required by the API call is not in a valid state to perform the requested operation"},
    {402, "cudaErrorLossyQuery", "This indicates an attempt was made to introspect an object in a way that would discard semantically important information"},
    {500, "cudaErrorSymbolNotFound", "This indicates that a named symbol was not found"},
    {600, "cudaErrorNotReady", "This indicates that asynchronous operations issued previously have not completed yet"},
    {700, "cudaErrorIllegalAddress", "The device encountered a load or store instruction on an invalid memory address"},
    {701, "cudaErrorLaunchOutOfResources", "This indicates that a launch did not occur because it did not have appropriate resources"},
    {702, "cudaErrorLaunchTimeout", "This indicates that the device kernel took too long to execute"},
    {703, "cudaErrorLaunchIncompatibleTexturing", "This error indicates a kernel launch that uses an incompatible texturing mode"},
    {704, "cudaErrorPeerAccessAlreadyEnabled", "This error indicates that a call to cudaDeviceEnablePeerAccess() is trying to re-enable peer addressing on from a context which has already had peer addressing enabled"},
    {705, "cudaErrorPeerAccessNotEnabled", "This error indicates that cudaDeviceDisablePeerAccess() is trying to disable peer addressing which has not been enabled yet via cudaDeviceEnablePeerAccess()"},
    {708, "cudaErrorSetOnActiveProcess", "This indicates that the user has called cudaSetValidDevices(), cudaSetDeviceFlags(), cudaD3D9SetDirect3DDevice(), cudaD3D10SetDirect3DDevice, cudaD3D11SetDirect3DDevice(), or cudaVDPAUSetVDPAUDevic..."},
    {709, "cudaErrorContextIsDestroyed", "This error indicates that the context current to the calling thread has been destroyed using cuCtxDestroy, or is a primary context which has not yet been initialized"},
    {710, "cudaErrorAssert", "An assert triggered in device code during kernel execution"},
    {711, "cudaErrorTooManyPeers", "This error indicates that the hardware resources required to enable peer access have been exhausted for one or more of the devices passed to cudaEnablePeerAccess()"},
    {712, "cudaErrorHostMemoryAlreadyRegistered", "This error indicates that the memory range passed to cudaHostRegister() has already been registered"},
    {713, "cudaErrorHostMemoryNotRegistered", "This error indicates that the pointer passed to cudaHostUnregister() does not correspond to any currently registered memory region"},
    {714, "cudaErrorHardwareStackError", "Device encountered an error in the call stack during kernel execution, possibly due to stack corruption or exceeding the stack size limit"},
    {715, "cudaErrorIllegalInstruction", "The device encountered an illegal instruction during kernel execution This leaves the process in an inconsistent state and any further CUDA work will return the same error"},
    {716, "cudaErrorMisalignedAddress", "The device encountered a load or store instruction on a memory address which is not aligned"},
    {717, "cudaErrorInvalidAddressSpace", "While executing a kernel, the device encountered an instruction which can only operate on memory locations in certain address spaces (global, shared, or local), but was supplied a memory address no..."},
    {718, "cudaErrorInvalidPc", "The device encountered an invalid program counter"},
    {719, "cudaErrorLaunchFailure", "An exception occurred on the device while executing a kernel"},
    {720, "cudaErrorCooperativeLaunchTooLarge", "This error indicates that the number of blocks launched per grid for a kernel that was launched via either cudaLaunchCooperativeKernel exceeds the maximum number of blocks as allowed by cudaOccupan..."},
    {721, "cudaErrorTensorMemoryLeak", "An exception occurred on the device while exiting a kernel using tensor memory: the tensor memory was not completely deallocated"},
    {800, "cudaErrorNotPermitted", "This error indicates the attempted operation is not permitted"},
    {801, "cudaErrorNotSupported", "This error indicates the attempted operation is not supported on the current system or device"},
    {802, "cudaErrorSystemNotReady", "This error indicates that the system is not yet ready to start any CUDA work"},
    {803, "cudaErrorSystemDriverMismatch", "This error indicates that there is a mismatch between the versions of the display driver and the CUDA driver"},
    {804, "cudaErrorCompatNotSupportedOnDevice", "This error indicates that the system was upgraded to run with forward compatibility but the visible hardware detected by CUDA does not support this configuration"},
    {805, "cudaErrorMpsConnectionFailed", "This error indicates that the MPS client failed to connect to the MPS control daemon or the MPS server"},
    {806, "cudaErrorMpsRpcFailure", "This error indicates that the remote procedural call between the MPS server and the MPS client failed"},
    {807, "cudaErrorMpsServerNotReady", "This error indicates that the MPS server is not ready to accept new MPS client requests"},
    {808, "cudaErrorMpsMaxClientsReached", "This error indicates that the hardware resources required to create MPS client have been exhausted"},
    {809, "cudaErrorMpsMaxConnectionsReached", "This error indicates the the hardware resources required to device connections have been exhausted"},
    {810, "cudaErrorMpsClientTerminated", "This error indicates that the MPS client has been terminated by the server"},
    {811, "cudaErrorCdpNotSupported", "This error indicates, that the program is using CUDA Dynamic Parallelism, but the current configuration, like MPS, does not support it"},
    {812, "cudaErrorCdpVersionMismatch", "This error indicates, that the program contains an unsupported interaction between different versions of CUDA Dynamic Parallelism"},
    {900, "cudaErrorStreamCaptureUnsupported", "The operation is not permitted when the stream is capturing"},
    {901, "cudaErrorStreamCaptureInvalidated", "The current capture sequence on the stream has been invalidated due to a previous error"},
    {902, "cudaErrorStreamCaptureMerge", "The operation would have resulted in a merge of two independent capture sequences"},
    {903, "cudaErrorStreamCaptureUnmatched", "The capture was not initiated in this stream"},
    {904, "cudaErrorStreamCaptureUnjoined", "The capture sequence contains a fork that was not joined to the primary stream"},
    {905, "cudaErrorStreamCaptureIsolation", "A dependency would have been created which crosses the capture sequence boundary"},
    {906, "cudaErrorStreamCaptureImplicit", "The operation would have resulted in a disallowed implicit dependency on a current capture sequence from cudaStreamLegacy"},
    {907, "cudaErrorCapturedEvent", "The operation is not permitted on an event which was last recorded in a capturing stream"},
    {908, "cudaErrorStreamCaptureWrongThread", "A stream capture sequence not initiated with the cudaStreamCaptureModeRelaxed argument to cudaStreamBeginCapture was passed to cudaStreamEndCapture in a different thread"},
    {909, "cudaErrorTimeout", "This indicates that the wait operation has timed out"},
    {910, "cudaErrorGraphExecUpdateFailure", "This error indicates that the graph update was not performed because it included changes which violated constraints specific to instantiated graph update"},
    {911, "cudaErrorExternalDevice", "This indicates that an async error has occurred in a device outside of CUDA. If CUDA was waiting for an external device's signal before consuming shared data, the external device signaled an error ..."},
    {912, "cudaErrorInvalidClusterSize", "This indicates that a kernel launch error has occurred due to cluster misconfiguration"},
    {913, "cudaErrorFunctionNotLoaded", "Indiciates a function handle is not loaded when calling an API that requires a loaded function"},
    {914, "cudaErrorInvalidResourceType", "This error indicates one or more resources passed in are not valid resource types for the operation"},
    {915, "cudaErrorInvalidResourceConfiguration", "This error indicates one or more resources are insufficient or non-applicable for the operation"},
    {999, "cudaErrorUnknown", "This indicates that an unknown internal error has occurred"},
};

// The short messages apps print (and tests compare), as CUDA's runtime
// reports them for the common codes; they take precedence over the enum
// comments above.
constexpr error_entry short_texts[] = {
  {cudaSuccess, nullptr, "no error"},
  {cudaErrorInvalidValue, nullptr, "invalid argument"},
  {cudaErrorMemoryAllocation, nullptr, "out of memory"},
  {cudaErrorInitializationError, nullptr, "initialization error"},
  {cudaErrorCudartUnloading, nullptr, "driver shutting down"},
  {cudaErrorInvalidConfiguration, nullptr, "invalid configuration argument"},
  {cudaErrorInvalidPitchValue, nullptr, "invalid pitch argument"},
  {cudaErrorInvalidSymbol, nullptr, "invalid device symbol"},
  {cudaErrorInvalidDevicePointer, nullptr, "invalid device pointer"},
  {cudaErrorInvalidMemcpyDirection, nullptr, "invalid copy direction for memcpy"},
  {cudaErrorDevicesUnavailable, nullptr, "CUDA-capable device(s) is/are busy or unavailable"},
  {cudaErrorMissingConfiguration, nullptr, "__global__ function call is not configured"},
  {cudaErrorInvalidDeviceFunction, nullptr, "invalid device function"},
  {cudaErrorNoDevice, nullptr, "no CUDA-capable device is detected"},
  {cudaErrorInvalidDevice, nullptr, "invalid device ordinal"},
  {cudaErrorInvalidKernelImage, nullptr, "device kernel image is invalid"},
  {cudaErrorDeviceUninitialized, nullptr, "invalid device context"},
  {cudaErrorNoKernelImageForDevice, nullptr, "no kernel image is available for execution on the device"},
  {cudaErrorInvalidResourceHandle, nullptr, "invalid resource handle"},
  {cudaErrorSymbolNotFound, nullptr, "named symbol not found"},
  {cudaErrorNotReady, nullptr, "device not ready"},
  {cudaErrorIllegalAddress, nullptr, "an illegal memory access was encountered"},
  {cudaErrorLaunchOutOfResources, nullptr, "too many resources requested for launch"},
  {cudaErrorLaunchTimeout, nullptr, "the launch timed out and was terminated"},
  {cudaErrorHostMemoryAlreadyRegistered, nullptr, "part or all of the requested memory range is already mapped"},
  {cudaErrorHostMemoryNotRegistered, nullptr, "pointer does not correspond to a registered memory region"},
  {cudaErrorAssert, nullptr, "device-side assert triggered"},
  {cudaErrorIllegalInstruction, nullptr, "an illegal instruction was encountered"},
  {cudaErrorMisalignedAddress, nullptr, "misaligned address"},
  {cudaErrorLaunchFailure, nullptr, "unspecified launch failure"},
  {cudaErrorNotSupported, nullptr, "operation not supported"},
  {cudaErrorUnknown, nullptr, "unknown error"},
};

const error_entry* find_entry(int code) noexcept {
  for (const auto& e : error_table)
    if (e.code == code)
      return &e;
  return nullptr;
}

struct status_pair {
  int cu;
  cudaError_t rt;
};

// Driver codes whose runtime counterpart has a different value. Every other
// driver code equals its runtime counterpart (both enums share the numbers
// from 100 upward and the first few below).
constexpr status_pair renamed[] = {
  {CUDA_ERROR_INVALID_CONTEXT, cudaErrorDeviceUninitialized},
  {CUDA_ERROR_CONTEXT_ALREADY_CURRENT, cudaErrorUnknown},
  {CUDA_ERROR_NOT_FOUND, cudaErrorSymbolNotFound},
  {CUDA_ERROR_INVALID_HANDLE, cudaErrorInvalidResourceHandle},
  {CUDA_ERROR_OUT_OF_MEMORY, cudaErrorMemoryAllocation},
  {CUDA_ERROR_NOT_INITIALIZED, cudaErrorInitializationError},
  {CUDA_ERROR_DEINITIALIZED, cudaErrorCudartUnloading},
  {CUDA_ERROR_INVALID_IMAGE, cudaErrorInvalidKernelImage},
  {CUDA_ERROR_NO_BINARY_FOR_GPU, cudaErrorNoKernelImageForDevice},
};

} // namespace

cudaError_t to_cuda_error(int cu_status) noexcept {
  if (cu_status == CUDA_SUCCESS)
    return cudaSuccess;
  for (const auto& p : renamed)
    if (p.cu == cu_status)
      return p.rt;
  if (find_entry(cu_status) != nullptr)
    return static_cast<cudaError_t>(cu_status);
  return cudaErrorUnknown;
}

int to_cu_result(cudaError_t x) noexcept {
  if (x == cudaSuccess)
    return CUDA_SUCCESS;
  // Runtime error -> CUresult, built once; never destroyed.
  static const auto* table = [] {
    auto* t = new std::map<int, int>;
    for (int cu = 999; cu >= 0; --cu) // lowest CUresult wins
      (*t)[to_cuda_error(cu)] = cu;
    (*t)[cudaSuccess] = CUDA_SUCCESS;
    (*t)[cudaErrorUnknown] = CUDA_ERROR_UNKNOWN;
    (*t)[cudaErrorNotSupported] = CUDA_ERROR_NOT_SUPPORTED;
    (*t)[cudaErrorNoDevice] = CUDA_ERROR_NO_DEVICE;
    (*t)[cudaErrorInvalidValue] = CUDA_ERROR_INVALID_VALUE;
    return t;
  }();
  auto i = table->find(x);
  return i != table->end() ? i->second : CUDA_ERROR_UNKNOWN;
}

const char* error_name(cudaError_t x) noexcept {
  const auto* e = find_entry(static_cast<int>(x));
  return e != nullptr ? e->name : nullptr;
}

const char* error_text(cudaError_t x) noexcept {
  for (const auto& e : short_texts)
    if (e.code == static_cast<int>(x))
      return e.text;
  const auto* e = find_entry(static_cast<int>(x));
  return e != nullptr ? e->text : nullptr;
}

bool is_sticky(cudaError_t x) noexcept {
  switch (x) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorLaunchTimeout:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorAssert:
    case cudaErrorECCUncorrectable:
    case cudaErrorDevicesUnavailable:
      return true;
    default:
      return false;
  }
}

} // namespace gleam::interpose
