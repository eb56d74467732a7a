#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "cache_store/chunk_store.hpp"
#include "cache_store/tier.hpp"

namespace gleam::cache_store {

/// The disk tier: a chunk_store (normally a rocksdb_chunk_store) with a
/// capacity. Persistent: `contents` lists what the store kept across a
/// restart, `mark_verified` persists the flag, and `put_for` and
/// `add_tenants` persist the chunk's tenants (`put` stores a chunk of the
/// unnamed tenant ""). The store re-hashes every
/// chunk it is given, so a disk tier never holds bytes that do not match.
class disk_tier final : public tier {
public:
  /// A tier of `capacity` bytes over `store` (owned).
  disk_tier(std::unique_ptr<chunk_store> store, uint64_t capacity);

  /// Destroys the store (closing its database).
  ~disk_tier() override;

  /// The underlying store.
  chunk_store& store() {
    return *store_;
  }

  // -- tier interface (documented there) ------------------------------------

  std::string name() const override;
  tier_kind kind() const override;
  uint64_t capacity() const override;
  uint64_t used() const override;
  bool contains(const chunk_key& key) const override;
  [[nodiscard]] caf::error put(const chunk_key& key, const void* data,
                               size_t size) override;
  [[nodiscard]] caf::error put_for(const chunk_key& key, const void* data, size_t size,
                                   const tenant_set& tenants) override;
  [[nodiscard]] caf::expected<size_t>
  read(const chunk_key& key, void* dst, size_t capacity) override;
  [[nodiscard]] caf::expected<chunk_view> view(const chunk_key& key) override;
  [[nodiscard]] caf::error erase(const chunk_key& key) override;
  [[nodiscard]] caf::error mark_verified(const chunk_key& key) override;
  [[nodiscard]] caf::error add_tenants(const chunk_key& key, const tenant_set& tenants) override;
  std::vector<listed_chunk> contents() override;

private:
  std::unique_ptr<chunk_store> store_;
  uint64_t capacity_;
};

} // namespace gleam::cache_store
