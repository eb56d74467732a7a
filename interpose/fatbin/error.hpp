#pragma once

#include "config/error.hpp"

#include <cstdint>
#include <string>

#include <caf/atom.hpp>
#include <caf/error.hpp>

namespace gleam::interpose::fatbin {

/// Errors of fatbin parsing. Every error carries a message naming the field,
/// its value, the limit it broke and what to do.
enum class error_code : uint8_t {
  /// A null pointer was passed where a wrapper or an image was expected.
  null_pointer = 1,
  /// The wrapper handed to __cudaRegisterFatBinary has the wrong magic.
  bad_wrapper_magic,
  /// The wrapper version is neither 1 (plain) nor 2 (linked, with prelinked
  /// fatbins).
  unsupported_wrapper_version,
  /// The prelinked fatbin list of a version-2 wrapper has no terminator
  /// within the allowed count.
  prelinked_list_unterminated,
  /// The image does not start with the fatbin magic 0xba55ed50.
  bad_magic,
  /// The image header version is not 1.
  unsupported_version,
  /// The image header size is below 16 bytes or above its limit.
  bad_header_size,
  /// The image claims more bytes than the buffer holds.
  truncated,
  /// The image is larger than the parser accepts.
  too_large,
  /// An entry header or payload is inconsistent or runs past the image end.
  bad_entry,
  /// No entry of the image can run on the requested device.
  no_compatible_entry,
};

/// Name of an error code, e.g. "bad_magic".
const char* to_string(error_code x);

/// A CAF error of category "gleam_fbin" carrying `what` as its context.
caf::error make_error(error_code code, std::string what);

/// The text of any gleam error (the message it carries).
using config::describe;

} // namespace gleam::interpose::fatbin
