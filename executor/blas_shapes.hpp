#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include <library_types.h>

/// Pure arithmetic behind the executor's checks of cuBLAS arguments: how
/// many bytes from its start address a matrix argument touches. Every
/// function returns nothing for arguments cuBLAS itself rejects (a leading
/// dimension below the row count, negative sizes) or whose extent overflows
/// 64 bits. No CUDA calls; thread-safe.
namespace gleam::executor::blas_shapes {

/// Bytes of one element of `t`; 0 for types without whole-byte elements or
/// unknown to this code.
size_t element_size(cudaDataType t) noexcept;

/// Bytes a column-major matrix of `rows` x `cols` elements of `element`
/// bytes with leading dimension `ld` (elements) spans from its first
/// element: ((cols - 1) * ld + rows) * element; 0 for an empty matrix.
std::optional<uint64_t> matrix_extent(int64_t rows, int64_t cols, int64_t ld,
                                      size_t element) noexcept;

/// Bytes `batch` matrices of `single` bytes each, `stride` elements of
/// `element` bytes apart, span: (batch - 1) * stride * element + single.
std::optional<uint64_t> batched_extent(uint64_t single, int64_t stride, int64_t batch,
                                       size_t element) noexcept;

/// Rows and columns of a gemm operand as stored: op(X) is `rows` x `cols`
/// when `trans` is CUBLAS_OP_N (0), and transposed otherwise.
struct dims {
  int64_t rows = 0;
  int64_t cols = 0;
};

/// The stored shape of op(X) = `op_rows` x `op_cols` under `trans`.
inline dims stored(int trans, int64_t op_rows, int64_t op_cols) noexcept {
  return trans == 0 ? dims{op_rows, op_cols} : dims{op_cols, op_rows};
}

/// True for CUBLAS_OP_N, CUBLAS_OP_T, CUBLAS_OP_C and CUBLAS_OP_CONJG.
inline bool valid_op(int trans) noexcept {
  return trans >= 0 && trans <= 3;
}

} // namespace gleam::executor::blas_shapes
