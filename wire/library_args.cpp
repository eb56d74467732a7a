#include "wire/library_args.hpp"

#include <library_types.h>

namespace gleam::wire::extents {

uint64_t mul(uint64_t a, uint64_t b) noexcept {
  uint64_t out = 0;
  if (a == invalid_extent || b == invalid_extent || __builtin_mul_overflow(a, b, &out))
    return invalid_extent;
  return out;
}

uint64_t add(uint64_t a, uint64_t b) noexcept {
  uint64_t out = 0;
  if (a == invalid_extent || b == invalid_extent || __builtin_add_overflow(a, b, &out))
    return invalid_extent;
  return out;
}

uint64_t vec(int64_t n, int64_t inc) noexcept {
  if (n <= 0)
    return 0;
  // |inc| of INT64_MIN does not fit: no vector that long exists anyway.
  if (inc == INT64_MIN)
    return invalid_extent;
  auto step = static_cast<uint64_t>(inc < 0 ? -inc : inc);
  return add(1, mul(static_cast<uint64_t>(n - 1), step));
}

uint64_t mat(int64_t rows, int64_t cols, int64_t ld) noexcept {
  if (rows <= 0 || cols <= 0)
    return 0;
  if (ld < rows)
    return invalid_extent;
  return add(mul(static_cast<uint64_t>(ld), static_cast<uint64_t>(cols - 1)),
             static_cast<uint64_t>(rows));
}

uint64_t packed(int64_t n) noexcept {
  if (n <= 0)
    return 0;
  auto u = static_cast<uint64_t>(n);
  // n * (n + 1) is even: halve the even factor first.
  return u % 2 == 0 ? mul(u / 2, add(u, 1)) : mul(u, add(u, 1) / 2);
}

uint64_t strided(uint64_t one, int64_t stride, int64_t batch) noexcept {
  if (batch <= 0)
    return 0;
  if (stride < 0)
    return invalid_extent;
  return add(one, mul(static_cast<uint64_t>(stride), static_cast<uint64_t>(batch - 1)));
}

uint64_t type_size(int64_t t) noexcept {
  switch (static_cast<cudaDataType>(t)) {
    case CUDA_R_8I:
    case CUDA_R_8U:
    case CUDA_R_8F_E4M3:
    case CUDA_R_8F_E5M2:
    case CUDA_R_8F_UE8M0:
      return 1;
    case CUDA_R_16F:
    case CUDA_R_16BF:
    case CUDA_C_8I:
    case CUDA_C_8U:
    case CUDA_R_16I:
    case CUDA_R_16U:
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
    case CUDA_C_32F:
    case CUDA_R_64I:
    case CUDA_R_64U:
    case CUDA_C_32I:
    case CUDA_C_32U:
      return 8;
    case CUDA_C_64F:
    case CUDA_C_64I:
    case CUDA_C_64U:
      return 16;
    default:
      return invalid_extent;
  }
}

} // namespace gleam::wire::extents
