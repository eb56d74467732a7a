#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace gleam::test {

/// A loopback TCP port that was free a moment ago (bound to 0, then closed).
int free_port();

/// Whether something accepts TCP connections on loopback `port`.
bool port_open(int port);

/// Starts `args` (args[0] the binary) with stdout and stderr into `log`
/// and, when `env_name` is set, that environment variable; returns its pid.
pid_t spawn_logged(const std::vector<std::string>& args, const std::string& log,
                   const std::string& env_name = "", const std::string& env_value = "");

/// Sends SIGTERM to `pid` and reaps it.
void stop_process(pid_t pid);

} // namespace gleam::test
