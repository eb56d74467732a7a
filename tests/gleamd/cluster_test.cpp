// Nodes launched from config files, as a user launches them: real gleamd
// processes on loopback, inspected through gleam-console.
#include <catch2/catch.hpp>

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

#include <caf/all.hpp>
#include <caf/io/all.hpp>

#include "actors/interfaces.hpp"
#include "actors/type_registry.hpp"
#include "tests/support/actor_config.hpp"
#include "tests/support/files.hpp"
#include "tests/support/gpu_probe.hpp"
#include "tests/support/tls_material.hpp"

using namespace std::chrono_literals;

namespace {

using gleam::test::lines_of;
using gleam::test::read_file;

uint16_t free_port() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

std::string temp_dir() {
  char tmpl[] = "/tmp/gleam-cluster-test-XXXXXX";
  return mkdtemp(tmpl);
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
}

/// A gleamd child process; killed at scope exit if still running.
struct node_process {
  pid_t pid = -1;
  explicit node_process(const std::string& config, const std::string& log) {
    auto bin = gleam::test::build_path("bin/gleamd");
    pid = fork();
    if (pid == 0) {
      freopen(log.c_str(), "w", stderr);
      execl(bin.c_str(), bin.c_str(), ("--config-file=" + config).c_str(), nullptr);
      _exit(127);
    }
  }
  ~node_process() {
    if (pid > 0) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
  }
  /// Waits up to `limit` for the process to exit; returns its wait status or -1.
  int wait_exit(std::chrono::milliseconds limit) {
    auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      if (waitpid(pid, &status, WNOHANG) == pid) {
        pid = -1;
        return status;
      }
      std::this_thread::sleep_for(10ms);
    }
    return -1;
  }
};

std::string console(uint16_t port, const std::string& command) {
  std::string out;
  gleam::test::run_command(gleam::test::build_path("bin/gleam-console") + " --scheduler 127.0.0.1:"
                             + std::to_string(port) + " -c '" + command + "' 2>&1",
                           out);
  return out;
}

/// The line of `table` that starts with `node`, or "".
std::string row(const std::string& table, const std::string& node) {
  size_t pos = 0;
  while (pos < table.size()) {
    auto end = table.find('\n', pos);
    auto line = table.substr(pos, end - pos);
    if (line.rfind(node + " ", 0) == 0)
      return line;
    if (end == std::string::npos)
      break;
    pos = end + 1;
  }
  return "";
}

bool has_word(const std::string& line, const std::string& word) {
  return (" " + line + " ").find(" " + word + " ") != std::string::npos;
}

/// Polls `nodes` until `pred(table)` holds or 15 s pass; returns the last table.
template <class Pred>
std::string poll_nodes(uint16_t port, Pred pred) {
  std::string table;
  for (int i = 0; i < 150; ++i) {
    table = console(port, "nodes");
    if (pred(table))
      break;
    std::this_thread::sleep_for(100ms);
  }
  return table;
}

} // namespace

TEST_CASE("two gleamd nodes register, show up in the console, and a killed one goes down",
          "[gleamd][cluster]") {
  auto dir = temp_dir();
  auto sched_port = free_port();
  auto gpu_port = free_port();
  write_file(dir + "/sched.conf", "[node]\nid = \"sched-t\"\nroles = [\"scheduler\"]\nport = "
                                    + std::to_string(sched_port)
                                    + "\nheartbeat-interval = 100ms\ndown-after = 600ms\n");
  write_file(dir + "/gpu.conf", "[node]\nid = \"gpuhost-t\"\nroles = [\"gpu_server\"]\nport = "
                                  + std::to_string(gpu_port) + "\nscheduler = \"127.0.0.1:"
                                  + std::to_string(sched_port)
                                  + "\"\nheartbeat-interval = 100ms\ndown-after = 600ms\n");
  node_process sched{dir + "/sched.conf", dir + "/sched.log"};
  node_process gpu{dir + "/gpu.conf", dir + "/gpu.log"};

  auto table = poll_nodes(sched_port, [](const std::string& t) {
    return has_word(row(t, "sched-t"), "up") && has_word(row(t, "gpuhost-t"), "up");
  });
  INFO(table);
  CHECK(has_word(row(table, "sched-t"), "up"));
  CHECK(has_word(row(table, "sched-t"), "scheduler"));
  REQUIRE(has_word(row(table, "gpuhost-t"), "up"));
  CHECK(has_word(row(table, "gpuhost-t"), "gpu_server"));
  CHECK(row(table, "gpuhost-t").find("127.0.0.1:" + std::to_string(gpu_port))
        != std::string::npos);
  // No cache peers: no peer-fetch rate measured.
  CHECK_THAT(table, Catch::Contains("PEER MB/S"));
  CHECK(has_word(row(table, "gpuhost-t"), "-"));

  kill(gpu.pid, SIGKILL);
  REQUIRE(gpu.wait_exit(5s) != -1);
  table = poll_nodes(sched_port,
                     [](const std::string& t) { return has_word(row(t, "gpuhost-t"), "down"); });
  INFO(table);
  CHECK(has_word(row(table, "gpuhost-t"), "down"));
  CHECK(has_word(row(table, "sched-t"), "up"));

  // A node that comes back under the same id is up again.
  node_process again{dir + "/gpu.conf", dir + "/gpu2.log"};
  table = poll_nodes(sched_port,
                     [](const std::string& t) { return has_word(row(t, "gpuhost-t"), "up"); });
  INFO(table);
  CHECK(has_word(row(table, "gpuhost-t"), "up"));

  // SIGTERM stops a node cleanly: exit status 0.
  kill(sched.pid, SIGTERM);
  int status = sched.wait_exit(5s);
  REQUIRE(status != -1);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  kill(again.pid, SIGINT);
  status = again.wait_exit(5s);
  REQUIRE(status != -1);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}

TEST_CASE("the console answers gpus, sessions and help", "[gleamd][cluster]") {
  auto dir = temp_dir();
  auto port = free_port();
  write_file(dir + "/n.conf", "[node]\nid = \"solo-t\"\nroles = [\"scheduler\", \"gpu_server\"]\n"
                              "port = " + std::to_string(port) + "\n");
  node_process node{dir + "/n.conf", dir + "/n.log"};
  poll_nodes(port, [](const std::string& t) { return has_word(row(t, "solo-t"), "up"); });
  CHECK_THAT(console(port, "help"), Catch::Contains("sessions"));
  auto gpus = console(port, "gpus");
  CHECK_THAT(gpus, Catch::Contains("NODE") && Catch::Contains("GPU(s)"));
  CHECK_THAT(console(port, "sessions"), Catch::Contains("session(s)"));
  CHECK_THAT(console(port, "frobnicate"), Catch::Contains("unknown command 'frobnicate'"));
}

TEST_CASE("gleamd refuses a bad config with exit status 2, naming file and key",
          "[gleamd][cluster]") {
  auto dir = temp_dir();
  write_file(dir + "/bad.conf", "[node]\nroles = [\"scheduler\"]\nport = 99999\n");
  std::string out;
  int rc = gleam::test::run_command(gleam::test::build_path("bin/gleamd") + " --config-file="
                                      + dir + "/bad.conf 2>&1",
                                    out);
  CHECK(rc == 2);
  CHECK_THAT(out, Catch::Contains(dir + "/bad.conf:3") && Catch::Contains("node.port"));
}

TEST_CASE("the console says clearly when no node listens", "[gleamd][cluster]") {
  auto port = free_port();
  std::string out;
  int rc = gleam::test::run_command(gleam::test::build_path("bin/gleam-console")
                                      + " --scheduler 127.0.0.1:" + std::to_string(port)
                                      + " -c nodes 2>&1",
                                    out);
  CHECK(rc == 1);
  CHECK_THAT(out, Catch::Contains("cannot reach a gleam node at 127.0.0.1:" + std::to_string(port)));
}

TEST_CASE("the console shows gamma, the placement queue and a task's explanation",
          "[gleamd][cluster]") {
  auto dir = temp_dir();
  auto port = free_port();
  write_file(dir + "/s.conf", "[node]\nid = \"plc-t\"\nroles = [\"scheduler\"]\nport = "
                                + std::to_string(port) + "\n");
  node_process node{dir + "/s.conf", dir + "/s.log"};
  poll_nodes(port, [](const std::string& t) { return has_word(row(t, "plc-t"), "up"); });
  auto gamma = console(port, "gamma");
  INFO(gamma);
  CHECK_THAT(gamma, Catch::Contains("GPU TYPE") && Catch::Contains("0 GPU type(s)")
                      && Catch::Contains("default gamma 1.1"));
  auto queue = console(port, "queue");
  INFO(queue);
  CHECK_THAT(queue, Catch::Contains("0 queued task(s); 0 placed so far"));
  auto explain = console(port, "placement explain llama-8B");
  INFO(explain);
  CHECK_THAT(explain, Catch::Contains("task llama-8B (tenant -): unknown signature, "
                                      "conservative default profile; weights 17.18 GB, "
                                      "memory 35.43 GB")
                        && Catch::Contains("decision: no GPU server has registered"));
  auto usage = console(port, "placement");
  CHECK_THAT(usage, Catch::Contains("usage: placement explain TASK"));
  CHECK_THAT(console(port, "help"), Catch::Contains("placement explain TASK"));
}

TEST_CASE("the console's queue shows each task's tenant and explain names it",
          "[gleamd][cluster][tenant]") {
  auto dir = temp_dir();
  auto port = free_port();
  write_file(dir + "/s.conf", "[node]\nid = \"ten-s\"\nroles = [\"scheduler\"]\nport = "
                                + std::to_string(port)
                                + "\nauth-token = \"node-token\"\n"
                                  "tenants = [\"alice:a-secret\", \"bob:b-secret\"]\n");
  node_process node{dir + "/s.conf", dir + "/s.log"};
  poll_nodes(port, [](const std::string& t) { return has_word(row(t, "ten-s"), "up"); });

  // A GPU node whose one GPU is full registers; clients of alice and of the
  // unnamed tenant ask for a placement and wait.
  caf::actor_system_config sys_cfg;
  gleam::test::network_test_config(sys_cfg);
  caf::actor_system sys{sys_cfg};
  caf::scoped_actor self{sys};
  auto remote = sys.middleman().remote_actor<gleam::actors::node_actor>("127.0.0.1", port);
  REQUIRE(remote);
  gleam::actors::scheduler_actor sched;
  self->request(*remote, 5s, gleam::actors::get_scheduler_atom::value)
    .receive([&](gleam::actors::scheduler_actor& s) { sched = s; },
             [&](caf::error& e) { FAIL(sys.render(e)); });
  using gleam::actors::pb;
  namespace proto = gleam::proto;
  proto::NodeRegister reg;
  reg.set_node_id("ten-gpu");
  reg.add_roles(proto::ROLE_GPU_SERVER);
  reg.set_data_host("127.0.0.1");
  reg.set_data_port(1);
  auto* g = reg.add_gpus();
  g->set_index(0);
  g->set_name("NVIDIA H200");
  g->set_total_memory(80'000'000'000ull);
  self->request(sched, 5s, gleam::actors::register_atom::value, pb<proto::NodeRegister>{reg})
    .receive([](pb<proto::NodeRegistered>&) {}, [&](caf::error& e) { FAIL(sys.render(e)); });
  proto::Heartbeat hb;
  hb.set_node_id("ten-gpu");
  auto* t = hb.mutable_telemetry()->add_gpus();
  t->set_index(0);
  auto* r = t->add_running();
  r->set_session(1);
  r->set_task_signature("big");
  r->set_allocated_bytes(79'000'000'000ull);
  r->set_first_launch_time_ns(1);
  self->request(sched, 5s, gleam::actors::heartbeat_atom::value, pb<proto::Heartbeat>{hb})
    .receive([](pb<proto::HeartbeatAck>&) {}, [&](caf::error& e) { FAIL(sys.render(e)); });
  auto ask = [&](const std::string& sig, const std::string& token) {
    proto::PlacementRequest req;
    req.set_client_id("client-" + sig);
    req.set_task_signature(sig);
    req.set_auth_token(token);
    return self->request(sched, 30s, gleam::actors::place_atom::value,
                         pb<proto::PlacementRequest>{req});
  };
  std::string refusal;
  ask("intruder-task", "nobody's").receive(
    [&](pb<proto::PlacementReply>&) { FAIL("a token naming no tenant was placed"); },
    [&](caf::error& e) { refusal = sys.render(e); });
  CHECK_THAT(refusal, Catch::Contains("the scheduler admits its tenants only"));
  auto waiting_alice = ask("alice-task", "a-secret");
  auto waiting_unnamed = ask("unnamed-task", "node-token");
  static_cast<void>(waiting_alice); // they wait for the GPU while the console looks
  static_cast<void>(waiting_unnamed);

  std::string queue;
  for (int i = 0; i < 50; ++i) {
    queue = console(port, "queue");
    if (queue.find("2 queued task(s)") != std::string::npos)
      break;
    std::this_thread::sleep_for(100ms);
  }
  INFO(queue);
  CHECK_THAT(queue, Catch::Contains("TENANT"));
  auto alice_row = row(queue, "     1");
  CHECK(has_word(alice_row, "alice"));
  CHECK(has_word(alice_row, "alice-task"));
  auto unnamed_row = row(queue, "     2");
  CHECK(has_word(unnamed_row, "-"));
  CHECK(has_word(unnamed_row, "unnamed-task"));
  CHECK(queue.find("intruder-task") == std::string::npos);
  auto explain = console(port, "placement explain 1");
  INFO(explain);
  CHECK_THAT(explain, Catch::Contains("task 1 (tenant alice):"));
  CHECK_THAT(console(port, "placement explain 2"), Catch::Contains("task 2 (tenant -):"));
}

namespace {

/// Polls the log at `path` until it contains `text` or `limit` passes.
bool log_shows(const std::string& path, const std::string& text, std::chrono::milliseconds limit) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (read_file(path).find(text) != std::string::npos)
      return true;
    std::this_thread::sleep_for(100ms);
  }
  return false;
}

} // namespace

// The plaintext node retries every 200 ms and each of its handshakes fails in
// the scheduler: the TLS node's connection must survive that
// (actors/tls_error_guard.hpp).
TEST_CASE("two TLS nodes register; a plaintext node cannot join a TLS scheduler",
          "[gleamd][cluster][tls][tls-cluster]") {
  auto dir = temp_dir();
  REQUIRE(gleam::test::make_test_certificates(dir));
  auto tls = "[tls]\nenabled = true\ncertificate = \"" + dir + "/node.pem\"\nkey = \"" + dir
             + "/node.key\"\nca-file = \"" + dir + "/ca.pem\"\n";
  auto sched_port = free_port();
  auto gpu_port = free_port();
  auto plain_port = free_port();
  // Heartbeats every 200 ms; a down-after of 5 s tolerates a loaded test host.
  auto timing = "heartbeat-interval = 200ms\ndown-after = 5s\n";
  write_file(dir + "/sched.conf", "[node]\nid = \"sched-tls\"\nroles = [\"scheduler\"]\nport = "
                                    + std::to_string(sched_port) + "\n" + timing + tls);
  write_file(dir + "/gpu.conf", "[node]\nid = \"gpu-tls\"\nroles = [\"gpu_server\"]\nport = "
                                  + std::to_string(gpu_port) + "\nscheduler = \"127.0.0.1:"
                                  + std::to_string(sched_port) + "\"\n" + timing + tls);
  write_file(dir + "/plain.conf", "[node]\nid = \"gpu-plain\"\nroles = [\"gpu_server\"]\nport = "
                                    + std::to_string(plain_port) + "\nscheduler = \"127.0.0.1:"
                                    + std::to_string(sched_port) + "\"\n" + timing);
  node_process sched{dir + "/sched.conf", dir + "/sched.log"};
  node_process gpu{dir + "/gpu.conf", dir + "/gpu.log"};
  node_process plain{dir + "/plain.conf", dir + "/plain.log"};
  CHECK(log_shows(dir + "/sched.log", "with TLS", 10s));
  INFO("gpu.log:\n" << read_file(dir + "/gpu.log"));
  CHECK(log_shows(dir + "/gpu.log", "registered with scheduler 127.0.0.1:" + std::to_string(sched_port), 15s));
  // The plaintext node's handshake fails; it keeps retrying and never registers.
  CHECK(log_shows(dir + "/plain.log", "scheduler 127.0.0.1:" + std::to_string(sched_port), 15s));
  std::this_thread::sleep_for(1s);
  INFO("plain.log:\n" << read_file(dir + "/plain.log"));
  CHECK(read_file(dir + "/plain.log").find("registered with scheduler") == std::string::npos);
  // The console joins the TLS cluster with the client variables, and only so.
  auto env = "GLEAM_TLS=on GLEAM_TLS_CERT=" + dir + "/node.pem GLEAM_TLS_KEY=" + dir
             + "/node.key GLEAM_TLS_CA=" + dir + "/ca.pem ";
  auto console_cmd = gleam::test::build_path("bin/gleam-console") + " --scheduler 127.0.0.1:"
                     + std::to_string(sched_port) + " -c nodes 2>&1";
  std::string table;
  gleam::test::run_command(env + console_cmd, table);
  INFO("TLS console:\n" << table);
  CHECK(has_word(row(table, "sched-tls"), "up"));
  CHECK(has_word(row(table, "gpu-tls"), "up"));
  CHECK(row(table, "gpu-plain").empty());
  std::string plain_console;
  CHECK(gleam::test::run_command(console_cmd, plain_console) != 0);
  INFO("plaintext console:\n" << plain_console);
  CHECK_THAT(plain_console, Catch::Contains("cannot reach"));
}

TEST_CASE("gleamd refuses TLS without certificates with exit status 2", "[gleamd][cluster][tls]") {
  auto dir = temp_dir();
  write_file(dir + "/tls.conf", "[node]\nroles = [\"scheduler\"]\n[tls]\nenabled = true\n");
  std::string out;
  int rc = gleam::test::run_command(gleam::test::build_path("bin/gleamd") + " --config-file="
                                      + dir + "/tls.conf 2>&1",
                                    out);
  CHECK(rc == 2);
  CHECK_THAT(out, Catch::Contains(dir + "/tls.conf:4") && Catch::Contains("tls.certificate")
                    && Catch::Contains("anonymous"));
}

TEST_CASE("a rogue node with a live node's id cannot take its place in the cluster",
          "[gleamd][cluster][auth]") {
  auto dir = temp_dir();
  auto sched_port = free_port();
  auto gpu_port = free_port();
  auto rogue_port = free_port();
  const std::string secret = "cluster-secret = \"9f86d081884c7d659a2feaa0c55ad015\"\n";
  auto conf = [&](const std::string& id, const std::string& roles, uint16_t port,
                  const std::string& extra) {
    return "[node]\nid = \"" + id + "\"\nroles = [" + roles + "]\nport = "
           + std::to_string(port) + "\nscheduler = \"127.0.0.1:" + std::to_string(sched_port)
           + "\"\nheartbeat-interval = 100ms\ndown-after = 600ms\n" + extra;
  };
  write_file(dir + "/sched.conf", conf("sched-a", "\"scheduler\"", sched_port, secret));
  write_file(dir + "/gpu.conf", conf("gpuhost-a", "\"gpu_server\"", gpu_port, secret));
  write_file(dir + "/rogue.conf", conf("gpuhost-a", "\"gpu_server\"", rogue_port, ""));
  write_file(dir + "/insider.conf", conf("gpuhost-a", "\"gpu_server\"", rogue_port, secret));
  node_process sched{dir + "/sched.conf", dir + "/sched.log"};
  node_process gpu{dir + "/gpu.conf", dir + "/gpu.log"};
  auto address = "127.0.0.1:" + std::to_string(gpu_port);
  auto table = poll_nodes(sched_port, [&](const std::string& t) {
    return has_word(row(t, "gpuhost-a"), "up") && row(t, "gpuhost-a").find(address) != std::string::npos;
  });
  INFO(table);
  REQUIRE(row(table, "gpuhost-a").find(address) != std::string::npos);

  // Starts a second node under the same id from `config`; its registration
  // is refused with `why` and the table still names the real node.
  auto refused = [&](const std::string& name, const std::string& why) {
    node_process other{dir + "/" + name + ".conf", dir + "/" + name + ".log"};
    auto log = dir + "/" + name + ".log";
    for (int i = 0; i < 100 && read_file(log).find("did not accept") == std::string::npos; ++i)
      std::this_thread::sleep_for(50ms);
    INFO(read_file(log));
    CHECK_THAT(read_file(log), Catch::Contains(why));
    auto after = console(sched_port, "nodes");
    INFO(after);
    CHECK(row(after, "gpuhost-a").find(address) != std::string::npos);
    CHECK(has_word(row(after, "gpuhost-a"), "up"));
  };
  // Without the cluster secret: refused, and logged at the scheduler.
  refused("rogue", "cluster proof is missing");
  CHECK_THAT(read_file(dir + "/sched.log"), Catch::Contains("registration of node 'gpuhost-a'")
                                              && Catch::Contains("refused: no cluster proof"));
  // With the secret, while the real node is up: the id stays with it.
  refused("insider", "is up at " + address);
}
