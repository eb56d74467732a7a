#pragma once

#include <cstdint>

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

} // namespace gleam::wire::extents
