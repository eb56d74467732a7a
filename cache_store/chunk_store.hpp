#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <caf/error.hpp>
#include <caf/expected.hpp>

#include "cache_store/chunk_info.hpp"
#include "cache_store/hash.hpp"

namespace gleam::cache_store {

/// Content-addressed store of chunks: each chunk is stored under the hash of
/// its full content and only ever accepted when its bytes hash to its key.
///
/// Recency: `put`, `get`, `get_into`, `ref` and a hit in `missing` make an
/// entry the most recently used. Eviction (`evict_to`) removes entries with
/// refcount 0 only: unverified entries first, least recently used first,
/// then verified ("weight") entries in the same order.
///
/// Statistics: every key looked up by `missing`, `get` or `get_into` counts
/// as one hit or one miss.
///
/// Implementations are thread-safe unless their class comment says otherwise.
class chunk_store {
public:
  /// Closes the store; persistent stores keep their entries.
  virtual ~chunk_store();

  /// Name of the implementation, for logs ("memory", "rocksdb").
  virtual std::string name() const = 0;

  /// True when a chunk with `key` is stored.
  virtual bool contains(const chunk_key& key) = 0;

  /// Indices into `keys` of the keys that are not stored, in increasing
  /// order: the chunks the client still has to send. One call for a whole
  /// copy's keys.
  virtual std::vector<size_t> missing(const std::vector<chunk_key>& keys) = 0;

  /// Stores `size` bytes at `data` under `key` for `tenants` (recorded as
  /// chunk_info::tenants, written together with the bytes) after re-hashing
  /// them with the key's algorithm. A mismatch stores nothing and returns
  /// `error_code::hash_mismatch`. Storing an existing key refreshes its
  /// recency and adds `tenants` to the entry's; under an XXH3 key new
  /// tenants join only when `data` equals the stored bytes, otherwise
  /// nothing changes and the answer is `error_code::collision`. `data` is
  /// copied; the caller keeps ownership.
  [[nodiscard]] virtual caf::error put(const chunk_key& key, const void* data, size_t size,
                                       const tenant_set& tenants) = 0;

  /// `put` for the unnamed tenant "".
  [[nodiscard]] caf::error put(const chunk_key& key, const void* data, size_t size) {
    return put(key, data, size, tenant_set{std::string{}});
  }

  /// Convenience overload of `put` for a byte vector.
  [[nodiscard]] caf::error put(const chunk_key& key, const std::vector<uint8_t>& bytes,
                               const tenant_set& tenants = tenant_set{std::string{}}) {
    return put(key, bytes.data(), bytes.size(), tenants);
  }

  /// A copy of the chunk stored under `key`; `error_code::not_found` when
  /// absent.
  [[nodiscard]] virtual caf::expected<std::vector<uint8_t>>
  get(const chunk_key& key) = 0;

  /// Copies the chunk stored under `key` into `dst` (room for `capacity`
  /// bytes) and returns its length; `error_code::buffer_too_small` (nothing
  /// copied) when it does not fit, `error_code::not_found` when absent.
  [[nodiscard]] virtual caf::expected<size_t>
  get_into(const chunk_key& key, void* dst, size_t capacity) = 0;

  /// Removes the chunk under `key`; `error_code::not_found` when absent,
  /// `error_code::in_use` when its refcount is above 0.
  [[nodiscard]] virtual caf::error erase(const chunk_key& key) = 0;

  /// Metadata of the chunk under `key`; `error_code::not_found` when absent.
  [[nodiscard]] virtual caf::expected<chunk_info>
  entry_info(const chunk_key& key) = 0;

  /// Marks the chunk under `key` as verified unchanged (a persistent weight
  /// entry); persisted where the store is persistent.
  [[nodiscard]] virtual caf::error mark_verified(const chunk_key& key) = 0;

  /// Adds `tenants` to the tenants of the chunk under `key` (persisted where
  /// the store is persistent) without looking at bytes: the caller vouches
  /// that they uploaded bytes equal to the stored ones (see `put`).
  /// `error_code::not_found` when absent.
  [[nodiscard]] virtual caf::error add_tenants(const chunk_key& key,
                                               const tenant_set& tenants) = 0;

  /// Adds one holder to the chunk under `key`, protecting it from eviction.
  [[nodiscard]] virtual caf::error ref(const chunk_key& key) = 0;

  /// Removes one holder; `error_code::refcount_underflow` when there is none.
  [[nodiscard]] virtual caf::error unref(const chunk_key& key) = 0;

  /// Up to `limit` entries (0: all), least recently used first.
  virtual std::vector<listed_chunk> list(size_t limit) = 0;

  /// Current counters.
  virtual store_stats stats() = 0;

  /// Evicts (see the class comment for the order) until at most `capacity`
  /// bytes remain or only referenced entries are left.
  [[nodiscard]] virtual caf::expected<evict_result> evict_to(uint64_t capacity) = 0;

  /// Removes every entry, referenced or not, and resets nothing else.
  [[nodiscard]] virtual caf::error clear() = 0;
};

/// `error_code::hash_mismatch` with a message naming both keys when `size`
/// bytes at `data` do not hash to `key`; no error otherwise.
[[nodiscard]] caf::error verify_content(const chunk_key& key, const void* data,
                                        size_t size);

/// True when `tenants` names a tenant that `info.tenants` lacks.
bool adds_tenants(const chunk_info& info, const tenant_set& tenants);

/// `error_code::collision` for other bytes offered under the stored `key`.
[[nodiscard]] caf::error collision_error(const chunk_key& key);

} // namespace gleam::cache_store
