#pragma once

#include <string>

namespace gleam::test {

/// Empty when this machine has a usable CUDA GPU (libcuda.so.1 loads, cuInit
/// succeeds, at least one device); otherwise the reason, for a skip message.
/// Thread-safe; probes once per process.
std::string gpu_unavailable_reason();

/// Path of a file in the build tree ($GLEAM_BUILD_DIR/rel) or the source
/// tree ($GLEAM_SOURCE_DIR/rel), as set by CTest for every gleam test.
std::string build_path(const std::string& rel);
std::string source_path(const std::string& rel);

/// Runs `command` through /bin/sh, returns its exit status and appends its
/// standard output to `out` (stderr is left alone).
int run_command(const std::string& command, std::string& out);

} // namespace gleam::test
