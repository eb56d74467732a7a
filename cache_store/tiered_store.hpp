#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include <caf/error.hpp>
#include <caf/expected.hpp>

#include "cache_store/chunk_info.hpp"
#include "cache_store/hash.hpp"
#include "cache_store/tier.hpp"

namespace gleam::cache_store {

/// The server's chunk cache over up to three tiers (GPU memory → pinned host
/// memory → disk), each with its own capacity and its own LRU order.
///
/// - `put` checks the chunk's hash once and writes it into the requested
///   tiers (default: host and disk, so the cache survives a restart).
/// - `fill` serves a chunk from the fastest tier of a caller-given order that
///   holds it, promotes it into the faster tiers of that order (best
///   effort), and hands the sink the fastest copy.
/// - A tier over capacity evicts its least recently used chunks with
///   refcount 0 (unverified before verified). A chunk dropped from every tier
///   is gone from the index.
/// - Each chunk records its tenants (chunk_info::tenants): `put` names the
///   uploading tenant, persistent tiers keep them across restarts, and
///   `fill` and `may_serve` apply the tenant rule (`cache_store::may_serve`).
///
/// Threading: thread-safe; one internal mutex serializes index and tier
/// calls. The fill sink runs without the mutex while the chunk is pinned
/// (its refcount raised), so the sink may call back into the store.
class tiered_store {
public:
  /// Receives the fastest copy of a chunk during `fill`: copies it into the
  /// destination (a device-to-device copy for `tier_kind::gpu`, host-to-
  /// device otherwise). The view is valid only during the call.
  using fill_sink = std::function<caf::error(const chunk_view& src)>;

  /// Builds a store over `tiers` (at most one per kind, any order). Chunks
  /// already held by persistent tiers are indexed; tiers over capacity are
  /// trimmed. `error_code::invalid_argument` for a missing or duplicate tier.
  [[nodiscard]] static caf::expected<std::unique_ptr<tiered_store>>
  make(std::vector<std::unique_ptr<tier>> tiers);

  /// Destroys the tiers (persistent ones keep their chunks).
  ~tiered_store();

  tiered_store(const tiered_store&) = delete;
  tiered_store& operator=(const tiered_store&) = delete;

  /// Adds a tier of a kind the store does not have yet (e.g. the GPU tier,
  /// which exists only once a device is up), indexing what it holds.
  /// `error_code::invalid_argument` for a null tier or a kind already present.
  [[nodiscard]] caf::error add_tier(std::unique_ptr<tier> t);

  /// The tier of kind `x`, or null when not configured.
  tier* find_tier(tier_kind x);

  /// True when any tier holds `key`.
  bool contains(const chunk_key& key);

  /// Indices into `keys` of the keys no tier holds, in increasing order.
  std::vector<size_t> missing(const std::vector<chunk_key>& keys);

  /// Checks that `size` bytes at `data` hash to `key`
  /// (`error_code::hash_mismatch`, nothing stored, otherwise) and stores
  /// them for `tenant` into every configured tier named in `tiers`
  /// (`tier_bit` flags), evicting as needed. Succeeds when at least one tier
  /// took the chunk; otherwise returns the last tier's error (usually
  /// `error_code::no_space`) and stores nothing.
  ///
  /// Tenants: a new chunk records `tenant` as its only tenant (persistent
  /// tiers write it with the bytes). A held chunk under an XXH3 key takes
  /// only bytes equal to the held ones (compared instead of hashed; other
  /// bytes, e.g. a collision, store nothing and give
  /// `error_code::collision`); then, as a held chunk under a SHA-256 key at
  /// once, it records `tenant` too. See `cache_store::may_serve`.
  [[nodiscard]] caf::error put(const chunk_key& key, const void* data,
                               size_t size,
                               uint8_t tiers = tier_bit(tier_kind::host)
                                               | tier_bit(tier_kind::disk),
                               const std::string& tenant = {});

  /// `put` into `tiers` for a chunk the store already holds: checks the
  /// bytes against `key` and adds them to those tiers (with the chunk's
  /// tenants; none are added); `error_code::not_found`
  /// when the entry is gone (erased or evicted meanwhile), so a late copy
  /// never brings back a dropped chunk.
  [[nodiscard]] caf::error extend(const chunk_key& key, const void* data, size_t size,
                                  uint8_t tiers);

  /// Adds the GPU tier's copy of a chunk the store holds from device memory
  /// at `device_src` that holds its bytes (the caller vouches for them: a
  /// destination it just wrote from checked bytes). Best effort like a
  /// promotion; `error_code::not_found` when the entry is gone,
  /// `error_code::invalid_argument` without a device_tier.
  [[nodiscard]] caf::error extend_from_device(const chunk_key& key, const void* device_src,
                                              size_t size);

  /// Evicts least recently used chunks without holders from tier `x` until
  /// `bytes` are free of it or nothing more can go (a chunk in no other
  /// tier leaves the store). Returns the bytes freed: memory for an
  /// allocation of the app that the GPU tier stood in the way of.
  uint64_t shed(tier_kind x, uint64_t bytes);

  /// Hands the chunk under `key` to `sink` from the fastest tier among
  /// `order` (fastest first) that holds it, after promoting it into the
  /// tiers listed before that one. Returns the tier it was found in;
  /// `error_code::not_found` when no tier of `order` holds it, or when the
  /// chunk may not serve `tenant` (`cache_store::may_serve`); the sink's
  /// error when the sink fails.
  ///
  /// `device_dst` (optional) is the device address the sink writes the
  /// chunk to. The GPU tier (a device_tier) is then filled from there after
  /// the sink succeeded, device to device, instead of from host bytes before
  /// it: a hit in the host tier crosses PCIe once.
  [[nodiscard]] caf::expected<tier_kind>
  fill(const chunk_key& key, const std::vector<tier_kind>& order,
       const fill_sink& sink, const void* device_dst = nullptr,
       const std::string& tenant = {});

  /// True when the store holds `key` and the chunk may serve `tenant`
  /// (`cache_store::may_serve` over its recorded tenants).
  bool may_serve(const chunk_key& key, const std::string& tenant);

  /// A host copy of the chunk, read from the fastest host-readable tier
  /// (host, then disk, then GPU); no promotion. For any tenant: callers
  /// that serve a tenant check `may_serve`.
  [[nodiscard]] caf::expected<std::vector<uint8_t>> get(const chunk_key& key);

  /// Drops the chunk from every tier; `error_code::in_use` when referenced.
  [[nodiscard]] caf::error erase(const chunk_key& key);

  /// Marks the chunk a verified weight in the index and in every tier.
  [[nodiscard]] caf::error mark_verified(const chunk_key& key);

  /// Adds one holder (protects the chunk from eviction in every tier).
  [[nodiscard]] caf::error ref(const chunk_key& key);

  /// Removes one holder; `error_code::refcount_underflow` when none.
  [[nodiscard]] caf::error unref(const chunk_key& key);

  /// Metadata of the chunk, with the mask of tiers holding it and its
  /// tenants.
  [[nodiscard]] caf::expected<chunk_info> entry_info(const chunk_key& key);

  /// Keys held by tier `x`, least recently used first.
  std::vector<chunk_key> tier_contents(tier_kind x);

  /// Counters; `tier_bytes` are the tiers' `used()`.
  store_stats stats();

private:
  struct entry {
    chunk_info info;
    std::array<std::list<chunk_key>::iterator, tier_count> pos;
  };

  tiered_store() = default;

  static size_t idx(tier_kind x) {
    return static_cast<size_t>(x);
  }

  // All below require mtx_.
  /// `data` is device memory for `device_src` (the tier then is a
  /// device_tier).
  caf::error add_to_tier(const chunk_key& key, entry& e, tier_kind t,
                         const void* data, size_t size, bool device_src = false);
  /// add_to_tier for every configured tier in `tiers` (tier_bit flags);
  /// the last tier's error, if any.
  caf::error add_to_tiers(const chunk_key& key, entry& e, uint8_t tiers, const void* data,
                          size_t size);
  caf::error make_room(tier_kind t, uint64_t need, const chunk_key* keep);
  /// For `put` of a held chunk: checks the bytes (XXH3) and records
  /// `tenant` in every tier holding it.
  caf::error join(const chunk_key& key, entry& e, const void* data, size_t size,
                  const std::string& tenant);
  /// The chunk's bytes from the fastest host-readable tier holding it.
  caf::error read_locked(const chunk_key& key, const entry& e, std::vector<uint8_t>& out);
  caf::error drop_from_tier(const chunk_key& key, tier_kind t);
  void touch(entry& e);
  caf::error not_found(const chunk_key& key) const;

  std::mutex mtx_;
  std::array<std::unique_ptr<tier>, tier_count> tiers_;
  std::unordered_map<chunk_key, entry> index_;
  /// Per tier, front: least recently used.
  std::array<std::list<chunk_key>, tier_count> lru_;
  uint64_t hits_ = 0;
  uint64_t misses_ = 0;
};

} // namespace gleam::cache_store
