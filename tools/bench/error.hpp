#pragma once

#include "config/error.hpp"

#include <cstdint>
#include <string>

#include <caf/atom.hpp>
#include <caf/error.hpp>
#include <caf/make_message.hpp>

namespace gleam::tools::bench {

/// Errors of gleam-bench. Every error carries a message naming the value
/// that failed and what to do instead.
enum class error_code : uint8_t {
  bad_argument = 1,
  unknown_scenario,
  process_failed,
  port_timeout,
  io_failed,
  plot_failed,
};

/// Name of an error code, e.g. "unknown_scenario".
const char* to_string(error_code x);

/// A CAF error of category "gleam_bnch" carrying `what` as its context.
caf::error make_error(error_code code, std::string what);

/// The text of any gleam error (the message it carries).
using config::describe;

} // namespace gleam::tools::bench
