#pragma once

#include <cuda.h>

#include "executor/driver_api.hpp"
#include "executor/session.hpp"

namespace gleam::executor {

class weight_cache;

/// Frees every driver object of `s` (on `device`) and empties its tables:
/// at session close, executor teardown and DeviceReset. Ends the session's
/// host-call waits and captures first, waits for its work, applies the
/// weight rule to every chunk still placed in its memory (`cache` may be
/// null), then releases library handles, graphs, streams, events, modules,
/// VMM, memory and pools. Returns the first failure, CUDA_SUCCESS when
/// everything went. Not thread-safe (like the executor).
CUresult release_session_resources(driver_api& api, session& s, weight_cache* cache,
                                   CUdevice device);

} // namespace gleam::executor
