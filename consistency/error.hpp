#pragma once

#include <cstdint>
#include <string>

#include <caf/atom.hpp>
#include <caf/error.hpp>
#include <caf/message.hpp>

namespace gleam::consistency {

/// Error codes of the consistency component (category atom "gleam_cns").
/// Zero is reserved by CAF for "no error".
enum class error_code : uint8_t {
  /// A batch was sent while max_pending_batch batches were in flight.
  window_full = 1,
  /// A reply came for a batch that is not the oldest one in flight.
  out_of_order,
  /// A reply answered ops outside its batch, or out of seq order.
  malformed_reply,
};

/// Human-readable name of `x`, e.g. "window_full".
std::string to_string(error_code x);

/// Wraps `x` with a context message saying what failed and what to do.
caf::error make_error(error_code x, std::string what);

} // namespace gleam::consistency
