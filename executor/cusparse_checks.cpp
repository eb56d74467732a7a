// The server-side helpers of interpose/spec/cusparse.spec: the device
// arrays a descriptor holds, checked at every call that computes with it
// against the session's allocations (by the vendor's descriptor as it is
// then: after any SetPointers or SetValues), and the externalBuffer sizes
// the vendor asks for the same call.
#include <cstdint>
#include <memory>

#include <fmt/format.h>

#include "executor/cusparse_api.hpp"

namespace gleam::executor {

namespace {

using wire::extents::cusparse_index_bytes;
using wire::extents::cusparse_sized;
using wire::extents::invalid_extent;
using wire::extents::mat;
using wire::extents::mul;
using wire::extents::strided;
using wire::extents::type_size;

/// The note of a descriptor as cusparse_note, made on first use; null
/// when the session has no such descriptor.
cusparse_note* note_of(std::shared_ptr<void>* note, bool make) {
  if (note == nullptr)
    return nullptr;
  if (*note == nullptr && make)
    *note = std::make_shared<cusparse_note>();
  return static_cast<cusparse_note*>(note->get());
}

/// Fails the call: the vendor could not describe `d` (its status).
bool undescribed(library_call_env& env, const char* what, int status) {
  env.refuse(fmt::format("the {} descriptor could not be read (cuSPARSE status {}); pass a "
                         "descriptor made by this process",
                         what, status));
  return false;
}

/// One device array of a descriptor: `count` elements of `bytes_each`,
/// `batch` of them `stride` elements apart.
bool array_ok(library_call_env& env, const void* p, int64_t count, uint64_t bytes_each,
              int64_t stride, int batch, const char* what) {
  auto elements = strided(count < 0 ? invalid_extent : static_cast<uint64_t>(count), stride,
                          batch);
  return env.device(reinterpret_cast<uintptr_t>(p), cusparse_sized(p, mul(elements, bytes_each)),
                    what);
}

/// Alpha and beta for the _bufferSize functions, which size the buffer by
/// the shapes alone: zeros of the widest compute type (double complex).
const double zero_scalar[2] = {0.0, 0.0};

/// The bytes vendor function `fn` (a _bufferSize, whose last parameter
/// is the size it writes) asks for with `args`; invalid_extent when it
/// fails or this cuSPARSE lacks it.
template <class R, class... P, class... Args>
uint64_t asked_bytes(R (*fn)(P...), Args... args) {
  if (fn == nullptr)
    return invalid_extent;
  size_t bytes = 0;
  return fn(args..., &bytes) == CUSPARSE_STATUS_SUCCESS ? static_cast<uint64_t>(bytes)
                                                        : invalid_extent;
}

} // namespace

bool cusparse_sparse_ok(cusparse_api& api, library_call_env& env, cusparseConstSpMatDescr_t d,
                        std::shared_ptr<void>* note) {
  if (api.cusparseSpMatGetFormat == nullptr || api.cusparseSpMatGetStridedBatch == nullptr)
    return env.unavailable("cusparseSpMatGetFormat"), false;
  cusparseFormat_t format{};
  if (auto st = api.cusparseSpMatGetFormat(d, &format); st != CUSPARSE_STATUS_SUCCESS)
    return undescribed(env, "sparse matrix", st);
  int batch = 1;
  if (auto st = api.cusparseSpMatGetStridedBatch(d, &batch); st != CUSPARSE_STATUS_SUCCESS)
    return undescribed(env, "sparse matrix", st);
  cusparse_note strides;
  if (const auto* kept = note_of(note, false); kept != nullptr)
    strides = *kept;
  int64_t rows = 0, cols = 0, nnz = 0;
  const void *offsets = nullptr, *indices = nullptr, *values = nullptr;
  cusparseIndexType_t offsets_type{}, indices_type{};
  cusparseIndexBase_t base{};
  cudaDataType value_type{};
  int64_t offsets_count = 0;
  cusparseStatus_t st = CUSPARSE_STATUS_NOT_SUPPORTED;
  switch (format) {
    case CUSPARSE_FORMAT_CSR:
      if (api.cusparseConstCsrGet != nullptr)
        st = api.cusparseConstCsrGet(d, &rows, &cols, &nnz, &offsets, &indices, &values,
                                     &offsets_type, &indices_type, &base, &value_type);
      offsets_count = rows + 1;
      break;
    case CUSPARSE_FORMAT_CSC:
      if (api.cusparseConstCscGet != nullptr)
        st = api.cusparseConstCscGet(d, &rows, &cols, &nnz, &offsets, &indices, &values,
                                     &offsets_type, &indices_type, &base, &value_type);
      offsets_count = cols + 1;
      break;
    case CUSPARSE_FORMAT_COO:
      // Row indices in place of offsets, one per value.
      if (api.cusparseConstCooGet != nullptr)
        st = api.cusparseConstCooGet(d, &rows, &cols, &nnz, &offsets, &indices, &values,
                                     &indices_type, &base, &value_type);
      offsets_type = indices_type;
      offsets_count = nnz;
      break;
    default:
      env.refuse(fmt::format("sparse matrix format {} is not served by Gleam; use CSR, CSC or "
                             "COO",
                             static_cast<int>(format)));
      return false;
  }
  if (st != CUSPARSE_STATUS_SUCCESS)
    return undescribed(env, "sparse matrix", st);
  auto value_bytes = type_size(value_type);
  return array_ok(env, offsets, offsets_count, cusparse_index_bytes(offsets_type),
                  strides.offsets_stride, batch,
                  format == CUSPARSE_FORMAT_COO ? "sparse matrix row indices"
                                                : "sparse matrix offsets")
         && array_ok(env, indices, nnz, cusparse_index_bytes(indices_type), strides.values_stride,
                     batch, "sparse matrix indices")
         && array_ok(env, values, nnz, value_bytes, strides.values_stride, batch,
                     "sparse matrix values");
}

bool cusparse_dense_ok(cusparse_api& api, library_call_env& env, cusparseConstDnMatDescr_t d) {
  if (api.cusparseConstDnMatGet == nullptr || api.cusparseDnMatGetStridedBatch == nullptr)
    return env.unavailable("cusparseConstDnMatGet"), false;
  int64_t rows = 0, cols = 0, ld = 0;
  const void* values = nullptr;
  cudaDataType type{};
  cusparseOrder_t order{};
  if (auto st = api.cusparseConstDnMatGet(d, &rows, &cols, &ld, &values, &type, &order);
      st != CUSPARSE_STATUS_SUCCESS)
    return undescribed(env, "dense matrix", st);
  int batch = 1;
  int64_t stride = 0;
  if (auto st = api.cusparseDnMatGetStridedBatch(d, &batch, &stride);
      st != CUSPARSE_STATUS_SUCCESS)
    return undescribed(env, "dense matrix", st);
  auto one = order == CUSPARSE_ORDER_ROW ? mat(cols, rows, ld) : mat(rows, cols, ld);
  auto bytes = mul(strided(one, stride, batch), type_size(type));
  return env.device(reinterpret_cast<uintptr_t>(values), cusparse_sized(values, bytes),
                    "dense matrix values");
}

bool cusparse_vector_ok(cusparse_api& api, library_call_env& env, cusparseConstDnVecDescr_t d) {
  if (api.cusparseConstDnVecGet == nullptr)
    return env.unavailable("cusparseConstDnVecGet"), false;
  int64_t size = 0;
  const void* values = nullptr;
  cudaDataType type{};
  if (auto st = api.cusparseConstDnVecGet(d, &size, &values, &type); st != CUSPARSE_STATUS_SUCCESS)
    return undescribed(env, "dense vector", st);
  return array_ok(env, values, size, type_size(type), 0, 1, "dense vector values");
}

bool cusparse_keep_batch(std::shared_ptr<void>* note, int count, int64_t offsets_stride,
                         int64_t values_stride) {
  static_cast<void>(count); // the vendor's descriptor keeps the count
  if (auto* n = note_of(note, true); n != nullptr) {
    n->offsets_stride = offsets_stride;
    n->values_stride = values_stride;
  }
  return true;
}

bool cusparse_keep_buffer(std::shared_ptr<void>* note, const void* buffer, uint64_t bytes) {
  if (auto* n = note_of(note, true); n != nullptr) {
    n->buffer = reinterpret_cast<uintptr_t>(buffer);
    n->buffer_bytes = cusparse_sized(buffer, bytes);
  }
  return true;
}

bool cusparse_buffer_ok(library_call_env& env, std::shared_ptr<void>* note) {
  const auto* n = note_of(note, false);
  return n == nullptr || env.device(n->buffer, n->buffer_bytes, "the analysis's externalBuffer");
}

uint64_t cusparse_spmm_buffer(cusparse_api& api, cusparseHandle_t h, cusparseOperation_t opA,
                              cusparseOperation_t opB, cusparseConstSpMatDescr_t a,
                              cusparseConstDnMatDescr_t b, cusparseDnMatDescr_t c,
                              cudaDataType type, cusparseSpMMAlg_t alg) {
  return asked_bytes(api.cusparseSpMM_bufferSize, h, opA, opB, zero_scalar, a, b, zero_scalar, c,
                     type, alg);
}

uint64_t cusparse_spmv_buffer(cusparse_api& api, cusparseHandle_t h, cusparseOperation_t opA,
                              cusparseConstSpMatDescr_t a, cusparseConstDnVecDescr_t x,
                              cusparseDnVecDescr_t y, cudaDataType type, cusparseSpMVAlg_t alg) {
  return asked_bytes(api.cusparseSpMV_bufferSize, h, opA, zero_scalar, a, x, zero_scalar, y, type,
                     alg);
}

uint64_t cusparse_sddmm_buffer(cusparse_api& api, cusparseHandle_t h, cusparseOperation_t opA,
                               cusparseOperation_t opB, cusparseConstDnMatDescr_t a,
                               cusparseConstDnMatDescr_t b, cusparseSpMatDescr_t c,
                               cudaDataType type, cusparseSDDMMAlg_t alg) {
  return asked_bytes(api.cusparseSDDMM_bufferSize, h, opA, opB, zero_scalar, a, b, zero_scalar, c,
                     type, alg);
}

uint64_t cusparse_spsv_buffer(cusparse_api& api, cusparseHandle_t h, cusparseOperation_t opA,
                              cusparseConstSpMatDescr_t a, cusparseConstDnVecDescr_t x,
                              cusparseDnVecDescr_t y, cudaDataType type, cusparseSpSVAlg_t alg,
                              cusparseSpSVDescr_t descr) {
  return asked_bytes(api.cusparseSpSV_bufferSize, h, opA, zero_scalar, a, x, y, type, alg, descr);
}

uint64_t cusparse_spsm_buffer(cusparse_api& api, cusparseHandle_t h, cusparseOperation_t opA,
                              cusparseOperation_t opB, cusparseConstSpMatDescr_t a,
                              cusparseConstDnMatDescr_t b, cusparseDnMatDescr_t c,
                              cudaDataType type, cusparseSpSMAlg_t alg, cusparseSpSMDescr_t descr) {
  return asked_bytes(api.cusparseSpSM_bufferSize, h, opA, opB, zero_scalar, a, b, c, type, alg,
                     descr);
}

uint64_t cusparse_coosort_buffer(cusparse_api& api, cusparseHandle_t h, int m, int n, int nnz,
                                 const int* rows, const int* cols) {
  return asked_bytes(api.cusparseXcoosort_bufferSizeExt, h, m, n, nnz, rows, cols);
}

uint64_t cusparse_csrsort_buffer(cusparse_api& api, cusparseHandle_t h, int m, int n, int nnz,
                                 const int* offsets, const int* indices) {
  return asked_bytes(api.cusparseXcsrsort_bufferSizeExt, h, m, n, nnz, offsets, indices);
}

uint64_t cusparse_cscsort_buffer(cusparse_api& api, cusparseHandle_t h, int m, int n, int nnz,
                                 const int* offsets, const int* indices) {
  return asked_bytes(api.cusparseXcscsort_bufferSizeExt, h, m, n, nnz, offsets, indices);
}

uint64_t cusparse_csr2csc_buffer(cusparse_api& api, cusparseHandle_t h, int m, int n, int nnz,
                                 const void* csr_values, const int* csr_offsets,
                                 const int* csr_indices, void* csc_values, int* csc_offsets,
                                 int* csc_indices, cudaDataType type, cusparseAction_t action,
                                 cusparseIndexBase_t base, cusparseCsr2CscAlg_t alg) {
  return asked_bytes(api.cusparseCsr2cscEx2_bufferSize, h, m, n, nnz, csr_values, csr_offsets,
                     csr_indices, csc_values, csc_offsets, csc_indices, type, action, base, alg);
}

uint64_t cusparse_to_dense_buffer(cusparse_api& api, cusparseHandle_t h,
                                  cusparseConstSpMatDescr_t a, cusparseDnMatDescr_t b,
                                  cusparseSparseToDenseAlg_t alg) {
  return asked_bytes(api.cusparseSparseToDense_bufferSize, h, a, b, alg);
}

uint64_t cusparse_to_sparse_buffer(cusparse_api& api, cusparseHandle_t h,
                                   cusparseConstDnMatDescr_t a, cusparseSpMatDescr_t b,
                                   cusparseDenseToSparseAlg_t alg) {
  return asked_bytes(api.cusparseDenseToSparse_bufferSize, h, a, b, alg);
}

} // namespace gleam::executor
