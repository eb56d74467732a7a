#pragma once

#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "tools/link_emulator/link_emulator.hpp"
#include "tools/link_emulator/selftest.hpp"

namespace gleam::tools::link_emulator {

/// The command line of gleam-link, parsed.
struct link_options {
  /// Emulator settings (listen, target, link, cuts, control port).
  emulator_config emulator;
  /// Run the loopback self-measurement instead of forwarding.
  bool selftest = false;
  /// Settings of the self-measurement.
  selftest_options selftest_opts;
  /// Print usage and exit.
  bool help = false;
};

/// Usage text of gleam-link.
std::string link_usage();

/// Parses gleam-link's arguments (without argv[0]). Errors (bad_argument,
/// or the spec parser's) name the option and value.
[[nodiscard]] caf::expected<link_options>
parse_link_options(const std::vector<std::string>& args);

/// Splits "HOST:PORT" or "PORT" (host then stays `host`).
[[nodiscard]] caf::error parse_host_port(const std::string& text, std::string& host,
                                         uint16_t& port);

} // namespace gleam::tools::link_emulator
