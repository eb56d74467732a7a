#pragma once

#include <cuda.h>

#include "actors/proto/ops.pb.h"
#include "executor/driver_api.hpp"
#include "executor/session.hpp"

namespace gleam::executor {

class weight_cache;

/// Runs one op of the virtual memory management family (MemGetGranularity,
/// MemAddressReserve, MemAddressFree, MemCreate, MemRelease, MemRetain,
/// MemMap, MemUnmap, MemSetAccess) of session `s` on `device` into `r`:
/// status and detail on failure, OpResult.dptr / value for the answers.
///
/// The session's reservations, allocations and mappings are `s.vmm`
/// (wire::vmm_space): every op is checked against it with CUDA's rules
/// before the driver sees it, so a client names only what its session
/// made (an allocation handle is the client's; the driver's handle never
/// leaves the server). A mapping the session made readable and writable
/// is session memory (`s.memory`, kind vmm_mapping) that copies, memsets,
/// launches' access windows and library calls may name; unmapping ends
/// it, after the session's work is done (cuMemUnmap waits for the device
/// too) and the weight cache's chunks in it are verified. Locations name
/// the client's device ordinals: 0 is `device`, another ordinal is
/// CUDA_ERROR_INVALID_DEVICE, host locations CUDA_ERROR_NOT_SUPPORTED
/// (their memory would be the server host's). `cache` (may be null) gives
/// way to a cuMemCreate that finds the device full. Not thread-safe.
void run_vmm(driver_api& api, session& s, CUdevice device, weight_cache* cache,
             const proto::Op& op, proto::OpResult& r);

/// Unmaps every mapping of `s`, releases every allocation and frees every
/// reservation (session end, device reset; call after the session's work
/// is done). Returns the first failure, CUDA_SUCCESS when none; `s.vmm`
/// is empty afterwards and its mappings are gone from `s.memory`.
CUresult release_vmm(driver_api& api, session& s);

} // namespace gleam::executor
