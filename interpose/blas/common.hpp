#pragma once

#include "executor/blas_shapes.hpp"

#include <cstddef>
#include <cstdint>

#include <cublas_api.h>
#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include "actors/proto/ops.pb.h"
#include "interpose/library_call.hpp"

/// Shared by Gleam's libcublas.so.13 and libcublasLt.so.13; compiled into
/// the shared client runtime (libgleam_interpose.so), so both libraries use
/// the process's one session of interpose/runtime.hpp.
namespace gleam::interpose::blas {

/// Logs `name` once per process, with `reason`, to standard error. Unlike
/// the cudart report it leaves the CUDA runtime's last error alone: cuBLAS
/// reports failures only through its return value. Thread-safe.
void report_unsupported(const char* name, const char* reason) noexcept;

/// Marks a client handle object as one of ours ("GLMBLAS\0").
constexpr uint64_t handle_magic = 0x00534c424d4c47ull;

/// The client side of a cuBLAS or cuBLASLt handle: its wire id and the
/// settings the app can read back without a round trip. A cuBLAS handle
/// may be used as a cuBLASLt handle (the vendor allows the cast; PyTorch
/// relies on it), so both context types start with this struct and the
/// server accepts either id in a cuBLASLt op. Owned by the app through
/// cublas(Lt)Create/Destroy. Not thread-safe, like the vendor's handles.
struct handle_state {
  /// handle_magic while alive; cleared at destruction.
  uint64_t magic = handle_magic;
  /// Client-chosen handle on the wire (interpose::next_handle()).
  uint64_t id = 0;
  /// True for a cublasLtCreate handle.
  bool lt = false;
  /// The stream set by cublasSetStream (null: the legacy default stream).
  cudaStream_t stream = nullptr;
  /// cublasSetWorkspace: device address and size in bytes.
  void* workspace = nullptr;
  size_t workspace_size = 0;
  /// cublasSetMathMode value, flags included.
  cublasMath_t math_mode = CUBLAS_DEFAULT_MATH;
  /// cublasSetPointerMode value: generated calls send their scalars by
  /// value (host) or as device addresses; the gemm family refuses device.
  cublasPointerMode_t pointer_mode = CUBLAS_POINTER_MODE_HOST;
  /// cublasSetAtomicsMode value.
  cublasAtomicsMode_t atomics_mode = CUBLAS_ATOMICS_NOT_ALLOWED;
};

/// The state behind an app's handle, or null when `p` is null or not a
/// live handle of ours.
handle_state* state_of(const void* p) noexcept;

/// The cublasStatus_t an app sees when the transport failed with `x`
/// (no server: NOT_INITIALIZED; lost session: EXECUTION_FAILED; other
/// runtime errors by kind).
cublasStatus_t from_cuda(cudaError_t x) noexcept;

/// cuBLAS as interpose/library_call.hpp sees it (LibraryCall library
/// CUBLAS, its statuses, from_cuda).
const library_traits& traits() noexcept;

/// Runs `op` synchronously and returns the library status the server
/// reported (OpResult.blas_status), or from_cuda() of a transport error.
/// `result` may be null. Never throws.
cublasStatus_t run(proto::Op op, proto::OpResult* result = nullptr) noexcept;

/// Sends an error-code-only op (gemm, cublasLtMatmul, a handle setting,
/// destroy) after the caller made the checks the vendor makes at the call.
/// With async forwarding on it is queued (interpose::submit) and
/// CUBLAS_STATUS_SUCCESS comes back at once; a failure the server reports
/// for it later is the runtime's deferred error: returned, exactly once, as
/// the CUDA error of the next synchronizing CUDA runtime call (or
/// cudaGetLastError): cudaErrorInvalidValue for CUBLAS_STATUS_INVALID_VALUE
/// and MAPPING_ERROR, cudaErrorMemoryAllocation for ALLOC_FAILED,
/// cudaErrorNotSupported for NOT_SUPPORTED / ARCH_MISMATCH,
/// cudaErrorInitializationError for NOT_INITIALIZED, cudaErrorUnknown else.
/// Synchronous cuBLAS calls never return it (a cuBLAS status describes its
/// own call only). A sticky CUDA error of the process, or an unusable
/// session, is returned at once through from_cuda(). With GLEAM_ASYNC=off
/// it is run(): the op's own library status at the call. Never throws.
cublasStatus_t submit(proto::Op op) noexcept;

/// Runs `f` (returning cublasStatus_t) for an extern "C" entry point: any
/// exception becomes CUBLAS_STATUS_INTERNAL_ERROR.
template <class F>
cublasStatus_t guarded(F&& f) noexcept {
  try {
    return f();
  } catch (...) {
    return CUBLAS_STATUS_INTERNAL_ERROR;
  }
}

/// The vendor's name (e.g. "CUBLAS_STATUS_INVALID_VALUE") and description
/// of `s`; "unrecognized status" for values cuBLAS does not define.
const char* status_name(cublasStatus_t s) noexcept;
const char* status_string(cublasStatus_t s) noexcept;

/// Bytes of one element of a cudaDataType; 0 for types whose elements are
/// not whole bytes or that are unknown. The same arithmetic the server's
/// argument checks use (executor/blas_shapes.hpp, compiled into the client).
using executor::blas_shapes::element_size;

/// True for the complex data types (CUDA_C_*).
bool is_complex(cudaDataType t) noexcept;

} // namespace gleam::interpose::blas

/// The app-visible cuBLAS context behind a cublasHandle_t.
struct cublasContext {
  gleam::interpose::blas::handle_state state;
};

/// The app-visible cuBLASLt context behind a cublasLtHandle_t.
struct cublasLtContext {
  gleam::interpose::blas::handle_state state;
};
