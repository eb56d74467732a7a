#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <optional>
#include <string>
#include <thread>

#include <caf/all.hpp>
#include <caf/io/all.hpp>

#include "actors/multiplexer_loop.hpp"
#include "actors/polling_actor.hpp"

using namespace gleam;
using namespace std::chrono_literals;

namespace {

/// Answers an int with its double, a string with its length; stops on an
/// exit message; refuses anything else.
class doubler final : public actors::polling_actor {
public:
  doubler(caf::actor_config& cfg, std::chrono::microseconds poll)
    : actors::polling_actor(cfg, poll) {
  }

  void act() override {
    bool running = true;
    receive_while(running)(
      [](int x) { return 2 * x; },
      [](const std::string& s) { return static_cast<int>(s.size()); },
      [&](const caf::exit_msg& em) {
        running = false;
        fail_state(em.reason);
      },
      caf::others >> [](caf::message_view&) -> caf::result<caf::message> {
        return caf::sec::unexpected_message;
      });
  }
};

/// One node: a system whose network runs on a multiplexer_loop.
struct node {
  explicit node(std::chrono::microseconds linger) {
    cfg.load<caf::io::middleman>();
    cfg.set("middleman.workers", size_t{0});
    cfg.set("logger.console-verbosity", caf::atom("quiet"));
    loop.emplace(cfg, linger);
    sys.emplace(cfg);
    loop->start(*sys);
  }
  ~node() {
    loop->stop();
    sys.reset();
  }
  caf::actor_system_config cfg;
  std::optional<actors::multiplexer_loop> loop;
  std::optional<caf::actor_system> sys;
};

int ask(caf::actor_system& sys, const caf::actor& whom, int x) {
  caf::scoped_actor self{sys};
  int out = -1;
  self->request(whom, caf::infinite, x)
    .receive([&](int r) { out = r; }, [&](caf::error&) { out = -2; });
  return out;
}

} // namespace

TEST_CASE("a polling actor answers mail that comes while it polls and after it slept",
          "[actors][polling]") {
  caf::actor_system_config cfg;
  cfg.set("logger.console-verbosity", caf::atom("quiet"));
  caf::actor_system sys{cfg};
  for (auto poll : {0us, 200us, 5000us}) {
    auto a = sys.spawn<doubler>(poll);
    CHECK(ask(sys, a, 21) == 42);
    CHECK(ask(sys, a, 5) == 10); // within the poll window
    std::this_thread::sleep_for(20ms); // past it: the actor sleeps
    CHECK(ask(sys, a, 7) == 14);
    caf::scoped_actor self{sys};
    caf::error refused;
    self->request(a, caf::infinite, 1.5)
      .receive([](double) {}, [&](caf::error& e) { refused = e; });
    CHECK(refused == caf::sec::unexpected_message);
    caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
  }
}

TEST_CASE("nodes whose network runs on a multiplexer_loop talk, poll or not, and stop cleanly",
          "[actors][polling]") {
  // linger 0: CAF's own network thread; otherwise ours, polling.
  for (auto [server_linger, client_linger] :
       {std::pair{0us, 0us}, std::pair{2000us, 2000us}, std::pair{2000us, 0us},
        std::pair{0us, 2000us}}) {
    CAPTURE(server_linger.count(), client_linger.count());
    node server{server_linger};
    node client{client_linger};
    CHECK(server.loop->polling() == (server_linger.count() > 0));
    auto a = server.sys->spawn<doubler>(std::chrono::microseconds{200});
    auto port = server.sys->middleman().publish(a, 0, "127.0.0.1", true);
    REQUIRE(port);
    auto remote = client.sys->middleman().remote_actor("127.0.0.1", *port);
    REQUIRE(remote);
    for (int i = 0; i < 50; ++i) {
      actors::multiplexer_hold hold{&*client.loop};
      REQUIRE(ask(*client.sys, *remote, i) == 2 * i);
    }
    // After a pause longer than the linger both loops sleep in epoll; the
    // next request still wakes them.
    std::this_thread::sleep_for(20ms);
    CHECK(ask(*client.sys, *remote, 100) == 200);
    caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
  }
}

TEST_CASE("a multiplexer_loop names its thread and counts a step that blocks it as a stall",
          "[actors][polling]") {
  node n{2000us};
  REQUIRE(n.loop->polling());
  actors::multiplexer_hold hold{&*n.loop}; // the polling path: each step is measured
  auto run_on_loop = [&](std::chrono::milliseconds busy) {
    std::promise<void> done;
    n.sys->middleman().backend().post([&] {
      std::this_thread::sleep_for(busy);
      done.set_value();
    });
    done.get_future().wait();
  };
  run_on_loop(5ms);
  CHECK(n.loop->stalls() == 0);
  run_on_loop(actors::multiplexer_loop::stall_threshold + 100ms);
  // The step ends after the posted work returns: wait for its count.
  for (int i = 0; i < 100 && n.loop->stalls() == 0; ++i)
    std::this_thread::sleep_for(5ms);
  CHECK(n.loop->stalls() == 1);
  CHECK(n.loop->longest_step() >= actors::multiplexer_loop::stall_threshold + 100ms);
  // The thread is findable by name, e.g. in top -H.
  bool named = false;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream comm{entry.path() / "comm"};
    std::string name;
    std::getline(comm, name);
    named = named || name == "gleam-net";
  }
  CHECK(named);
}
