#pragma once

// What the files of the driver surface share: the client's table, the
// CUresult of a runtime error, and the contexts (contexts.cpp).

#include "interpose/cuda_export.hpp"

#include <cuda_runtime_api.h>

#include "interpose/driver/client.hpp"
#include "interpose/private_interface.h"

namespace gleam::interpose::driver {

inline const gleam_private_interface& api() {
  return client();
}

inline CUresult cu(cudaError_t x) {
  return static_cast<CUresult>(api().to_cu_result(x));
}

inline CUresult cu(int x) {
  return static_cast<CUresult>(api().to_cu_result(x));
}

/// The calling thread's current context: the top of its stack, else the
/// primary context of the runtime's device once the session is open; null
/// when none.
CUcontext current();

/// The primary context of device `dev` (0 <= dev < 64).
CUcontext primary(int dev);

/// The device of a live context, -1 for anything else.
int device_of(CUcontext c);

/// CUDA_ERROR_INVALID_DEVICE unless `dev` is a device of the session.
CUresult check_device(CUdevice dev);

/// Opens the session if needed; its error as a CUresult.
CUresult initialized();

/// The device of `ctx`, or of the current context when `ctx` is null.
CUresult context_device(CUcontext ctx, int* dev);

/// Ends the context-local storage the static runtime keeps for `ctx`
/// (export_tables.cpp): each entry's destructor callback runs, as a local
/// driver runs them when the context is destroyed or reset.
void release_context_storage(CUcontext ctx);

/// Runs `op` with `dev` as the runtime's device, then restores the device.
template <class Op>
CUresult on_device(int dev, Op op) {
  int was = 0;
  if (auto err = cudaGetDevice(&was); err != cudaSuccess)
    return cu(err);
  if (was != dev)
    if (auto err = cudaSetDevice(dev); err != cudaSuccess)
      return cu(err);
  auto result = op();
  if (was != dev)
    cudaSetDevice(was);
  return result;
}

} // namespace gleam::interpose::driver
