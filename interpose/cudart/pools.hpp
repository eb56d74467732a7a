#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

namespace gleam::interpose {

/// The pool cudaMallocAsync allocates from on the current device: its
/// current pool once the app holds a pool handle (cudaDeviceGetDefaultMemPool,
/// cudaDeviceGetMemPool, cudaMemPoolCreate), else 0, and cudaMallocAsync
/// outside a capture is then cudaMalloc (memory usable at once is usable
/// in stream order). Thread-safe.
uint64_t malloc_async_pool();

/// A stream-ordered allocation of `size` (> 0) bytes on `stream` (a known
/// stream) from client pool `pool` (0: the device's current pool, as
/// cuMemAllocAsync). Into a capturing stream it is an allocation node of
/// the server's capture. One round trip: the address comes back. The
/// allocation is recorded (allocations, and its pool when outside a
/// capture) so that cudaFreeAsync frees it in stream order. Thread-safe.
cudaError_t stream_ordered_alloc(void** ptr, size_t size, uint64_t pool, cudaStream_t stream);

} // namespace gleam::interpose
