#pragma once

#include <string>
#include <vector>

/// `gleam-run --doctor [-- program args...]`: checks, from the client
/// machine, what a run through Gleam needs and says in plain words what is
/// wrong. Not thread-safe (runs commands and a probe as child processes).
namespace gleam::tools::doctor {

struct options {
  /// Gleam's lib directory (libcudart.so.13, driver/libcuda.so.1, ...).
  std::string lib_dir;
  /// Directory of gleam-run and gleam-probe.
  std::string bin_dir;
  /// The program that would run (empty: check the installation and the
  /// server only); a Python interpreter (or a script run by one) is
  /// checked through the CUDA libraries of its PyTorch.
  std::vector<std::string> program;
  /// Seconds the probe session may take.
  int probe_timeout_s = 60;
};

/// Prints one line per finding ("ok", "warn", "FAIL") to stdout and
/// returns 0 when a run would work, 1 otherwise.
int run(const options& opt);

} // namespace gleam::tools::doctor
