#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <caf/actor_system.hpp>
#include <caf/expected.hpp>

#include "actors/auth.hpp"
#include "actors/interfaces.hpp"
#include "cache_store/hash.hpp"

namespace gleam::executor {
class weight_cache;
} // namespace gleam::executor

namespace gleam::actors {

/// Spawns the node's cache_shard actor over `cache` (detached: reads of
/// large chunks never stall the scheduler threads). It answers batches of
/// the cache ops that need no GPU (see cache_shard_actor); the node actor
/// hands it out on get_shard_atom to peers and the console.
/// With `rules.admin_token`, CacheList and CacheEvict need it
/// (OpBatch.admin_token: they show and drop every tenant's entries); with
/// `rules.cluster_secret`, CacheGet needs a peer's proof of it
/// (OpBatch.cluster_proof) or the admin token. A refused op fails with
/// CUDA_ERROR_NOT_PERMITTED saying what to present; others still run.
cache_shard_actor spawn_cache_shard(caf::actor_system& sys,
                                    std::shared_ptr<executor::weight_cache> cache,
                                    admission rules = {});

/// The owner of `key` among `count` shards: the shard asked first.
/// Keys are uniform hashes, so slices are even.
size_t shard_owner(const cache_store::chunk_key& key, size_t count);

/// Fetches chunks from the cache shards of peer nodes (their node ports,
/// the [cache] peers list), the key's owner first, then the others. Used
/// as the weight_cache's peer_fetch by the gpu_servers, so a miss is
/// served over the backbone before the client is asked.
///
/// Threading: thread-safe; `fetch` blocks the calling thread (a detached
/// gpu_server's) for at most `timeout` per peer asked. A peer that cannot
/// be reached is skipped for 10 s, so a dead peer costs one attempt, not
/// one per chunk.
class shard_client {
public:
  /// Peers as (host, port) of their gleamd nodes; requests carry a proof
  /// of `cluster_secret` ([node] cluster-secret, "" = none).
  shard_client(caf::actor_system& sys, std::vector<std::pair<std::string, uint16_t>> peers,
               std::chrono::milliseconds timeout, std::string cluster_secret = {});

  /// The chunk's bytes from the first peer holding it; not_found (cache
  /// store category) when none does. The caller re-hashes them.
  [[nodiscard]] caf::expected<std::vector<uint8_t>> fetch(const cache_store::chunk_key& key);

  /// Measured rate of successful fetches, bytes per second: a moving
  /// average over fetches of at least `min_rate_sample_bytes` (request to
  /// reply, so per-chunk latency included, as a load through peers sees
  /// it); 0 before the first. Thread-safe, does not wait for a fetch.
  double rate_bytes_per_s() const noexcept {
    return rate_.load(std::memory_order_relaxed);
  }

  /// Smallest fetch that counts towards `rate_bytes_per_s`.
  static constexpr size_t min_rate_sample_bytes = 64 * 1024;

private:
  struct peer {
    std::string host;
    uint16_t port = 0;
    cache_shard_actor shard;
    /// After a failed connect, the peer is skipped until then.
    std::chrono::steady_clock::time_point retry_after{};
  };

  cache_shard_actor connect(peer& p);
  void note_rate(size_t bytes, std::chrono::steady_clock::duration took);

  /// Weight of a new sample in `rate_bytes_per_s`.
  static constexpr double rate_ema = 0.1;

  caf::actor_system& sys_;
  std::chrono::milliseconds timeout_;
  std::string cluster_secret_;
  std::mutex mtx_;
  std::vector<peer> peers_;
  std::atomic<double> rate_{0};
};

} // namespace gleam::actors
