#include "interpose/fatbin/error.hpp"

#include <caf/make_message.hpp>
#include <caf/message.hpp>

namespace gleam::interpose::fatbin {

const char* to_string(error_code x) {
  switch (x) {
    case error_code::null_pointer:
      return "null_pointer";
    case error_code::bad_wrapper_magic:
      return "bad_wrapper_magic";
    case error_code::unsupported_wrapper_version:
      return "unsupported_wrapper_version";
    case error_code::prelinked_list_unterminated:
      return "prelinked_list_unterminated";
    case error_code::bad_magic:
      return "bad_magic";
    case error_code::unsupported_version:
      return "unsupported_version";
    case error_code::bad_header_size:
      return "bad_header_size";
    case error_code::truncated:
      return "truncated";
    case error_code::too_large:
      return "too_large";
    case error_code::bad_entry:
      return "bad_entry";
    case error_code::no_compatible_entry:
      return "no_compatible_entry";
  }
  return "unknown";
}

caf::error make_error(error_code code, std::string what) {
  return caf::error{static_cast<uint8_t>(code), caf::atom("gleam_fbin"),
                    caf::make_message(std::move(what))};
}

} // namespace gleam::interpose::fatbin
