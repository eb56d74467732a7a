#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <caf/expected.hpp>
#include <cusolverDn.h>

#include "actors/proto/ops.pb.h"
#include "executor/library_call.hpp"
#include "wire/library_args.hpp"
#include "wire/solver_extents.hpp"

namespace gleam::executor {

/// The vendor's cuSOLVER (libcusolver.so.12), loaded at run time like
/// cuBLAS (executor/vendor_library.hpp): dlopen by explicit path and dlsym
/// of each function of interpose/spec/cusolver.spec that travels as a
/// LibraryCall, by the exact name cusolverDn.h declares. No gleam binary
/// links cuSOLVER.
///
/// Members are plain function pointers named after the library functions.
/// A default-constructed cusolver_api has every pointer null; tests may fill
/// in their own. A function this cuSOLVER lacks stays null (its calls fail
/// with CUSOLVER_STATUS_NOT_SUPPORTED). Thread safety: the pointers never
/// change after load().
class cusolver_api {
public:
  /// The LibraryCall.library this api serves (executor::use_library).
  static constexpr auto library = proto::LibraryCall::CUSOLVER;

#define X(name) decltype(&::name) name = nullptr;
#include "executor/cusolver_generated_api.inc"
#undef X

  /// Every entry point null, no library held.
  cusolver_api() = default;

  /// Calls f(name, member) for every entry point (resolve_vendor_entries).
  template <class F>
  void for_each_entry(F&& f) {
#define X(name) f(#name, name);
#include "executor/cusolver_generated_api.inc"
#undef X
  }

  cusolver_api(const cusolver_api&) = delete;
  cusolver_api& operator=(const cusolver_api&) = delete;

  /// Closes the library (if load() opened it).
  ~cusolver_api();

  /// Opens libcusolver.so.12 from `dir` (empty: the first of
  /// $GLEAM_CUSOLVER_DIR, /usr/local/cuda/lib64, /usr/local/cuda-13/lib64
  /// that has it; never Gleam's own) and resolves every entry point. The
  /// vendor's cuBLAS, which cuSOLVER needs by SONAME, is loaded first from
  /// its own directory (blas_api::shared()). Error: no_vendor_library when
  /// it cannot be opened or is Gleam's; missing_symbol when it has none of
  /// the functions (not cuSOLVER).
  [[nodiscard]] static caf::expected<std::unique_ptr<cusolver_api>>
  load(const std::string& dir = {});

  /// The process's instance, loaded by the first call (thread-safe); the
  /// error of that load on every call when it failed.
  [[nodiscard]] static caf::expected<cusolver_api*> shared();

private:
  void* lib_ = nullptr;
};

/// Elements of the Workspace that the typed getrf of an m x n matrix at `A`
/// (leading dimension `lda`) uses: the vendor's getrf_bufferSize for the
/// same arguments, since getrf itself takes no size (the spec's extent of
/// its Workspace). wire::extents::invalid_extent, which no allocation
/// contains, when the library lacks the query or refuses the arguments.
uint64_t getrf_workspace(cusolver_api& api, cusolverDnHandle_t handle, int m, int n, float* A,
                         int lda) noexcept;
uint64_t getrf_workspace(cusolver_api& api, cusolverDnHandle_t handle, int m, int n, double* A,
                         int lda) noexcept;
uint64_t getrf_workspace(cusolver_api& api, cusolverDnHandle_t handle, int m, int n,
                         cuComplex* A, int lda) noexcept;
uint64_t getrf_workspace(cusolver_api& api, cusolverDnHandle_t handle, int m, int n,
                         cuDoubleComplex* A, int lda) noexcept;

/// Keeps the main precision `main` of a cusolverDnIRSParams_t in its note
/// slot (`note`, the server's entry of the params; null: none), as the
/// spec's 'verify' of cusolverDnIRSParamsSetSolverMainPrecision and
/// SetSolverPrecisions: the bytes of one element of that precision, for
/// irs_main_size. A precision that is no main precision (only real and
/// complex 32- and 64-bit ones are; the library refuses the others) leaves
/// the note as it was. Always true (the call goes on to the library).
bool irs_keep_precision(std::shared_ptr<void>* note, cusolverPrecType_t main);

/// Bytes of one element of the main precision kept in a
/// cusolverDnIRSParams_t's note (irs_keep_precision): the element size of
/// cusolverDnIRSXgesv's and IRSXgels's matrices. wire::extents::
/// invalid_extent, which no allocation contains, when none was set.
uint64_t irs_main_size(std::shared_ptr<void>* note) noexcept;

/// Runs generated cuSOLVER function `function` (its spec id) with the
/// arguments in `in`; false when no generated function has that id.
/// Generated from interpose/spec/cusolver.spec (cusolver_library_calls.cpp).
bool run_generated_cusolver(cusolver_api& api, library_call_env& env, uint32_t function,
                            wire::arg_reader& in);

} // namespace gleam::executor
