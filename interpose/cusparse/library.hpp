#pragma once

#include <cstdint>

#include <cusparse.h>

#include "interpose/library_call.hpp"
#include "wire/cusparse_extents.hpp"

/// The hand-written pieces of Gleam's libcusparse.so.12 that its generated
/// stubs (interpose/spec/cusparse.spec, <build>/interpose/cusparse_generated.cpp)
/// and its local functions (local.cpp) use: cuSPARSE's traits, the client
/// objects behind its handles and descriptors, and the client side of the
/// spec's helpers.
namespace gleam::interpose::cusparse {

/// cuSPARSE as interpose/library_call.hpp sees it: LibraryCall library
/// CUSPARSE, its statuses (CUSPARSE_STATUS_INVALID_VALUE for arguments
/// refused at the call, CUSPARSE_STATUS_NOT_INITIALIZED for a handle or
/// descriptor the app does not hold) and from_cuda().
extern const library_traits traits;

/// The spec's handle type indices (its 'handle' lines in order).
inline constexpr int32_t handle_type = 0;
inline constexpr int32_t mat_descr_type = 1;

/// The cusparseStatus_t an app sees when the transport failed with `x`: no
/// server or a lost session CUSPARSE_STATUS_NOT_INITIALIZED, a sticky GPU
/// fault of the process CUSPARSE_STATUS_EXECUTION_FAILED, other runtime
/// errors by kind.
cusparseStatus_t from_cuda(cudaError_t x) noexcept;

/// What 'api' names in the generated client stubs: the client's view of
/// the handles, for the spec's checks.
struct client_view {};
inline constexpr client_view client_handles{};

/// True when handle `h` is in CUSPARSE_POINTER_MODE_HOST (as the app set
/// it last): its alpha and beta travel by value. In device pointer mode
/// Gleam does not remote calls with scalars: logs that once and answers
/// false (the spec's check then returns CUSPARSE_STATUS_NOT_SUPPORTED).
bool cusparse_host_scalars(const client_view&, cusparseHandle_t h) noexcept;

/// The client object of a handle type that keeps nothing but its
/// library_handle (first, as library_handle_of requires).
struct descriptor_object {
  library_handle state;
};

} // namespace gleam::interpose::cusparse

/// The app-visible objects behind cuSPARSE's handles and descriptors (the
/// spec's 'handle' lines). Each starts with its library_handle; the
/// members after it are what 'remember' lines keep.
struct cusparseContext {
  gleam::interpose::library_handle state;
  /// The stream of the last cusparseSetStream (cusparseGetStream).
  cudaStream_t stream = nullptr;
  /// The cusparsePointerMode_t of the last cusparseSetPointerMode.
  int pointer_mode = CUSPARSE_POINTER_MODE_HOST;
};

/// A legacy matrix descriptor and its settings, with the vendor's defaults
/// (cusparseGetMat* answer them).
struct cusparseMatDescr {
  gleam::interpose::library_handle state;
  int type = CUSPARSE_MATRIX_TYPE_GENERAL;
  int fill = CUSPARSE_FILL_MODE_LOWER;
  int diag = CUSPARSE_DIAG_TYPE_NON_UNIT;
  int base = CUSPARSE_INDEX_BASE_ZERO;
};

/// The descriptors whose client objects keep nothing but their handle.
struct cusparseSpMatDescr : gleam::interpose::cusparse::descriptor_object {};
struct cusparseDnMatDescr : gleam::interpose::cusparse::descriptor_object {};
struct cusparseDnVecDescr : gleam::interpose::cusparse::descriptor_object {};
struct cusparseSpGEMMDescr : gleam::interpose::cusparse::descriptor_object {};
struct cusparseSpSVDescr : gleam::interpose::cusparse::descriptor_object {};
struct cusparseSpSMDescr : gleam::interpose::cusparse::descriptor_object {};
