#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <set>
#include <string>

#include "actors/proto/control.pb.h"
#include "actors/proto/ops.pb.h"

namespace gleam::actors {

/// What one gpu_server measures about its sessions for the scheduler's task
/// profiles and γ fit: phases (load = open until the first kernel launch,
/// compute = from there to close), uploaded bytes, the weights written
/// (cached ones included) with a sample of their chunk keys, peak memory,
/// time spent executing, and which other sessions overlapped each phase. Pure logic
/// with explicit unix-ns timestamps, so tests drive it with a fake clock.
/// Not thread-safe (one gpu_server actor owns it).
class session_meter {
public:
  /// How long ended sessions are kept to compute overlaps of later ones, ns.
  static constexpr uint64_t history_ns = 3600ull * 1'000'000'000ull;
  /// Chunk keys kept per session for the scheduler's cache affinity.
  static constexpr size_t key_sample_size = 256;

  /// A session of `tenant` opened at `now_ns`.
  void on_open(uint64_t session, const std::string& client_id, const std::string& signature,
               const std::string& tenant, uint64_t now_ns);

  /// Accounts one batch of `session` that began executing at `begin_ns` and
  /// ended at `end_ns`; `allocated_bytes` is the session's memory after it.
  /// Returns true when the batch held the session's first kernel launch
  /// (its compute phase began: worth a telemetry update).
  bool on_batch(const proto::OpBatch& batch, uint64_t begin_ns, uint64_t end_ns,
                uint64_t allocated_bytes);

  /// Accounts what one executed batch of its session moved: the batch and
  /// its reply as encoded (a round trip), device-to-host bytes returned,
  /// weight-cache chunks found and missing, and the waits its client
  /// reported with it (OpBatch.client_waits, cumulative).
  void on_reply(const proto::OpBatch& batch, const proto::BatchReply& reply);

  /// The session closed (or expired) at `now_ns`: its record, with the
  /// overlaps of every other session of this GPU. False when unknown.
  bool on_close(uint64_t session, uint64_t now_ns, uint32_t gpu_index,
                const std::string& gpu_name, proto::SessionEnded& out);

  /// Adds the meter's fields (signature, first launch, uploaded and
  /// downloaded bytes, round trips and their bytes, cache hits and misses,
  /// the client's waits, launches so far) to a summary of an open session.
  void annotate(proto::SessionSummary& summary) const;

private:
  /// Orders chunk keys (binary form) by digest: the smallest digests of a
  /// set are a uniform sample of it whatever the upload order.
  struct by_digest {
    bool operator()(const std::string& a, const std::string& b) const;
  };

  struct record {
    std::string client_id;
    std::string signature;
    std::string tenant;
    uint64_t opened_ns = 0;
    uint64_t first_launch_ns = 0; // 0 = still loading
    uint64_t closed_ns = 0;       // 0 = open
    uint64_t uploaded_bytes = 0;
    uint64_t weight_bytes = 0;
    std::set<std::string, by_digest> key_sample;
    uint64_t peak_allocated_bytes = 0;
    uint64_t busy_ns = 0;
    uint64_t launches = 0; // kernel and graph launches: the progress counter
    uint64_t downloaded_bytes = 0;
    uint64_t batches = 0;
    uint64_t batch_bytes = 0;
    uint64_t reply_bytes = 0;
    uint64_t cache_hits = 0;
    uint64_t cache_misses = 0;
    uint64_t client_waits = 0;
    uint64_t client_wait_ns = 0;
  };

  static uint64_t overlap(uint64_t a0, uint64_t a1, uint64_t b0, uint64_t b1);

  std::map<uint64_t, record> open_;
  std::deque<std::pair<uint64_t, record>> ended_;
};

} // namespace gleam::actors
