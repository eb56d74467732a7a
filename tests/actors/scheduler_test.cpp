// The scheduler actor in-process: registration and heartbeats feed the
// placement snapshot, a placement request is answered (at once or after a
// heartbeat frees a GPU), and the console's gamma/queue/explain answer.
#include <catch2/catch.hpp>

#include <caf/all.hpp>

#include "actors/scheduler.hpp"
#include "actors/type_registry.hpp"

using namespace gleam;
using namespace std::chrono_literals;
using actors::pb;

namespace {

constexpr uint64_t gb = 1'000'000'000ull;

pb<proto::NodeRegister> gpu_node(const std::string& id, uint64_t mem) {
  proto::NodeRegister reg;
  reg.set_node_id(id);
  reg.add_roles(proto::ROLE_GPU_SERVER);
  reg.set_data_host("10.1.1.1");
  reg.set_data_port(4751);
  auto* g = reg.add_gpus();
  g->set_index(0);
  g->set_name("NVIDIA H200");
  g->set_total_memory(mem);
  return pb<proto::NodeRegister>{reg};
}

pb<proto::Heartbeat> beat(const std::string& id, uint64_t allocated, bool ended) {
  proto::Heartbeat hb;
  hb.set_node_id(id);
  auto* g = hb.mutable_telemetry()->add_gpus();
  g->set_index(0);
  if (allocated > 0) {
    auto* r = g->add_running();
    r->set_session(1);
    r->set_task_signature("big");
    r->set_allocated_bytes(allocated);
    r->set_first_launch_time_ns(1);
    g->set_sessions(1);
  }
  if (ended) {
    auto* e = hb.mutable_telemetry()->add_ended_sessions();
    e->set_session(1);
    e->set_task_signature("big");
    e->set_gpu_index(0);
    e->set_gpu_name("NVIDIA H200");
    e->set_duration_ns(5 * 1'000'000'000ull);
    e->set_load_ns(1'000'000'000ull);
    e->set_peak_allocated_bytes(75 * gb);
  }
  return pb<proto::Heartbeat>{hb};
}

pb<proto::PlacementRequest> request(const std::string& sig) {
  proto::PlacementRequest r;
  r.set_client_id("c");
  r.set_task_signature(sig);
  return pb<proto::PlacementRequest>{r};
}

} // namespace

TEST_CASE("the scheduler actor places through the placement library and queues",
          "[actors][placement]") {
  caf::actor_system_config cfg;
  actors::add_message_types(cfg);
  caf::actor_system sys{cfg};
  caf::scoped_actor self{sys};
  actors::placement_options opts;
  opts.max_wait = 60s;
  auto sched = actors::spawn_scheduler(sys, 60s, opts);

  // No GPU at all: a clear refusal, not a hang.
  proto::PlacementReply reply;
  self->request(sched, 5s, actors::place_atom::value, request("x"))
    .receive([&](pb<proto::PlacementReply>& r) { reply = r.value; },
             [&](caf::error& e) { FAIL(sys.render(e)); });
  CHECK_FALSE(reply.ok());
  CHECK_THAT(reply.error(), Catch::Contains("no GPU server has registered"));

  self->request(sched, 5s, actors::register_atom::value, gpu_node("n1", 80 * gb))
    .receive([](pb<proto::NodeRegistered>&) {}, [&](caf::error& e) { FAIL(sys.render(e)); });
  // A session holds 79 of 80 GB: a new task does not fit and waits.
  self->request(sched, 5s, actors::heartbeat_atom::value, beat("n1", 79 * gb, false))
    .receive([](pb<proto::HeartbeatAck>&) {}, [&](caf::error& e) { FAIL(sys.render(e)); });
  auto pending = self->request(sched, 10s, actors::place_atom::value, request("small"));
  proto::PlacementQueue q;
  for (int i = 0; i < 50 && q.tasks_size() == 0; ++i) {
    self->request(sched, 5s, actors::queue_atom::value)
      .receive([&](pb<proto::PlacementQueue>& x) { q = x.value; },
               [&](caf::error& e) { FAIL(sys.render(e)); });
  }
  REQUIRE(q.tasks_size() == 1);
  CHECK(q.tasks(0).task_signature() == "small");
  // The session ends: the next heartbeat frees the GPU and teaches "big".
  self->request(sched, 5s, actors::heartbeat_atom::value, beat("n1", 0, true))
    .receive([](pb<proto::HeartbeatAck>&) {}, [&](caf::error& e) { FAIL(sys.render(e)); });
  reply.Clear();
  pending.receive([&](pb<proto::PlacementReply>& r) { reply = r.value; },
                  [&](caf::error& e) { FAIL(sys.render(e)); });
  CHECK(reply.ok());
  CHECK(reply.node_id() == "n1");
  CHECK(reply.data_host() == "10.1.1.1");
  CHECK(reply.data_port() == 4751);
  CHECK(reply.placement_id() == q.tasks(0).placement_id());
  CHECK_THAT(reply.explanation(), Catch::Contains("placed on n1/0"));

  proto::PlacementExplain ask;
  ask.set_task("big");
  proto::PlacementExplanation x;
  self->request(sched, 5s, actors::explain_atom::value, pb<proto::PlacementExplain>{ask})
    .receive([&](pb<proto::PlacementExplanation>& r) { x = r.value; },
             [&](caf::error& e) { FAIL(sys.render(e)); });
  CHECK(x.known());
  CHECK(x.memory_bytes() == 75 * gb);
  REQUIRE(x.compute_s_size() == 1);
  // 4 s alone at occupancy 1 (unmeasured: the whole GPU), which the prior
  // gamma 1.1 stretches by 1.1 even alone: 4 / 1.1 s at alpha 1.
  CHECK(x.compute_s(0) == Approx(4.0 / 1.1));
  REQUIRE(x.servers_size() == 1);
  CHECK(x.servers(0).server() == "n1/0");

  proto::GammaTable g;
  self->request(sched, 5s, actors::gamma_atom::value)
    .receive([&](pb<proto::GammaTable>& r) { g = r.value; },
             [&](caf::error& e) { FAIL(sys.render(e)); });
  REQUIRE(g.entries_size() == 2);
  CHECK(g.entries(0).gpu_type() == "NVIDIA H200");
  CHECK_FALSE(g.entries(0).converged());
  CHECK(g.entries(0).gamma() == 1.1); // the prior until enough contended runs
  self->send_exit(sched, caf::exit_reason::user_shutdown);
}

TEST_CASE("the scheduler names a request's tenant from its token and refuses others",
          "[actors][placement][tenant]") {
  caf::actor_system_config cfg;
  actors::add_message_types(cfg);
  caf::actor_system sys{cfg};
  caf::scoped_actor self{sys};
  actors::admission rules{"node-token", {{"alice", "a-secret"}, {"bob", "b-secret"}}, {}, {}};
  auto sched = actors::spawn_scheduler(sys, 60s, {}, rules);
  self->request(sched, 5s, actors::register_atom::value, gpu_node("n1", 80 * gb))
    .receive([](pb<proto::NodeRegistered>&) {}, [&](caf::error& e) { FAIL(sys.render(e)); });
  // 79 of 80 GB held: every request waits in the queue.
  self->request(sched, 5s, actors::heartbeat_atom::value, beat("n1", 79 * gb, false))
    .receive([](pb<proto::HeartbeatAck>&) {}, [&](caf::error& e) { FAIL(sys.render(e)); });
  auto with_token = [](const std::string& sig, const std::string& token) {
    auto r = request(sig);
    r->set_auth_token(token);
    return r;
  };
  for (std::string token : {"", "wrong"}) {
    std::string refusal;
    self->request(sched, 5s, actors::place_atom::value, with_token("x", token))
      .receive([&](pb<proto::PlacementReply>&) { FAIL("placed with token '" << token << "'"); },
               [&](caf::error& e) { refusal = sys.render(e); });
    INFO(refusal);
    CHECK_THAT(refusal, Catch::Contains("the scheduler admits its tenants only")
                          && Catch::Contains(token.empty() ? "is missing" : "is wrong")
                          && Catch::Contains("GLEAM_TOKEN"));
  }
  auto alice = self->request(sched, 10s, actors::place_atom::value, with_token("a", "a-secret"));
  auto unnamed = self->request(sched, 10s, actors::place_atom::value,
                               with_token("u", "node-token"));
  proto::PlacementQueue q;
  for (int i = 0; i < 50 && q.tasks_size() < 2; ++i)
    self->request(sched, 5s, actors::queue_atom::value)
      .receive([&](pb<proto::PlacementQueue>& x) { q = x.value; },
               [&](caf::error& e) { FAIL(sys.render(e)); });
  static_cast<void>(alice); // both wait for a GPU while the queue is read
  static_cast<void>(unnamed);
  REQUIRE(q.tasks_size() == 2);
  CHECK(q.tasks(0).task_signature() == "a");
  CHECK(q.tasks(0).tenant() == "alice");
  CHECK(q.tasks(1).task_signature() == "u");
  CHECK(q.tasks(1).tenant().empty());
  proto::PlacementExplain ask;
  ask.set_task(std::to_string(q.tasks(0).placement_id()));
  proto::PlacementExplanation x;
  self->request(sched, 5s, actors::explain_atom::value, pb<proto::PlacementExplain>{ask})
    .receive([&](pb<proto::PlacementExplanation>& r) { x = r.value; },
             [&](caf::error& e) { FAIL(sys.render(e)); });
  CHECK(x.tenant() == "alice");
  self->send_exit(sched, caf::exit_reason::user_shutdown);
}

TEST_CASE("a drained node gets no placements until undrained, across its restarts",
          "[actors][placement][drain]") {
  caf::actor_system_config cfg;
  actors::add_message_types(cfg);
  caf::actor_system sys{cfg};
  caf::scoped_actor self{sys};
  auto sched = actors::spawn_scheduler(sys, 60s);
  auto registered = [&](const std::string& id) {
    proto::NodeRegistered out;
    self->request(sched, 5s, actors::register_atom::value, gpu_node(id, 80 * gb))
      .receive([&](pb<proto::NodeRegistered>& r) { out = r.value; },
               [&](caf::error& e) { FAIL(sys.render(e)); });
    return out;
  };
  auto ack_of = [&](const std::string& id) {
    proto::HeartbeatAck out;
    self->request(sched, 5s, actors::heartbeat_atom::value, beat(id, 0, false))
      .receive([&](pb<proto::HeartbeatAck>& r) { out = r.value; },
               [&](caf::error& e) { FAIL(sys.render(e)); });
    return out;
  };
  auto drain = [&](const std::string& id, bool on, uint64_t deadline_ms = 0) {
    proto::DrainRequest req;
    req.set_node_id(id);
    req.mutable_state()->set_draining(on);
    req.mutable_state()->set_deadline_unix_ms(deadline_ms);
    caf::expected<proto::NodeStatus> out{proto::NodeStatus{}};
    self->request(sched, 5s, actors::drain_atom::value, pb<proto::DrainRequest>{req})
      .receive([&](pb<proto::NodeStatus>& r) { out = r.value; },
               [&](caf::error& e) { out = std::move(e); });
    return out;
  };
  auto place = [&](const std::string& sig) {
    proto::PlacementReply out;
    self->request(sched, 5s, actors::place_atom::value, request(sig))
      .receive([&](pb<proto::PlacementReply>& r) { out = r.value; },
               [&](caf::error& e) { FAIL(sys.render(e)); });
    return out;
  };
  CHECK_FALSE(registered("n1").drain().draining());
  registered("n2");
  ack_of("n1");
  ack_of("n2");

  auto unknown = drain("nobody", true);
  REQUIRE_FALSE(unknown);
  CHECK_THAT(sys.render(unknown.error()), Catch::Contains("no node 'nobody' has registered"));

  auto n1 = drain("n1", true, 1'900'000'000'000ull);
  REQUIRE(n1);
  CHECK(n1->node_id() == "n1");
  CHECK(n1->drain().draining());
  CHECK(n1->drain().deadline_unix_ms() == 1'900'000'000'000ull);
  // The node learns its state from its heartbeat's answer.
  auto ack = ack_of("n1");
  CHECK(ack.drain().draining());
  CHECK(ack.drain().deadline_unix_ms() == 1'900'000'000'000ull);
  CHECK_FALSE(ack_of("n2").drain().draining());
  // n1 is as free as n2 and first in order, but drained.
  auto first = place("t");
  CHECK(first.ok());
  CHECK(first.node_id() == "n2");
  proto::ClusterView view;
  self->request(sched, 5s, actors::view_atom::value)
    .receive([&](pb<proto::ClusterView>& v) { view = v.value; },
             [&](caf::error& e) { FAIL(sys.render(e)); });
  REQUIRE(view.nodes_size() == 2);
  CHECK(view.nodes(0).drain().draining());
  CHECK(view.nodes(0).up());
  CHECK_FALSE(view.nodes(1).drain().draining());

  // Both drained: a clear refusal, not a wait.
  REQUIRE(drain("n2", true));
  auto none = place("late");
  CHECK_FALSE(none.ok());
  CHECK_THAT(none.error(), Catch::Contains("draining for maintenance")
                             && Catch::Contains("undrain"));

  // A restarted node stays drained until an admin undrains it.
  CHECK(registered("n1").drain().draining());
  auto back = drain("n1", false);
  REQUIRE(back);
  CHECK_FALSE(back->drain().draining());
  CHECK_FALSE(ack_of("n1").drain().draining());
  auto r = place("again");
  CHECK(r.ok());
  CHECK(r.node_id() == "n1");
  self->send_exit(sched, caf::exit_reason::user_shutdown);
}

TEST_CASE("a scheduler with a cluster secret admits only nodes that prove it, and a live "
          "node keeps its address",
          "[actors][auth][cluster]") {
  caf::actor_system_config cfg;
  actors::add_message_types(cfg);
  caf::actor_system sys{cfg};
  caf::scoped_actor self{sys};
  actors::admission rules;
  rules.cluster_secret = "cluster-secret-0123456789";
  rules.admin_token = "admin-0123";
  auto sched = actors::spawn_scheduler(sys, 60s, {}, rules);
  auto send_register = [&](proto::NodeRegister reg, bool sign) {
    if (sign)
      actors::sign_for_cluster(rules.cluster_secret, reg);
    caf::expected<proto::NodeRegistered> out{proto::NodeRegistered{}};
    self->request(sched, 5s, actors::register_atom::value, pb<proto::NodeRegister>{reg})
      .receive([&](pb<proto::NodeRegistered>& r) { out = r.value; },
               [&](caf::error& e) { out = std::move(e); });
    return out;
  };
  auto send_beat = [&](proto::Heartbeat hb, uint64_t seq, bool sign) {
    hb.set_seq(seq);
    if (sign)
      actors::sign_for_cluster(rules.cluster_secret, hb);
    caf::error err;
    self->request(sched, 5s, actors::heartbeat_atom::value, pb<proto::Heartbeat>{hb})
      .receive([](pb<proto::HeartbeatAck>&) {}, [&](caf::error& e) { err = std::move(e); });
    return err;
  };
  auto nodes = [&] {
    proto::ClusterView view;
    self->request(sched, 5s, actors::view_atom::value)
      .receive([&](pb<proto::ClusterView>& v) { view = v.value; },
               [&](caf::error& e) { FAIL(sys.render(e)); });
    return view;
  };
  auto real = gpu_node("n1", 80 * gb).value;
  real.set_start_time_ns(1000);

  // No proof, or a proof under another secret: refused, nothing registered.
  auto unsigned_reg = send_register(real, false);
  REQUIRE_FALSE(unsigned_reg);
  CHECK_THAT(sys.render(unsigned_reg.error()),
             Catch::Contains("cluster proof is missing") && Catch::Contains("cluster-secret"));
  auto forged = real;
  actors::sign_for_cluster("not-the-cluster-secret", forged);
  CHECK_FALSE(send_register(forged, false));
  CHECK(nodes().nodes_size() == 0);

  REQUIRE(send_register(real, true));
  CHECK_FALSE(send_beat(beat("n1", 0, false).value, 1, true));
  // A rogue heartbeat (no proof) and a replayed one change nothing.
  CHECK(send_beat(beat("n1", 79 * gb, false).value, 2, false));
  CHECK(send_beat(beat("n1", 79 * gb, false).value, 1, true));
  auto view = nodes();
  REQUIRE(view.nodes_size() == 1);
  REQUIRE(view.nodes(0).telemetry().gpus_size() == 1);
  CHECK(view.nodes(0).telemetry().gpus(0).sessions() == 0);

  // Even with the secret, a second process cannot take a live node's id to
  // point clients at another address, nor replay an older registration.
  auto hijack = real;
  hijack.set_data_host("10.6.6.6");
  hijack.set_start_time_ns(2000);
  auto refused = send_register(hijack, true);
  REQUIRE_FALSE(refused);
  CHECK_THAT(sys.render(refused.error()), Catch::Contains("is up at 10.1.1.1:4751"));
  auto older = real;
  older.set_start_time_ns(500);
  CHECK_FALSE(send_register(older, true));
  view = nodes();
  REQUIRE(view.nodes_size() == 1);
  CHECK(view.nodes(0).data_host() == "10.1.1.1");
  // The node itself restarting at its address is welcome.
  auto restart = real;
  restart.set_start_time_ns(3000);
  CHECK(send_register(restart, true));

  // Drain is an admin command.
  proto::DrainRequest req;
  req.set_node_id("n1");
  req.mutable_state()->set_draining(true);
  for (std::string token : {"", "wrong"}) {
    req.set_admin_token(token);
    caf::error err;
    self->request(sched, 5s, actors::drain_atom::value, pb<proto::DrainRequest>{req})
      .receive([](pb<proto::NodeStatus>&) {}, [&](caf::error& e) { err = std::move(e); });
    REQUIRE(err);
    CHECK_THAT(sys.render(err), Catch::Contains("drain needs the node's admin token"));
  }
  CHECK_FALSE(nodes().nodes(0).drain().draining());
  req.set_admin_token(rules.admin_token);
  caf::error err;
  self->request(sched, 5s, actors::drain_atom::value, pb<proto::DrainRequest>{req})
    .receive([](pb<proto::NodeStatus>&) {}, [&](caf::error& e) { err = std::move(e); });
  CHECK_FALSE(err);
  CHECK(nodes().nodes(0).drain().draining());
  self->send_exit(sched, caf::exit_reason::user_shutdown);
}
