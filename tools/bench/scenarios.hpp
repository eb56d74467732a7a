#pragma once

#include "tools/bench/scenario.hpp"

namespace gleam::tools::bench {

/// Registers the built-in scenarios: call_latency, bulk, model_load,
/// decode_loop, launch_storm (CUDA programs from build/bench, run locally or through
/// gleam-run) and link (gleam-link's own rate and delay on loopback).
void register_builtin_scenarios(registry& reg);

/// Writes `bytes` of deterministic pseudo-random weight-like data (seeded)
/// to `path`. Fails with io_failed naming the path.
[[nodiscard]] caf::error write_weights_file(const std::string& path, uint64_t bytes,
                                            uint64_t seed);

} // namespace gleam::tools::bench
