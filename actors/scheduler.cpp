#include "actors/scheduler.hpp"

#include <map>

#include <caf/all.hpp>

#include "actors/error.hpp"
#include "actors/log.hpp"
#include "actors/membership.hpp"

namespace gleam::actors {

namespace {

using reply_promise = caf::typed_response_promise<pb<proto::PlacementReply>>;

struct scheduler_state {
  explicit scheduler_state() : members(std::chrono::milliseconds{2000}) {
  }
  membership members;
  placement_service placement;
  admission rules; // [node] auth-token and tenants
  std::map<uint64_t, reply_promise> waiting; // placement id -> client
  static inline const char* name = "gleam.scheduler";
};

using clock = membership::clock;
using self_ptr = scheduler_actor::stateful_pointer<scheduler_state>;

uint64_t unix_ns() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                 std::chrono::system_clock::now().time_since_epoch())
                                 .count());
}

/// Feeds membership's view of `node_id` to the placement snapshot.
void refresh_node(self_ptr self, const std::string& node_id) {
  proto::NodeStatus status;
  if (self->state.members.status_of(node_id, clock::now(), status))
    self->state.placement.on_node(status, unix_ns());
}

/// Runs the policy over the queue and answers the clients it placed.
void dispatch(self_ptr self) {
  auto& st = self->state;
  for (auto& x : st.placement.dispatch(clock::now(), unix_ns())) {
    auto i = st.waiting.find(x.id);
    if (i == st.waiting.end())
      continue;
    if (x.reply.ok())
      log(log_level::info, "placed task {} on node '{}' gpu {}: {}", x.id, x.reply.node_id(),
          x.reply.gpu_index(), x.reply.explanation());
    else
      log(log_level::warning, "cannot place task {}: {}", x.id, x.reply.error());
    i->second.deliver(pb<proto::PlacementReply>{std::move(x.reply)});
    st.waiting.erase(i);
  }
}

scheduler_actor::behavior_type scheduler_impl(self_ptr self, std::chrono::milliseconds down_after,
                                              placement_options opts, admission rules) {
  self->state.members = membership{down_after};
  self->state.placement = placement_service{opts};
  self->state.rules = std::move(rules);
  auto sweep_every = std::max(std::chrono::milliseconds{10}, down_after / 4);
  self->delayed_send(self, sweep_every, tick_atom::value);
  return {
    [=](register_atom,
        const pb<proto::NodeRegister>& reg) -> caf::result<pb<proto::NodeRegistered>> {
      const auto& secret = self->state.rules.cluster_secret;
      if (!proves_cluster(secret, reg.value)) {
        log(log_level::warning,
            "registration of node '{}' (data {}:{}) refused: {} cluster proof", reg->node_id(),
            reg->data_host(), reg->data_port(), reg->cluster_proof().empty() ? "no" : "a wrong");
        return make_error(error_code::unauthorized,
                          "the scheduler admits nodes of its cluster only and this node's "
                          "cluster proof is "
                            + std::string{reg->cluster_proof().empty() ? "missing" : "wrong"}
                            + ": set [node] cluster-secret to the scheduler's");
      }
      if (auto why = self->state.members.refuse_register(reg.value, clock::now(), !secret.empty());
          !why.empty()) {
        log(log_level::warning, "registration refused: {}", why);
        return make_error(error_code::unauthorized, why);
      }
      self->state.members.on_register(reg.value, clock::now());
      refresh_node(self, reg->node_id());
      log(log_level::info, "node '{}' registered ({} GPU(s), data {}:{})",
          reg->node_id(), reg->gpus_size(), reg->data_host(), reg->data_port());
      proto::NodeRegistered reply;
      reply.set_node_id(reg->node_id());
      reply.set_down_after_ms(static_cast<uint64_t>(down_after.count()));
      *reply.mutable_drain() = self->state.members.drain_of(reg->node_id());
      dispatch(self);
      return pb<proto::NodeRegistered>{std::move(reply)};
    },
    [=](heartbeat_atom,
        const pb<proto::Heartbeat>& hb) -> caf::result<pb<proto::HeartbeatAck>> {
      const auto& secret = self->state.rules.cluster_secret;
      bool proven = proves_cluster(secret, hb.value);
      bool known = self->state.members.knows(hb->node_id());
      if (!proven || (!secret.empty() && known && !self->state.members.fresh_heartbeat(hb.value))) {
        log(log_level::warning, "heartbeat for node '{}' refused: {}", hb->node_id(),
            proven ? "replayed (not newer than its last)" : "no valid cluster proof");
        return make_error(error_code::unauthorized,
                          "heartbeat refused: its cluster proof is missing, wrong or replayed");
      }
      if (!self->state.members.on_heartbeat(hb.value, clock::now()))
        return make_error(error_code::unknown_node,
                          "node '" + hb->node_id() + "' is not registered: register first");
      if (hb->last_rtt_us() > 0)
        self->state.members.on_rtt(hb->node_id(), std::chrono::microseconds{hb->last_rtt_us()});
      for (const auto& e : hb->telemetry().ended_sessions())
        self->state.placement.on_session_ended(hb->node_id(), e);
      refresh_node(self, hb->node_id());
      dispatch(self);
      proto::HeartbeatAck ack;
      ack.set_node_id(hb->node_id());
      ack.set_seq(hb->seq());
      ack.set_echo_time_ns(hb->sent_time_ns());
      *ack.mutable_drain() = self->state.members.drain_of(hb->node_id());
      return pb<proto::HeartbeatAck>{std::move(ack)};
    },
    [=](place_atom, const pb<proto::PlacementRequest>& req) -> reply_promise {
      auto rp = self->make_response_promise<pb<proto::PlacementReply>>();
      auto tenant = tenant_of(self->state.rules, req->auth_token(), "the scheduler");
      if (!tenant) {
        log(log_level::warning, "placement request from client '{}' refused: {} auth token",
            req->client_id(), req->auth_token().empty() ? "no" : "wrong");
        rp.deliver(std::move(tenant.error()));
        return rp;
      }
      auto id = self->state.placement.submit(req.value, *tenant, clock::now());
      self->state.waiting.emplace(id, rp);
      log(log_level::debug, "task {} from client '{}' ('{}', tenant '{}') queued", id,
          req->client_id(), req->task_signature(), *tenant);
      dispatch(self);
      return rp;
    },
    [=](view_atom) {
      return pb<proto::ClusterView>{self->state.members.view(clock::now())};
    },
    [=](explain_atom, const pb<proto::PlacementExplain>& req) {
      return pb<proto::PlacementExplanation>{
        self->state.placement.explain(req->task(), req->weight_bytes(), unix_ns())};
    },
    [=](gamma_atom) {
      return pb<proto::GammaTable>{self->state.placement.gamma()};
    },
    [=](queue_atom) {
      return pb<proto::PlacementQueue>{self->state.placement.queue(clock::now())};
    },
    [=](drain_atom,
        const pb<proto::DrainRequest>& req) -> caf::result<pb<proto::NodeStatus>> {
      auto& st = self->state;
      if (auto refused = check_admin(st.rules.admin_token, req->admin_token(),
                                     req->state().draining() ? "drain" : "undrain")) {
        log(log_level::warning, "{} of node '{}' refused: {} admin token",
            req->state().draining() ? "drain" : "undrain", req->node_id(),
            req->admin_token().empty() ? "no" : "a wrong");
        return refused;
      }
      if (!st.members.set_drain(req->node_id(), req->state()))
        return make_error(error_code::unknown_node,
                          "no node '" + req->node_id()
                            + "' has registered with this scheduler (gleam-console -c nodes "
                              "lists them)");
      if (req->state().draining())
        log(log_level::info, "node '{}' draining: no new placements{}", req->node_id(),
            req->state().deadline_unix_ms() != 0
              ? "; sessions still open at unix ms " + std::to_string(req->state().deadline_unix_ms())
                  + " are ended"
              : std::string{"; running sessions finish"});
      else
        log(log_level::info, "node '{}' undrained: it takes new placements", req->node_id());
      refresh_node(self, req->node_id());
      dispatch(self);
      proto::NodeStatus status;
      st.members.status_of(req->node_id(), clock::now(), status);
      return pb<proto::NodeStatus>{std::move(status)};
    },
    [=](tick_atom) {
      for (const auto& id : self->state.members.sweep(clock::now())) {
        log(log_level::warning, "node '{}' marked down: no heartbeat for more than {} ms", id,
            down_after.count());
        refresh_node(self, id);
      }
      dispatch(self);
      self->delayed_send(self, sweep_every, tick_atom::value);
    },
  };
}

} // namespace

scheduler_actor spawn_scheduler(caf::actor_system& sys, std::chrono::milliseconds down_after,
                                placement_options opts, admission rules) {
  return sys.spawn(scheduler_impl, down_after, opts, std::move(rules));
}

} // namespace gleam::actors
