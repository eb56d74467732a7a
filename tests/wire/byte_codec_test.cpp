// wire/byte_codec.hpp: byte-grouped zstd, as client and server speak it.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>

#include "wire/byte_codec.hpp"

using gleam::wire::pack_grouped;
using gleam::wire::unpack_grouped;

namespace {

/// `n` bytes whose every other byte varies little, as fp16 / bf16 weights'
/// exponent bytes do.
std::string half_like(size_t n) {
  std::string out(n, '\0');
  uint32_t x = 12345;
  for (size_t i = 0; i < n; ++i) {
    x = x * 1103515245u + 12345u;
    out[i] = static_cast<char>(i % 2 == 1 ? 0x3c + ((x >> 16) & 1) : (x >> 16));
  }
  return out;
}

} // namespace

TEST_CASE("byte_codec: every width and tail unpacks to the bytes packed", "[wire][codec]") {
  for (size_t n : {size_t{0}, size_t{1}, size_t{7}, size_t{4096}, size_t{4099}, size_t{65537}}) {
    auto raw = half_like(n);
    for (unsigned width : {1u, 2u, 3u, 4u, 8u}) {
      INFO("n " << n << " width " << width);
      auto packed = pack_grouped(raw, width);
      REQUIRE_FALSE(packed.empty());
      CHECK(static_cast<unsigned char>(packed[0]) == width);
      auto back = unpack_grouped(packed, n);
      REQUIRE(back.has_value());
      CHECK(*back == raw);
    }
  }
}

TEST_CASE("byte_codec: grouping by element width makes half-float-like bytes smaller",
          "[wire][codec]") {
  auto raw = half_like(1 << 20);
  auto plain = pack_grouped(raw, 1);
  auto grouped = pack_grouped(raw, 2);
  CHECK(grouped.size() < plain.size());
  CHECK(grouped.size() < raw.size() * 3 / 4);
}

TEST_CASE("byte_codec: bytes that do not unpack to the declared size are refused",
          "[wire][codec]") {
  auto raw = half_like(10000);
  auto packed = pack_grouped(raw, 2);
  CHECK_FALSE(unpack_grouped(packed, 9999).has_value());
  CHECK_FALSE(unpack_grouped(packed, 10001).has_value());
  CHECK_FALSE(unpack_grouped("", 0).has_value());
  CHECK_FALSE(unpack_grouped(std::string(1, '\0') + packed.substr(1), 10000).has_value());
  CHECK_FALSE(unpack_grouped(std::string(1, '\x09') + packed.substr(1), 10000).has_value());
  CHECK_FALSE(unpack_grouped(packed.substr(0, packed.size() / 2), 10000).has_value());
  auto flipped = packed;
  flipped[flipped.size() / 2] ^= 0x55;
  auto back = unpack_grouped(flipped, 10000);
  CHECK((!back.has_value() || *back != raw)); // never the bytes that were packed
  // Two frames back to back: more than the declared size.
  CHECK_FALSE(unpack_grouped(packed + packed.substr(1), 10000).has_value());
}
