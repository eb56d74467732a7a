#pragma once

#include <cstdint>
#include <string>

#include <caf/atom.hpp>
#include <caf/error.hpp>
#include <caf/message.hpp>

namespace gleam::placement {

/// Error codes of the placement component (category atom "gleam_plc").
/// Zero is reserved by CAF for "no error".
enum class error_code : uint8_t {
  /// A snapshot violates an invariant (free > total memory, a link table
  /// shorter than the client count, an unsorted cache list, ...).
  invalid_snapshot = 1,
  /// A task refers to a client index or GPU type the snapshot does not have.
  invalid_task,
  /// A calibration was asked for before enough informative samples arrived.
  not_enough_samples,
  /// A command-line or configuration value is out of range or unparsable.
  invalid_argument,
};

/// Human-readable name of `x`, e.g. "invalid_snapshot".
std::string to_string(error_code x);

/// Wraps `x` into a CAF error of category "gleam_plc".
caf::error make_error(error_code x);

/// Wraps `x` with a context message saying what failed and what to do.
caf::error make_error(error_code x, std::string what);

} // namespace gleam::placement
