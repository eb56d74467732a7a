#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <unordered_map>
#include <vector>

#include "cache_store/chunk_info.hpp"
#include "cache_store/hash.hpp"

namespace gleam::cache_store {

/// In-memory index of a store: key → metadata, plus the recency order used
/// for LRU eviction. Shared by the store implementations so that both evict
/// by the same policy.
///
/// Eviction policy (`victims`): only entries with refcount 0 are candidates;
/// among them, unverified entries go first, least recently used first, then
/// verified ("weight") entries, least recently used first.
///
/// Not thread-safe: the owning store serializes access.
class lru_index {
public:
  /// Metadata of `key`, or null. The pointer is valid until the next call
  /// that inserts or erases.
  chunk_info* find(const chunk_key& key);

  /// Const overload of `find`.
  const chunk_info* find(const chunk_key& key) const;

  /// Inserts or replaces `key` and makes it the most recently used entry.
  void upsert(const chunk_key& key, const chunk_info& info);

  /// Replaces the whole index by `entries`, ordered by their last use.
  void load(std::vector<listed_chunk> entries);

  /// Makes `key` the most recently used entry, with last use `now`.
  /// No effect when `key` is absent.
  void touch(const chunk_key& key, uint64_t now);

  /// Removes `key`; false when it was absent.
  bool erase(const chunk_key& key);

  /// Removes every entry.
  void clear();

  /// Keys to remove, in removal order, so that at most `capacity` bytes
  /// remain (see the class comment for the policy). May stop short of the
  /// goal when referenced entries alone exceed it.
  std::vector<chunk_key> victims(uint64_t capacity) const;

  /// Up to `limit` entries (0: all), least recently used first.
  std::vector<listed_chunk> list(size_t limit) const;

  /// Number of entries.
  size_t size() const {
    return map_.size();
  }

  /// Sum of the entries' sizes in bytes.
  uint64_t bytes() const {
    return bytes_;
  }

private:
  struct slot {
    chunk_info info;
    std::list<chunk_key>::iterator pos;
  };

  std::unordered_map<chunk_key, slot> map_;
  /// Front: least recently used.
  std::list<chunk_key> order_;
  uint64_t bytes_ = 0;
};

} // namespace gleam::cache_store
