#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include <caf/error.hpp>
#include <caf/expected.hpp>

#include "actors/proto/control.pb.h"
#include "actors/proto/ops.pb.h"
#include "cache_store/host_memory_tier.hpp"
#include "cache_store/tiered_store.hpp"

namespace gleam::executor {

/// Where a node's weight cache lives and how big its tiers are (the node
/// config's [cache] section).
struct weight_cache_options {
  /// Directory of the RocksDB disk tier; empty: no disk tier (nothing
  /// survives a restart).
  std::string dir;
  /// Capacity of the disk tier in bytes.
  uint64_t disk_capacity = 64ull << 30;
  /// Capacity of the (pinned) host-memory tier in bytes; 0: none.
  uint64_t host_capacity = 8ull << 30;
};

class driver_api;

/// Whose chunks a read by key or a listing may see (weight_cache::read,
/// list): one tenant's (the tenant rule: shared SHA-256 chunks and the
/// tenant's own XXH3 chunks), or, for an admin who proved the node's
/// [node] admin-token, every tenant's.
struct cache_reader {
  /// The tenant whose view it is; "" = the unnamed tenant.
  std::string tenant;
  /// An admin's view: every entry, whichever tenants it serves.
  bool every_tenant = false;
};

/// The server side of the weight cache: one per node, shared by the node's
/// GPU servers. Owns the tiered store and applies the cache's rules:
///
/// - uploads are re-hashed and refused on a mismatch (nothing stored);
///   accepted chunks go to the host tier as unverified entries, and a
///   background writer copies them to the disk tier while the link brings
///   more (the GPU server never waits for the disk; without a host tier the
///   upload writes the disk itself);
/// - a chunk becomes a persistent weight only when `verify` sees the bytes
///   read back from the GPU unchanged: it is then marked verified (and
///   written to the disk if it is not there yet). An unverified chunk whose
///   device bytes changed is dropped from the store, the disk included;
/// - a miss may be served by `peer_fetch` (a peer cache shard) before the
///   client is asked;
/// - tenants ([node] tenants): a chunk under an XXH3 key serves only the
///   tenants that uploaded its bytes (XXH3 is not collision-resistant: one
///   tenant must not be able to plant bytes another tenant's key finds); a
///   tenant that uploads bytes equal to the stored ones joins them, other
///   bytes under the same key are not cached for it. SHA-256 keys are shared
///   by every tenant. The store keeps each chunk's tenants
///   (chunk_info::tenants; on disk in the chunk's index record), so they
///   survive a restart; this class keeps no list of its own. Chunks stored
///   before tenants were recorded belong to the unnamed tenant "" only.
///   `tenant` "" everywhere is the single-tenant default.
///
/// Threading: thread-safe (the store locks; counters are atomic;
/// `set_peer_fetch` may be called at any time).
class weight_cache {
public:
  /// Fetches a chunk from a peer shard: its bytes, or an error (not_found
  /// when no peer holds it).
  using peer_fetch = std::function<caf::expected<std::vector<uint8_t>>(
    const cache_store::chunk_key& key)>;

  /// Opens the store of `opts` (creating `dir` if missing). Errors: the
  /// cache_store's (e.g. db_locked when another gleamd holds `dir`).
  [[nodiscard]] static caf::expected<std::shared_ptr<weight_cache>>
  open(const weight_cache_options& opts);

  /// From now on, host-tier buffers are pinned (cuMemHostAlloc, portable)
  /// through `api`, falling back to malloc when pinning fails; `api` is kept
  /// alive as long as the cache. Call from a thread with a current context.
  void use_pinned_memory(std::shared_ptr<driver_api> api);

  /// The process exits after this cache is destroyed: host-tier buffers are
  /// then left for the OS to reclaim instead of being freed one by one
  /// (unpinning gigabytes of pinned chunks takes seconds). Everything else
  /// closes as usual: the disk writer finishes, the index is closed.
  void leave_memory_at_exit();

  /// Adds the GPU tier (it needs a device, so it comes after `open`).
  [[nodiscard]] caf::error attach_device_tier(std::unique_ptr<cache_store::tier> t) {
    return store_->add_tier(std::move(t));
  }

  /// The underlying store.
  cache_store::tiered_store& store() {
    return *store_;
  }

  /// Checks that `size` bytes at `data` hash to `key`. Error
  /// `cache_store::error_code::hash_mismatch` (counted as rejected) naming
  /// both hashes when they differ.
  [[nodiscard]] caf::error check(const cache_store::chunk_key& key, const void* data,
                                 size_t size);

  /// Stores an uploaded chunk after `check` passed, as an unverified entry.
  /// A full store is not an error for the upload (the chunk is only not
  /// cached); counts the bytes as received. `device_dst`: the device memory
  /// the upload was just written to; the GPU tier (if any) copies it from
  /// there, so the next load of the same weights is device to device.
  void accept_upload(const cache_store::chunk_key& key, const void* data, size_t size,
                     const std::string& tenant = {}, const void* device_dst = nullptr);

  /// Frees up to `bytes` of the GPU tier (least recently used first; the
  /// chunks stay in the slower tiers). Returns the bytes freed. For an app
  /// allocation that did not fit: the app comes before the cache.
  uint64_t shed_gpu(uint64_t bytes) {
    return store_->shed(cache_store::tier_kind::gpu, bytes);
  }

  /// Bytes the GPU tier holds (shed_gpu can give them to the app).
  uint64_t gpu_bytes();

  /// Whether the store holds chunk `key` and it may serve `tenant` (the
  /// tenant rule above, over the tenants the store recorded).
  bool may_serve(const cache_store::chunk_key& key, const std::string& tenant) {
    return store_->may_serve(key, tenant);
  }

  /// Outcome of verifying one chunk placed on a GPU.
  enum class verify_outcome {
    /// The device bytes matched: the chunk now is a persistent weight.
    verified,
    /// The chunk already was a verified weight (nothing to do).
    already_verified,
    /// The device bytes changed: an unverified entry was dropped.
    dropped,
  };

  /// The weight rule for chunk `key` placed on a GPU by a session of
  /// `tenant`, given the `size` bytes read back from the device region it
  /// was written to. A chunk gone from the store meanwhile is stored again
  /// from those bytes, for `tenant`.
  verify_outcome verify(const cache_store::chunk_key& key, const void* device_bytes,
                        size_t size, const std::string& tenant = {});

  /// Waits until the background writer has put every accepted upload on
  /// the disk tier (or found it dropped). A session's end calls it, so that
  /// what the session uploaded survives a kill -9 of the server after it.
  void wait_persisted();

  ~weight_cache();
  weight_cache(const weight_cache&) = delete;
  weight_cache& operator=(const weight_cache&) = delete;

  /// True when the store holds `key` as a verified weight.
  bool is_verified(const cache_store::chunk_key& key);

  /// Hands chunk `key` to `sink` from the fastest tier holding it; on a
  /// local miss asks `peer_fetch` (then stores what came back). Returns the
  /// tier it came from (`tier_kind::disk` for a peer's chunk); not_found on a
  /// miss everywhere. `from_peer` is set when a peer supplied it.
  /// `device_dst`: where the sink writes (tiered_store::fill: the GPU tier
  /// is then filled from there, device to device).
  [[nodiscard]] caf::expected<cache_store::tier_kind>
  fill(const cache_store::chunk_key& key, const cache_store::tiered_store::fill_sink& sink,
       bool* from_peer = nullptr, const std::string& tenant = {},
       const void* device_dst = nullptr);

  /// The bytes of chunk `key` from the fastest tier holding it, if
  /// `reader` may see it (cache_reader); not_found otherwise, the same
  /// error for a miss and for another tenant's chunk. No peer is asked.
  [[nodiscard]] caf::expected<std::vector<uint8_t>> read(const cache_store::chunk_key& key,
                                                         const cache_reader& reader);

  /// A fatbin image by key, or not_found (also when it may not serve
  /// `tenant`): `read` as text.
  [[nodiscard]] caf::expected<std::string> image(const cache_store::chunk_key& key,
                                                 const std::string& tenant = {});

  /// Stores a fatbin image of `tenant` (code never changes on the GPU:
  /// verified at once, host and disk). A full store is not an error.
  void put_image(const cache_store::chunk_key& key, std::string_view image,
                 const std::string& tenant = {});

  /// Installs (or, with an empty function, removes) the peer lookup.
  void set_peer_fetch(peer_fetch f);

  /// Counts `bytes` written to a device from the store.
  void add_filled(uint64_t bytes) {
    filled_bytes_ += bytes;
  }

  /// Counters and tier sizes, for the CacheStats op and the console.
  proto::CacheStatsReply stats();

  /// Up to `limit` entries (0: 1000) that `reader` may see (cache_reader:
  /// a tenant's shared SHA-256 chunks and own XXH3 chunks; an admin's,
  /// every entry), most recently used first; `total` counts those entries
  /// only.
  proto::CacheListing list(uint32_t limit, const cache_reader& reader);

  /// Erases the named entries (text keys), or every entry with `all`.
  /// Entries in use stay and are named in the reply; keys this store lacks
  /// are skipped; a malformed key is an error naming it.
  [[nodiscard]] caf::expected<proto::CacheEvicted> evict(const std::vector<std::string>& keys,
                                                         bool all);

  /// The compact summary for telemetry: counts and a Bloom filter over the
  /// keys (cache_store::key_bloom), and per tenant a Bloom filter over the
  /// XXH3 keys that may serve it (proto::TenantCache); test keys against it
  /// with `summary_may_serve`.
  proto::CacheSummary summary();

private:
  weight_cache() = default;

  struct pinning;
  struct persister;

  /// The background writer's work: `key` onto the disk tier.
  void persist(const cache_store::chunk_key& key);

  weight_cache_options opts_;
  std::shared_ptr<pinning> pinning_;
  std::unique_ptr<cache_store::tiered_store> store_;
  std::unique_ptr<persister> persist_;
  std::mutex peer_mtx_;
  peer_fetch peer_;

  /// Counts a chunk the store refused for its tenant (`error_code::collision`).
  void count_refusal(const caf::error& err);
  std::atomic<uint64_t> received_bytes_{0};
  std::atomic<uint64_t> filled_bytes_{0};
  std::atomic<uint64_t> rejected_{0};
  std::atomic<uint64_t> verified_{0};
  std::atomic<uint64_t> dropped_{0};
  std::atomic<uint64_t> peer_bytes_{0};
};

/// Whether a node whose weight cache `summary` describes (weight_cache::summary)
/// may hold chunk `key` for `tenant`: a SHA-256 key in the filter over every
/// key, an XXH3 key in the filter of `tenant`. Bloom filters: false
/// positives are possible, false negatives are not.
bool summary_may_serve(const proto::CacheSummary& summary, const cache_store::chunk_key& key,
                       const std::string& tenant);

} // namespace gleam::executor
