#pragma once

#include <cstdint>

#include <cuda.h>

#include "actors/proto/ops.pb.h"
#include "executor/driver_api.hpp"
#include "executor/session.hpp"

namespace gleam::executor {

/// Runs one memory-pool op (MemPoolCreate, MemPoolDestroy,
/// MemPoolSetAttribute, MemPoolGetAttribute, MemPoolTrimTo,
/// MemPoolSetAccess, MemPoolGetAccess) of session `s` on `device` into `r`:
/// status and detail on failure, OpResult.value for the queries.
///
/// Pools are the session's own: every client handle maps to a driver pool
/// created by cuMemPoolCreate for this session, the device's default pool
/// included (a stand-in made for the session, MemPoolCreate.session_default),
/// so one session's attributes, trims and statistics never reach another
/// session sharing the context. Locations of kind device name the client's
/// ordinals: 0 is `device`, any other is refused with
/// CUDA_ERROR_INVALID_DEVICE; host locations are refused with
/// CUDA_ERROR_NOT_SUPPORTED (their memory would live on the server's host,
/// out of the client's reach). Unknown pool handles:
/// CUDA_ERROR_INVALID_VALUE. Not thread-safe.
void run_mem_pool(driver_api& api, session& s, CUdevice device, const proto::Op& op,
                  proto::OpResult& r);

/// The driver pool of client handle `pool` in `s`, or null.
[[nodiscard]] CUmemoryPool find_pool(const session& s, uint64_t pool);

/// Destroys every pool of `s` (call after the session's memory is freed:
/// a pool with allocations outstanding is released by the driver only once
/// they are freed). Returns the first failure, CUDA_SUCCESS when none.
CUresult release_mem_pools(driver_api& api, session& s);

} // namespace gleam::executor
