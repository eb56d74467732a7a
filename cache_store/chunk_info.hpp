#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>

#include "cache_store/hash.hpp"

namespace gleam::cache_store {

/// Storage tiers, fastest first. Values index arrays and form mask bits.
enum class tier_kind : uint8_t {
  /// Device memory of the server's GPU.
  gpu = 0,
  /// (Pinned) host memory of the server.
  host = 1,
  /// The server's disk (RocksDB).
  disk = 2,
};

/// Number of tier kinds.
constexpr size_t tier_count = 3;

/// Mask bit of tier `x` in `chunk_info::tiers`.
constexpr uint8_t tier_bit(tier_kind x) {
  return static_cast<uint8_t>(1u << static_cast<uint8_t>(x));
}

/// Name of `x`: "gpu", "host" or "disk".
std::string to_string(tier_kind x);

/// Names of tenants ([node] tenants; "" is the unnamed tenant, the
/// single-tenant default), ordered and unique.
using tenant_set = std::set<std::string>;

/// Metadata of one stored chunk.
struct chunk_info {
  /// Length of the chunk in bytes.
  uint64_t size = 0;
  /// Tiers holding the chunk, as `tier_bit` flags.
  uint8_t tiers = 0;
  /// Last put, read or reference, in nanoseconds since the Unix epoch.
  uint64_t last_use_ns = 0;
  /// True once the chunk was verified unchanged on the GPU: a persistent
  /// "weight" entry.
  bool verified = false;
  /// Number of live holders (sessions, fills in progress); an entry with a
  /// reference count above 0 is never evicted or erased. Not persisted: a
  /// reopened store starts every entry at 0, since its holders are gone.
  uint32_t refcount = 0;
  /// The tenants whose uploads brought these bytes (a tenant joins only with
  /// bytes equal to the stored ones). Persisted with the entry where the
  /// store is persistent; an entry stored before tenants were recorded
  /// belongs to the unnamed tenant "". See `may_serve`.
  tenant_set tenants;
};

/// Whether a chunk under `key` with metadata `info` may serve `tenant`: a
/// chunk under a SHA-256 key serves every tenant; a chunk under an XXH3 key
/// (not collision-resistant: one tenant must not be able to plant bytes that
/// another tenant's key finds) serves only the tenants in `info.tenants`.
bool may_serve(const chunk_key& key, const chunk_info& info, const std::string& tenant);

/// One entry of a listing.
struct listed_chunk {
  /// Key of the entry.
  chunk_key key;
  /// Metadata of the entry.
  chunk_info info;
};

/// Counters of a store.
struct store_stats {
  /// Number of stored chunks.
  uint64_t entries = 0;
  /// Sum of the stored chunks' lengths, in bytes.
  uint64_t bytes = 0;
  /// Bytes held per tier, indexed by `tier_kind`.
  std::array<uint64_t, tier_count> tier_bytes{};
  /// Keys found by a lookup (`missing`, `get`, `fill`) since open.
  uint64_t hits = 0;
  /// Keys not found by a lookup since open.
  uint64_t misses = 0;
};

/// What an eviction removed.
struct evict_result {
  /// Number of entries removed.
  uint64_t entries = 0;
  /// Bytes removed.
  uint64_t bytes = 0;
  /// Bytes still stored afterwards; above the requested capacity when the
  /// referenced entries alone exceed it.
  uint64_t remaining_bytes = 0;
};

/// Current time in nanoseconds since the Unix epoch (system clock).
uint64_t now_ns();

} // namespace gleam::cache_store
