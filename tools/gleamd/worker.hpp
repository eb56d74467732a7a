#pragma once

#include <memory>

#include "config/node_config.hpp"

namespace gleam::executor {
class driver_api;
} // namespace gleam::executor

namespace gleam::tools {

/// gleamd --worker --config-file=FILE --worker-gpu=N --worker-first-session=ID
/// (GLEAM_WORKER_KEY in the environment, the control socket on fd 3): a
/// worker process of a GPU server under [gpu_server] isolation = process
/// (actors/session_supervisor.hpp). Serves one session of GPU N in a CUDA
/// context of its own, on a port of its own with the node's network
/// settings (TLS, guards); opens it only for its supervisor and ends with
/// it, or when the supervisor goes away. `driver`: the CUDA driver to run
/// on (null: the host's). Returns the process's exit status.
int run_worker(config::node_config cfg, int argc, char** argv,
               std::shared_ptr<executor::driver_api> driver);

} // namespace gleam::tools
