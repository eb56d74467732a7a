#pragma once

/// Logs `name` once per process, with `reason`, to standard error (the
/// driver surface's unsupported functions; they return
/// CUDA_ERROR_NOT_SUPPORTED). Thread-safe; both strings are copied.
extern "C" void gleam_driver_report_unsupported(const char* name,
                                                const char* reason) noexcept;
