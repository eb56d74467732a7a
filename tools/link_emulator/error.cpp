#include "tools/link_emulator/error.hpp"

#include <caf/message.hpp>

namespace gleam::tools::link_emulator {

const char* to_string(error_code x) {
  switch (x) {
    case error_code::bad_spec:
      return "bad_spec";
    case error_code::bad_rate:
      return "bad_rate";
    case error_code::bad_duration:
      return "bad_duration";
    case error_code::bad_value:
      return "bad_value";
    case error_code::socket_failed:
      return "socket_failed";
    case error_code::resolve_failed:
      return "resolve_failed";
    case error_code::selftest_failed:
      return "selftest_failed";
    case error_code::bad_argument:
      return "bad_argument";
  }
  return "unknown";
}

caf::error make_error(error_code code, std::string what) {
  return caf::error{static_cast<uint8_t>(code), caf::atom("gleam_link"),
                    caf::make_message(std::move(what))};
}

} // namespace gleam::tools::link_emulator
