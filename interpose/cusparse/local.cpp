// The cuSPARSE functions answered from the client (spec class manual): the
// status names and descriptions, and the settings the client keeps in its
// handle and descriptor objects (interpose/cusparse/library.hpp).
#include "interpose/cusparse/library.hpp"
#include "interpose/cusparse_export.hpp"

namespace {

using gleam::interpose::library_handle_of;
using gleam::interpose::cusparse::handle_type;
using gleam::interpose::cusparse::mat_descr_type;
using gleam::interpose::cusparse::traits;

/// A status's name and the vendor's description of it.
struct status_text {
  const char* name;
  const char* text;
};

status_text text_of(cusparseStatus_t status) noexcept {
  switch (status) {
    case CUSPARSE_STATUS_SUCCESS:
      return {"CUSPARSE_STATUS_SUCCESS", "success"};
    case CUSPARSE_STATUS_NOT_INITIALIZED:
      return {"CUSPARSE_STATUS_NOT_INITIALIZED", "initialization error"};
    case CUSPARSE_STATUS_ALLOC_FAILED:
      return {"CUSPARSE_STATUS_ALLOC_FAILED", "out of memory"};
    case CUSPARSE_STATUS_INVALID_VALUE:
      return {"CUSPARSE_STATUS_INVALID_VALUE", "invalid value"};
    case CUSPARSE_STATUS_ARCH_MISMATCH:
      return {"CUSPARSE_STATUS_ARCH_MISMATCH", "architecture mismatch"};
    case CUSPARSE_STATUS_MAPPING_ERROR:
      return {"CUSPARSE_STATUS_MAPPING_ERROR", "memory mapping error"};
    case CUSPARSE_STATUS_EXECUTION_FAILED:
      return {"CUSPARSE_STATUS_EXECUTION_FAILED", "execution failed"};
    case CUSPARSE_STATUS_INTERNAL_ERROR:
      return {"CUSPARSE_STATUS_INTERNAL_ERROR", "internal error"};
    case CUSPARSE_STATUS_MATRIX_TYPE_NOT_SUPPORTED:
      return {"CUSPARSE_STATUS_MATRIX_TYPE_NOT_SUPPORTED", "matrix type not supported"};
    case CUSPARSE_STATUS_ZERO_PIVOT:
      return {"CUSPARSE_STATUS_ZERO_PIVOT", "zero pivot"};
    case CUSPARSE_STATUS_NOT_SUPPORTED:
      return {"CUSPARSE_STATUS_NOT_SUPPORTED", "operation not supported"};
    case CUSPARSE_STATUS_INSUFFICIENT_RESOURCES:
      return {"CUSPARSE_STATUS_INSUFFICIENT_RESOURCES", "insufficient resources"};
    default:
      return {"CUSPARSE_STATUS_UNKNOWN", "unknown error"};
  }
}

/// Setting `field` of matrix descriptor `d` as type `T`; `fallback` (the
/// vendor's default) when the app does not hold `d`.
template <class T>
T setting_of(const cusparseMatDescr_t d, int cusparseMatDescr::*field, T fallback) noexcept {
  if (library_handle_of(d, traits, mat_descr_type) == nullptr)
    return fallback;
  return static_cast<T>(d->*field);
}

} // namespace

extern "C" {

GLEAM_INTERPOSE_EXPORT const char* cusparseGetErrorName(cusparseStatus_t status) {
  return text_of(status).name;
}

GLEAM_INTERPOSE_EXPORT const char* cusparseGetErrorString(cusparseStatus_t status) {
  return text_of(status).text;
}

GLEAM_INTERPOSE_EXPORT cusparseStatus_t cusparseGetStream(cusparseHandle_t handle,
                                                          cudaStream_t* streamId) {
  if (library_handle_of(handle, traits, handle_type) == nullptr)
    return CUSPARSE_STATUS_NOT_INITIALIZED;
  if (streamId == nullptr)
    return CUSPARSE_STATUS_INVALID_VALUE;
  *streamId = handle->stream;
  return CUSPARSE_STATUS_SUCCESS;
}

GLEAM_INTERPOSE_EXPORT cusparseStatus_t cusparseGetPointerMode(cusparseHandle_t handle,
                                                               cusparsePointerMode_t* mode) {
  if (library_handle_of(handle, traits, handle_type) == nullptr)
    return CUSPARSE_STATUS_NOT_INITIALIZED;
  if (mode == nullptr)
    return CUSPARSE_STATUS_INVALID_VALUE;
  *mode = static_cast<cusparsePointerMode_t>(handle->pointer_mode);
  return CUSPARSE_STATUS_SUCCESS;
}

// The getters of a legacy matrix descriptor return the setting itself; a
// descriptor the app does not hold reads as the vendor's defaults.

GLEAM_INTERPOSE_EXPORT cusparseMatrixType_t cusparseGetMatType(const cusparseMatDescr_t descrA) {
  return setting_of(descrA, &cusparseMatDescr::type, CUSPARSE_MATRIX_TYPE_GENERAL);
}

GLEAM_INTERPOSE_EXPORT cusparseFillMode_t cusparseGetMatFillMode(const cusparseMatDescr_t descrA) {
  return setting_of(descrA, &cusparseMatDescr::fill, CUSPARSE_FILL_MODE_LOWER);
}

GLEAM_INTERPOSE_EXPORT cusparseDiagType_t cusparseGetMatDiagType(const cusparseMatDescr_t descrA) {
  return setting_of(descrA, &cusparseMatDescr::diag, CUSPARSE_DIAG_TYPE_NON_UNIT);
}

GLEAM_INTERPOSE_EXPORT cusparseIndexBase_t
cusparseGetMatIndexBase(const cusparseMatDescr_t descrA) {
  return setting_of(descrA, &cusparseMatDescr::base, CUSPARSE_INDEX_BASE_ZERO);
}

} // extern "C"
