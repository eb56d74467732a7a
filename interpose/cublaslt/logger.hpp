#pragma once

#include <cstdio>
#include <utility>

#include <cublasLt.h>

#include "interpose/blas/common.hpp"

/// The cuBLASLt logger of a remote client (cublasLtLogger*): configured and
/// written on the client, from what the client sees of its cuBLASLt calls.
/// Mask 1 (errors): every cuBLASLt call of the app that returns a failure,
/// with the server's detail when the server answered. Mask 16 (API trace):
/// every cuBLASLt call of the app, by name. Masks 2, 4 and 8 (performance
/// trace, hints, heuristics trace) describe work inside the library on the
/// GPU server: Gleam does not forward them, and says so once on standard
/// error when an app asks for them. The sink is the app's callback (run in
/// the app's process, on the calling thread), else its FILE, else the file
/// it opened, else standard output. CUBLASLT_LOG_LEVEL, CUBLASLT_LOG_MASK
/// and CUBLASLT_LOG_FILE are read at first use, like the vendor's.
/// Thread-safe.
namespace gleam::interpose::cublaslt {

/// cublasLtLoggerSetLevel: 0 to 5, else CUBLAS_STATUS_INVALID_VALUE.
cublasStatus_t logger_set_level(int level) noexcept;

/// cublasLtLoggerSetMask.
cublasStatus_t logger_set_mask(int mask) noexcept;

/// cublasLtLoggerForceDisable: nothing is logged afterwards, whatever is set.
cublasStatus_t logger_force_disable() noexcept;

/// cublasLtLoggerOpenFile: `path` opened for writing (created if needed);
/// CUBLAS_STATUS_INVALID_VALUE for NULL or a path that cannot be opened.
cublasStatus_t logger_open_file(const char* path) noexcept;

/// cublasLtLoggerSetFile: `file` is the app's and stays open.
cublasStatus_t logger_set_file(FILE* file) noexcept;

/// cublasLtLoggerSetCallback (NULL: back to the file sink).
cublasStatus_t logger_set_callback(cublasLtLoggerCallback_t callback) noexcept;

/// Logs the entry of the app's call of `function` (mask 16).
void log_api(const char* function) noexcept;

/// Logs that `function` returned `status` (mask 1), with `detail` when not
/// null; nothing for CUBLAS_STATUS_SUCCESS.
void log_status(const char* function, cublasStatus_t status, const char* detail = nullptr) noexcept;

/// Runs the body `f` of the app's call of `function` like blas::guarded,
/// and logs it.
template <class F>
cublasStatus_t logged(const char* function, F&& f) noexcept {
  log_api(function);
  auto st = blas::guarded(std::forward<F>(f));
  log_status(function, st);
  return st;
}

} // namespace gleam::interpose::cublaslt
