#pragma once

#include "config/error.hpp"

#include <cstdint>
#include <string>

#include <caf/atom.hpp>
#include <caf/error.hpp>
#include <caf/make_message.hpp>

namespace gleam::tools::link_emulator {

/// Errors of the link emulator. Every error carries a message naming the
/// value that failed and what to do instead.
enum class error_code : uint8_t {
  bad_spec = 1,
  bad_rate,
  bad_duration,
  bad_value,
  socket_failed,
  resolve_failed,
  selftest_failed,
  bad_argument,
};

/// Name of an error code, e.g. "bad_rate".
const char* to_string(error_code x);

/// A CAF error of category "gleam_link" carrying `what` as its context.
caf::error make_error(error_code code, std::string what);

/// The text of any gleam error (the message it carries).
using config::describe;

} // namespace gleam::tools::link_emulator
