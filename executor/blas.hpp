#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <cublasLt.h>
#include <cublas_api.h>

#include "actors/proto/ops.pb.h"
#include "executor/blas_api.hpp"
#include "executor/driver_api.hpp"
#include "executor/session.hpp"

namespace gleam::executor {

/// One client cuBLAS or cuBLASLt handle of a session.
struct blas_handle_entry {
  /// The library handle (BlasCreate); null for a cuBLASLt handle.
  cublasHandle_t blas = nullptr;
  /// The cuBLASLt handle (BlasLtCreate); null for a cuBLAS handle.
  cublasLtHandle_t lt = nullptr;
  /// Client handle of the stream set by BlasSetStream (0: legacy default).
  uint64_t stream = 0;
  /// The pointer mode the library handle is in (generated calls set it
  /// per call: their scalars are host values or device addresses).
  cublasPointerMode_t pointer_mode = CUBLAS_POINTER_MODE_HOST;
  /// The driver stream the library handle works on now: the session's
  /// stand-in of the legacy stream from its creation (never the context's,
  /// which all sessions share), then BlasSetStream's.
  CUstream bound = nullptr;
};

/// The cuBLAS state of one session: its handles, and the cuBLASLt
/// descriptors materialized from the attribute maps of earlier calls, keyed
/// by their serialized content (apps such as PyTorch create and destroy
/// descriptors around every call; equal content reuses one vendor object).
/// Each cache holds at most `max_cached` objects and is emptied when full.
/// Owned by the session; not thread-safe.
struct blas_tables {
  /// The library every handle of this session was created with.
  blas_api* api = nullptr;
  /// Client handle -> library handle.
  std::unordered_map<uint64_t, blas_handle_entry> handles;
  /// Serialized BlasLtMatmulDesc / BlasLtLayout / BlasLtPreference -> object.
  std::unordered_map<std::string, cublasLtMatmulDesc_t> descs;
  std::unordered_map<std::string, cublasLtMatrixLayout_t> layouts;
  std::unordered_map<std::string, cublasLtMatmulPreference_t> preferences;
  /// Serialized BlasLtTransformDesc -> object.
  std::unordered_map<std::string, cublasLtMatrixTransformDesc_t> transforms;
  /// The emulation descriptor of a cached matmul descriptor (same key),
  /// destroyed with it.
  std::unordered_map<std::string, cublasLtEmulationDesc_t> emulations;
  /// Bound of each cache, entries.
  static constexpr size_t max_cached = 512;
};

/// Executes one Blas* op of session `s` into `r`: validates handles, streams
/// and every device address (against s.memory, with extents from the matrix
/// shapes) before the library sees them, and reports the library's status
/// in r.blas_status (with r.status a CUresult close to it when it is not
/// CUBLAS_STATUS_SUCCESS). `api` is the library to use for a session that
/// has none yet; null: blas_api::shared(). Not thread-safe.
void run_blas(blas_api* api, driver_api& driver, session& s, const proto::Op& op,
              proto::OpResult& r);

/// Destroys every library object of `s` (handles first: they may use the
/// session's streams and workspaces; through s.graves when it is set).
/// Returns CUBLAS_STATUS_SUCCESS or the first failure.
cublasStatus_t release_blas(session& s);

} // namespace gleam::executor
