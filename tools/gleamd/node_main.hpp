#pragma once

#include <functional>
#include <memory>

namespace gleam::executor {
class driver_api;
} // namespace gleam::executor

namespace gleam::tools {

/// Makes the CUDA driver a gleamd process runs its GPUs on; empty (or
/// returning null): the host's libcuda.so.1. Tests pass a fake driver, so
/// that a whole node, its worker processes included, runs without a GPU.
using driver_source = std::function<std::shared_ptr<executor::driver_api>()>;

/// gleamd: parses the command line (--config-file=FILE; --worker and its
/// flags in a worker process, tools/gleamd/worker.hpp), runs the node with
/// the roles FILE names until SIGINT/SIGTERM and stops it within its
/// shutdown deadline. Returns the process's exit status.
int run_gleamd(int argc, char** argv, const driver_source& make_driver = {});

} // namespace gleam::tools
