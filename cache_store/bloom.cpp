#include "cache_store/bloom.hpp"

#include <algorithm>

namespace gleam::cache_store {

namespace {

uint64_t read_be(const uint8_t* p) {
  uint64_t x = 0;
  for (int i = 0; i < 8; ++i)
    x = (x << 8) | p[i];
  return x;
}

template <class F>
void probes(const chunk_key& key, size_t bits, uint32_t hashes, F&& f) {
  auto h1 = read_be(key.bytes.data());
  auto h2 = read_be(key.bytes.data() + 8) | 1; // odd: probes never coincide
  h1 ^= static_cast<uint64_t>(key.kind);
  for (uint32_t i = 0; i < hashes; ++i)
    f(static_cast<size_t>((h1 + i * h2) % bits));
}

} // namespace

key_bloom::key_bloom(size_t bytes, uint32_t hashes)
  : bits_(std::max<size_t>(bytes, 1), '\0'), hashes_(std::max<uint32_t>(hashes, 1)) {
}

key_bloom key_bloom::sized_for(size_t keys) {
  return key_bloom{std::clamp<size_t>(keys * 4, 64, default_bytes), default_hashes};
}

key_bloom key_bloom::from_bits(std::string bits, uint32_t hashes) {
  key_bloom out{1, hashes};
  if (!bits.empty())
    out.bits_ = std::move(bits);
  return out;
}

void key_bloom::add(const chunk_key& key) {
  probes(key, bits_.size() * 8, hashes_, [this](size_t b) {
    bits_[b / 8] = static_cast<char>(static_cast<uint8_t>(bits_[b / 8]) | (1u << (b % 8)));
  });
}

bool key_bloom::may_contain(const chunk_key& key) const {
  return may_contain(bits_, hashes_, key);
}

bool key_bloom::may_contain(std::string_view bits, uint32_t hashes, const chunk_key& key) {
  if (bits.empty())
    return false;
  bool all = true;
  probes(key, bits.size() * 8, std::max<uint32_t>(hashes, 1), [&](size_t b) {
    if ((static_cast<uint8_t>(bits[b / 8]) & (1u << (b % 8))) == 0)
      all = false;
  });
  return all;
}

} // namespace gleam::cache_store
