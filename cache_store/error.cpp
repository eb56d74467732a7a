#include "cache_store/error.hpp"

#include <caf/message.hpp>
#include <caf/make_message.hpp>

namespace gleam::cache_store {

std::string to_string(error_code x) {
  switch (x) {
    case error_code::none: return "none";
    case error_code::hash_mismatch: return "hash_mismatch";
    case error_code::not_found: return "not_found";
    case error_code::bad_key_string: return "bad_key_string";
    case error_code::open_failed: return "open_failed";
    case error_code::db_locked: return "db_locked";
    case error_code::io_error: return "io_error";
    case error_code::corrupt_entry: return "corrupt_entry";
    case error_code::buffer_too_small: return "buffer_too_small";
    case error_code::refcount_underflow: return "refcount_underflow";
    case error_code::in_use: return "in_use";
    case error_code::no_space: return "no_space";
    case error_code::tier_failed: return "tier_failed";
    case error_code::invalid_argument: return "invalid_argument";
    case error_code::collision: return "collision";
  }
  return "error_code(" + std::to_string(static_cast<int>(x)) + ")";
}

caf::error make_error(error_code x) {
  return caf::error{static_cast<uint8_t>(x), error_category};
}

caf::error make_error(error_code x, std::string what) {
  return caf::error{static_cast<uint8_t>(x), error_category,
                    caf::make_message(std::move(what))};
}

bool is(const caf::error& err, error_code x) {
  return err && err.category() == error_category
         && err.code() == static_cast<uint8_t>(x);
}

std::string render(const caf::error& err) {
  if (!err)
    return "no error";
  if (err.category() != error_category)
    return caf::to_string(err);
  std::string result = "cache_store: ";
  result += to_string(static_cast<error_code>(err.code()));
  const auto& ctx = err.context();
  if (ctx.size() == 1 && ctx.match_element<std::string>(0)) {
    result += ": ";
    result += ctx.get_as<std::string>(0);
  }
  return result;
}

} // namespace gleam::cache_store
