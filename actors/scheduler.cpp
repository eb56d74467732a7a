#include "actors/scheduler.hpp"

#include <caf/all.hpp>

#include "actors/error.hpp"
#include "actors/log.hpp"
#include "actors/membership.hpp"

namespace gleam::actors {

namespace {

struct scheduler_state {
  explicit scheduler_state() : members(std::chrono::milliseconds{2000}) {
  }
  membership members;
  static inline const char* name = "gleam.scheduler";
};

using clock = membership::clock;

scheduler_actor::behavior_type
scheduler_impl(scheduler_actor::stateful_pointer<scheduler_state> self,
               std::chrono::milliseconds down_after) {
  self->state.members = membership{down_after};
  auto sweep_every = std::max(std::chrono::milliseconds{10}, down_after / 4);
  self->delayed_send(self, sweep_every, tick_atom::value);
  return {
    [=](register_atom, const pb<proto::NodeRegister>& reg) {
      self->state.members.on_register(reg.value, clock::now());
      log(log_level::info, "node '{}' registered ({} GPU(s), data {}:{})",
          reg->node_id(), reg->gpus_size(), reg->data_host(), reg->data_port());
      proto::NodeRegistered reply;
      reply.set_node_id(reg->node_id());
      reply.set_down_after_ms(static_cast<uint64_t>(down_after.count()));
      return pb<proto::NodeRegistered>{std::move(reply)};
    },
    [=](heartbeat_atom,
        const pb<proto::Heartbeat>& hb) -> caf::result<pb<proto::HeartbeatAck>> {
      if (!self->state.members.on_heartbeat(hb.value, clock::now()))
        return make_error(error_code::unknown_node,
                          "node '" + hb->node_id() + "' is not registered: register first");
      if (hb->last_rtt_us() > 0)
        self->state.members.on_rtt(hb->node_id(), std::chrono::microseconds{hb->last_rtt_us()});
      proto::HeartbeatAck ack;
      ack.set_node_id(hb->node_id());
      ack.set_seq(hb->seq());
      ack.set_echo_time_ns(hb->sent_time_ns());
      return pb<proto::HeartbeatAck>{std::move(ack)};
    },
    [=](place_atom, const pb<proto::PlacementRequest>& req) {
      auto reply = self->state.members.place(req.value);
      if (reply.ok())
        log(log_level::info, "placed client '{}' on node '{}' gpu {}", req->client_id(),
            reply.node_id(), reply.gpu_index());
      else
        log(log_level::warning, "cannot place client '{}': {}", req->client_id(),
            reply.error());
      return pb<proto::PlacementReply>{std::move(reply)};
    },
    [=](view_atom) {
      return pb<proto::ClusterView>{self->state.members.view(clock::now())};
    },
    [=](tick_atom) {
      for (const auto& id : self->state.members.sweep(clock::now()))
        log(log_level::warning, "node '{}' marked down: no heartbeat for more than {} ms", id,
            down_after.count());
      self->delayed_send(self, sweep_every, tick_atom::value);
    },
  };
}

} // namespace

scheduler_actor spawn_scheduler(caf::actor_system& sys, std::chrono::milliseconds down_after) {
  return sys.spawn(scheduler_impl, down_after);
}

} // namespace gleam::actors
