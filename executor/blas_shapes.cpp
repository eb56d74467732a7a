#include "executor/blas_shapes.hpp"

namespace gleam::executor::blas_shapes {

size_t element_size(cudaDataType t) noexcept {
  switch (t) {
    case CUDA_R_8I:
    case CUDA_R_8U:
    case CUDA_R_8F_E4M3:
    case CUDA_R_8F_E5M2:
    case CUDA_R_8F_UE8M0:
      return 1;
    case CUDA_R_16F:
    case CUDA_R_16BF:
    case CUDA_R_16I:
    case CUDA_R_16U:
    case CUDA_C_8I:
    case CUDA_C_8U:
      return 2;
    case CUDA_R_32F:
    case CUDA_R_32I:
    case CUDA_R_32U:
    case CUDA_C_16F:
    case CUDA_C_16BF:
    case CUDA_C_16I:
    case CUDA_C_16U:
      return 4;
    case CUDA_R_64F:
    case CUDA_R_64I:
    case CUDA_R_64U:
    case CUDA_C_32F:
    case CUDA_C_32I:
    case CUDA_C_32U:
      return 8;
    case CUDA_C_64F:
    case CUDA_C_64I:
    case CUDA_C_64U:
      return 16;
    default:
      return 0;
  }
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
