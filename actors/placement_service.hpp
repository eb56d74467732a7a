#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "actors/proto/control.pb.h"
#include "cache_store/hash.hpp"
#include "placement/latency_model.hpp"
#include "placement/policy.hpp"
#include "placement/prepared_snapshot.hpp"
#include "placement/task_profile.hpp"

namespace gleam::actors {

/// Settings of the scheduler's placement.
struct placement_options {
  /// Policy used for real placements (the others exist for comparison).
  placement::policy_kind policy = placement::policy_kind::gleam;
  /// A request that waited this long is placed on the fitting server with
  /// the earliest predicted completion even if the model would rather wait
  /// (a client gives up after its request timeout, 120 s by default).
  std::chrono::milliseconds max_wait{60000};
  /// A placement not seen as a session on its GPU after this long is
  /// forgotten (the client died or went elsewhere).
  std::chrono::milliseconds pending_timeout{30000};
  /// Client → server rate assumed until loads on that server were measured,
  /// bytes per second (1 GbE).
  double default_link_rate_bytes_per_s = 125e6;
};

/// A weight set whose chunks the scheduler knows (a queued request named
/// its chunk keys), kept for cache affinity.
struct keyed_weights {
  /// Its id (weight_set_of).
  placement::weight_set_id id = 0;
  /// The tenant of the request: an XXH3 chunk counts only when it may serve
  /// this tenant.
  std::string tenant;
  /// Bytes of the whole set (the announced upload size, else the profile's).
  uint64_t bytes = 0;
  /// Its chunk keys; malformed ones are left out.
  std::vector<cache_store::chunk_key> keys;
};

/// How much of each of `sets` a node whose weight cache `cache` summarizes
/// (Telemetry.cache) holds for the set's tenant: a key counts when
/// executor::summary_may_serve says the node may hold it for that tenant
/// (SHA-256 chunks for everyone, XXH3 chunks only for their tenants), and
/// the set's bytes are scaled by the fraction of its keys that count.
/// Sorted by weight set id; sets of which nothing counts are left out.
std::vector<placement::cached_weights> cached_weight_sets(const proto::CacheSummary& cache,
                                                          const std::vector<keyed_weights>& sets);

/// The weight set id the scheduler uses for a request of `tenant`: a hash
/// of its chunk keys when it sent any, together with `tenant` when one of
/// them is an XXH3 key (those chunks serve their own tenants only, so equal
/// keys of two tenants are two weight sets); else of its task signature.
placement::weight_set_id weight_set_of(const proto::PlacementRequest& req,
                                       const std::string& tenant = {});

/// The scheduler's placement logic, without actors: a snapshot of the GPUs
/// kept up to date from heartbeats (free memory, open sessions with their
/// learned occupancy and remaining time, control-link RTT, cache contents
/// per tenant: a queued request that names its chunk keys finds the
/// servers that hold them for its tenant),
/// task profiles and γ learned from the SessionEnded records, and a queue of
/// requests the policy decided to hold back. Timestamps are explicit (unix
/// ns for telemetry, `clock` for waits) so tests drive it with a fake clock.
/// Not thread-safe: one actor owns it.
class placement_service {
public:
  using clock = std::chrono::steady_clock;

  /// A request that got a server.
  struct placed {
    uint64_t id = 0;
    proto::PlacementReply reply;
  };

  explicit placement_service(placement_options opts = {});

  /// The GPUs of a node as membership sees it: GpuInfo, telemetry, RTT of
  /// its control link, up/down (nothing is placed on a down node, nor on a
  /// draining one).
  /// `now_ns` is the unix time of the telemetry.
  void on_node(const proto::NodeStatus& node, uint64_t now_ns);

  /// Learns from one finished session: its profile (solo runs), γ of the
  /// GPU (co-located compute phases) and of the network (co-located loads),
  /// and the link rate of its server (solo loads).
  void on_session_ended(const std::string& node_id, const proto::SessionEnded& ended);

  /// Queues a request of `tenant` (the tenant its token names, see
  /// actors/auth.hpp; "" = the unnamed one); returns its placement id.
  /// A request without chunk keys (a client asks before it has hashed any)
  /// gets the key sample of its signature's last run by the same tenant,
  /// so cache affinity works from a task's second run on.
  uint64_t submit(const proto::PlacementRequest& req, const std::string& tenant,
                  clock::time_point now);

  /// Runs the policy over the queue; returns the requests placed now
  /// (removed from the queue). A request no server can ever hold gets a
  /// reply with ok=false saying why.
  std::vector<placed> dispatch(clock::time_point now, uint64_t now_ns);

  /// The model's view of `task` (a signature, or the id of a queued task,
  /// whose tenant it names).
  proto::PlacementExplanation explain(const std::string& task, uint64_t weight_bytes,
                                      uint64_t now_ns) const;

  /// γ per GPU type seen and resource, fitted or default.
  proto::GammaTable gamma() const;

  /// The waiting requests.
  proto::PlacementQueue queue(clock::time_point now) const;

  /// Number of GPUs known (up or down).
  size_t server_count() const noexcept {
    return gpus_.size();
  }

  /// The profile the scheduler would use for `signature` now.
  placement::task_profile profile_of(const std::string& signature,
                                     uint64_t weight_bytes_hint) const;

private:
  struct pending_task {
    uint64_t id = 0;
    std::string signature;
    placement::weight_set_id weights = 0;
    uint64_t weight_bytes = 0;
    uint64_t placed_ns = 0;
    /// The uplink its load crosses (uplink_of its client), no_client if unknown.
    placement::client_index client = placement::no_client;
  };

  struct gpu_entry {
    std::string node_id;
    proto::GpuInfo info;
    std::string data_host;
    uint32_t data_port = 0;
    proto::GpuTelemetry telemetry;
    double rtt_s = 0.001;
    /// Its node's measured peer-fetch rate (Telemetry.peer_fetch_rate).
    double peer_rate = 0;
    bool up = false; // up and not draining: may take new tasks
    bool draining = false; // up, but its node is draining for maintenance
    uint64_t updated_ns = 0;
    std::set<uint64_t> sessions_seen;
    std::deque<pending_task> pending;
  };

  struct waiting {
    uint64_t id = 0;
    proto::PlacementRequest req;
    std::string tenant;
    placement::weight_set_id weights = 0;
    clock::time_point since;
    std::string awaited;
    double predicted_start_s = 0;
  };

  static std::string key(const std::string& node, uint32_t gpu);
  void refresh_server(size_t index, uint64_t now_ns);
  placement::server make_server(const gpu_entry& g, uint64_t now_ns) const;
  placement::task make_task(uint64_t id, const std::string& signature,
                            placement::weight_set_id weights, uint64_t weight_bytes,
                            placement::client_index client = 0) const;
  /// The uplink index of the host of `client_id` ("host:pid"; an id without
  /// a host is its own), no_client when not learned.
  placement::client_index uplink_of(const std::string& client_id) const;
  /// uplink_of as an index into each server's links (unknown_host when not
  /// learned).
  placement::client_index link_of(const std::string& client_id) const;
  /// Same, adding a host not seen yet (up to max_uplinks; every server then
  /// gets a link to it); no_client for an empty id or past the cap.
  placement::client_index learn_uplink(const std::string& client_id);
  /// The measured rate (bytes/s) of the link from `host` (uplink index) to
  /// server `server_key`: the pair's own when it has uploaded alone, else
  /// the lower of the best the host showed to any server and the best the
  /// server took from any host (the narrower end: a Wi-Fi laptop's uplink,
  /// or the server's NIC), else the one of the two known, else the default.
  double link_rate(const std::string& server_key, placement::client_index host) const;
  /// The best pair rate of server `server_key` (0 = none measured).
  double server_best(const std::string& server_key) const;
  /// link_rate of a pair not measured, given its server's server_best.
  double unmeasured_link_rate(double server_best, placement::client_index host) const;
  /// Learns `rate` from a solo upload of `host` to `server_key`.
  void learn_link_rate(const std::string& server_key, placement::client_index host,
                       double rate);
  std::string server_name(size_t index) const;
  proto::PlacementReply reply_for(size_t index, uint64_t id,
                                  const placement::prediction& p, double waited_s,
                                  const std::string& why) const;
  void refresh_gamma();
  /// Forgets the keyed weight sets no queued request uses.
  void forget_unused_weights();

  placement_options opts_;
  placement::profile_store profiles_;
  placement::contention_calibration calibration_;
  std::vector<std::string> gpu_types_;
  std::vector<gpu_entry> gpus_;
  std::map<std::string, size_t> index_of_;
  /// Link rates (bytes/s) measured by solo uploads, an EMA per (server,
  /// client host); unknown_host for clients that sent no id.
  std::map<std::pair<std::string, placement::client_index>, double> pair_rate_;
  /// Per uplink index, the best pair rate of that host (0 = none yet).
  std::vector<double> host_best_;
  /// Client hosts by uplink index (from 1; 0 is unknown_host): the apps of
  /// one host share its NIC, so their loads to all servers share one uplink
  /// in the model, each server's link to it at link_rate.
  std::map<std::string, placement::client_index> uplinks_;
  /// The link index of clients whose host is not known (no shared uplink).
  static constexpr placement::client_index unknown_host = 0;
  static constexpr size_t max_uplinks = 1024;
  /// Each node's weight-cache summary, from its telemetry.
  std::map<std::string, proto::CacheSummary> caches_;
  /// The weight sets of queued requests that named their chunk keys.
  std::map<placement::weight_set_id, keyed_weights> keyed_;
  /// What the last run of a (tenant, signature) wrote through the weight
  /// cache: a sample of its chunk keys and the bytes of all its weights.
  struct learned_weights {
    std::vector<std::string> keys; // chunk_key binary form
    uint64_t bytes = 0;
    uint64_t learned = 0; // order of learning, to forget the oldest
  };
  /// At most this many (tenant, signature) key samples are kept.
  static constexpr size_t max_learned_weights = 4096;
  std::map<std::pair<std::string, std::string>, learned_weights> learned_;
  uint64_t learned_count_ = 0;
  placement::prepared_snapshot prep_;
  std::deque<waiting> queue_;
  uint64_t next_id_ = 1;
  uint64_t placed_total_ = 0;
  placement::server_index cursor_ = 0;
};

} // namespace gleam::actors
