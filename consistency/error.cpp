#include "consistency/error.hpp"

#include <caf/make_message.hpp>

namespace gleam::consistency {

std::string to_string(error_code x) {
  switch (x) {
    case error_code::window_full:
      return "window_full";
    case error_code::out_of_order:
      return "out_of_order";
    case error_code::malformed_reply:
      return "malformed_reply";
  }
  return "unknown_consistency_error";
}

caf::error make_error(error_code x, std::string what) {
  return caf::error{static_cast<uint8_t>(x), caf::atom("gleam_cns"),
                    caf::make_message(std::move(what))};
}

} // namespace gleam::consistency
