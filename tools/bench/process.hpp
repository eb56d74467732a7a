#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <caf/error.hpp>
#include <caf/expected.hpp>

namespace gleam::tools::bench {

/// Environment variables added to a child's inherited environment.
using env_list = std::vector<std::pair<std::string, std::string>>;

/// A child process started by start_process. Owned by the caller, who must
/// call stop_process (the destructor does not).
struct process {
  /// Process id; -1 when not running.
  int pid = -1;
  /// Name for messages (argv[0]).
  std::string name;
  /// File holding the pid while it runs; empty for none.
  std::string pid_file;
};

/// Starts `argv` with `env` added, stdout and stderr appended to `log_file`
/// (empty: inherited), and writes its pid to `pid_file` (empty: none).
/// Fails with process_failed naming the program.
[[nodiscard]] caf::expected<process> start_process(const std::vector<std::string>& argv,
                                                   const env_list& env,
                                                   const std::string& log_file,
                                                   const std::string& pid_file);

/// Sends SIGTERM, waits up to `grace`, then SIGKILL; reaps it and removes
/// the pid file. Returns the exit status (128+signal when killed).
int stop_process(process& p, std::chrono::milliseconds grace = std::chrono::seconds{5});

/// Stops a process recorded in `pid_file` by an earlier run (stale runs),
/// if that pid is still alive; removes the file.
void stop_pid_file(const std::string& pid_file);

/// Waits until a TCP connect to host:port succeeds. Fails with port_timeout
/// naming the address and the time waited.
[[nodiscard]] caf::error wait_for_port(const std::string& host, uint16_t port,
                                       std::chrono::milliseconds timeout);

/// A free TCP port on 127.0.0.1 (bound and released).
[[nodiscard]] caf::expected<uint16_t> free_port();

/// Exit status and standard output of a finished command.
struct command_output {
  /// Exit status; 128+signal when killed by a signal.
  int exit_code = 0;
  /// Everything it wrote to stdout.
  std::string out;
};

/// Runs `argv` with `env` added, capturing stdout (stderr goes to
/// `log_file`, or is inherited when empty), and waits for it.
[[nodiscard]] caf::expected<command_output> run_capture(const std::vector<std::string>& argv,
                                                        const env_list& env,
                                                        const std::string& log_file = "");

/// True when `path` names an executable file.
bool is_executable(const std::string& path);

/// The "result NAME VALUE" lines of a bench program's output, in order.
std::vector<std::pair<std::string, double>> parse_result_lines(const std::string& out);

} // namespace gleam::tools::bench
