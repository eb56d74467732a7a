#include "tools/gleamd/metrics.hpp"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <map>
#include <tuple>
#include <vector>

#include <fmt/format.h>

namespace gleam::tools::metrics {

namespace {

/// A label value with Prometheus's escapes (backslash, quote, newline).
std::string escaped(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"')
      out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

/// One metric family: its HELP and TYPE lines, then its samples.
class family {
public:
  family(std::string& out, const char* name, const char* type, const char* help)
    : out_(out), name_(name) {
    out_ += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
  }
  /// One sample; `labels` as name, value pairs.
  void add(const std::vector<std::pair<const char*, std::string>>& labels, double value) {
    std::string l;
    for (const auto& [k, v] : labels)
      l += fmt::format("{}{}=\"{}\"", l.empty() ? "" : ",", k, escaped(v));
    out_ += fmt::format("{}{{{}}} {}\n", name_, l, value);
  }

private:
  std::string& out_;
  const char* name_;
};

using labels = std::vector<std::pair<const char*, std::string>>;

void gpus(std::string& out, const proto::NodeStatus& n) {
  std::map<uint32_t, const proto::GpuTelemetry*> telemetry;
  for (const auto& t : n.telemetry().gpus())
    telemetry[t.index()] = &t;
  family total{out, "gleam_gpu_memory_total_bytes", "gauge", "Memory of the GPU."};
  for (const auto& g : n.gpus())
    total.add({{"node", n.node_id()}, {"gpu", std::to_string(g.index())}, {"name", g.name()}},
              static_cast<double>(g.total_memory()));
  auto per_gpu = [&](const char* name, const char* type, const char* help, auto value) {
    family f{out, name, type, help};
    for (const auto& g : n.gpus()) {
      auto i = telemetry.find(g.index());
      f.add({{"node", n.node_id()}, {"gpu", std::to_string(g.index())}},
            i == telemetry.end() ? 0.0 : value(*i->second));
    }
  };
  per_gpu("gleam_gpu_memory_used_bytes", "gauge", "GPU memory its sessions hold.",
          [](const proto::GpuTelemetry& t) { return static_cast<double>(t.used_memory()); });
  per_gpu("gleam_gpu_sessions", "gauge", "Open sessions on the GPU.",
          [](const proto::GpuTelemetry& t) { return static_cast<double>(t.sessions()); });
  per_gpu("gleam_gpu_busy_ratio", "gauge",
          "Fraction of the last interval the GPU was busy (0..1).",
          [](const proto::GpuTelemetry& t) { return static_cast<double>(t.utilization()); });
}

void sessions(std::string& out, const proto::NodeStatus& n) {
  auto per_session = [&](const char* name, const char* type, const char* help, auto value) {
    family f{out, name, type, help};
    for (const auto& s : n.sessions())
      f.add({{"node", n.node_id()},
             {"session", std::to_string(s.session())},
             {"client", s.client_id()},
             {"gpu", std::to_string(s.gpu_index())}},
            value(s));
  };
  using summary = proto::SessionSummary;
  per_session("gleam_session_ops_total", "counter", "Ops the session's GPU server executed.",
              [](const summary& s) { return static_cast<double>(s.ops_executed()); });
  per_session("gleam_session_allocated_bytes", "gauge", "GPU memory the session holds.",
              [](const summary& s) { return static_cast<double>(s.allocated_bytes()); });
  per_session("gleam_session_uploaded_bytes_total", "counter",
              "Host-to-device bytes of the session.",
              [](const summary& s) { return static_cast<double>(s.uploaded_bytes()); });
  per_session("gleam_session_downloaded_bytes_total", "counter",
              "Device-to-host bytes returned to the session's client.",
              [](const summary& s) { return static_cast<double>(s.downloaded_bytes()); });
  per_session("gleam_session_round_trips_total", "counter",
              "Op batches of the session executed, each answered by one reply.",
              [](const summary& s) { return static_cast<double>(s.batches()); });
  per_session("gleam_session_received_bytes_total", "counter",
              "Bytes of the session's op batches as received from its client.",
              [](const summary& s) { return static_cast<double>(s.batch_bytes()); });
  per_session("gleam_session_sent_bytes_total", "counter",
              "Bytes of the replies sent to the session's client.",
              [](const summary& s) { return static_cast<double>(s.reply_bytes()); });
  per_session("gleam_session_cache_hits_total", "counter",
              "Weight-cache chunks found for the session (not uploaded).",
              [](const summary& s) { return static_cast<double>(s.cache_hits()); });
  per_session("gleam_session_cache_misses_total", "counter",
              "Weight-cache chunks the session's client had to upload.",
              [](const summary& s) { return static_cast<double>(s.cache_misses()); });
  per_session("gleam_session_client_waits_total", "counter",
              "Times the session's client blocked waiting for the server, as it reports.",
              [](const summary& s) { return static_cast<double>(s.client_waits()); });
  per_session("gleam_session_client_wait_seconds_total", "counter",
              "Time the session's client spent blocked waiting for the server.",
              [](const summary& s) { return static_cast<double>(s.client_wait_ns()) / 1e9; });
  per_session("gleam_session_kernel_launches_total", "counter",
              "Kernel and graph launches of the session.",
              [](const summary& s) { return static_cast<double>(s.kernel_launches()); });
  per_session("gleam_session_resumes_total", "counter",
              "Times the session's client reconnected and resumed it.",
              [](const summary& s) { return static_cast<double>(s.resumes()); });
  per_session("gleam_session_client_connected", "gauge",
              "1 while the session's client is connected, 0 while it waits for a resume.",
              [](const summary& s) { return s.client_gone() ? 0.0 : 1.0; });
}

void cache(std::string& out, const std::string& node, const proto::CacheStatsReply& c) {
  family entries{out, "gleam_cache_entries", "gauge", "Chunks in the weight cache."};
  entries.add({{"node", node}}, static_cast<double>(c.entries()));
  // A family's samples follow its header, so each family gets its own loop.
  const std::tuple<const char*, uint64_t, uint64_t> tiers[] = {
    {"gpu", c.gpu_bytes(), c.gpu_capacity()},
    {"host", c.host_bytes(), c.host_capacity()},
    {"disk", c.disk_bytes(), c.disk_capacity()}};
  {
    family bytes{out, "gleam_cache_bytes", "gauge", "Bytes the weight cache holds, per tier."};
    for (const auto& [tier, held, cap] : tiers)
      bytes.add({{"node", node}, {"tier", tier}}, static_cast<double>(held));
  }
  family capacity{out, "gleam_cache_capacity_bytes", "gauge",
                  "Capacity of the weight cache, per tier."};
  for (const auto& [tier, held, cap] : tiers)
    capacity.add({{"node", node}, {"tier", tier}}, static_cast<double>(cap));
  auto counter = [&](const char* name, const char* help, uint64_t v) {
    family f{out, name, "counter", help};
    f.add({{"node", node}}, static_cast<double>(v));
  };
  counter("gleam_cache_hits_total", "Cache lookups that found their chunk.", c.hits());
  counter("gleam_cache_misses_total", "Cache lookups that did not.", c.misses());
  counter("gleam_cache_received_bytes_total", "Chunk bytes clients uploaded.",
          c.received_bytes());
  counter("gleam_cache_filled_bytes_total", "Bytes written to GPUs from the cache.",
          c.filled_bytes());
  counter("gleam_cache_peer_bytes_total", "Bytes fetched from peer nodes' caches.",
          c.peer_bytes());
  counter("gleam_cache_rejected_chunks_total", "Uploads refused for a hash mismatch.",
          c.rejected_chunks());
  counter("gleam_cache_dropped_chunks_total", "Chunks dropped because their GPU bytes changed.",
          c.dropped_chunks());
}

void scheduler(std::string& out, const std::string& node, const proto::PlacementQueue* q,
               const proto::GammaTable* g) {
  if (q != nullptr) {
    family waiting{out, "gleam_scheduler_queue_length", "gauge",
                   "Placement requests waiting for a GPU."};
    waiting.add({{"node", node}}, static_cast<double>(q->tasks_size()));
    family placed{out, "gleam_scheduler_placements_total", "counter", "Tasks placed."};
    placed.add({{"node", node}}, static_cast<double>(q->placed_total()));
    family pending{out, "gleam_scheduler_pending_sessions", "gauge",
                   "Tasks placed whose session has not opened yet."};
    pending.add({{"node", node}}, static_cast<double>(q->pending_sessions()));
  }
  if (g != nullptr) {
    family gamma{out, "gleam_scheduler_gamma", "gauge",
                 "Contention factor in use per GPU type and resource."};
    for (const auto& e : g->entries())
      gamma.add({{"node", node},
                 {"gpu_type", e.gpu_type()},
                 {"resource", e.resource()},
                 {"fitted", e.converged() ? "1" : "0"}},
                e.gamma());
  }
}

} // namespace

std::string render(const snapshot& s) {
  std::string out;
  const auto& n = s.node;
  family info{out, "gleam_node_info", "gauge", "The node: 1, labelled with its id and host."};
  info.add({{"node", n.node_id()}, {"hostname", n.hostname()}}, 1);
  family gpu_count{out, "gleam_node_gpus", "gauge", "GPUs the node serves."};
  gpu_count.add({{"node", n.node_id()}}, n.gpus_size());
  family draining{out, "gleam_node_draining", "gauge",
                  "1 while the node is drained for maintenance (no new sessions)."};
  draining.add({{"node", n.node_id()}}, n.drain().draining() ? 1 : 0);
  if (n.drain().deadline_unix_ms() != 0) {
    family deadline{out, "gleam_node_drain_deadline_seconds", "gauge",
                    "Unix time at which a drain ends the sessions still open."};
    deadline.add({{"node", n.node_id()}},
                 static_cast<double>(n.drain().deadline_unix_ms()) / 1000.0);
  }
  gpus(out, n);
  sessions(out, n);
  if (s.cache != nullptr)
    cache(out, n.node_id(), *s.cache);
  scheduler(out, n.node_id(), s.queue, s.gamma);
  return out;
}

server::~server() {
  stop();
}

std::string server::start(const std::string& host, uint16_t port,
                          std::function<std::string()> scrape) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  auto service = std::to_string(port);
  if (int rc = ::getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(), &hints,
                             &found);
      rc != 0)
    return fmt::format("cannot resolve '{}': {}", host, ::gai_strerror(rc));
  std::string why = "no address";
  for (auto* a = found; a != nullptr; a = a->ai_next) {
    int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0)
      continue;
    int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, 16) == 0) {
      listener_ = fd;
      break;
    }
    why = std::strerror(errno);
    ::close(fd);
  }
  ::freeaddrinfo(found);
  if (listener_ < 0)
    return fmt::format("cannot listen on port {}: {}", port, why);
  scrape_ = std::move(scrape);
  thread_ = std::thread{[this] { serve(); }};
  return {};
}

void server::stop() {
  stopping_ = true;
  if (thread_.joinable())
    thread_.join();
  if (listener_ >= 0)
    ::close(listener_);
  listener_ = -1;
}

void server::serve() {
  using clock = std::chrono::steady_clock;
  while (!stopping_) {
    pollfd p{listener_, POLLIN, 0};
    if (::poll(&p, 1, 200) <= 0)
      continue;
    int fd = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0)
      continue;
    // The request line and headers, up to an empty line, 8 KiB or 2 s.
    std::string request;
    auto deadline = clock::now() + std::chrono::seconds{2};
    while (request.size() < 8192 && request.find("\r\n\r\n") == std::string::npos
           && request.find("\n\n") == std::string::npos && !stopping_) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now());
      pollfd r{fd, POLLIN, 0};
      if (left.count() <= 0 || ::poll(&r, 1, static_cast<int>(left.count())) <= 0)
        break;
      char buf[2048];
      auto n = ::recv(fd, buf, sizeof(buf), 0);
      if (n <= 0)
        break;
      request.append(buf, static_cast<size_t>(n));
    }
    std::string status = "404 Not Found", body = "only GET /metrics is served here\n";
    if (request.rfind("GET /metrics ", 0) == 0 || request.rfind("GET /metrics?", 0) == 0) {
      status = "200 OK";
      body = scrape_();
    }
    auto reply = fmt::format("HTTP/1.0 {}\r\nContent-Type: text/plain; version=0.0.4\r\n"
                             "Content-Length: {}\r\nConnection: close\r\n\r\n{}",
                             status, body.size(), body);
    for (size_t sent = 0; sent < reply.size();) {
      auto n = ::send(fd, reply.data() + sent, reply.size() - sent, MSG_NOSIGNAL);
      if (n <= 0)
        break;
      sent += static_cast<size_t>(n);
    }
    ::close(fd);
  }
}

} // namespace gleam::tools::metrics
