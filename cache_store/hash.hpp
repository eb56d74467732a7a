#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <caf/expected.hpp>

namespace gleam::cache_store {

/// Content address of one chunk: a hash of the chunk's full content, never of
/// a prefix. The algorithm is part of the key, so an XXH3-128 key and a
/// SHA-256 key never compare equal, even for the same content.
struct chunk_key {
  /// Hash algorithm of a key. Values are stable (they are stored on disk).
  enum class algo : uint8_t {
    /// XXH3-128: the default, fast, for chunks of one tenant.
    xxh3_128 = 1,
    /// SHA-256: collision-resistant, for chunks shared across tenants.
    sha256 = 2,
  };

  /// Algorithm that produced `bytes`.
  algo kind = algo::xxh3_128;

  /// Number of meaningful digest bytes: 16 (XXH3-128) or 32 (SHA-256).
  uint8_t size = 0;

  /// Digest in canonical (big-endian) byte order; bytes past `size` are 0.
  std::array<uint8_t, 32> bytes{};

  /// Digest size in bytes of `x`: 16 or 32.
  static constexpr uint8_t digest_size(algo x) {
    return x == algo::sha256 ? 32 : 16;
  }

  /// Text form: "xxh3:<32 lowercase hex>" or "sha256:<64 lowercase hex>".
  std::string to_string() const;

  /// Parses the text form written by `to_string`; hex digits in any case.
  [[nodiscard]] static caf::expected<chunk_key> from_string(std::string_view text);

  /// Compact binary form (1 byte algorithm + digest), used as storage key.
  std::string to_binary() const;

  /// Parses the binary form written by `to_binary`.
  [[nodiscard]] static caf::expected<chunk_key> from_binary(std::string_view data);
};

/// Equality over algorithm and digest.
bool operator==(const chunk_key& x, const chunk_key& y);

/// Negation of `==`.
bool operator!=(const chunk_key& x, const chunk_key& y);

/// Total order: algorithm first, then digest bytes.
bool operator<(const chunk_key& x, const chunk_key& y);

/// Text form of `x` (see chunk_key::to_string); found by ADL and by CAF.
std::string to_string(const chunk_key& x);

/// Name of an algorithm: "xxh3" or "sha256".
std::string to_string(chunk_key::algo x);

/// Hashes `size` bytes at `data` (the full content) with `kind`.
/// Thread-safe; `data` may be null when `size` is 0.
chunk_key hash_chunk(chunk_key::algo kind, const void* data, size_t size);

/// Splits `data` into consecutive chunks of `chunk_size` bytes (the last one
/// may be shorter) and hashes each one; result[i] is the key of chunk i, the
/// same as `hash_chunk` on that chunk. Uses up to `threads` threads (0: one
/// per hardware thread), chunk-parallel; small buffers are hashed on the
/// calling thread. Empty when `size` is 0; `chunk_size` 0 means one chunk.
std::vector<chunk_key> hash_chunks(chunk_key::algo kind, const void* data,
                                   size_t size, size_t chunk_size,
                                   unsigned threads);

} // namespace gleam::cache_store

namespace std {

/// Hash functor so chunk_key can key unordered containers.
template <>
struct hash<gleam::cache_store::chunk_key> {
  size_t operator()(const gleam::cache_store::chunk_key& x) const noexcept {
    // The key already is a uniformly distributed hash: use its first bytes.
    size_t result = 0;
    for (size_t i = 0; i < sizeof(size_t); ++i)
      result = (result << 8) | x.bytes[i];
    return result ^ static_cast<size_t>(x.kind);
  }
};

} // namespace std
