#include "executor/error.hpp"

#include <caf/make_message.hpp>

namespace gleam::executor {

std::string to_string(error_code x) {
  switch (x) {
    case error_code::no_driver:
      return "no_driver";
    case error_code::missing_symbol:
      return "missing_symbol";
    case error_code::driver_call_failed:
      return "driver_call_failed";
    case error_code::no_such_device:
      return "no_such_device";
    case error_code::unknown_session:
      return "unknown_session";
    case error_code::no_blas_library:
      return "no_blas_library";
    case error_code::no_vendor_library:
      return "no_vendor_library";
    case error_code::protocol_mismatch:
      return "protocol_mismatch";
    case error_code::no_secure_random:
      return "no_secure_random";
    case error_code::ledger_failed:
      return "ledger_failed";
  }
  return "error_code(" + std::to_string(static_cast<int>(x)) + ")";
}

caf::error make_error(error_code x) {
  return caf::error{static_cast<uint8_t>(x), error_category};
}

caf::error make_error(error_code x, std::string detail) {
  return caf::error{static_cast<uint8_t>(x), error_category,
                    caf::make_message(std::move(detail))};
}

} // namespace gleam::executor
