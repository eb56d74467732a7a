#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gleam::wire {

/// How the bytes of a CacheUpload part travel (CacheUpload.codec).
enum class byte_codec : uint32_t {
  /// As they are.
  none = 0,
  /// Byte-grouped, then zstd: one byte giving the element width w (1 to 8),
  /// then one zstd frame of the part's bytes regrouped by their position in
  /// a w-byte element (every element's byte 0, then every byte 1, ...; the
  /// n mod w bytes past the last whole element last, as they are). Float
  /// weights compress far better that way: the exponent bytes of fp16 and
  /// bf16 (and fp32's high bytes) carry a few bits each.
  grouped_zstd = 1,
};

/// `raw` byte-grouped by `width` (1 to 8) and compressed at zstd `level`.
[[nodiscard]] std::string pack_grouped(std::string_view raw, unsigned width, int level = 1);

/// The bytes pack_grouped packed, when `packed` unpacks to exactly
/// `raw_size` bytes; nullopt for anything else (a malformed frame, another
/// size, an unknown width). Allocates raw_size bytes at most: the caller
/// bounds raw_size before.
[[nodiscard]] std::optional<std::string> unpack_grouped(std::string_view packed,
                                                        uint64_t raw_size);

} // namespace gleam::wire
