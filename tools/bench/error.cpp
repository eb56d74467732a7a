#include "tools/bench/error.hpp"

#include <caf/message.hpp>

namespace gleam::tools::bench {

const char* to_string(error_code x) {
  switch (x) {
    case error_code::bad_argument:
      return "bad_argument";
    case error_code::unknown_scenario:
      return "unknown_scenario";
    case error_code::process_failed:
      return "process_failed";
    case error_code::port_timeout:
      return "port_timeout";
    case error_code::io_failed:
      return "io_failed";
    case error_code::plot_failed:
      return "plot_failed";
  }
  return "unknown";
}

caf::error make_error(error_code code, std::string what) {
  return caf::error{static_cast<uint8_t>(code), caf::atom("gleam_bnch"),
                    caf::make_message(std::move(what))};
}

} // namespace gleam::tools::bench
