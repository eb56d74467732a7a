#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

namespace gleam::interpose {

/// Managed memory (cudaMallocManaged) and mapped host memory
/// (cudaHostAllocMapped, cudaHostRegisterMapped) on host mirrors
/// (interpose/mirror.hpp). Thread-safe.

/// A plain server allocation of `size` bytes (a slab when `slab`): one
/// round trip; its address in `*dptr` (interpose/cudart/memory.cpp).
cudaError_t server_alloc(uint64_t size, bool slab, uint64_t* dptr);

/// A device allocation of at least `size` (> 0) bytes with a lazy host
/// mirror at the same address: managed memory when `managed`, else mapped
/// host memory of cudaHostAlloc. Zeroed on both sides, recorded among the
/// allocations (and, when not managed, the host ranges with `flags`).
/// cudaErrorMemoryAllocation when the server has no memory or none of its
/// addresses is free in this process.
cudaError_t mirrored_alloc(void** ptr, size_t size, bool managed, unsigned flags);

/// Frees what mirrored_alloc made at `ptr` (its base): the mirror, the
/// records and, after every earlier op, the server's allocation.
cudaError_t mirrored_free(void* ptr);

/// cudaHostRegister with cudaHostRegisterMapped: app memory [ptr, ptr +
/// size) gets a device allocation and an eager mirror.
cudaError_t register_mapped(void* ptr, size_t size, unsigned flags);

/// cudaHostUnregister of such memory: the host bytes are made current (one
/// round trip) and the device allocation freed. cudaErrorHostMemoryNotRegistered
/// when `ptr` starts no mapped registration.
cudaError_t unregister_mapped(void* ptr);

} // namespace gleam::interpose
