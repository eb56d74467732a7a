// The GPU server actor on a fake driver (no GPU): a session is named by
// the secret its SessionOpened carries, never by its id or by the CAF node
// of the peer. Each case is an attack that must fail. The intruder here
// runs in the owner's own actor system, so it has exactly the owner's node
// id (what a process that copied the node id would present), and session
// ids are sequential (the first is 1): only the secret stands in its way.
#include <catch2/catch.hpp>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>

#include <caf/all.hpp>

#include "actors/error.hpp"
#include "actors/gpu_server.hpp"
#include "actors/host_call_router.hpp"
#include "actors/type_registry.hpp"
#include "config/node_config.hpp"
#include "executor/driver_api.hpp"
#include "executor/error.hpp"
#include "executor/session_secret.hpp"
#include "tests/executor/fake_driver.hpp"
#include "wire/protocol.hpp"

using namespace gleam;
using namespace std::chrono_literals;
using actors::pb;

namespace {

/// One GPU server over the fake driver, in an actor system of its own.
struct fake_node {
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  actors::gpu_service service;

  fake_node() {
    actors::add_message_types(cfg);
    cfg.set("logger.console-verbosity", caf::atom("quiet"));
    sys = std::make_unique<caf::actor_system>(cfg);
    auto driver = std::make_shared<executor::driver_api>();
    test::fake::install_fake_driver(*driver);
    config::node_config node;
    node.node_id = "session-test";
    node.gpu_server = true;
    auto started = actors::start_gpu_servers(*sys, node, nullptr, nullptr, nullptr, driver);
    REQUIRE(started);
    service = std::move(*started);
    REQUIRE(service.servers.size() == 1);
  }

  ~fake_node() {
    for (auto& s : service.servers)
      caf::anon_send_exit(s, caf::exit_reason::user_shutdown);
    service.servers.clear();
    sys.reset();
  }

  actors::gpu_server_actor gpu() const {
    return service.servers[0];
  }
};

/// A peer of the GPU server: a blocking actor that sends one request at a
/// time and keeps the answer or the error.
struct peer {
  caf::actor_system& sys;
  caf::scoped_actor self;
  caf::error error;

  explicit peer(caf::actor_system& s) : sys(s), self(s) {
  }

  std::optional<proto::SessionOpened> open(const actors::gpu_server_actor& gpu,
                                           uint64_t resume = 0, const std::string& secret = {}) {
    pb<proto::OpenSession> req;
    req->set_client_id("peer:1");
    req->set_protocol_version(wire::protocol_version);
    req->set_resume_session(resume);
    req->set_resume_secret(secret);
    std::optional<proto::SessionOpened> out;
    error = caf::error{};
    self->request(gpu, 5s, actors::open_atom::value, req)
      .receive([&](pb<proto::SessionOpened>& r) { out = std::move(r.value); },
               [&](caf::error& e) { error = std::move(e); });
    return out;
  }

  /// A batch of session `id` carrying `secret`, with one MemAlloc of 4 KiB
  /// at `seq`.
  std::optional<proto::BatchReply> alloc(const actors::gpu_server_actor& gpu, uint64_t id,
                                         const std::string& secret, uint64_t seq) {
    pb<proto::OpBatch> batch;
    batch->set_session(id);
    batch->set_session_secret(secret);
    auto* op = batch->add_ops();
    op->set_seq(seq);
    op->mutable_mem_alloc()->set_size(4096);
    std::optional<proto::BatchReply> out;
    error = caf::error{};
    self->request(gpu, 5s, batch)
      .receive([&](pb<proto::BatchReply>& r) { out = std::move(r.value); },
               [&](caf::error& e) { error = std::move(e); });
    return out;
  }

  std::optional<bool> close(const actors::gpu_server_actor& gpu, uint64_t id,
                            const std::string& secret) {
    pb<proto::CloseSession> req;
    req->set_session(id);
    req->set_secret(secret);
    std::optional<bool> out;
    error = caf::error{};
    self->request(gpu, 5s, actors::close_atom::value, req)
      .receive([&](bool closed) { out = closed; }, [&](caf::error& e) { error = std::move(e); });
    return out;
  }

  std::string rendered() const {
    return sys.render(error);
  }

  /// The last error was the GPU server's refusal of a session it could
  /// not prove.
  bool refused_unproven() const {
    return error.category() == caf::atom("gleam_act")
           && error.code() == static_cast<uint8_t>(actors::error_code::session_unknown)
           && rendered().find("the session's secret does not match") != std::string::npos;
  }
};

proto::NodeStatus status_of(caf::actor_system& sys, const actors::gpu_server_actor& gpu) {
  caf::scoped_actor self{sys};
  proto::NodeStatus out;
  self->request(gpu, 5s, actors::status_atom::value)
    .receive([&](pb<proto::NodeStatus>& r) { out = std::move(r.value); },
             [&](caf::error& e) { FAIL(sys.render(e)); });
  return out;
}

uint64_t ops_executed(caf::actor_system& sys, const actors::gpu_server_actor& gpu, uint64_t id) {
  auto status = status_of(sys, gpu);
  for (const auto& s : status.sessions())
    if (s.session() == id)
      return s.ops_executed();
  return ~uint64_t{0};
}

/// `text` with "session <from> " written as "session <to> ".
std::string with_id(std::string text, uint64_t from, uint64_t to) {
  auto needle = "session " + std::to_string(from) + " ";
  auto at = text.find(needle);
  if (at != std::string::npos)
    text.replace(at, needle.size(), "session " + std::to_string(to) + " ");
  return text;
}

} // namespace

TEST_CASE("a session's secret: 256 bits from the CSPRNG, compared whole",
          "[actors][session][security]") {
  auto a = executor::make_session_secret();
  auto b = executor::make_session_secret();
  REQUIRE(a);
  REQUIRE(b);
  CHECK(a->size() == executor::session_secret_bytes);
  CHECK(executor::session_secret_bytes * 8 >= 128);
  CHECK(*a != *b);
  CHECK(executor::session_secret_matches(*a, *a));
  CHECK_FALSE(executor::session_secret_matches(*a, *b));
  CHECK_FALSE(executor::session_secret_matches(*a, ""));
  CHECK_FALSE(executor::session_secret_matches(*a, a->substr(0, 16)));
  CHECK_FALSE(executor::session_secret_matches(*a, *a + "x"));
  // No secret matches when there is none to match (an unknown session).
  CHECK_FALSE(executor::session_secret_matches("", ""));
  auto flipped = *a;
  flipped.back() = static_cast<char>(flipped.back() ^ 1);
  CHECK_FALSE(executor::session_secret_matches(*a, flipped));
}

TEST_CASE("a forged batch with a guessed session id and the owner's node id is refused; "
          "nothing in it runs",
          "[actors][session][security]") {
  fake_node node;
  peer owner{*node.sys};
  peer intruder{*node.sys};
  auto opened = owner.open(node.gpu());
  INFO(owner.rendered());
  REQUIRE(opened);
  REQUIRE(opened->session() == 1); // sequential: the intruder's first guess
  REQUIRE(opened->secret().size() == executor::session_secret_bytes);
  // Same actor system: the intruder's node id is the owner's.
  REQUIRE(intruder.self->node() == owner.self->node());

  SECTION("without a secret") {
    CHECK_FALSE(intruder.alloc(node.gpu(), 1, "", 1));
    CHECK(intruder.refused_unproven());
  }
  SECTION("with a guessed secret") {
    CHECK_FALSE(intruder.alloc(node.gpu(), 1, std::string(32, '\0'), 1));
    CHECK(intruder.refused_unproven());
    auto guess = opened->secret();
    guess[7] = static_cast<char>(guess[7] ^ 0x40);
    CHECK_FALSE(intruder.alloc(node.gpu(), 1, guess, 1));
    CHECK(intruder.refused_unproven());
  }
  SECTION("with another session's secret") {
    auto mine = intruder.open(node.gpu());
    REQUIRE(mine);
    CHECK(mine->session() == 2);
    CHECK(mine->secret() != opened->secret());
    CHECK_FALSE(intruder.alloc(node.gpu(), 1, mine->secret(), 1));
    CHECK(intruder.refused_unproven());
  }
  // Nothing ran: the owner's op 1 is its first (a forged op 1 that ran
  // would have made the server skip it as a replay).
  CHECK(ops_executed(*node.sys, node.gpu(), 1) == 0);
  auto mine = owner.alloc(node.gpu(), 1, opened->secret(), 1);
  INFO(owner.rendered());
  REQUIRE(mine);
  REQUIRE(mine->results_size() == 1);
  CHECK(mine->results(0).status() == CUDA_SUCCESS);
  CHECK(mine->results(0).dptr() != 0);
  CHECK(ops_executed(*node.sys, node.gpu(), 1) == 1);
}

TEST_CASE("a refusal does not say whether the session id exists", "[actors][session][security]") {
  fake_node node;
  peer owner{*node.sys};
  peer intruder{*node.sys};
  auto opened = owner.open(node.gpu());
  REQUIRE(opened);
  CHECK_FALSE(intruder.alloc(node.gpu(), 1, "", 1));
  auto existing = intruder.rendered();
  CHECK_FALSE(intruder.alloc(node.gpu(), 4242, "", 1));
  auto unknown = intruder.rendered();
  CHECK(intruder.refused_unproven());
  CHECK(with_id(unknown, 4242, 1) == existing);
  CHECK_FALSE(intruder.close(node.gpu(), 4242, opened->secret()));
  CHECK(with_id(intruder.rendered(), 4242, 1) == existing);
  // The console's view of the sessions never shows a secret.
  auto status = status_of(*node.sys, node.gpu()).SerializeAsString();
  CHECK(status.find(opened->secret()) == std::string::npos);
}

TEST_CASE("a resume without the session's secret is refused; with it the session goes on",
          "[actors][session][security]") {
  fake_node node;
  peer owner{*node.sys};
  peer intruder{*node.sys};
  auto opened = owner.open(node.gpu());
  REQUIRE(opened);
  auto resume_error = [&](const peer& p) {
    return p.error.category() == executor::error_category
           && p.error.code() == static_cast<uint8_t>(executor::error_code::unknown_session)
           && p.rendered().find("the session's secret does not match") != std::string::npos;
  };
  CHECK_FALSE(intruder.open(node.gpu(), 1));
  CHECK(resume_error(intruder));
  CHECK_FALSE(intruder.open(node.gpu(), 1, std::string(32, 'x')));
  CHECK(resume_error(intruder));
  auto unknown = intruder.open(node.gpu(), 7, opened->secret());
  CHECK_FALSE(unknown);
  CHECK(resume_error(intruder));
  // The owner, after its link dropped, resumes with its secret and keeps it.
  auto resumed = owner.open(node.gpu(), 1, opened->secret());
  INFO(owner.rendered());
  REQUIRE(resumed);
  CHECK(resumed->session() == 1);
  CHECK(resumed->secret() == opened->secret());
  auto reply = owner.alloc(node.gpu(), 1, opened->secret(), 1);
  REQUIRE(reply);
  CHECK(reply->results(0).status() == CUDA_SUCCESS);
}

TEST_CASE("a close without the session's secret is refused and the session lives on",
          "[actors][session][security]") {
  fake_node node;
  peer owner{*node.sys};
  peer intruder{*node.sys};
  auto opened = owner.open(node.gpu());
  REQUIRE(opened);
  CHECK_FALSE(intruder.close(node.gpu(), 1, ""));
  CHECK(intruder.refused_unproven());
  CHECK_FALSE(intruder.close(node.gpu(), 1, std::string(32, '\x01')));
  CHECK(intruder.refused_unproven());
  CHECK(status_of(*node.sys, node.gpu()).sessions_size() == 1);
  auto reply = owner.alloc(node.gpu(), 1, opened->secret(), 1);
  REQUIRE(reply);
  CHECK(reply->results(0).status() == CUDA_SUCCESS);
  // The owner closes it; afterwards its secret names nothing.
  auto closed = owner.close(node.gpu(), 1, opened->secret());
  REQUIRE(closed);
  CHECK(*closed);
  CHECK(status_of(*node.sys, node.gpu()).sessions_size() == 0);
  CHECK_FALSE(owner.alloc(node.gpu(), 1, opened->secret(), 2));
  CHECK(owner.refused_unproven());
}

TEST_CASE("a host-call reattach proves the session's secret", "[actors][session][security]") {
  fake_node node;
  peer owner{*node.sys};
  peer intruder{*node.sys};
  auto opened = owner.open(node.gpu());
  REQUIRE(opened);
  auto& router = *node.service.host_calls[0];
  auto intruders_proxy = caf::actor_cast<caf::actor>(intruder.self);
  CHECK_FALSE(router.reattach(1, "", intruders_proxy));
  CHECK_FALSE(router.reattach(1, std::string(32, '\0'), intruders_proxy));
  CHECK_FALSE(router.reattach(99, opened->secret(), intruders_proxy));
  CHECK(router.reattach(1, opened->secret(), caf::actor_cast<caf::actor>(owner.self)));
}
