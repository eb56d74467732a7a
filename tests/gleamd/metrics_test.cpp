// gleamd's [node] metrics-port: Prometheus text over HTTP, scraped and
// parsed as Prometheus would; other paths 404; a port clashing with the
// node's own refused at start-up.
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include "tests/support/files.hpp"
#include "tests/support/gpu_probe.hpp"
#include "tests/support/process.hpp"

namespace {

/// The whole answer of an HTTP GET of `path` on loopback `port`; "" when
/// nothing listens.
std::string http_get(int port, const std::string& path) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string out;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) {
    auto req = "GET " + path + " HTTP/1.0\r\nHost: localhost\r\n\r\n";
    ::send(fd, req.data(), req.size(), 0);
    char buf[4096];
    for (ssize_t n; (n = ::recv(fd, buf, sizeof(buf), 0)) > 0;)
      out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

/// A parsed exposition: family -> type, and (family, labels) -> value.
struct exposition {
  std::map<std::string, std::string> types;
  std::map<std::pair<std::string, std::string>, double> samples;
};

/// Parses Prometheus text format 0.0.4 strictly enough for these tests:
/// every sample belongs to the family whose HELP/TYPE came last (families
/// are contiguous), labels are name="value" pairs, values are numbers.
exposition parse(const std::string& body) {
  exposition e;
  static const std::regex sample{R"(^([a-z_]+)\{((?:[a-z_]+="(?:[^"\\]|\\.)*",?)*)\} (\S+)$)"};
  std::string current;
  std::set<std::string> closed;
  std::istringstream in{body};
  for (std::string line; std::getline(in, line);) {
    INFO(line);
    if (line.rfind("# HELP ", 0) == 0) {
      auto name = line.substr(7, line.find(' ', 7) - 7);
      REQUIRE(closed.count(name) == 0);
      if (!current.empty())
        closed.insert(current);
      current = name;
      continue;
    }
    if (line.rfind("# TYPE ", 0) == 0) {
      std::istringstream words{line.substr(7)};
      std::string name, type;
      words >> name >> type;
      REQUIRE(name == current);
      REQUIRE((type == "gauge" || type == "counter"));
      e.types[name] = type;
      continue;
    }
    std::smatch m;
    REQUIRE(std::regex_match(line, m, sample));
    REQUIRE(m[1].str() == current);
    std::size_t used = 0;
    auto value = std::stod(m[3].str(), &used);
    REQUIRE(used == m[3].str().size());
    e.samples[{m[1].str(), m[2].str()}] = value;
  }
  return e;
}

} // namespace

TEST_CASE("gleamd serves its metrics in Prometheus text format", "[gleamd][metrics]") {
  char tmpl[] = "/tmp/gleam-metrics-test-XXXXXX";
  std::string dir = ::mkdtemp(tmpl);
  auto port = gleam::test::free_port();
  auto metrics = gleam::test::free_port();
  std::ofstream{dir + "/n.conf"} << "[node]\nid = \"metrics-t\"\nroles = [\"all\"]\nport = "
                                 << port << "\nmetrics-port = " << metrics
                                 << "\n[cache]\ndir = \"" << dir << "/cache\"\n";
  auto pid = gleam::test::spawn_logged(
    {gleam::test::build_path("bin/gleamd"), "--config-file=" + dir + "/n.conf"}, dir + "/n.log");
  std::string answer;
  // Bounded wait for the listener (not a timing assertion).
  for (int i = 0; i < 200 && answer.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds{25});
    answer = http_get(metrics, "/metrics");
  }
  INFO(gleam::test::read_file(dir + "/n.log"));
  REQUIRE(answer.rfind("HTTP/1.0 200 OK\r\n", 0) == 0);
  CHECK(answer.find("Content-Type: text/plain; version=0.0.4") != std::string::npos);
  auto body = answer.substr(answer.find("\r\n\r\n") + 4);
  auto e = parse(body);
  char host[256] = {};
  ::gethostname(host, sizeof(host) - 1);
  auto info = "node=\"metrics-t\",hostname=\"" + std::string{host} + "\"";
  CHECK(e.samples[{"gleam_node_info", info}] == 1);
  CHECK(e.types["gleam_node_gpus"] == "gauge");
  CHECK(e.types["gleam_gpu_busy_ratio"] == "gauge");
  CHECK(e.types["gleam_session_ops_total"] == "counter");
  for (const char* name : {"gleam_session_downloaded_bytes_total", "gleam_session_round_trips_total",
                           "gleam_session_cache_hits_total", "gleam_session_client_waits_total",
                           "gleam_session_client_wait_seconds_total"})
    CHECK(e.types[name] == "counter");
  CHECK(e.types["gleam_node_draining"] == "gauge");
  CHECK(e.samples[{"gleam_node_draining", R"(node="metrics-t")"}] == 0);
  CHECK(e.types["gleam_cache_hits_total"] == "counter");
  CHECK(e.samples.count({"gleam_cache_entries", R"(node="metrics-t")"}) == 1);
  CHECK(e.samples[{"gleam_cache_capacity_bytes", R"(node="metrics-t",tier="disk")"}]
        == 64.0 * (1ull << 30));
  CHECK(e.samples.count({"gleam_scheduler_queue_length", R"(node="metrics-t")"}) == 1);
  CHECK(e.samples.count({"gleam_scheduler_placements_total", R"(node="metrics-t")"}) == 1);
  CHECK(http_get(metrics, "/").rfind("HTTP/1.0 404", 0) == 0);
  gleam::test::stop_process(pid);
}

TEST_CASE("gleamd refuses a metrics port that is the node's own port", "[gleamd][metrics]") {
  char tmpl[] = "/tmp/gleam-metrics-test-XXXXXX";
  std::string dir = ::mkdtemp(tmpl);
  std::ofstream{dir + "/bad.conf"} << "[node]\nid = \"m\"\nroles = [\"all\"]\nport = 4999\n"
                                      "metrics-port = 4999\n";
  std::string out;
  auto rc = gleam::test::run_command(
    gleam::test::build_path("bin/gleamd") + " --config-file=" + dir + "/bad.conf 2>&1", out);
  CHECK(rc == 2);
  CHECK(out.find("node.metrics-port") != std::string::npos);
  CHECK(out.find("give the metrics their own port") != std::string::npos);
}
