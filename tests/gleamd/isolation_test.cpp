// [gpu_server] isolation on a whole node without a GPU: fake_gleamd (gleamd
// on a fake driver whose context a 0xDD memset poisons and a 0xCC memset
// holds for 30 s, as a fault and a long kernel do to a real one) and
// clients (interpose_async_probe) through the built libcudart.so.13. Under
// isolation = "process" one session's fault, hang, kill or crash stays its
// own; under "shared" the fault reaches every session of the GPU, which is
// what the process mode exists to prevent.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
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

constexpr const char* admin_token = "admin-secret-for-tests";

/// fake_gleamd with the scheduler and gpu_server roles on a free port.
class fake_node {
public:
  /// `gpu_extra`, `node_extra`: more keys of [gpu_server] and [node].
  explicit fake_node(const std::string& isolation, const std::string& gpu_extra = "",
                     const std::string& node_extra = "") {
    char tmpl[] = "/tmp/gleam-isolation-test-XXXXXX";
    dir_ = ::mkdtemp(tmpl);
    port_ = gleam::test::free_port();
    std::ofstream{dir_ + "/node.conf"} << "[node]\nid = \"iso\"\nroles = [\"scheduler\", "
                                          "\"gpu_server\"]\nport = "
                                       << port_ << "\nadvertise = \"127.0.0.1\"\nadmin-token = \""
                                       << admin_token << "\"\n"
                                       << node_extra << "[gpu_server]\nisolation = \"" << isolation
                                       << "\"\n"
                                       << (isolation == "process" ? "max-op-seconds = 2\n" : "")
                                       << gpu_extra;
    pid_ = gleam::test::spawn_logged(
      {build_path("tests/fake_gleamd"), "--config-file=" + dir_ + "/node.conf"}, log());
    for (int i = 0; i < 400 && !gleam::test::port_open(port_); ++i)
      std::this_thread::sleep_for(25ms);
    REQUIRE(gleam::test::port_open(port_));
  }
  ~fake_node() {
    gleam::test::stop_process(pid_);
  }
  std::string log() const {
    return dir_ + "/gleamd.log";
  }
  std::string dir() const {
    return dir_;
  }
  bool running() const {
    return ::waitpid(pid_, nullptr, WNOHANG) == 0;
  }
  /// A client running async_probe `scenario` in the background; its
  /// stdout in NAME.out, stderr in NAME.err; `env`: more VAR=VALUE words.
  pid_t client(const std::string& scenario, const std::string& name,
               const std::string& env = "") const {
    return gleam::test::spawn_logged(
      {"/bin/sh", "-c",
       env + " GLEAM_SERVER=127.0.0.1:" + std::to_string(port_) + " exec "
         + build_path("tests/interpose_async_probe") + " " + build_path("lib/libcudart.so.13")
         + " " + scenario + " 2>" + dir_ + "/" + name + ".err"},
      dir_ + "/" + name + ".out");
  }
  /// A client of the tenant whose token is `token` that asks for `mib` MiB
  /// with one cudaMalloc and holds them (gleamd_memory_probe, no slabs).
  pid_t memory_client(const std::string& token, int mib, const std::string& name) const {
    return gleam::test::spawn_logged(
      {"/bin/sh", "-c",
       "GLEAM_SERVER=127.0.0.1:" + std::to_string(port_) + " GLEAM_TOKEN=" + token
         + " GLEAM_ALLOC_SLAB=0 exec " + build_path("tests/gleamd_memory_probe") + " "
         + build_path("lib/libcudart.so.13") + " " + std::to_string(mib) + " 0 2>" + dir_ + "/"
         + name + ".err"},
      dir_ + "/" + name + ".out");
  }
  std::string out(const std::string& name) const {
    return read_file(dir_ + "/" + name + ".out");
  }
  std::string err(const std::string& name) const {
    return read_file(dir_ + "/" + name + ".err");
  }
  std::string console(const std::string& command) const {
    std::string out;
    run_command(build_path("bin/gleam-console") + " --scheduler 127.0.0.1:"
                  + std::to_string(port_) + " --token " + admin_token + " -c '" + command
                  + "' 2>&1",
                out);
    return out;
  }

private:
  std::string dir_;
  int port_ = 0;
  pid_t pid_ = -1;
};

/// Waits (bounded, not a timing assertion) for `pid` to end; true if it did.
bool ended_within(pid_t pid, std::chrono::milliseconds bound) {
  auto until = std::chrono::steady_clock::now() + bound;
  while (std::chrono::steady_clock::now() < until) {
    if (::waitpid(pid, nullptr, WNOHANG) == pid)
      return true;
    std::this_thread::sleep_for(20ms);
  }
  return false;
}

/// Waits (bounded) until `file` contains `text`.
bool wait_for(const std::string& file, const std::string& text) {
  for (int i = 0; i < 400 && read_file(file).find(text) == std::string::npos; ++i)
    std::this_thread::sleep_for(25ms);
  return read_file(file).find(text) != std::string::npos;
}

/// The worker process of session `id` as the supervisor logged it, or 0.
pid_t worker_of(const std::string& log, uint64_t id) {
  auto key = "session " + std::to_string(id) + " opened in worker process ";
  auto text = read_file(log);
  auto at = text.find(key);
  return at == std::string::npos ? 0 : std::atoi(text.c_str() + at + key.size());
}

} // namespace

TEST_CASE("under process isolation a session's fault stays its own; under shared it reaches "
          "every session",
          "[gleamd][isolation]") {
  for (std::string mode : {"process", "shared"}) {
    DYNAMIC_SECTION(mode) {
      fake_node node{mode};
      auto a = node.client("steady 150", "a");
      std::this_thread::sleep_for(400ms);
      auto b = node.client("sticky", "b");
      REQUIRE(ended_within(b, 20s));
      INFO("a: " << node.out("a") << node.err("a") << "\nb: " << node.out("b") << node.err("b")
                 << "\nnode: " << read_file(node.log()));
      // The faulting session sees CUDA's sticky error at every later call.
      CHECK(node.out("b")
            == "failing=cudaSuccess\nnext=cudaSuccess\nsync1=cudaErrorIllegalAddress\n"
               "sync2=cudaErrorIllegalAddress\nmalloc=cudaErrorIllegalAddress\n");
      REQUIRE(ended_within(a, 30s));
      auto c = node.client("steady 5", "c");
      REQUIRE(ended_within(c, 20s));
      if (mode == "process") {
        // The other session and a new one run on, byte for byte; gleamd too.
        CHECK(node.out("a") == "steady=cudaSuccess wrong=0\n");
        CHECK(node.out("c") == "steady=cudaSuccess wrong=0\n");
        CHECK(node.running());
        // Workers use no weight cache yet: a cached upload says why and
        // travels plainly, byte for byte.
        auto d = node.client("bulk 2", "d");
        REQUIRE(ended_within(d, 30s));
        CHECK_THAT(node.out("d"), Catch::Contains("h2d=cudaSuccess d2h=cudaSuccess same=1"));
        CHECK_THAT(node.err("d"), Catch::Contains("does not use the node's weight cache"));
      } else {
        // One context: the fault is every session's.
        CHECK(node.out("a") == "steady=cudaErrorIllegalAddress wrong=0\n");
        CHECK(node.out("c").find("steady=cudaSuccess") == std::string::npos);
      }
    }
  }
}

TEST_CASE("under process isolation a long op holds only its own session, and max-op-seconds "
          "ends it with a reason",
          "[gleamd][isolation]") {
  fake_node node{"process"};
  auto b = node.client("hang", "b");
  REQUIRE(wait_for(node.dir() + "/b.out", "long=cudaSuccess"));
  // While B's op runs, A's 40 round trips go through (in shared mode they
  // would wait the 30 s of B's op).
  auto a = node.client("steady 40", "a");
  auto a_done = ended_within(a, 20s);
  INFO("a: " << node.out("a") << node.err("a") << "\nb: " << node.out("b") << node.err("b")
             << "\nnode: " << read_file(node.log()));
  CHECK(a_done);
  CHECK(node.out("a") == "steady=cudaSuccess wrong=0\n");
  // max-op-seconds = 2: B's worker ends, B's client is told why.
  REQUIRE(ended_within(b, 20s));
  CHECK(node.out("b")
        == "long=cudaSuccess\nsync=cudaErrorDevicesUnavailable\nmalloc=cudaErrorDevicesUnavailable\n");
  CHECK_THAT(node.err("b"), Catch::Contains("max-op-seconds"));
  CHECK(node.running());
}

TEST_CASE("the scheduler learns a task's profile from sessions that ran in worker processes",
          "[gleamd][isolation]") {
  for (std::string mode : {"process", "shared"}) {
    DYNAMIC_SECTION(mode) {
      fake_node node{mode};
      auto task = "iso-task-" + mode;
      CHECK_THAT(node.console("placement explain " + task),
                 Catch::Contains("unknown signature"));
      auto a = node.client("steady 5", "a", "GLEAM_TASK=" + task);
      REQUIRE(ended_within(a, 30s));
      CHECK(node.out("a") == "steady=cudaSuccess wrong=0\n");
      // The node's next heartbeats carry the session's measurements.
      std::string explained;
      for (int i = 0; i < 100; ++i) {
        explained = node.console("placement explain " + task);
        if (explained.find("profile from 1 finished run") != std::string::npos)
          break;
        std::this_thread::sleep_for(100ms);
      }
      INFO("explain: " << explained << "\nnode: " << read_file(node.log()));
      CHECK_THAT(explained, Catch::Contains("profile from 1 finished run(s)"));
      CHECK_THAT(explained, Catch::Contains("launches per run") || Catch::Contains("weights"));
    }
  }
}

TEST_CASE("an admin's session kill and a killed worker end only that session, with the reason",
          "[gleamd][isolation]") {
  fake_node node{"process"};
  auto a = node.client("steady 100000", "a");
  REQUIRE(wait_for(node.log(), "session 1 attached by its client"));
  auto b = node.client("steady 300", "b");
  // B's client reached its worker and runs its loop.
  REQUIRE(wait_for(node.log(), "session 2 attached by its client"));
  std::this_thread::sleep_for(300ms);
  INFO("a: " << node.out("a") << node.err("a") << "\nb: " << node.out("b") << node.err("b")
             << "\nnode: " << read_file(node.log()));
  SECTION("gleam-console session kill") {
    CHECK_THAT(node.console("session kill iso"), Catch::Contains("usage: session kill"));
    CHECK_THAT(node.console("session kill iso 99"), Catch::Contains("has no session 99"));
    auto killed = node.console("session kill iso 2");
    INFO(killed);
    CHECK_THAT(killed, Catch::Contains("session 2 on node 'iso' ended"));
    REQUIRE(ended_within(b, 10s));
    CHECK_THAT(node.out("b"), Catch::StartsWith("steady=cudaErrorDevicesUnavailable"));
    CHECK_THAT(node.err("b"), Catch::Contains("killed by an admin"));
  }
  SECTION("kill -9 of the session's worker process") {
    auto worker = worker_of(node.log(), 2);
    REQUIRE(worker > 0);
    ::kill(worker, SIGKILL);
    // The client learns it at its next call and exits cleanly.
    REQUIRE(ended_within(b, 10s));
    CHECK_THAT(node.out("b"), Catch::StartsWith("steady=cudaErrorDevicesUnavailable"));
    CHECK_THAT(node.err("b"), Catch::Contains("killed by signal 9"));
  }
  // Session 1 is untouched and its node still serves.
  CHECK(::waitpid(a, nullptr, WNOHANG) == 0);
  CHECK(node.out("a").empty());
  CHECK(node.running());
  ::kill(a, SIGKILL);
  ::waitpid(a, nullptr, 0);
}

TEST_CASE("tenants' memory rules: a tenant past its tenant-memory or into another's guaranteed "
          "memory gets out of memory, the guaranteed tenant still allocates",
          "[gleamd][isolation]") {
  // The fake GPU reports 70 GiB free: bob's guarantee leaves 100 MiB to
  // the others while bob does not use it.
  const std::string rules = "tenant-memory = [\"alice:120MiB\"]\n"
                            "guaranteed-memory = [\"bob:71580MiB\"]\n";
  for (std::string mode : {"process", "shared"}) {
    DYNAMIC_SECTION(mode) {
      fake_node node{mode, rules,
                     "tenants = [\"alice:alice-token-0001\", \"bob:bob-token-0002\", "
                     "\"carol:carol-token-0003\"]\n"};
      auto held = [&](const std::string& name) {
        return wait_for(node.dir() + "/" + name + ".out", "malloc=");
      };
      auto a1 = node.memory_client("alice-token-0001", 60, "a1");
      REQUIRE(held("a1"));
      INFO("a1: " << node.out("a1") << node.err("a1") << "\nnode: " << read_file(node.log()));
      CHECK(node.out("a1") == "malloc=cudaSuccess\n");
      // alice holds 60 MiB of her 120: 80 more are refused as by a full GPU.
      auto a2 = node.memory_client("alice-token-0001", 80, "a2");
      REQUIRE(ended_within(a2, 20s));
      INFO("a2: " << node.out("a2") << node.err("a2"));
      CHECK(node.out("a2") == "malloc=cudaErrorMemoryAllocation\n");
      CHECK_THAT(node.err("a2"), Catch::Contains("tenant-memory"));
      // carol has no rules, but bob's unused guarantee is not hers to take.
      auto c = node.memory_client("carol-token-0003", 200, "c");
      REQUIRE(ended_within(c, 20s));
      INFO("c: " << node.out("c") << node.err("c"));
      CHECK(node.out("c") == "malloc=cudaErrorMemoryAllocation\n");
      CHECK_THAT(node.err("c"), Catch::Contains("guaranteed-memory"));
      // bob's own allocation goes through.
      auto b = node.memory_client("bob-token-0002", 200, "b");
      REQUIRE(held("b"));
      INFO("b: " << node.out("b") << node.err("b"));
      CHECK(node.out("b") == "malloc=cudaSuccess\n");
      // The console shows each session's tenant and the tenant's use of its
      // rules (worker sessions report every 500 ms).
      std::string table;
      for (int i = 0; i < 40; ++i) {
        table = node.console("sessions");
        if (table.find("60/120MiB") != std::string::npos
            && table.find("200MiB, 71580MiB guaranteed") != std::string::npos)
          break;
        std::this_thread::sleep_for(100ms);
      }
      INFO("sessions:\n" << table);
      CHECK_THAT(table, Catch::Contains("alice") && Catch::Contains("60/120MiB"));
      CHECK_THAT(table, Catch::Contains("200MiB, 71580MiB guaranteed"));
      if (mode == "process") {
        // A worker killed with its session's memory: the driver freed it,
        // and alice may use it again.
        auto worker = worker_of(node.log(), 1);
        REQUIRE(worker > 0);
        ::kill(worker, SIGKILL);
        // The client learns it at its next call; this one waits in pause().
        ::kill(a1, SIGKILL);
        REQUIRE(ended_within(a1, 5s));
        REQUIRE(wait_for(node.log(), "session 1 ended"));
        auto a3 = node.memory_client("alice-token-0001", 80, "a3");
        REQUIRE(held("a3"));
        INFO("a3: " << node.out("a3") << node.err("a3"));
        CHECK(node.out("a3") == "malloc=cudaSuccess\n");
        ::kill(a3, SIGKILL);
        ::waitpid(a3, nullptr, 0);
      }
      for (auto pid : {a1, b}) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, nullptr, 0);
      }
    }
  }
}

TEST_CASE("on a GPU, process isolation keeps a session's memory and faults from another "
          "session",
          "[gpu][gleamd][isolation]") {
  char tmpl[] = "/tmp/gleam-isolation-gpu-XXXXXX";
  std::string dir = ::mkdtemp(tmpl);
  auto port = gleam::test::free_port();
  std::ofstream{dir + "/node.conf"} << "[node]\nid = \"iso-gpu\"\nroles = [\"all\"]\nport = "
                                    << port << "\nadvertise = \"127.0.0.1\"\n[cache]\ndir = \""
                                    << dir << "/cache\"\n[gpu_server]\nisolation = \"process\"\n";
  auto node = gleam::test::spawn_logged(
    {build_path("bin/gleamd"), "--config-file=" + dir + "/node.conf"}, dir + "/node.log");
  for (int i = 0; i < 300 && !gleam::test::port_open(port); ++i)
    std::this_thread::sleep_for(50ms);
  REQUIRE(gleam::test::port_open(port));
  auto through_gleam = [&](const std::string& args, const std::string& name) {
    return gleam::test::spawn_logged(
      {"/bin/sh", "-c",
       "GLEAM_SERVER=127.0.0.1:" + std::to_string(port) + " exec " + build_path("bin/gleam-run")
         + " -- " + args + " 2>" + dir + "/" + name + ".err"},
      dir + "/" + name + ".out");
  };
  auto out = [&](const std::string& name) { return read_file(dir + "/" + name + ".out"); };
  INFO("gleamd:\n" << read_file(dir + "/node.log"));
  // Memory: B's kernel reads and wipes A's buffer by its address.
  auto holder = through_gleam(build_path("tests/programs/isolation_peek") + " hold 5", "hold");
  REQUIRE(wait_for(dir + "/hold.out", "address 0x"));
  auto text = out("hold");
  auto addr = text.substr(text.find("0x"), text.find('\n') - text.find("0x"));
  auto peek = through_gleam(build_path("tests/programs/isolation_peek") + " peek " + addr, "peek");
  REQUIRE(ended_within(peek, 60s));
  REQUIRE(ended_within(holder, 60s));
  INFO("hold: " << out("hold") << "peek: " << out("peek"));
  CHECK_THAT(out("hold"), Catch::Contains("held intact=1"));
  CHECK_THAT(out("peek"), Catch::Contains("saw_secret=0"));
  // Faults: B's kernel faults while A runs; then a new session.
  auto a = through_gleam(build_path("tests/programs/pipeline"), "a");
  auto b = through_gleam(build_path("tests/programs/sticky_fault"), "b");
  REQUIRE(ended_within(b, 60s));
  REQUIRE(ended_within(a, 60s));
  CHECK_THAT(out("b"), Catch::Contains("sync=cudaErrorIllegalAddress"));
  CHECK_THAT(out("a"), Catch::Contains("checksum pipeline"));
  auto c = through_gleam(build_path("tests/programs/device_props"), "c");
  REQUIRE(ended_within(c, 60s));
  CHECK_THAT(out("c"), Catch::Contains("checksum device_props"));
  CHECK(::waitpid(node, nullptr, WNOHANG) == 0);
  gleam::test::stop_process(node);
}

TEST_CASE("on a GPU, a tenant past its memory rules gets out of memory while another tenant's "
          "guaranteed allocation succeeds",
          "[gpu][gleamd][isolation]") {
  std::string free_text;
  REQUIRE(run_command("nvidia-smi -i 0 --query-gpu=memory.free --format=csv,noheader,nounits",
                      free_text)
          == 0);
  auto free_mib = std::atol(free_text.c_str());
  REQUIRE(free_mib > 20000);
  char tmpl[] = "/tmp/gleam-tenant-gpu-XXXXXX";
  std::string dir = ::mkdtemp(tmpl);
  auto port = gleam::test::free_port();
  // bob is guaranteed all but 8 GiB of what is free now.
  std::ofstream{dir + "/node.conf"}
    << "[node]\nid = \"tenant-gpu\"\nroles = [\"scheduler\", \"gpu_server\"]\nport = " << port
    << "\nadvertise = \"127.0.0.1\"\ntenants = [\"alice:alice-token-0001\", "
       "\"bob:bob-token-0002\", \"carol:carol-token-0003\"]\n[gpu_server]\nisolation = "
       "\"process\"\ntenant-memory = [\"alice:4GiB\"]\nguaranteed-memory = [\"bob:"
    << (free_mib - 8192) << "MiB\"]\n";
  auto node = gleam::test::spawn_logged(
    {build_path("bin/gleamd"), "--config-file=" + dir + "/node.conf"}, dir + "/node.log");
  for (int i = 0; i < 300 && !gleam::test::port_open(port); ++i)
    std::this_thread::sleep_for(50ms);
  REQUIRE(gleam::test::port_open(port));
  auto client = [&](const std::string& token, int mib, const std::string& name) {
    return gleam::test::spawn_logged(
      {"/bin/sh", "-c",
       "GLEAM_SERVER=127.0.0.1:" + std::to_string(port) + " GLEAM_TOKEN=" + token
         + " GLEAM_ALLOC_SLAB=0 exec " + build_path("bin/gleam-run") + " -- "
         + build_path("tests/gleamd_memory_probe") + " " + build_path("lib/libcudart.so.13")
         + " " + std::to_string(mib) + " 0 2>" + dir + "/" + name + ".err"},
      dir + "/" + name + ".out");
  };
  auto out = [&](const std::string& name) { return read_file(dir + "/" + name + ".out"); };
  auto err = [&](const std::string& name) { return read_file(dir + "/" + name + ".err"); };
  INFO("gleamd:\n" << read_file(dir + "/node.log"));
  auto a1 = client("alice-token-0001", 3072, "a1");
  REQUIRE(wait_for(dir + "/a1.out", "malloc="));
  CHECK(out("a1") == "malloc=cudaSuccess\n");
  auto a2 = client("alice-token-0001", 2048, "a2");
  REQUIRE(ended_within(a2, 60s));
  INFO("a2: " << out("a2") << err("a2"));
  CHECK(out("a2") == "malloc=cudaErrorMemoryAllocation\n");
  CHECK_THAT(err("a2"), Catch::Contains("tenant-memory"));
  auto c = client("carol-token-0003", 12288, "c");
  REQUIRE(ended_within(c, 60s));
  INFO("c: " << out("c") << err("c"));
  CHECK(out("c") == "malloc=cudaErrorMemoryAllocation\n");
  CHECK_THAT(err("c"), Catch::Contains("guaranteed-memory"));
  auto b = client("bob-token-0002", 20480, "b");
  REQUIRE(wait_for(dir + "/b.out", "malloc="));
  INFO("b: " << out("b") << err("b"));
  CHECK(out("b") == "malloc=cudaSuccess\n");
  for (auto pid : {a1, b}) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
  }
  CHECK(::waitpid(node, nullptr, WNOHANG) == 0);
  gleam::test::stop_process(node);
}
