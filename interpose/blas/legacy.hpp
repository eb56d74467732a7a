#pragma once

#include <cublas_api.h>

/// The legacy cuBLAS API (cublas.h): one implicit handle per process,
/// created by cublasInit and destroyed by cublasShutdown, and one error
/// state that each core function sets and cublasGetError reads and
/// clears. The legacy functions forward to their cublas_v2 counterparts on
/// that handle (stubs generated from the spec's "forward" lines). Part of
/// the client runtime; thread-safe.
namespace gleam::interpose::blas {

/// The implicit handle, or null before cublasInit / after cublasShutdown.
cublasHandle_t legacy_handle() noexcept;

/// Sets the implicit handle (cublasInit, cublasShutdown).
void set_legacy_handle(cublasHandle_t h) noexcept;

/// Records `s` as the legacy error state when it is a failure.
void legacy_record(cublasStatus_t s) noexcept;

/// Reads and clears the legacy error state (cublasGetError).
cublasStatus_t legacy_take_error() noexcept;

/// Runs `f(handle)` (returning cublasStatus_t) on the implicit handle and
/// records its status; without cublasInit records NOT_INITIALIZED.
template <class F>
void legacy_run(const char* name, F&& f) noexcept {
  static_cast<void>(name);
  auto h = legacy_handle();
  if (h == nullptr)
    return legacy_record(CUBLAS_STATUS_NOT_INITIALIZED);
  try {
    legacy_record(f(h));
  } catch (...) {
    legacy_record(CUBLAS_STATUS_INTERNAL_ERROR);
  }
}

/// The same for a function that returns its result: `f(handle, &result)`;
/// R{} when it failed.
template <class R, class F>
R legacy_value(const char* name, F&& f) noexcept {
  R result{};
  legacy_run(name, [&](cublasHandle_t h) {
    auto s = f(h, &result);
    if (s != CUBLAS_STATUS_SUCCESS)
      result = R{};
    return s;
  });
  return result;
}

/// The legacy character arguments as the v2 enums: 'N'/'n', 'T'/'t',
/// 'C'/'c'; 'U'/'u', 'L'/'l' (fill); 'L'/'l', 'R'/'r' (side); 'N'/'n',
/// 'U'/'u' (diag). Any other character gives a value the v2 function
/// refuses with CUBLAS_STATUS_INVALID_VALUE.
cublasOperation_t legacy_op(char c) noexcept;
cublasFillMode_t legacy_fill(char c) noexcept;
cublasSideMode_t legacy_side(char c) noexcept;
cublasDiagType_t legacy_diag(char c) noexcept;

} // namespace gleam::interpose::blas
