// Maintenance as an admin does it: gleam-console drains a node while a
// client's session runs on it, new clients go elsewhere or are told why,
// and undrain restores it. The CPU case uses the fake GPU server with a
// real scheduler; the [gpu] case a real gleamd, whose GPU server refuses
// new sessions and ends the last ones at the drain's deadline.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>

#include "tests/support/files.hpp"
#include "tests/support/gpu_probe.hpp"
#include "tests/support/process.hpp"

using namespace std::chrono_literals;
using gleam::test::build_path;
using gleam::test::read_file;
using gleam::test::run_command;

namespace {

std::string temp_dir() {
  char tmpl[] = "/tmp/gleam-drain-test-XXXXXX";
  return ::mkdtemp(tmpl);
}

std::string console(int port, const std::string& command) {
  std::string out;
  run_command(build_path("bin/gleam-console") + " --scheduler 127.0.0.1:" + std::to_string(port)
                + " -c '" + command + "' 2>&1",
              out);
  return out;
}

/// The line of `table` that starts with `node`, or "".
std::string row(const std::string& table, const std::string& node) {
  for (const auto& line : gleam::test::lines_of(table))
    if (line.rfind(node + " ", 0) == 0)
      return line;
  return "";
}

bool has_word(const std::string& line, const std::string& word) {
  return (" " + line + " ").find(" " + word + " ") != std::string::npos;
}

/// A client with `env` (VAR=value words) that opens a session, allocates,
/// prints "ready first=…", then allocates and frees 1 MiB until a call
/// fails and prints "error=NAME …" (interpose_runtime_lost_server_probe loop).
pid_t start_loop_client(const std::string& env, const std::string& log) {
  return gleam::test::spawn_logged(
    {"/bin/sh", "-c",
     env + " exec " + build_path("tests/interpose_runtime_lost_server_probe") + " "
       + build_path("lib/libcudart.so.13") + " loop"},
    log);
}

/// Waits (bounded, not a timing assertion) until `log` contains `text`.
bool wait_for(const std::string& log, const std::string& text, int tries = 400) {
  for (int i = 0; i < tries && read_file(log).find(text) == std::string::npos; ++i)
    std::this_thread::sleep_for(25ms);
  return read_file(log).find(text) != std::string::npos;
}

/// A new client: "count=N error=NAME …" on stdout, its messages in `err`.
std::string new_client(const std::string& env, const std::string& err) {
  std::string out;
  run_command(env + " " + build_path("tests/interpose_runtime_probe") + " "
                + build_path("lib/libcudart.so.13") + " 2>" + err,
              out);
  return out;
}

bool running(pid_t pid) {
  return ::waitpid(pid, nullptr, WNOHANG) == 0;
}

void kill_and_reap(pid_t pid) {
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
}

} // namespace

TEST_CASE("drain stops placements on a node while its running session goes on; undrain "
          "restores it",
          "[gleamd][drain]") {
  auto dir = temp_dir();
  auto port = gleam::test::free_port();
  auto server = gleam::test::spawn_logged({build_path("tests/fake_gpu_server"),
                                           std::to_string(port), dir + "/stats.txt",
                                           "--scheduler-tenants", "alice:a-secret"},
                                          dir + "/server.log");
  for (int i = 0; i < 200 && !gleam::test::port_open(port); ++i)
    std::this_thread::sleep_for(25ms);
  REQUIRE(gleam::test::port_open(port));
  auto env = "GLEAM_SCHEDULER=127.0.0.1:" + std::to_string(port) + " GLEAM_TOKEN=a-secret";
  auto client = start_loop_client(env, dir + "/client.log");
  INFO("client:\n" << read_file(dir + "/client.log") << "\nserver:\n"
                   << read_file(dir + "/server.log"));
  REQUIRE(wait_for(dir + "/client.log", "ready first=cudaSuccess"));

  // Wrong uses say what is expected and change nothing.
  CHECK_THAT(console(port, "drain"), Catch::Contains("usage: drain NODE [DEADLINE]"));
  CHECK_THAT(console(port, "drain fake soon"),
             Catch::Contains("deadline 'soon'") && Catch::Contains("30min"));
  CHECK_THAT(console(port, "drain nobody"), Catch::Contains("no node 'nobody' has registered"));
  CHECK(has_word(row(console(port, "nodes"), "fake"), "up"));

  auto drained = console(port, "drain fake 10min");
  INFO(drained);
  CHECK_THAT(drained, Catch::Contains("node 'fake' draining: no new placements")
                        && Catch::Contains(" UTC are ended"));
  // The fake node sends no telemetry, so the scheduler sees no sessions.
  CHECK(has_word(row(console(port, "nodes"), "fake"), "drained"));
  CHECK(has_word(row(console(port, "gpus"), "fake"), "drained"));

  // A new client is told why it gets no GPU.
  auto refused = new_client(env, dir + "/err.txt");
  auto err = read_file(dir + "/err.txt");
  INFO("new client: " << refused << err);
  CHECK(refused.rfind("count=0 error=cudaErrorNoDevice", 0) == 0);
  CHECK_THAT(err, Catch::Contains("draining for maintenance"));

  // The running session was not disturbed: still allocating and freeing.
  std::this_thread::sleep_for(300ms);
  CHECK(running(client));
  CHECK(read_file(dir + "/client.log").find("error=") == std::string::npos);

  CHECK_THAT(console(port, "undrain fake"), Catch::Contains("node 'fake' undrained"));
  CHECK(has_word(row(console(port, "nodes"), "fake"), "up"));
  auto placed = new_client(env, dir + "/err.txt");
  INFO("after undrain: " << placed << read_file(dir + "/err.txt"));
  CHECK(placed.rfind("count=1 error=cudaSuccess", 0) == 0);
  CHECK(running(client));
  kill_and_reap(client);
  kill_and_reap(server);
}

TEST_CASE("a drained gleamd refuses new sessions and ends the last one at the deadline",
          "[gpu][gleamd][drain]") {
  auto dir = temp_dir();
  auto port = gleam::test::free_port();
  std::ofstream{dir + "/node.conf"} << "[node]\nid = \"drain-t\"\nroles = [\"all\"]\nport = "
                                    << port
                                    << "\nadvertise = \"127.0.0.1\"\nheartbeat-interval = "
                                       "100ms\n[cache]\ndir = \""
                                    << dir << "/cache\"\n";
  auto node = gleam::test::spawn_logged(
    {build_path("bin/gleamd"), "--config-file=" + dir + "/node.conf"}, dir + "/node.log");
  for (int i = 0; i < 300 && !gleam::test::port_open(port); ++i)
    std::this_thread::sleep_for(50ms);
  REQUIRE(gleam::test::port_open(port));
  auto env = "GLEAM_SERVER=127.0.0.1:" + std::to_string(port);
  auto client = start_loop_client(env, dir + "/client.log");
  INFO("client:\n" << read_file(dir + "/client.log") << "\ngleamd:\n"
                   << read_file(dir + "/node.log"));
  REQUIRE(wait_for(dir + "/client.log", "ready first=cudaSuccess"));
  // Bounded wait until a heartbeat carried the session.
  std::string nodes;
  for (int i = 0; i < 100; ++i) {
    nodes = console(port, "gpus");
    if (row(nodes, "drain-t").find(" 1 ") != std::string::npos)
      break;
    std::this_thread::sleep_for(50ms);
  }
  auto drained = console(port, "drain drain-t 3s");
  INFO(drained);
  CHECK_THAT(drained, Catch::Contains("1 session(s) running"));
  CHECK(has_word(row(console(port, "nodes"), "drain-t"), "draining"));
  // The node learns of the drain with its next heartbeat; then a client
  // connecting to it directly is refused with the reason.
  std::string out, err;
  for (int i = 0; i < 40; ++i) {
    out = new_client(env, dir + "/err.txt");
    err = read_file(dir + "/err.txt");
    if (err.find("draining") != std::string::npos)
      break;
    std::this_thread::sleep_for(100ms);
  }
  INFO("new client: " << out << err);
  CHECK(out.rfind("count=0 error=cudaErrorNoDevice", 0) == 0);
  CHECK_THAT(err, Catch::Contains("node 'drain-t' is draining for maintenance"));
  // Until the deadline the running session goes on; after it, it is ended.
  CHECK(running(client));
  CHECK(read_file(dir + "/client.log").find("error=") == std::string::npos);
  CHECK(wait_for(dir + "/client.log", "error=", 400));
  CHECK(wait_for(dir + "/node.log", "was drained and its deadline passed", 100));
  for (int i = 0; i < 100 && !has_word(row(nodes, "drain-t"), "drained"); ++i) {
    nodes = console(port, "nodes");
    std::this_thread::sleep_for(50ms);
  }
  CHECK(has_word(row(nodes, "drain-t"), "drained"));
  CHECK_THAT(console(port, "undrain drain-t"), Catch::Contains("undrained"));
  for (int i = 0; i < 40; ++i) {
    out = new_client(env, dir + "/err.txt");
    if (out.rfind("count=1", 0) == 0)
      break;
    std::this_thread::sleep_for(100ms);
  }
  CHECK(out.rfind("count=1 error=cudaSuccess", 0) == 0);
  kill_and_reap(client);
  gleam::test::stop_process(node);
}
