#include "config/error.hpp"

#include <caf/message.hpp>

namespace gleam::config {

const char* to_string(error_code x) {
  switch (x) {
    case error_code::file_unreadable:
      return "file_unreadable";
    case error_code::syntax_error:
      return "syntax_error";
    case error_code::unknown_key:
      return "unknown_key";
    case error_code::bad_value:
      return "bad_value";
    case error_code::missing_key:
      return "missing_key";
    case error_code::conflicting_keys:
      return "conflicting_keys";
  }
  return "unknown";
}

caf::error make_error(error_code code, std::string what) {
  return caf::error{static_cast<uint8_t>(code), caf::atom("gleam_cfg"),
                    caf::make_message(std::move(what))};
}

std::string describe(const caf::error& err) {
  if (!err)
    return "no error";
  const auto& ctx = err.context();
  if (ctx.size() == 1 && ctx.match_element<std::string>(0))
    return ctx.get_as<std::string>(0);
  return caf::to_string(err);
}

} // namespace gleam::config
