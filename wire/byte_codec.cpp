#include "wire/byte_codec.hpp"

#include <zstd.h>

#include <type_traits>

namespace gleam::wire {

namespace {

constexpr unsigned max_width = 8;

/// `in` regrouped by byte position in `width`-byte elements; the tail past
/// the last whole element stays last, as it is. Lane by lane over plain
/// pointers, so that the compiler vectorizes the common widths.
template <unsigned W>
void group_lanes(const unsigned char* in, unsigned char* out, size_t elements) {
  for (unsigned lane = 0; lane < W; ++lane) {
    unsigned char* dst = out + lane * elements;
    for (size_t e = 0; e < elements; ++e)
      dst[e] = in[e * W + lane];
  }
}

template <unsigned W>
void ungroup_lanes(const unsigned char* in, unsigned char* out, size_t elements) {
  for (unsigned lane = 0; lane < W; ++lane) {
    const unsigned char* src = in + lane * elements;
    for (size_t e = 0; e < elements; ++e)
      out[e * W + lane] = src[e];
  }
}

template <bool Group>
std::string regroup(std::string_view in, unsigned width) {
  std::string out(in.size(), '\0');
  const auto* src = reinterpret_cast<const unsigned char*>(in.data());
  auto* dst = reinterpret_cast<unsigned char*>(out.data());
  size_t elements = in.size() / width;
  auto run = [&](auto lanes) {
    constexpr unsigned w = decltype(lanes)::value;
    if constexpr (Group)
      group_lanes<w>(src, dst, elements);
    else
      ungroup_lanes<w>(src, dst, elements);
  };
  switch (width) {
    case 2: run(std::integral_constant<unsigned, 2>{}); break;
    case 3: run(std::integral_constant<unsigned, 3>{}); break;
    case 4: run(std::integral_constant<unsigned, 4>{}); break;
    case 5: run(std::integral_constant<unsigned, 5>{}); break;
    case 6: run(std::integral_constant<unsigned, 6>{}); break;
    case 7: run(std::integral_constant<unsigned, 7>{}); break;
    case 8: run(std::integral_constant<unsigned, 8>{}); break;
    default: run(std::integral_constant<unsigned, 1>{}); break;
  }
  for (size_t i = elements * width; i < in.size(); ++i)
    dst[i] = src[i];
  return out;
}

std::string group(std::string_view in, unsigned width) {
  return regroup<true>(in, width);
}

std::string ungroup(std::string_view in, unsigned width) {
  return regroup<false>(in, width);
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
