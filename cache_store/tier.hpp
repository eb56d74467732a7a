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

/// Where the bytes of a chunk lie while a fill reads them.
struct chunk_view {
  /// Tier of the memory `data` points into. For `tier_kind::gpu`, `data` is
  /// a device address (a CUdeviceptr) and must not be dereferenced on the
  /// host; otherwise it is host memory.
  tier_kind where = tier_kind::host;
  /// First byte of the chunk.
  const void* data = nullptr;
  /// Length of the chunk in bytes.
  size_t size = 0;
};

/// One storage tier of a tiered_store: plain storage with a capacity. The
/// tiered_store checks hashes, keeps the recency order and decides what to
/// evict; a tier only stores, reads and drops what it is told to.
///
/// Threading: a tier is used by one tiered_store, which serializes every
/// call; implementations need no locking of their own.
class tier {
public:
  /// Releases everything the tier holds.
  virtual ~tier();

  /// Name for logs and statistics, e.g. "host (pinned)".
  virtual std::string name() const = 0;

  /// Which kind of memory this tier holds.
  virtual tier_kind kind() const = 0;

  /// Configured capacity in bytes.
  virtual uint64_t capacity() const = 0;

  /// Bytes currently held.
  virtual uint64_t used() const = 0;

  /// True when the tier holds `key`.
  virtual bool contains(const chunk_key& key) const = 0;

  /// Stores a copy of `size` bytes of host memory at `data` under `key`.
  /// `error_code::no_space` when the tier cannot take it.
  [[nodiscard]] virtual caf::error put(const chunk_key& key, const void* data,
                                       size_t size) = 0;

  /// `put` of a chunk whose tenants are `tenants` (chunk_info::tenants):
  /// persistent tiers record them in the same write as the bytes, so that a
  /// crash never leaves the bytes with tenants they were not stored for.
  /// The default ignores them and calls `put`.
  [[nodiscard]] virtual caf::error put_for(const chunk_key& key, const void* data, size_t size,
                                           const tenant_set& tenants);

  /// Copies the chunk into host memory at `dst` (room for `capacity` bytes)
  /// and returns its length.
  [[nodiscard]] virtual caf::expected<size_t>
  read(const chunk_key& key, void* dst, size_t capacity) = 0;

  /// The chunk's bytes in place, for tiers whose memory a copy engine can
  /// address (host and GPU tiers). Valid until the chunk is erased from this
  /// tier. Tiers without addressable memory (disk) answer
  /// `error_code::invalid_argument`.
  [[nodiscard]] virtual caf::expected<chunk_view> view(const chunk_key& key) = 0;

  /// Drops the chunk; `error_code::not_found` when absent.
  [[nodiscard]] virtual caf::error erase(const chunk_key& key) = 0;

  /// Records that the chunk is a verified weight (persistent tiers store
  /// the flag; the default does nothing).
  [[nodiscard]] virtual caf::error mark_verified(const chunk_key& key);

  /// Records `tenants` as tenants of a chunk the tier holds (persistent
  /// tiers store them; the default does nothing). The tiered_store checked
  /// that they uploaded equal bytes.
  [[nodiscard]] virtual caf::error add_tenants(const chunk_key& key, const tenant_set& tenants);

  /// Chunks the tier already held when it was opened, least recently used
  /// first (persistent tiers; the default is empty).
  virtual std::vector<listed_chunk> contents();
};

/// A GPU-memory tier. The executor implements it over device memory
/// (allocation, host-to-device `put`, device-to-host `read`, device
/// addresses in `view`); this library only defines the contract.
class device_tier : public tier {
public:
  /// Releases the device memory the tier holds.
  ~device_tier() override;

  /// Always `tier_kind::gpu`.
  tier_kind kind() const final {
    return tier_kind::gpu;
  }

  /// `put` from device memory: copies `size` bytes at device address
  /// `device_src` (a CUdeviceptr of the same device) device to device, so a
  /// chunk a fill just wrote to its destination joins the tier without a
  /// second trip over PCIe. `error_code::no_space` as `put`.
  [[nodiscard]] virtual caf::error put_from_device(const chunk_key& key, const void* device_src,
                                                   size_t size) = 0;
};

} // namespace gleam::cache_store
