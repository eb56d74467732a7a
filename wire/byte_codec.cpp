#include "wire/byte_codec.hpp"

#include <zstd.h>

namespace gleam::wire {

namespace {

constexpr unsigned max_width = 8;

/// `in` regrouped by byte position in `width`-byte elements; the tail past
/// the last whole element stays last, as it is.
std::string group(std::string_view in, unsigned width) {
  std::string out(in.size(), '\0');
  size_t elements = in.size() / width;
  size_t at = 0;
  for (unsigned lane = 0; lane < width; ++lane)
    for (size_t e = 0; e < elements; ++e)
      out[at++] = in[e * width + lane];
  for (size_t i = elements * width; i < in.size(); ++i)
    out[at++] = in[i];
  return out;
}

std::string ungroup(std::string_view in, unsigned width) {
  std::string out(in.size(), '\0');
  size_t elements = in.size() / width;
  size_t at = 0;
  for (unsigned lane = 0; lane < width; ++lane)
    for (size_t e = 0; e < elements; ++e)
      out[e * width + lane] = in[at++];
  for (size_t i = elements * width; i < in.size(); ++i)
    out[i] = in[at++];
  return out;
}

} // namespace

std::string pack_grouped(std::string_view raw, unsigned width, int level) {
  if (width == 0 || width > max_width)
    width = 1;
  auto grouped = width == 1 ? std::string{raw} : group(raw, width);
  std::string out(1 + ZSTD_compressBound(grouped.size()), '\0');
  out[0] = static_cast<char>(width);
  auto n = ZSTD_compress(out.data() + 1, out.size() - 1, grouped.data(), grouped.size(), level);
  if (ZSTD_isError(n) != 0)
    return {}; // cannot happen with compressBound's room; the caller sends raw
  out.resize(1 + n);
  return out;
}

std::optional<std::string> unpack_grouped(std::string_view packed, uint64_t raw_size) {
  if (packed.empty())
    return std::nullopt;
  auto width = static_cast<unsigned char>(packed[0]);
  if (width == 0 || width > max_width)
    return std::nullopt;
  auto frame = packed.substr(1);
  // The frame must say how large it is, and say raw_size.
  auto content = ZSTD_getFrameContentSize(frame.data(), frame.size());
  if (content == ZSTD_CONTENTSIZE_ERROR || content == ZSTD_CONTENTSIZE_UNKNOWN
      || content != raw_size)
    return std::nullopt;
  std::string grouped(raw_size, '\0');
  auto n = ZSTD_decompress(grouped.data(), grouped.size(), frame.data(), frame.size());
  if (ZSTD_isError(n) != 0 || n != raw_size)
    return std::nullopt;
  if (width == 1)
    return grouped;
  return ungroup(grouped, width);
}

} // namespace gleam::wire
