// The client-side cuBLASLt logger (logger.hpp) and its six entry points.
#include "interpose/cublaslt/logger.hpp"

#include <unistd.h>

#include <cstdlib>
#include <ctime>
#include <mutex>
#include <string>

#include "interpose/blas/common.hpp"
#include "interpose/cublasLt_export.hpp"

namespace gleam::interpose::cublaslt {

namespace {

/// The mask bits of the vendor's levels 1 to 5.
constexpr int error_mask = 1;
constexpr int api_mask = 16;
constexpr int server_masks = 2 | 4 | 8;

struct logger_state {
  std::mutex mutex;
  bool loaded = false;
  bool disabled = false;
  int mask = 0;
  cublasLtLoggerCallback_t callback = nullptr;
  FILE* app_file = nullptr;
  /// The file of cublasLtLoggerOpenFile / CUBLASLT_LOG_FILE (owned).
  FILE* own_file = nullptr;
};

logger_state& state() {
  static auto* s = new logger_state;
  return *s;
}

/// The mask of level `level` (1 to 5): that level and every one below it.
int mask_of(int level) {
  return level <= 0 ? 0 : (1 << level) - 1;
}

void warn_server_masks(int mask) {
  if ((mask & server_masks) != 0)
    blas::report_unsupported("cuBLASLt log masks 2, 4 and 8 (performance trace, hints, "
                             "heuristics trace)",
                             "those messages are written by the library on the GPU server and "
                             "Gleam does not forward them; errors (1) and the API trace (16) "
                             "are logged on this machine");
}

FILE* open_log(const char* path) {
  // The vendor's CUBLASLT_LOG_FILE may name the process id with %i.
  std::string name = path;
  if (auto at = name.find("%i"); at != std::string::npos)
    name.replace(at, 2, std::to_string(::getpid()));
  return std::fopen(name.c_str(), "w");
}

/// Reads the environment once; the caller holds the mutex.
void load(logger_state& s) {
  if (s.loaded)
    return;
  s.loaded = true;
  if (const char* level = std::getenv("CUBLASLT_LOG_LEVEL"))
    s.mask = mask_of(std::atoi(level));
  if (const char* mask = std::getenv("CUBLASLT_LOG_MASK"))
    s.mask = std::atoi(mask);
  if (const char* file = std::getenv("CUBLASLT_LOG_FILE"))
    s.own_file = open_log(file);
  warn_server_masks(s.mask);
}

void emit(int bit, int level, const char* kind, const char* function, const std::string& message) {
  auto& s = state();
  std::lock_guard<std::mutex> guard{s.mutex};
  load(s);
  if (s.disabled || (s.mask & bit) == 0)
    return;
  if (s.callback != nullptr) {
    s.callback(level, function, message.c_str());
    return;
  }
  FILE* out = s.app_file != nullptr ? s.app_file : s.own_file != nullptr ? s.own_file : stdout;
  char stamp[32] = {};
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  std::strftime(stamp, sizeof(stamp), "%Y-%m-%d %H:%M:%S", &tm);
  std::fprintf(out, "[%s][cublasLt][%d][%s][%s] %s\n", stamp, static_cast<int>(::getpid()), kind,
               function, message.c_str());
  std::fflush(out);
}

} // namespace

cublasStatus_t logger_set_level(int level) noexcept {
  if (level < 0 || level > 5)
    return CUBLAS_STATUS_INVALID_VALUE;
  return logger_set_mask(mask_of(level));
}

cublasStatus_t logger_set_mask(int mask) noexcept {
  auto& s = state();
  std::lock_guard<std::mutex> guard{s.mutex};
  load(s);
  s.mask = mask;
  warn_server_masks(mask);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t logger_force_disable() noexcept {
  auto& s = state();
  std::lock_guard<std::mutex> guard{s.mutex};
  load(s);
  s.disabled = true;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t logger_open_file(const char* path) noexcept {
  if (path == nullptr)
    return CUBLAS_STATUS_INVALID_VALUE;
  auto& s = state();
  std::lock_guard<std::mutex> guard{s.mutex};
  load(s);
  FILE* f = open_log(path);
  if (f == nullptr)
    return CUBLAS_STATUS_INVALID_VALUE;
  if (s.own_file != nullptr)
    std::fclose(s.own_file);
  s.own_file = f;
  s.app_file = nullptr;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t logger_set_file(FILE* file) noexcept {
  auto& s = state();
  std::lock_guard<std::mutex> guard{s.mutex};
  load(s);
  s.app_file = file;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t logger_set_callback(cublasLtLoggerCallback_t callback) noexcept {
  auto& s = state();
  std::lock_guard<std::mutex> guard{s.mutex};
  load(s);
  s.callback = callback;
  return CUBLAS_STATUS_SUCCESS;
}

void log_api(const char* function) noexcept {
  try {
    emit(api_mask, 5, "Api", function, "called");
  } catch (...) {
    // Logging never fails the call it describes.
  }
}

void log_status(const char* function, cublasStatus_t status, const char* detail) noexcept {
  if (status == CUBLAS_STATUS_SUCCESS)
    return;
  try {
    std::string message = std::string{"failed with "} + blas::status_name(status);
    if (detail != nullptr && *detail != '\0')
      message += std::string{": "} + detail;
    emit(error_mask, 1, "Error", function, message);
  } catch (...) {
    // Logging never fails the call it describes.
  }
}

} // namespace gleam::interpose::cublaslt

namespace lt = gleam::interpose::cublaslt;

extern "C" {

GLEAM_INTERPOSE_EXPORT cublasStatus_t cublasLtLoggerSetCallback(cublasLtLoggerCallback_t callback) {
  return lt::logger_set_callback(callback);
}

GLEAM_INTERPOSE_EXPORT cublasStatus_t cublasLtLoggerSetFile(FILE* file) {
  return lt::logger_set_file(file);
}

GLEAM_INTERPOSE_EXPORT cublasStatus_t cublasLtLoggerOpenFile(const char* logFile) {
  return lt::logger_open_file(logFile);
}

GLEAM_INTERPOSE_EXPORT cublasStatus_t cublasLtLoggerSetLevel(int level) {
  return lt::logger_set_level(level);
}

GLEAM_INTERPOSE_EXPORT cublasStatus_t cublasLtLoggerSetMask(int mask) {
  return lt::logger_set_mask(mask);
}

GLEAM_INTERPOSE_EXPORT cublasStatus_t cublasLtLoggerForceDisable() {
  return lt::logger_force_disable();
}

} // extern "C"
