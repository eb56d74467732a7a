#pragma once

#include <cstdint>

#include <cuda.h>

#include "executor/driver_api.hpp"
#include "executor/session.hpp"

namespace gleam::executor {

/// The streams of one session on a context that all sessions share. CUDA's
/// legacy default stream, its per-thread default stream and its implicit
/// synchronization of blocking streams with the legacy stream are
/// context-wide: one session's work there would wait for the others' work
/// and break their captures (a legacy-stream op invalidates every capture
/// of a blocking stream in the context). So every driver stream of a
/// session is non-blocking, the default streams are stand-ins of the
/// session's own, and the legacy-stream rule is kept among the session's
/// streams with events. Nothing here touches another session's streams.

/// Resolves client stream `handle` of `s` for work about to be issued on it
/// (a kernel, copy, event record, sync, capture begin), ordering it by the
/// legacy-stream rule: work on the legacy stream first waits for the
/// earlier work of every blocking stream of the session, work on a blocking
/// stream for the legacy stream's. Returns CUDA_SUCCESS with `*out` set;
/// CUDA_ERROR_INVALID_HANDLE when `handle` is not a stream of the session;
/// CUDA_ERROR_STREAM_CAPTURE_IMPLICIT when legacy work would depend on a
/// capturing blocking stream of the session (that capture is invalidated,
/// as CUDA invalidates it); or the driver's failure.
CUresult stream_for_work(driver_api& api, session& s, uint64_t handle, CUstream* out);

/// Resolves client stream `handle` of `s` to its driver stream (creating a
/// default stream's stand-in) without issuing work or ordering anything:
/// for binding a library handle to the stream. CUDA_ERROR_INVALID_HANDLE
/// when `handle` is not a stream of the session.
CUresult driver_stream(driver_api& api, session& s, uint64_t handle, CUstream* out);

/// Waits for every stream of `s` (a device-wide sync of one session).
/// While a stream of the session captures, CUDA refuses a device-wide sync
/// and invalidates the capture: CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED.
CUresult sync_session(driver_api& api, session& s);

/// Destroys the default-stream stand-ins and the ordering events of `s`
/// (its app streams are destroyed with the session).
void release_session_streams(driver_api& api, session& s);

} // namespace gleam::executor
