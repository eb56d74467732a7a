#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <caf/expected.hpp>
#include <cusparse.h>

#include "actors/proto/ops.pb.h"
#include "executor/library_call.hpp"
#include "wire/cusparse_extents.hpp"
#include "wire/library_args.hpp"

namespace gleam::executor {

/// The vendor's cuSPARSE (libcusparse.so.12), loaded at run time like
/// cuBLAS (executor/vendor_library.hpp): dlopen by explicit path and dlsym
/// of each function of interpose/spec/cusparse.spec that travels as a
/// LibraryCall (its generated ones), by the exact name cusparse.h declares.
/// No gleam binary links cuSPARSE.
///
/// Members are plain function pointers named after the library functions.
/// A default-constructed cusparse_api has every pointer null; tests may
/// fill in their own. A function this cuSPARSE lacks stays null (its calls
/// fail with CUSPARSE_STATUS_NOT_SUPPORTED). Thread safety: the pointers
/// never change after load().
class cusparse_api {
public:
  /// The LibraryCall.library this api serves (executor::use_library).
  static constexpr auto library = proto::LibraryCall::CUSPARSE;

#define X(name) decltype(&::name) name = nullptr;
#include "executor/cusparse_generated_api.inc"
#undef X

  /// Every entry point null, no library held.
  cusparse_api() = default;

  /// Calls f(name, member) for every entry point (resolve_vendor_entries).
  template <class F>
  void for_each_entry(F&& f) {
#define X(name) f(#name, name);
#include "executor/cusparse_generated_api.inc"
#undef X
  }

  cusparse_api(const cusparse_api&) = delete;
  cusparse_api& operator=(const cusparse_api&) = delete;

  /// Closes the library (if load() opened it).
  ~cusparse_api();

  /// Opens libcusparse.so.12 from `dir` (empty: the first of
  /// $GLEAM_CUSPARSE_DIR, /usr/local/cuda/lib64, /usr/local/cuda-13/lib64
  /// that has it; never Gleam's own) and resolves every entry point.
  /// Error: no_vendor_library when it cannot be opened or is Gleam's;
  /// missing_symbol when it has none of the functions (not cuSPARSE).
  [[nodiscard]] static caf::expected<std::unique_ptr<cusparse_api>>
  load(const std::string& dir = {});

  /// The process's instance, loaded by the first call (thread-safe); the
  /// error of that load on every call when it failed.
  [[nodiscard]] static caf::expected<cusparse_api*> shared();

private:
  void* lib_ = nullptr;
};

/// Runs generated cuSPARSE function `function` (its spec id) with the
/// arguments in `in`; false when no generated function has that id.
/// Generated from interpose/spec/cusparse.spec (cusparse_library_calls.cpp).
bool run_generated_cusparse(cusparse_api& api, library_call_env& env, uint32_t function,
                            wire::arg_reader& in);

// --- the spec's server-side helpers (executor/cusparse_checks.cpp) ---------
// Named in interpose/spec/cusparse.spec's extents and 'verify' lines; they
// read the vendor's descriptors as they are at the call.

/// What the server keeps in the note of a descriptor
/// (library_handle_entry::note): a sparse matrix's batch strides, the
/// buffer a triangular solve's analysis was given.
struct cusparse_note {
  /// cusparseCsrSetStridedBatch / cusparseCooSetStridedBatch: the strides,
  /// in elements, of the offsets (COO: the row indices) and of the indices
  /// and values.
  int64_t offsets_stride = 0;
  int64_t values_stride = 0;
  /// cusparseSpSV_analysis / cusparseSpSM_analysis: the externalBuffer and
  /// the bytes its _bufferSize asked for (the solve uses it again).
  uint64_t buffer = 0;
  uint64_t buffer_bytes = 0;
};

/// True when every device array of sparse matrix `d` (CSR, CSC or COO,
/// with every matrix of its strided batch) lies inside the session's
/// allocations, by the vendor's descriptor as it is now and the strides in
/// `note` (may be null); else fails the call (CUSPARSE_STATUS_INVALID_VALUE,
/// naming the array). Another format is refused: no function here makes one.
bool cusparse_sparse_ok(cusparse_api& api, library_call_env& env, cusparseConstSpMatDescr_t d,
                        std::shared_ptr<void>* note);

/// The same for the values of dense matrix `d` (ld and order, every
/// matrix of its strided batch) and of dense vector `d`.
bool cusparse_dense_ok(cusparse_api& api, library_call_env& env, cusparseConstDnMatDescr_t d);
bool cusparse_vector_ok(cusparse_api& api, library_call_env& env, cusparseConstDnVecDescr_t d);

/// Keeps a sparse matrix's batch strides in its `note`; true.
bool cusparse_keep_batch(std::shared_ptr<void>* note, int count, int64_t offsets_stride,
                         int64_t values_stride);

/// Keeps an analysis's buffer `buffer` of `bytes` in its descriptor's
/// `note`; true.
bool cusparse_keep_buffer(std::shared_ptr<void>* note, const void* buffer, uint64_t bytes);

/// True when the buffer kept by cusparse_keep_buffer (none: nothing to
/// check) still lies inside the session's allocations; else fails the call.
bool cusparse_buffer_ok(library_call_env& env, std::shared_ptr<void>* note);

/// The bytes of externalBuffer the server's vendor asks for the same call
/// (its _bufferSize function); invalid_extent when it fails or is missing,
/// which no allocation holds.
uint64_t cusparse_spmm_buffer(cusparse_api& api, cusparseHandle_t h, cusparseOperation_t opA,
                              cusparseOperation_t opB, cusparseConstSpMatDescr_t a,
                              cusparseConstDnMatDescr_t b, cusparseDnMatDescr_t c,
                              cudaDataType type, cusparseSpMMAlg_t alg);
uint64_t cusparse_spmv_buffer(cusparse_api& api, cusparseHandle_t h, cusparseOperation_t opA,
                              cusparseConstSpMatDescr_t a, cusparseConstDnVecDescr_t x,
                              cusparseDnVecDescr_t y, cudaDataType type, cusparseSpMVAlg_t alg);
uint64_t cusparse_sddmm_buffer(cusparse_api& api, cusparseHandle_t h, cusparseOperation_t opA,
                               cusparseOperation_t opB, cusparseConstDnMatDescr_t a,
                               cusparseConstDnMatDescr_t b, cusparseSpMatDescr_t c,
                               cudaDataType type, cusparseSDDMMAlg_t alg);
uint64_t cusparse_spsv_buffer(cusparse_api& api, cusparseHandle_t h, cusparseOperation_t opA,
                              cusparseConstSpMatDescr_t a, cusparseConstDnVecDescr_t x,
                              cusparseDnVecDescr_t y, cudaDataType type, cusparseSpSVAlg_t alg,
                              cusparseSpSVDescr_t descr);
uint64_t cusparse_spsm_buffer(cusparse_api& api, cusparseHandle_t h, cusparseOperation_t opA,
                              cusparseOperation_t opB, cusparseConstSpMatDescr_t a,
                              cusparseConstDnMatDescr_t b, cusparseDnMatDescr_t c,
                              cudaDataType type, cusparseSpSMAlg_t alg, cusparseSpSMDescr_t descr);
uint64_t cusparse_coosort_buffer(cusparse_api& api, cusparseHandle_t h, int m, int n, int nnz,
                                 const int* rows, const int* cols);
uint64_t cusparse_csrsort_buffer(cusparse_api& api, cusparseHandle_t h, int m, int n, int nnz,
                                 const int* offsets, const int* indices);
uint64_t cusparse_cscsort_buffer(cusparse_api& api, cusparseHandle_t h, int m, int n, int nnz,
                                 const int* offsets, const int* indices);
uint64_t cusparse_csr2csc_buffer(cusparse_api& api, cusparseHandle_t h, int m, int n, int nnz,
                                 const void* csr_values, const int* csr_offsets,
                                 const int* csr_indices, void* csc_values, int* csc_offsets,
                                 int* csc_indices, cudaDataType type, cusparseAction_t action,
                                 cusparseIndexBase_t base, cusparseCsr2CscAlg_t alg);
uint64_t cusparse_to_dense_buffer(cusparse_api& api, cusparseHandle_t h,
                                  cusparseConstSpMatDescr_t a, cusparseDnMatDescr_t b,
                                  cusparseSparseToDenseAlg_t alg);
uint64_t cusparse_to_sparse_buffer(cusparse_api& api, cusparseHandle_t h,
                                   cusparseConstDnMatDescr_t a, cusparseSpMatDescr_t b,
                                   cusparseDenseToSparseAlg_t alg);

} // namespace gleam::executor
