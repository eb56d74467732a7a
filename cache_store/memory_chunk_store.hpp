#pragma once

#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "cache_store/chunk_store.hpp"
#include "cache_store/lru_index.hpp"

namespace gleam::cache_store {

/// A chunk_store in process memory: for tests, and for nodes that cache
/// nothing across restarts. Entries report the host tier.
///
/// Threading: thread-safe; one internal mutex guards the index, chunk bytes
/// are copied out of shared immutable buffers after the mutex is released.
/// Teardown: destroying the store frees every chunk.
class memory_chunk_store final : public chunk_store {
public:
  /// An empty store.
  memory_chunk_store();

  /// Frees every chunk.
  ~memory_chunk_store() override;

  // -- chunk_store interface (documented there) -------------------------------

  std::string name() const override;
  bool contains(const chunk_key& key) override;
  std::vector<size_t> missing(const std::vector<chunk_key>& keys) override;
  using chunk_store::put;
  [[nodiscard]] caf::error put(const chunk_key& key, const void* data, size_t size,
                               const tenant_set& tenants) override;
  [[nodiscard]] caf::expected<std::vector<uint8_t>>
  get(const chunk_key& key) override;
  [[nodiscard]] caf::expected<size_t>
  get_into(const chunk_key& key, void* dst, size_t capacity) override;
  [[nodiscard]] caf::error erase(const chunk_key& key) override;
  [[nodiscard]] caf::expected<chunk_info>
  entry_info(const chunk_key& key) override;
  [[nodiscard]] caf::error mark_verified(const chunk_key& key) override;
  [[nodiscard]] caf::error add_tenants(const chunk_key& key,
                                       const tenant_set& tenants) override;
  [[nodiscard]] caf::error ref(const chunk_key& key) override;
  [[nodiscard]] caf::error unref(const chunk_key& key) override;
  std::vector<listed_chunk> list(size_t limit) override;
  store_stats stats() override;
  [[nodiscard]] caf::expected<evict_result> evict_to(uint64_t capacity) override;
  [[nodiscard]] caf::error clear() override;

private:
  using buffer = std::shared_ptr<const std::vector<uint8_t>>;

  [[nodiscard]] caf::expected<buffer> lookup(const chunk_key& key);

  std::mutex mtx_;
  lru_index index_;
  std::unordered_map<chunk_key, buffer> blobs_;
  uint64_t hits_ = 0;
  uint64_t misses_ = 0;
};

} // namespace gleam::cache_store
