#pragma once

#include <cstdint>

#include "wire/library_args.hpp"

/// The extent helpers of interpose/spec/cusolver.spec, beside those of
/// wire/library_args.hpp (in the same namespace, which the generated client
/// and server code of every library opens): the shapes cuSOLVER's dense
/// routines read and write, from their arguments. Both sides evaluate the
/// checks that use them (the client at the call), the server the device
/// extents. Header-only, no CUDA calls, thread-safe.
namespace gleam::wire::extents {

/// min(a, b), at least 0 (a count of elements).
constexpr int64_t least(int64_t a, int64_t b) noexcept {
  int64_t m = a < b ? a : b;
  return m > 0 ? m : 0;
}

/// Whether `job` is one of gesvd's jobu / jobvt characters: 'A' (all
/// vectors), 'S' (the first min(m, n)), 'O' (overwrite A) or 'N' (none).
constexpr bool svd_job_ok(int64_t job) noexcept {
  return job == 'A' || job == 'S' || job == 'O' || job == 'N';
}

/// Columns of U (m rows) that gesvd writes for `jobu`: all m for 'A',
/// min(m, n) for 'S', none for 'O' (A holds them) and 'N'.
constexpr int64_t svd_u_cols(int64_t jobu, int64_t m, int64_t n) noexcept {
  return jobu == 'A' ? (m > 0 ? m : 0) : jobu == 'S' ? least(m, n) : 0;
}

/// Rows of VT (n columns) that gesvd writes for `jobvt`: all n for 'A',
/// min(m, n) for 'S', none for 'O' and 'N'.
constexpr int64_t svd_vt_rows(int64_t jobvt, int64_t m, int64_t n) noexcept {
  return jobvt == 'A' ? (n > 0 ? n : 0) : jobvt == 'S' ? least(m, n) : 0;
}

/// Elements of gesvd's rwork: min(m, n) - 1, at least 0.
constexpr int64_t svd_rwork(int64_t m, int64_t n) noexcept {
  return least(m, n) > 0 ? least(m, n) - 1 : 0;
}

/// x - 1, at least 0: the Householder scalars and off-diagonal of a
/// tridiagonal reduction of order x (sytrd's e and tau, orgtr's and
/// ormtr's tau).
constexpr int64_t less_one(int64_t x) noexcept {
  return x > 1 ? x - 1 : 0;
}

/// Elements of laswp's devIpiv that rows k1..k2 read, incx apart (LAPACK's
/// k1 + (k2 - k1) * |incx|, 1-based): 0 when k2 < k1 (nothing is read);
/// invalid_extent when k1 < 1 (an index before the array) or incx is 0.
constexpr uint64_t laswp_pivots(int64_t k1, int64_t k2, int64_t incx) noexcept {
  if (k2 < k1)
    return 0;
  if (k1 < 1 || incx == 0)
    return invalid_extent;
  uint64_t step = static_cast<uint64_t>(incx < 0 ? -incx : incx);
  uint64_t span = static_cast<uint64_t>(k2 - k1);
  if (step != 0 && span > (invalid_extent - static_cast<uint64_t>(k1)) / step)
    return invalid_extent;
  return static_cast<uint64_t>(k1) + span * step;
}

} // namespace gleam::wire::extents
