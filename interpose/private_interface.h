// The private interface between Gleam's libcudart.so.13 and its
// libcuda.so.1: the one way the driver-level surface reaches the process's
// single client (connection, session, registry). libcudart.so.13 exports one
// function, gleam_private_interface_v1 (version GLEAM_PRIVATE_1), returning
// this table. Plain C types only: libcuda.so.1 links no protobuf or CAF.
#pragma once

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Entry points of the shared client. Every function returns a cudaError_t
/// value (as int) unless said otherwise; all are thread-safe. Members are
/// only ever appended: `size` tells a caller which ones the table has.
struct gleam_private_interface {
  /// sizeof(struct gleam_private_interface) of the library that filled it.
  size_t size;
  /// Opens the session if needed (cudaSuccess, cudaErrorNoDevice, ...).
  int (*connect)(void);
  /// 1 once a session is open, 0 before (never connects).
  int (*connected)(void);
  /// The CUresult for a runtime error (the inverse of the op-status table).
  int (*to_cu_result)(int cuda_error);
  /// Loads a module image (fatbin, cubin or PTX text; size in bytes, 0 =
  /// derived from the image's headers) on the server; *module receives an
  /// opaque handle.
  int (*module_load)(const void* image, size_t size, void** module);
  /// The kernel `name` of `module`; *function is also a valid `func` for
  /// cudaLaunchKernel, cudaFuncGetAttributes and the occupancy calls.
  int (*module_get_function)(void* module, const char* name, void** function);
  /// Device address and size in bytes of __device__ variable `name`.
  int (*module_get_global)(void* module, const char* name, uint64_t* dptr,
                           size_t* bytes);
  /// Unloads `module` on the server and forgets its functions.
  int (*module_unload)(void* module);
  /// CUfunction_attribute `attribute` of `function`, as the server reported.
  int (*function_attribute)(void* function, int attribute, int* value);
  /// The allocation containing device address `ptr`: base and size (bytes).
  int (*allocation_range)(uint64_t ptr, uint64_t* base, uint64_t* bytes);
  /// Sets `count` 32-bit words at `dst` to `value` on `stream` (a
  /// cudaStream_t); async != 0 does not wait.
  int (*memset_d32)(uint64_t dst, uint32_t value, size_t count, void* stream,
                    int async);
  /* Virtual memory management (interpose/vmm.hpp): each returns a CUresult
     (not a cudaError_t) and has the arguments of the driver function it
     serves, handles and addresses as uint64_t; `prop` is a
     CUmemAllocationProp, `desc` an array of `count` CUmemAccessDesc,
     `location` a CUmemLocation. */
  /// cuMemGetAllocationGranularity.
  int (*mem_get_granularity)(size_t* granularity, const void* prop, int option);
  /// cuMemAddressReserve.
  int (*mem_address_reserve)(uint64_t* ptr, size_t size, size_t alignment, uint64_t addr,
                             unsigned long long flags);
  /// cuMemAddressFree.
  int (*mem_address_free)(uint64_t ptr, size_t size);
  /// cuMemCreate.
  int (*mem_create)(uint64_t* handle, size_t size, const void* prop,
                    unsigned long long flags);
  /// cuMemRelease.
  int (*mem_release)(uint64_t handle);
  /// cuMemRetainAllocationHandle.
  int (*mem_retain)(uint64_t* handle, uint64_t addr);
  /// cuMemMap.
  int (*mem_map)(uint64_t ptr, size_t size, size_t offset, uint64_t handle,
                 unsigned long long flags);
  /// cuMemUnmap.
  int (*mem_unmap)(uint64_t ptr, size_t size);
  /// cuMemSetAccess.
  int (*mem_set_access)(uint64_t ptr, size_t size, const void* desc, size_t count);
  /// cuMemGetAccess.
  int (*mem_get_access)(unsigned long long* flags, const void* location, uint64_t ptr);
  /// cuMemGetAllocationPropertiesFromHandle.
  int (*mem_get_properties)(void* prop, uint64_t handle);
  /// Offset and size in bytes of parameter `index` of `function`, from the
  /// layout the server read at load; cudaErrorInvalidValue past the last.
  int (*function_param)(void* function, size_t index, size_t* offset, size_t* size);
};

/// The table; static storage, never null.
const struct gleam_private_interface* gleam_private_interface_v1(void);

#ifdef __cplusplus
} // extern "C"
#endif
