#pragma once

#include <cstddef>
#include <cstdint>
#include <map>

#include <caf/expected.hpp>
#include <cuda.h>

#include "actors/proto/ops.pb.h"
#include "executor/driver_api.hpp"
#include "executor/library_call.hpp"
#include "executor/library_handles.hpp"
#include "executor/session.hpp"

namespace gleam::executor {

class blas_api;

/// The status values the runner itself reports, in the library's status
/// type (curandStatus_t, …).
struct library_statuses {
  int32_t success;
  /// An unknown or destroyed handle.
  int32_t not_initialized;
  /// Arguments that do not unpack, an address outside the session's
  /// allocations, an unknown stream.
  int32_t invalid;
  /// A function this server's library lacks, an id it does not know.
  int32_t not_supported;
  /// Host results larger than a call may return.
  int32_t alloc_failed;
  int32_t internal;
};

/// A vendor library whose LibraryCall ops the generic runner serves,
/// written by interpose/gen/generate.py into <lib>_library_calls.cpp from
/// the library's spec (a `const library_descriptor <lib>_library`).
/// Immutable, static storage.
struct library_descriptor {
  proto::LibraryCall::Library library;
  /// The library as users know it, e.g. "cuRAND".
  const char* name;
  /// Its spec, for messages ("interpose/spec/curand.spec").
  const char* spec;
  library_statuses status;
  /// The CUresult that stands for a failed status in OpResult.status (the
  /// CUDA error an error-code-only call defers). Never a sticky error.
  CUresult (*cu_of)(int32_t status);
  /// The vendor's name of a status, e.g. "CURAND_STATUS_OUT_OF_RANGE".
  const char* (*status_name)(int32_t status);
  /// The spec's handle types, by index.
  const library_handle_type* handle_types;
  size_t handle_type_count;
  /// Runs function `function` (its spec id, generated or hand-written) of
  /// the loaded library `api`; false when no function has that id.
  bool (*run)(void* api, library_call_env& env, uint32_t function, wire::arg_reader& in);
  /// The process's loaded vendor library (dlopen, at the first call), or
  /// why it cannot be loaded.
  caf::expected<void*> (*shared)();
};

/// The descriptors of the libraries the generic runner serves (cuRAND,
/// cuFFT, cuSPARSE, NVML, cuDNN, cuSOLVER).
const library_descriptor* find_library(proto::LibraryCall::Library library) noexcept;

/// Loaded libraries to use instead of each library's shared() one, by
/// proto::LibraryCall::Library value (executor::use_library; tests).
using library_overrides = std::map<int32_t, void*>;

/// Executes a LibraryCall or LibraryOutputRead op of session `s` into `r`:
/// cuBLAS calls go to run_blas (executor/blas.hpp, with `blas`), every other
/// library's to the generic runner, which unpacks the arguments with the
/// library's generated code, looks its handles up in s.library_handles,
/// orders a handle's work by the session's stream rule
/// (executor/session_streams.hpp), checks every device range against
/// s.memory and reports the library's status in r.blas_status (with
/// r.status the library's CUresult for it). Host outputs come back in
/// r.library_outputs, or are kept in s.library_held when the call asks
/// (LibraryCall.hold) and read by LibraryOutputRead. Not thread-safe.
void run_library_op(blas_api* blas, driver_api& driver, session& s, const proto::Op& op,
                    proto::OpResult& r);

/// Destroys every handle in s.library_handles with its type's destroy
/// function (through s.graves when set), the spec's later handle types
/// first (a library's handle after what was made with it), and forgets the
/// held outputs.
/// Returns the number of destructions that failed.
size_t release_library_handles(session& s);

} // namespace gleam::executor
