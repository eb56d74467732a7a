#pragma once

// A fake cuSPARSE for the CPU tests (tests/executor/cusparse_test.cpp):
// handles, CSR / COO / dense descriptors with their getters, and real
// results on the fake device's host memory for small problems: CSR SpMV
// and SpMM (float, non-transposed, either dense order), cusparseXcoo2csr
// and cusparseXcoosortByRow (with the permutation). Buffer sizes are
// fixed (fake_cusparse_buffer). Every computation is counted. Header-only;
// not thread-safe.

#include <cusparse.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <numeric>
#include <set>
#include <vector>

#include "executor/cusparse_api.hpp"

namespace gleam::test {

/// The buffer every fake _bufferSize asks for, in bytes.
inline constexpr size_t fake_cusparse_buffer = 256;

/// A sparse matrix descriptor of the fake.
struct fake_sp_mat {
  cusparseFormat_t format = CUSPARSE_FORMAT_CSR;
  int64_t rows = 0, cols = 0, nnz = 0;
  void *offsets = nullptr, *indices = nullptr, *values = nullptr;
  cusparseIndexType_t offsets_type = CUSPARSE_INDEX_32I, indices_type = CUSPARSE_INDEX_32I;
  cusparseIndexBase_t base = CUSPARSE_INDEX_BASE_ZERO;
  cudaDataType type = CUDA_R_32F;
  int batch = 1;
};

/// A dense matrix (or, with cols 1 and no order, vector) descriptor.
struct fake_dn {
  int64_t rows = 0, cols = 0, ld = 0;
  void* values = nullptr;
  cudaDataType type = CUDA_R_32F;
  cusparseOrder_t order = CUSPARSE_ORDER_COL;
  int batch = 1;
  int64_t stride = 0;
};

/// What the fake saw.
struct fake_cusparse_log {
  std::set<void*> handles;
  std::vector<std::unique_ptr<fake_sp_mat>> sparse;
  std::vector<std::unique_ptr<fake_dn>> dense;
  /// Live descriptors of any kind.
  size_t live = 0;
  int spmm = 0, spmv = 0, coo2csr = 0, coosort = 0;
  /// The stream of the last cusparseSetStream.
  cudaStream_t stream = nullptr;
};

inline fake_cusparse_log& fake_cusparse() {
  static fake_cusparse_log log;
  return log;
}

namespace fake_cusparse_detail {

inline const fake_sp_mat* sp(cusparseConstSpMatDescr_t d) {
  return reinterpret_cast<const fake_sp_mat*>(d);
}
inline fake_sp_mat* sp(cusparseSpMatDescr_t d) {
  return reinterpret_cast<fake_sp_mat*>(d);
}
inline const fake_dn* dn(const void* d) {
  return static_cast<const fake_dn*>(d);
}

inline cusparseSpMatDescr_t make_sparse(fake_sp_mat m) {
  fake_cusparse().sparse.push_back(std::make_unique<fake_sp_mat>(m));
  ++fake_cusparse().live;
  return reinterpret_cast<cusparseSpMatDescr_t>(fake_cusparse().sparse.back().get());
}

inline fake_dn* make_dense(fake_dn m) {
  fake_cusparse().dense.push_back(std::make_unique<fake_dn>(m));
  ++fake_cusparse().live;
  return fake_cusparse().dense.back().get();
}

/// Element (r, c) of dense float matrix `d`.
inline float& at(const fake_dn* d, int64_t r, int64_t c) {
  auto* v = static_cast<float*>(d->values);
  return d->order == CUSPARSE_ORDER_COL ? v[c * d->ld + r] : v[r * d->ld + c];
}

/// y = alpha * A x + beta * y for CSR float A, with x(k) and y(i) the
/// column's elements.
template <class X, class Y>
void csr_times(const fake_sp_mat* a, float alpha, float beta, X x, Y y) {
  const auto* off = static_cast<const int*>(a->offsets);
  const auto* col = static_cast<const int*>(a->indices);
  const auto* val = static_cast<const float*>(a->values);
  for (int64_t i = 0; i < a->rows; ++i) {
    float sum = 0.0f;
    for (int k = off[i]; k < off[i + 1]; ++k)
      sum += val[k] * x(col[k]);
    y(i) = alpha * sum + beta * y(i);
  }
}

/// Whether the fake computes with `a`: CSR, int32 indices, float values.
inline bool computable(const fake_sp_mat* a, cudaDataType compute) {
  return a->format == CUSPARSE_FORMAT_CSR && a->offsets_type == CUSPARSE_INDEX_32I
         && a->type == CUDA_R_32F && compute == CUDA_R_32F;
}

} // namespace fake_cusparse_detail

/// Fills `api` with the fake. Everything it does not name stays null:
/// missing from this library.
inline void install_fake_cusparse(executor::cusparse_api& api) {
  namespace d = fake_cusparse_detail;
  api.cusparseCreate = [](cusparseHandle_t* h) {
    auto* made = reinterpret_cast<cusparseHandle_t>(new char{});
    fake_cusparse().handles.insert(made);
    *h = made;
    return CUSPARSE_STATUS_SUCCESS;
  };
  api.cusparseDestroy = [](cusparseHandle_t h) {
    if (fake_cusparse().handles.erase(h) == 0)
      return CUSPARSE_STATUS_NOT_INITIALIZED;
    delete reinterpret_cast<char*>(h);
    return CUSPARSE_STATUS_SUCCESS;
  };
  api.cusparseSetStream = [](cusparseHandle_t, cudaStream_t s) {
    fake_cusparse().stream = s;
    return CUSPARSE_STATUS_SUCCESS;
  };
  api.cusparseSetPointerMode = [](cusparseHandle_t, cusparsePointerMode_t) {
    return CUSPARSE_STATUS_SUCCESS;
  };
  api.cusparseGetVersion = [](cusparseHandle_t, int* v) {
    *v = 12603;
    return CUSPARSE_STATUS_SUCCESS;
  };
  api.cusparseCreateCsr = [](cusparseSpMatDescr_t* out, int64_t rows, int64_t cols, int64_t nnz,
                             void* off, void* ind, void* val, cusparseIndexType_t ot,
                             cusparseIndexType_t it, cusparseIndexBase_t base, cudaDataType t) {
    *out = d::make_sparse({CUSPARSE_FORMAT_CSR, rows, cols, nnz, off, ind, val, ot, it, base, t});
    return CUSPARSE_STATUS_SUCCESS;
  };
  api.cusparseCreateCoo = [](cusparseSpMatDescr_t* out, int64_t rows, int64_t cols, int64_t nnz,
                             void* r, void* c, void* val, cusparseIndexType_t it,
                             cusparseIndexBase_t base, cudaDataType t) {
    *out = d::make_sparse({CUSPARSE_FORMAT_COO, rows, cols, nnz, r, c, val, it, it, base, t});
    return CUSPARSE_STATUS_SUCCESS;
  };
  api.cusparseCreateDnMat = [](cusparseDnMatDescr_t* out, int64_t rows, int64_t cols, int64_t ld,
                               void* values, cudaDataType t, cusparseOrder_t order) {
    *out = reinterpret_cast<cusparseDnMatDescr_t>(
      d::make_dense({rows, cols, ld, values, t, order}));
    return CUSPARSE_STATUS_SUCCESS;
  };
  api.cusparseCreateDnVec = [](cusparseDnVecDescr_t* out, int64_t size, void* values,
                               cudaDataType t) {
    *out = reinterpret_cast<cusparseDnVecDescr_t>(
      d::make_dense({size, 1, size, values, t, CUSPARSE_ORDER_COL}));
    return CUSPARSE_STATUS_SUCCESS;
  };
  api.cusparseDestroySpMat = [](cusparseConstSpMatDescr_t) {
    --fake_cusparse().live;
    return CUSPARSE_STATUS_SUCCESS;
  };
  api.cusparseDestroyDnMat = [](cusparseConstDnMatDescr_t) {
    --fake_cusparse().live;
    return CUSPARSE_STATUS_SUCCESS;
  };
  api.cusparseDestroyDnVec = [](cusparseConstDnVecDescr_t) {
    --fake_cusparse().live;
    return CUSPARSE_STATUS_SUCCESS;
  };
  api.cusparseCsrSetPointers = [](cusparseSpMatDescr_t m, void* off, void* ind, void* val) {
    d::sp(m)->offsets = off, d::sp(m)->indices = ind, d::sp(m)->values = val;
    return CUSPARSE_STATUS_SUCCESS;
  };
  api.cusparseCsrSetStridedBatch = [](cusparseSpMatDescr_t m, int count, int64_t, int64_t) {
    d::sp(m)->batch = count;
    return CUSPARSE_STATUS_SUCCESS;
  };
  api.cusparseDnMatSetStridedBatch = [](cusparseDnMatDescr_t m, int count, int64_t stride) {
    auto* x = reinterpret_cast<fake_dn*>(m);
    x->batch = count, x->stride = stride;
    return CUSPARSE_STATUS_SUCCESS;
  };
  api.cusparseSpMatGetFormat = [](cusparseConstSpMatDescr_t m, cusparseFormat_t* f) {
    *f = d::sp(m)->format;
    return CUSPARSE_STATUS_SUCCESS;
  };
  api.cusparseSpMatGetStridedBatch = [](cusparseConstSpMatDescr_t m, int* count) {
    *count = d::sp(m)->batch;
    return CUSPARSE_STATUS_SUCCESS;
  };
  api.cusparseSpMatGetSize = [](cusparseConstSpMatDescr_t m, int64_t* r, int64_t* c,
                                int64_t* n) {
    *r = d::sp(m)->rows, *c = d::sp(m)->cols, *n = d::sp(m)->nnz;
    return CUSPARSE_STATUS_SUCCESS;
  };
  api.cusparseConstCsrGet = [](cusparseConstSpMatDescr_t m, int64_t* r, int64_t* c, int64_t* n,
                               const void** off, const void** ind, const void** val,
                               cusparseIndexType_t* ot, cusparseIndexType_t* it,
                               cusparseIndexBase_t* base, cudaDataType* t) {
    const auto* x = d::sp(m);
    if (x->format != CUSPARSE_FORMAT_CSR)
      return CUSPARSE_STATUS_INVALID_VALUE;
    *r = x->rows, *c = x->cols, *n = x->nnz, *off = x->offsets, *ind = x->indices;
    *val = x->values, *ot = x->offsets_type, *it = x->indices_type, *base = x->base;
    *t = x->type;
    return CUSPARSE_STATUS_SUCCESS;
  };
  api.cusparseConstCooGet = [](cusparseConstSpMatDescr_t m, int64_t* r, int64_t* c, int64_t* n,
                               const void** rows, const void** cols, const void** val,
                               cusparseIndexType_t* it, cusparseIndexBase_t* base,
                               cudaDataType* t) {
    const auto* x = d::sp(m);
    if (x->format != CUSPARSE_FORMAT_COO)
      return CUSPARSE_STATUS_INVALID_VALUE;
    *r = x->rows, *c = x->cols, *n = x->nnz, *rows = x->offsets, *cols = x->indices;
    *val = x->values, *it = x->indices_type, *base = x->base, *t = x->type;
    return CUSPARSE_STATUS_SUCCESS;
  };
  api.cusparseConstDnMatGet = [](cusparseConstDnMatDescr_t m, int64_t* r, int64_t* c,
                                 int64_t* ld, const void** values, cudaDataType* t,
                                 cusparseOrder_t* order) {
    const auto* x = d::dn(m);
    *r = x->rows, *c = x->cols, *ld = x->ld, *values = x->values, *t = x->type;
    *order = x->order;
    return CUSPARSE_STATUS_SUCCESS;
  };
  api.cusparseDnMatGetStridedBatch = [](cusparseConstDnMatDescr_t m, int* count,
                                        int64_t* stride) {
    *count = d::dn(m)->batch, *stride = d::dn(m)->stride;
    return CUSPARSE_STATUS_SUCCESS;
  };
  api.cusparseConstDnVecGet = [](cusparseConstDnVecDescr_t v, int64_t* size, const void** values,
                                 cudaDataType* t) {
    *size = d::dn(v)->rows, *values = d::dn(v)->values, *t = d::dn(v)->type;
    return CUSPARSE_STATUS_SUCCESS;
  };
  api.cusparseSpMM_bufferSize = [](cusparseHandle_t, cusparseOperation_t, cusparseOperation_t,
                                   const void*, cusparseConstSpMatDescr_t,
                                   cusparseConstDnMatDescr_t, const void*, cusparseDnMatDescr_t,
                                   cudaDataType, cusparseSpMMAlg_t, size_t* bytes) {
    *bytes = fake_cusparse_buffer;
    return CUSPARSE_STATUS_SUCCESS;
  };
  api.cusparseSpMM = [](cusparseHandle_t, cusparseOperation_t opA, cusparseOperation_t opB,
                        const void* alpha, cusparseConstSpMatDescr_t a,
                        cusparseConstDnMatDescr_t b, const void* beta, cusparseDnMatDescr_t c,
                        cudaDataType compute, cusparseSpMMAlg_t, void*) {
    const auto* A = d::sp(a);
    const auto* B = d::dn(b);
    const auto* C = d::dn(c);
    if (opA != CUSPARSE_OPERATION_NON_TRANSPOSE || opB != CUSPARSE_OPERATION_NON_TRANSPOSE
        || !d::computable(A, compute))
      return CUSPARSE_STATUS_NOT_SUPPORTED;
    if (A->cols != B->rows || A->rows != C->rows || B->cols != C->cols)
      return CUSPARSE_STATUS_INVALID_VALUE;
    ++fake_cusparse().spmm;
    float al = *static_cast<const float*>(alpha), be = *static_cast<const float*>(beta);
    for (int64_t j = 0; j < C->cols; ++j)
      d::csr_times(
        A, al, be, [&](int k) -> float { return d::at(B, k, j); },
        [&](int64_t i) -> float& { return d::at(C, i, j); });
    return CUSPARSE_STATUS_SUCCESS;
  };
  api.cusparseSpMV_bufferSize = [](cusparseHandle_t, cusparseOperation_t, const void*,
                                   cusparseConstSpMatDescr_t, cusparseConstDnVecDescr_t,
                                   const void*, cusparseDnVecDescr_t, cudaDataType,
                                   cusparseSpMVAlg_t, size_t* bytes) {
    *bytes = fake_cusparse_buffer;
    return CUSPARSE_STATUS_SUCCESS;
  };
  api.cusparseSpMV = [](cusparseHandle_t, cusparseOperation_t op, const void* alpha,
                        cusparseConstSpMatDescr_t a, cusparseConstDnVecDescr_t x,
                        const void* beta, cusparseDnVecDescr_t y, cudaDataType compute,
                        cusparseSpMVAlg_t, void*) {
    const auto* A = d::sp(a);
    if (op != CUSPARSE_OPERATION_NON_TRANSPOSE || !d::computable(A, compute))
      return CUSPARSE_STATUS_NOT_SUPPORTED;
    const auto* X = static_cast<const float*>(d::dn(x)->values);
    auto* Y = static_cast<float*>(d::dn(y)->values);
    ++fake_cusparse().spmv;
    d::csr_times(
      A, *static_cast<const float*>(alpha), *static_cast<const float*>(beta),
      [&](int k) { return X[k]; }, [&](int64_t i) -> float& { return Y[i]; });
    return CUSPARSE_STATUS_SUCCESS;
  };
  api.cusparseXcoo2csr = [](cusparseHandle_t, const int* rows, int nnz, int m, int* offsets,
                            cusparseIndexBase_t base) {
    ++fake_cusparse().coo2csr;
    int b = base == CUSPARSE_INDEX_BASE_ONE ? 1 : 0;
    for (int i = 0; i <= m; ++i)
      offsets[i] = static_cast<int>(std::lower_bound(rows, rows + nnz, i + b) - rows) + b;
    return CUSPARSE_STATUS_SUCCESS;
  };
  api.cusparseXcoosort_bufferSizeExt = [](cusparseHandle_t, int, int, int, const int*,
                                          const int*, size_t* bytes) {
    *bytes = fake_cusparse_buffer;
    return CUSPARSE_STATUS_SUCCESS;
  };
  api.cusparseXcoosortByRow = [](cusparseHandle_t, int, int, int nnz, int* rows, int* cols,
                                 int* p, void*) {
    ++fake_cusparse().coosort;
    std::vector<int> order(static_cast<size_t>(nnz));
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int x, int y) {
      return rows[x] != rows[y] ? rows[x] < rows[y] : cols[x] < cols[y];
    });
    std::vector<int> r(rows, rows + nnz), c(cols, cols + nnz), q(p, p + nnz);
    for (size_t i = 0; i < order.size(); ++i) {
      auto from = static_cast<size_t>(order[i]);
      rows[i] = r[from], cols[i] = c[from], p[i] = q[from];
    }
    return CUSPARSE_STATUS_SUCCESS;
  };
}

} // namespace gleam::test
