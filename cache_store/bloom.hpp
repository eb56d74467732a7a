#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "cache_store/hash.hpp"

namespace gleam::cache_store {

/// A Bloom filter over chunk keys, the compact "which chunks does this node
/// hold" summary a gpu_server sends in its telemetry (proto::CacheSummary).
/// Probe i of a key sets bit (h1 + i * h2) mod bits, where h1 and h2 are the
/// key's digest bytes 0..7 and 8..15 read big-endian; the key already is a
/// uniform hash, so no further hashing is needed. Not thread-safe.
class key_bloom {
public:
  /// Default size: 4096 bytes (32768 bits), 4 probes: about 0.02 % false
  /// positives at 1000 keys (16 GB of 16 MiB chunks).
  static constexpr size_t default_bytes = 4096;
  static constexpr uint32_t default_hashes = 4;

  /// An empty filter of `bytes` bytes (at least 1) and `hashes` probes.
  explicit key_bloom(size_t bytes = default_bytes, uint32_t hashes = default_hashes);

  /// An empty filter for about `keys` keys: 32 bits per key (about 0.02 %
  /// false positives with the default probes), at least 64 and at most
  /// `default_bytes` bytes. For the per-tenant filters of a summary, most of
  /// which hold few keys.
  static key_bloom sized_for(size_t keys);

  /// A filter over received bits (CacheSummary.key_bloom / bloom_hashes).
  static key_bloom from_bits(std::string bits, uint32_t hashes);

  /// Sets the key's bits.
  void add(const chunk_key& key);

  /// False when `key` is certainly absent; true when it may be present.
  bool may_contain(const chunk_key& key) const;

  /// `may_contain` on received bits without copying them (false for no
  /// bits: an empty filter).
  static bool may_contain(std::string_view bits, uint32_t hashes, const chunk_key& key);

  /// The bit array (bit i = byte i / 8, bit i % 8).
  const std::string& bits() const {
    return bits_;
  }

  /// Probes per key.
  uint32_t hashes() const {
    return hashes_;
  }

private:
  std::string bits_;
  uint32_t hashes_;
};

} // namespace gleam::cache_store
