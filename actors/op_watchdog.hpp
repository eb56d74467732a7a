#pragma once

#include <chrono>

namespace gleam::actors {

/// [gpu_server] max-op-seconds in a worker process (isolation = process):
/// the GPU server marks the start and end of each batch it executes; a
/// thread started by `start_op_watchdog` ends the process with
/// worker_exit_op_timeout (actors/worker_link.hpp) once one batch has run
/// longer than `limit` (a kernel that never ends, a synchronize of one, a
/// host function that never returns). The session's client then finds its
/// connection gone and its supervisor says why. Without a started watchdog
/// (shared mode, or no limit) the marks cost a relaxed load and store.

/// Starts the watchdog thread (once per process; `limit` > 0).
void start_op_watchdog(std::chrono::milliseconds limit);

/// A batch starts / ended executing.
void op_watchdog_begin() noexcept;
void op_watchdog_end() noexcept;

} // namespace gleam::actors
