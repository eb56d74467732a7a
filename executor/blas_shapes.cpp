#include "executor/blas_shapes.hpp"

#include "wire/library_args.hpp"

namespace gleam::executor::blas_shapes {

size_t element_size(cudaDataType t) noexcept {
  auto bytes = wire::extents::type_size(t);
  return bytes == wire::extents::invalid_extent ? 0 : static_cast<size_t>(bytes);
}

std::optional<uint64_t> matrix_extent(int64_t rows, int64_t cols, int64_t ld,
                                      size_t element) noexcept {
  if (rows < 0 || cols < 0 || element == 0)
    return std::nullopt;
  if (rows == 0 || cols == 0)
    return uint64_t{0};
  if (ld < rows)
    return std::nullopt;
  uint64_t span = 0;
  uint64_t bytes = 0;
  if (__builtin_mul_overflow(static_cast<uint64_t>(cols - 1), static_cast<uint64_t>(ld), &span)
      || __builtin_add_overflow(span, static_cast<uint64_t>(rows), &span)
      || __builtin_mul_overflow(span, static_cast<uint64_t>(element), &bytes))
    return std::nullopt;
  return bytes;
}

std::optional<uint64_t> batched_extent(uint64_t single, int64_t stride, int64_t batch,
                                       size_t element) noexcept {
  if (batch < 0 || stride < 0)
    return std::nullopt;
  if (batch == 0 || single == 0)
    return uint64_t{0};
  uint64_t offset = 0;
  uint64_t total = 0;
  if (__builtin_mul_overflow(static_cast<uint64_t>(batch - 1), static_cast<uint64_t>(stride),
                             &offset)
      || __builtin_mul_overflow(offset, static_cast<uint64_t>(element), &offset)
      || __builtin_add_overflow(offset, single, &total))
    return std::nullopt;
  return total;
}

} // namespace gleam::executor::blas_shapes
