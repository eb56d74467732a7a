#include "actors/node.hpp"

#include <unistd.h>

#include <chrono>

#include <caf/all.hpp>
#include <caf/io/all.hpp>

#include "actors/auth.hpp"
#include "actors/error.hpp"
#include "actors/host_call_router.hpp"
#include "actors/log.hpp"
#include "actors/network.hpp"
#include "config/error.hpp"

namespace gleam::actors {

namespace {

uint64_t unix_ns() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                 std::chrono::system_clock::now().time_since_epoch())
                                 .count());
}

std::string hostname() {
  char buf[256] = {0};
  if (gethostname(buf, sizeof(buf) - 1) != 0)
    return "unknown";
  return buf;
}

struct node_state {
  config::node_config cfg;
  node_roles roles;
  uint64_t start_time_ns = 0;
  scheduler_actor scheduler;
  bool connecting = false;
  bool registered = false;
  bool in_flight = false; // a register or heartbeat request is pending
  uint64_t hb_seq = 0;
  uint64_t last_rtt_us = 0;
  bool warned_unreachable = false;
  proto::DrainState drain; // as the scheduler last said
  static inline const char* name = "gleam.node";
};

using node_ptr = node_actor::stateful_pointer<node_state>;

/// Passes the maintenance state the scheduler holds for this node to its
/// GPU servers: on a change, and with every heartbeat while draining with a
/// deadline (each server ends its open sessions once the deadline passed).
void apply_drain(node_ptr self, const proto::DrainState& drain) {
  auto& st = self->state;
  bool changed = drain.draining() != st.drain.draining()
                 || drain.deadline_unix_ms() != st.drain.deadline_unix_ms();
  if (!changed && !(drain.draining() && drain.deadline_unix_ms() != 0))
    return;
  if (changed)
    log(log_level::info, "node '{}' {}", st.cfg.node_id,
        drain.draining() ? "is draining: its GPUs take no new sessions"
                         : "is no longer draining: its GPUs take new sessions");
  st.drain = drain;
  for (auto& gpu : st.roles.gpus)
    self->send(gpu, drain_atom::value, pb<proto::DrainState>{drain});
}

void lose_scheduler(node_ptr self, const std::string& why) {
  if (!self->state.warned_unreachable)
    log(log_level::warning, "scheduler {}:{} {}; retrying every {} ms",
        self->state.cfg.scheduler_host, self->state.cfg.scheduler_port, why,
        self->state.cfg.heartbeat_interval.count());
  self->state.warned_unreachable = true;
  self->state.registered = false;
  if (!self->state.roles.scheduler)
    self->state.scheduler = nullptr;
}

void connect_scheduler(node_ptr self) {
  auto& st = self->state;
  if (st.roles.scheduler) {
    st.scheduler = st.roles.scheduler;
    return;
  }
  st.connecting = true;
  auto mm = network_handle(self->system(), st.cfg.tls.enabled);
  self->request(mm, st.cfg.down_after, caf::connect_atom::value, st.cfg.scheduler_host,
                st.cfg.scheduler_port)
    .then(
      [=](const caf::node_id&, caf::strong_actor_ptr& ptr, const std::set<std::string>&) {
        auto remote = caf::actor_cast<node_actor>(ptr);
        if (!remote) {
          self->state.connecting = false;
          lose_scheduler(self, "answered with no actor");
          return;
        }
        self->request(remote, self->state.cfg.down_after, get_scheduler_atom::value)
          .then(
            [=](scheduler_actor& sched) {
              self->state.connecting = false;
              self->state.scheduler = std::move(sched);
            },
            [=](caf::error& err) {
              self->state.connecting = false;
              lose_scheduler(self, "has no scheduler role (" + config::describe(err) + ")");
            });
      },
      [=](caf::error& err) {
        self->state.connecting = false;
        lose_scheduler(self, "is unreachable (" + config::describe(err) + ")");
      });
}

void register_node(node_ptr self) {
  auto& st = self->state;
  st.in_flight = true;
  pb<proto::NodeRegister> reg{make_registration(st.cfg, st.roles, st.start_time_ns)};
  sign_for_cluster(st.cfg.cluster_secret, reg.value);
  self->request(st.scheduler, st.cfg.down_after, register_atom::value, std::move(reg))
    .then(
      [=](const pb<proto::NodeRegistered>& reply) {
        self->state.in_flight = false;
        self->state.registered = true;
        apply_drain(self, reply->drain());
        if (self->state.warned_unreachable || !self->state.roles.scheduler)
          log(log_level::info, "registered with scheduler {}:{}", self->state.cfg.scheduler_host,
              self->state.cfg.scheduler_port);
        self->state.warned_unreachable = false;
      },
      [=](caf::error& err) {
        self->state.in_flight = false;
        lose_scheduler(self, "did not accept the registration (" + config::describe(err) + ")");
      });
}

void heartbeat(node_ptr self) {
  auto& st = self->state;
  st.in_flight = true;
  proto::Heartbeat hb;
  hb.set_node_id(st.cfg.node_id);
  hb.set_seq(++st.hb_seq);
  hb.set_sent_time_ns(unix_ns());
  hb.set_last_rtt_us(st.last_rtt_us);
  if (st.roles.board) {
    *hb.mutable_telemetry() = st.roles.board->telemetry();
    for (auto& e : st.roles.board->take_ended())
      *hb.mutable_telemetry()->add_ended_sessions() = std::move(e);
  }
  sign_for_cluster(st.cfg.cluster_secret, hb);
  self->request(st.scheduler, st.cfg.down_after, heartbeat_atom::value,
                pb<proto::Heartbeat>{std::move(hb)})
    .then(
      [=](const pb<proto::HeartbeatAck>& ack) {
        self->state.in_flight = false;
        self->state.last_rtt_us = (unix_ns() - ack->echo_time_ns()) / 1000;
        apply_drain(self, ack->drain());
      },
          [=](caf::error& err) {
            self->state.in_flight = false;
            if (err.category() == caf::atom("gleam_act")
                && err.code() == static_cast<uint8_t>(error_code::unknown_node)) {
              // The scheduler restarted and forgot us: register again.
              self->state.registered = false;
              return;
            }
            lose_scheduler(self, "stopped answering heartbeats (" + config::describe(err) + ")");
          });
}

node_actor::behavior_type node_impl(node_ptr self, config::node_config cfg, node_roles roles) {
  self->state.cfg = std::move(cfg);
  self->state.roles = std::move(roles);
  self->state.start_time_ns = unix_ns();
  if (self->state.roles.scheduler)
    self->link_to(self->state.roles.scheduler);
  for (auto& gpu : self->state.roles.gpus)
    self->link_to(gpu);
  self->send(self, tick_atom::value);
  return {
    [=](get_scheduler_atom) -> caf::result<scheduler_actor> {
      if (!self->state.roles.scheduler)
        return make_error(error_code::not_a_scheduler,
                          "node '" + self->state.cfg.node_id
                            + "' has no scheduler role; its scheduler is "
                            + self->state.cfg.scheduler_host + ":"
                            + std::to_string(self->state.cfg.scheduler_port));
      return self->state.roles.scheduler;
    },
    [=](get_gpu_atom, uint32_t index) -> caf::result<gpu_server_actor> {
      if (index >= self->state.roles.gpus.size())
        return make_error(error_code::no_such_gpu,
                          "node '" + self->state.cfg.node_id + "' serves "
                            + std::to_string(self->state.roles.gpus.size())
                            + " GPU(s); there is no gpu " + std::to_string(index));
      return self->state.roles.gpus[index];
    },
    [=](get_shard_atom) -> caf::result<cache_shard_actor> {
      if (!self->state.roles.shard)
        return make_error(error_code::no_cache,
                          "node '" + self->state.cfg.node_id
                            + "' has no weight cache: give it the gpu_server or cache_shard "
                              "role and a [cache] dir");
      return self->state.roles.shard;
    },
    [=](host_attach_atom, uint32_t gpu, uint64_t session, const std::string& secret,
        caf::actor client) {
      // The session's secret proves the session (the router checks it);
      // and a client hands over a proxy of its own process only.
      auto sender = self->current_sender();
      const auto& routers = self->state.roles.host_calls;
      // A GPU under process isolation has no router here: its sessions'
      // host calls go through their worker's node.
      if (gpu >= routers.size() || !routers[gpu] || !sender || !client
          || sender->node() != client.node())
        return false;
      return routers[gpu]->reattach(session, secret, client);
    },
    [=](kill_atom, uint64_t session, const std::string& admin_token) -> caf::result<bool> {
      const auto& st = self->state;
      if (auto refused = check_admin(st.cfg.admin_token, admin_token, "session kill"))
        return refused;
      if (st.roles.gpus.empty())
        return false;
      // Every GPU server is asked; the session is ended by the one that has it.
      auto rp = self->make_response_promise<bool>();
      auto left = std::make_shared<size_t>(st.roles.gpus.size());
      auto found = std::make_shared<bool>(false);
      for (const auto& gpu : st.roles.gpus)
        self->request(gpu, std::chrono::seconds{5}, kill_atom::value, session)
          .then(
            [=](bool ended) mutable {
              *found |= ended;
              if (--*left == 0)
                rp.deliver(*found);
            },
            [=](caf::error&) mutable {
              if (--*left == 0)
                rp.deliver(*found);
            });
      return rp;
    },
    [=](status_atom) {
      const auto& st = self->state;
      proto::NodeStatus status;
      auto reg = make_registration(st.cfg, st.roles, st.start_time_ns);
      status.set_node_id(reg.node_id());
      status.set_hostname(reg.hostname());
      *status.mutable_roles() = reg.roles();
      *status.mutable_gpus() = reg.gpus();
      status.set_up(true);
      status.set_data_host(reg.data_host());
      status.set_data_port(reg.data_port());
      if (st.drain.draining())
        *status.mutable_drain() = st.drain;
      if (st.roles.board) {
        *status.mutable_telemetry() = st.roles.board->telemetry();
        for (auto& s : st.roles.board->sessions())
          *status.add_sessions() = std::move(s);
      }
      return pb<proto::NodeStatus>{std::move(status)};
    },
    [=](tick_atom) {
      auto& st = self->state;
      // A GPU server's worker process is part of its node, not a node: it
      // registers nowhere.
      if (st.cfg.worker.active)
        return;
      if (!st.in_flight && !st.connecting) {
        if (!st.scheduler)
          connect_scheduler(self);
        if (st.scheduler && !st.registered)
          register_node(self);
        else if (st.scheduler)
          heartbeat(self);
      }
      self->delayed_send(self, st.cfg.heartbeat_interval, tick_atom::value);
    },
  };
}

} // namespace

proto::NodeRegister make_registration(const config::node_config& cfg, const node_roles& roles,
                                      uint64_t start_time_ns) {
  proto::NodeRegister reg;
  reg.set_node_id(cfg.node_id);
  reg.set_hostname(hostname());
  if (cfg.scheduler)
    reg.add_roles(proto::ROLE_SCHEDULER);
  if (cfg.gpu_server)
    reg.add_roles(proto::ROLE_GPU_SERVER);
  if (cfg.cache_shard)
    reg.add_roles(proto::ROLE_CACHE_SHARD);
  for (const auto& g : roles.gpu_infos)
    *reg.add_gpus() = g;
  reg.set_data_host(cfg.advertise_host);
  reg.set_data_port(cfg.port);
  reg.set_start_time_ns(start_time_ns);
  return reg;
}

node_actor spawn_node(caf::actor_system& sys, const config::node_config& cfg, node_roles roles) {
  return sys.spawn(node_impl, cfg, std::move(roles));
}

} // namespace gleam::actors
