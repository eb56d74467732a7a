#include "placement/error.hpp"

#include <caf/make_message.hpp>

namespace gleam::placement {

std::string to_string(error_code x) {
  switch (x) {
    case error_code::invalid_snapshot:
      return "invalid_snapshot";
    case error_code::invalid_task:
      return "invalid_task";
    case error_code::not_enough_samples:
      return "not_enough_samples";
    case error_code::invalid_argument:
      return "invalid_argument";
  }
  return "unknown_placement_error";
}

caf::error make_error(error_code x) {
  return caf::error{static_cast<uint8_t>(x), caf::atom("gleam_plc")};
}

caf::error make_error(error_code x, std::string what) {
  return caf::error{static_cast<uint8_t>(x), caf::atom("gleam_plc"),
                    caf::make_message(std::move(what))};
}

} // namespace gleam::placement
