#pragma once

#include <cstdint>
#include <string>

#include <caf/atom.hpp>
#include <caf/error.hpp>
#include <caf/make_message.hpp>

/// Assigns the value of the caf::expected `expr` to `out`, or returns its
/// error from the enclosing function.
#define GLEAM_CONFIG_TRY(out, expr)                                                            \
  do {                                                                                         \
    auto gleam_config_tmp = (expr);                                                            \
    if (!gleam_config_tmp)                                                                     \
      return std::move(gleam_config_tmp.error());                                              \
    out = std::move(*gleam_config_tmp);                                                        \
  } while (false)

namespace gleam::config {

/// Errors of configuration loading. Every error carries a message naming the
/// file, the key and the problem.
enum class error_code : uint8_t {
  file_unreadable = 1,
  syntax_error,
  unknown_key,
  bad_value,
  missing_key,
  conflicting_keys,
};

/// Name of an error code, e.g. "bad_value".
const char* to_string(error_code x);

/// A CAF error of category "gleam_cfg" carrying `what` as its context.
caf::error make_error(error_code code, std::string what);

/// The human-readable text of any gleam error: the message it carries, or
/// CAF's own rendering for errors without one.
std::string describe(const caf::error& err);

} // namespace gleam::config
