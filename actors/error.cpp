#include "actors/error.hpp"

#include <caf/atom.hpp>
#include <caf/make_message.hpp>

namespace gleam::actors {

const char* to_string(error_code x) {
  switch (x) {
    case error_code::unknown_node:
      return "unknown_node";
    case error_code::no_such_gpu:
      return "no_such_gpu";
    case error_code::not_a_scheduler:
      return "not_a_scheduler";
    case error_code::connect_failed:
      return "connect_failed";
    case error_code::timeout:
      return "timeout";
    case error_code::no_gpu_server:
      return "no_gpu_server";
    case error_code::session_unknown:
      return "session_unknown";
    case error_code::no_cache:
      return "no_cache";
    case error_code::no_host_function:
      return "no_host_function";
    case error_code::unauthorized:
      return "unauthorized";
    case error_code::draining:
      return "draining";
    case error_code::worker_failed:
      return "worker_failed";
    case error_code::session_ended:
      return "session_ended";
  }
  return "unknown";
}

caf::error make_error(error_code code, std::string what) {
  return caf::error{static_cast<uint8_t>(code), caf::atom("gleam_act"),
                    caf::make_message(std::move(what))};
}

caf::error draining_error(const std::string& node_id) {
  return make_error(error_code::draining,
                    "node '" + node_id
                      + "' is draining for maintenance and opens no new sessions: use "
                        "another GPU server (the scheduler places on the others) or wait "
                        "until an admin runs 'undrain " + node_id + "'");
}

} // namespace gleam::actors
