#include "actors/cache_shard.hpp"

#include <cuda.h>

#include <caf/all.hpp>
#include <caf/io/all.hpp>

#include "actors/log.hpp"
#include "cache_store/error.hpp"
#include "executor/cache_ops.hpp"
#include "executor/weight_cache.hpp"

namespace gleam::actors {

namespace {

struct shard_state {
  std::shared_ptr<executor::weight_cache> cache;
  admission rules;
  static inline const char* name = "gleam.cache_shard";
};

/// Why `op` of `batch` may not run on a shard with `rules` ("" = it may):
/// listings and evictions are the admin's, chunk reads a cluster peer's
/// (or the admin's).
std::string refusal(const admission& rules, const proto::OpBatch& batch, const proto::Op& op,
                    bool peer_proven) {
  bool admin = auth_token_matches(rules.admin_token, batch.admin_token());
  switch (op.kind_case()) {
    case proto::Op::kCacheList:
    case proto::Op::kCacheEvict:
      if (admin)
        return {};
      return std::string{"listing or evicting cache entries needs the node's admin token and "
                         "the one presented is "}
             + (batch.admin_token().empty() ? "missing" : "wrong")
             + ": pass gleam-console --token TOKEN or set GLEAM_ADMIN_TOKEN to the [node] "
               "admin-token";
    case proto::Op::kCacheGet:
      if (peer_proven || (!rules.admin_token.empty() && admin))
        return {};
      return "reading a chunk from this cache needs a cluster node's proof: set [node] "
             "cluster-secret on the asking node to this node's";
    default:
      return {};
  }
}

cache_shard_actor::behavior_type
shard_impl(cache_shard_actor::stateful_pointer<shard_state> self,
           std::shared_ptr<executor::weight_cache> cache, admission rules) {
  self->state.cache = std::move(cache);
  self->state.rules = std::move(rules);
  return {
    [=](const pb<proto::OpBatch>& batch) {
      const auto& rules = self->state.rules;
      // True without a cluster secret: then anyone may read a chunk.
      bool peer_proven = proves_cluster(rules.cluster_secret, batch.value);
      proto::BatchReply reply;
      reply.set_session(batch->session());
      for (const auto& op : batch->ops()) {
        auto* r = reply.add_results();
        r->set_seq(op.seq());
        if (auto why = refusal(rules, batch.value, op, peer_proven); !why.empty()) {
          log(log_level::warning, "cache shard refused op {} from {}: {}", op.seq(),
              self->current_sender() ? caf::to_string(self->current_sender()->node())
                                     : std::string{"an anonymous sender"},
              why);
          r->set_status(CUDA_ERROR_NOT_PERMITTED);
          r->set_error(why);
        } else {
          // A request that proves the admin token sees every tenant's
          // entries; any other (a peer's read) the unnamed tenant's view.
          executor::cache_reader reader;
          reader.every_tenant = !rules.admin_token.empty()
                                && auth_token_matches(rules.admin_token, batch->admin_token());
          executor::cache_ops::run_without_device(*self->state.cache, op, *r, reader);
        }
        reply.set_executed_through(op.seq());
      }
      return pb<proto::BatchReply>{std::move(reply)};
    },
  };
}

} // namespace

cache_shard_actor spawn_cache_shard(caf::actor_system& sys,
                                    std::shared_ptr<executor::weight_cache> cache,
                                    admission rules) {
  return sys.spawn<caf::detached>(shard_impl, std::move(cache), std::move(rules));
}

size_t shard_owner(const cache_store::chunk_key& key, size_t count) {
  if (count == 0)
    return 0;
  uint32_t x = 0;
  for (int i = 0; i < 4; ++i)
    x = (x << 8) | key.bytes[static_cast<size_t>(i)];
  return x % count;
}

shard_client::shard_client(caf::actor_system& sys,
                           std::vector<std::pair<std::string, uint16_t>> peers,
                           std::chrono::milliseconds timeout, std::string cluster_secret)
  : sys_(sys), timeout_(timeout), cluster_secret_(std::move(cluster_secret)) {
  for (auto& [host, port] : peers)
    peers_.push_back(peer{std::move(host), port, {}});
}

cache_shard_actor shard_client::connect(peer& p) {
  if (p.shard)
    return p.shard;
  auto now = std::chrono::steady_clock::now();
  if (now < p.retry_after)
    return {};
  p.retry_after = now + std::chrono::seconds{10};
  auto node = sys_.middleman().remote_actor<node_actor>(p.host, p.port);
  if (!node) {
    log(log_level::info, "cache peer {}:{} unreachable: {}", p.host, p.port,
        sys_.render(node.error()));
    return {};
  }
  caf::scoped_actor self{sys_};
  self->request(*node, caf::duration{timeout_}, get_shard_atom::value)
    .receive([&](cache_shard_actor& s) { p.shard = std::move(s); },
             [&](caf::error& e) {
               log(log_level::info, "cache peer {}:{} has no shard: {}", p.host, p.port,
                   sys_.render(e));
             });
  return p.shard;
}

void shard_client::note_rate(size_t bytes, std::chrono::steady_clock::duration took) {
  auto secs = std::chrono::duration<double>(took).count();
  if (bytes < min_rate_sample_bytes || secs <= 0)
    return;
  auto sample = static_cast<double>(bytes) / secs;
  auto old = rate_.load(std::memory_order_relaxed);
  // Fetches are serialized by mtx_: one writer at a time.
  rate_.store(old == 0 ? sample : old + rate_ema * (sample - old), std::memory_order_relaxed);
}

caf::expected<std::vector<uint8_t>> shard_client::fetch(const cache_store::chunk_key& key) {
  std::lock_guard<std::mutex> guard{mtx_};
  auto n = peers_.size();
  auto owner = shard_owner(key, n);
  for (size_t i = 0; i < n; ++i) {
    auto& p = peers_[(owner + i) % n];
    auto shard = connect(p);
    if (!shard)
      continue;
    pb<proto::OpBatch> batch;
    auto* op = batch->add_ops();
    op->set_seq(1);
    op->mutable_cache_get()->set_key(key.to_binary());
    sign_for_cluster(cluster_secret_, batch.value);
    caf::scoped_actor self{sys_};
    std::vector<uint8_t> out;
    bool got = false;
    auto asked = std::chrono::steady_clock::now();
    self->request(shard, caf::duration{timeout_}, std::move(batch))
      .receive(
        [&](pb<proto::BatchReply>& r) {
          if (r->results_size() == 1 && r->results(0).status() == 0) {
            const auto& d = r->results(0).data();
            out.assign(d.begin(), d.end());
            got = true;
          }
        },
        [&](caf::error&) {
          p.shard = nullptr;
          p.retry_after = std::chrono::steady_clock::now() + std::chrono::seconds{10};
        });
    if (got) {
      note_rate(out.size(), std::chrono::steady_clock::now() - asked);
      return out;
    }
  }
  return cache_store::make_error(cache_store::error_code::not_found,
                                 "no cache peer holds chunk " + key.to_string());
}

} // namespace gleam::actors
