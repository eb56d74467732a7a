#pragma once

// The fake GPU server (fake_gpu_server.cpp) as a child process of a test,
// and the probes that run against it; shared by the interpose_runtime tests.

#include <catch2/catch.hpp>

#include <stdlib.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/files.hpp"
#include "tests/support/gpu_probe.hpp"
#include "tests/support/process.hpp"

namespace gleam::test {

/// function -> `call` class, from interpose/spec/<spec>.
inline std::map<std::string, std::string> spec_call_classes(const std::string& spec = "cudart.spec") {
  std::ifstream in{source_path("interpose/spec/" + spec)};
  std::map<std::string, std::string> out;
  std::string fn;
  for (std::string line; std::getline(in, line);) {
    auto start = line.find_first_not_of(' ');
    if (start == std::string::npos)
      continue;
    line = line.substr(start);
    if (line.rfind("fn ", 0) == 0)
      fn = line.substr(3);
    else if (line.rfind("call ", 0) == 0)
      out[fn] = line.substr(5);
  }
  return out;
}

/// key -> value of a probe's "key=value" lines.
inline std::map<std::string, std::string> probe_values(const std::string& out) {
  std::map<std::string, std::string> kv;
  std::istringstream in{out};
  for (std::string line; std::getline(in, line);)
    if (auto eq = line.find('='); eq != std::string::npos)
      kv[line.substr(0, eq)] = line.substr(eq + 1);
  return kv;
}

/// fake_gpu_server in a child process; SIGTERM at the end.
class fake_server {
public:
  /// `args`: more fake_gpu_server arguments (e.g. {"--op-us", "3000"}).
  explicit fake_server(const std::vector<std::string>& args = {}) {
    char tmpl[] = "/tmp/gleam-async-test-XXXXXX";
    const char* dir = ::mkdtemp(tmpl);
    REQUIRE(dir != nullptr);
    dir_ = dir;
    port_ = free_port();
    std::vector<std::string> argv{build_path("tests/fake_gpu_server"), std::to_string(port_),
                                  stats_path()};
    argv.insert(argv.end(), args.begin(), args.end());
    pid_ = spawn_logged(argv, dir_ + "/server.log");
    // Bounded wait for the listener (not a timing assertion).
    for (int i = 0; i < 200 && !port_open(port_); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds{25});
    REQUIRE(port_open(port_));
  }
  ~fake_server() {
    stop_process(pid_);
  }
  std::string stats_path() const {
    return dir_ + "/stats.txt";
  }
  int port() const {
    return port_;
  }
  /// Runs the probe scenario; `env` is prepended (e.g. "GLEAM_ASYNC=off");
  /// the client connects to `via` (a gleam-link in front) when nonzero.
  std::string probe(const std::string& scenario, const std::string& env = "", int via = 0) {
    return probe_with("tests/interpose_async_probe", scenario, env, via);
  }
  /// probe() with the probe binary `probe` (a path under the build
  /// directory) that takes the built libcudart.so.13 and `scenario`.
  std::string probe_with(const std::string& probe, const std::string& scenario,
                         const std::string& env = "", int via = 0) {
    std::remove(stats_path().c_str());
    std::string out;
    auto cmd = env + " GLEAM_SERVER=127.0.0.1:" + std::to_string(via != 0 ? via : port_) + " "
               + build_path(probe) + " " + build_path("lib/libcudart.so.13") + " " + scenario
               + " 2>" + dir_ + "/probe.err";
    auto rc = run_command(cmd, out);
    INFO("probe stderr: " << read_file(dir_ + "/probe.err"));
    CHECK(rc == 0);
    return out;
  }
  /// The probe's stderr of the last run.
  std::string probe_errors() const {
    return read_file(dir_ + "/probe.err");
  }
  std::string dir() const {
    return dir_;
  }
  /// Writes `text` to a client config file in the server's directory and
  /// returns the environment that makes the probe read it.
  std::string client_config(const std::string& text) const {
    auto path = dir_ + "/client.conf";
    std::ofstream{path} << text;
    return "GLEAM_CONFIG=" + path;
  }
  /// The server's per-batch statistics of the last session.
  std::string stats() const {
    return read_file(stats_path());
  }
  /// Batches the server saw in the last session.
  long batches() const {
    auto text = read_file(stats_path());
    auto pos = text.find("batches ");
    return pos == std::string::npos ? -1 : std::atol(text.c_str() + pos + 8);
  }

private:
  std::string dir_;
  int port_ = 0;
  pid_t pid_ = -1;
};

} // namespace gleam::test
