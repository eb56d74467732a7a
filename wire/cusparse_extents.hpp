#pragma once

#include <cstdint>

#include <cusparse.h>

#include "wire/library_args.hpp"

/// The extents of interpose/spec/cusparse.spec, shared by the client stubs
/// (checks, host scalars) and the server (device ranges). Pure functions of
/// their arguments; thread-safe, no CUDA calls.
namespace gleam::wire::extents {

/// Bytes of one index of cusparseIndexType_t `t`; invalid_extent for a
/// value cuSPARSE does not define.
constexpr uint64_t cusparse_index_bytes(int64_t t) noexcept {
  switch (t) {
    case CUSPARSE_INDEX_16U:
      return 2;
    case CUSPARSE_INDEX_32I:
      return 4;
    case CUSPARSE_INDEX_64I:
      return 8;
    default:
      return invalid_extent;
  }
}

/// Bytes of one value of cudaDataType `t` (type_size).
inline uint64_t cusparse_value_bytes(int64_t t) noexcept {
  return type_size(t);
}

/// Bytes of a host scalar (alpha, beta) of compute type `t`.
inline uint64_t cusparse_scalar_bytes(int64_t t) noexcept {
  return type_size(t);
}

/// Bytes a dense matrix of `rows` x `cols` with leading dimension `ld`
/// and cusparseOrder_t `order` spans from its first value: ld * (outer - 1)
/// + inner values (column-major: outer = cols; row-major: outer = rows);
/// 0 when empty; invalid_extent for a leading dimension below the inner
/// size or an unknown order or type.
inline uint64_t cusparse_dense_bytes(int64_t rows, int64_t cols, int64_t ld, int64_t type,
                                     int64_t order) noexcept {
  if (order == CUSPARSE_ORDER_COL)
    return mul(mat(rows, cols, ld), type_size(type));
  if (order == CUSPARSE_ORDER_ROW)
    return mul(mat(cols, rows, ld), type_size(type));
  return invalid_extent;
}

/// `extent` for a non-null array, 0 for a null one: a descriptor may hold
/// null arrays until they are set (the result of cusparseSpGEMM is made
/// empty), and the vendor refuses a null array where it needs one.
inline uint64_t cusparse_sized(const void* p, uint64_t extent) noexcept {
  return p == nullptr ? 0 : extent;
}

} // namespace gleam::wire::extents
