#include "tools/gleam-console/console.hpp"

#include <chrono>
#include <sstream>

#include <caf/all.hpp>
#include <caf/io/all.hpp>
#include <fmt/format.h>

#include "actors/network.hpp"
#include "config/error.hpp"

namespace gleam::tools {

namespace {

constexpr auto request_timeout = std::chrono::seconds{5};

std::string role_names(const proto::NodeStatus& n) {
  std::string out;
  for (auto r : n.roles()) {
    const char* name = r == proto::ROLE_SCHEDULER    ? "scheduler"
                       : r == proto::ROLE_GPU_SERVER ? "gpu_server"
                       : r == proto::ROLE_CACHE_SHARD ? "cache_shard"
                                                      : "?";
    out += (out.empty() ? "" : ",") + std::string(name);
  }
  return out.empty() ? "-" : out;
}

const char* help_text =
  "commands:\n"
  "  nodes      every registered node: roles, up/down, heartbeat age, RTT, GPUs\n"
  "  gpus       every GPU of the cluster: memory, sessions, utilization\n"
  "  sessions   every open client session on the GPU servers\n"
  "  help       this text\n"
  "  quit       leave the console\n";

} // namespace

console::console(caf::actor_system& sys, std::string host, uint16_t port, bool tls)
  : sys_(sys), host_(std::move(host)), port_(port), tls_(tls), self_(sys) {
}

caf::error console::connect() {
  auto node = actors::remote_actor<actors::node_actor>(sys_, host_, port_, tls_);
  if (!node)
    return config::make_error(config::error_code::bad_value,
                              "cannot reach a gleam node at " + host_ + ":"
                                + std::to_string(port_) + " (" + sys_.render(node.error())
                                + "): is gleamd running there, and is the port right?");
  caf::error err;
  self_->request(*node, request_timeout, actors::get_scheduler_atom::value)
    .receive([&](actors::scheduler_actor& s) { scheduler_ = std::move(s); },
             [&](caf::error& e) { err = std::move(e); });
  if (err)
    return config::make_error(config::error_code::bad_value,
                              "node at " + host_ + ":" + std::to_string(port_)
                                + " has no scheduler: " + config::describe(err));
  return caf::none;
}

caf::expected<proto::ClusterView> console::view() {
  caf::expected<proto::ClusterView> result{proto::ClusterView{}};
  self_->request(scheduler_, request_timeout, actors::view_atom::value)
    .receive([&](actors::pb<proto::ClusterView>& v) { result = std::move(v.value); },
             [&](caf::error& e) { result = std::move(e); });
  return result;
}

bool console::run(const std::string& line, std::ostream& out) {
  std::istringstream words(line);
  std::string cmd;
  words >> cmd;
  if (cmd == "help") {
    out << help_text;
    return true;
  }
  if (cmd == "nodes")
    return nodes(out);
  if (cmd == "gpus")
    return gpus(out);
  if (cmd == "sessions")
    return sessions(out);
  out << "unknown command '" << cmd << "'; " << help_text;
  return false;
}

bool console::nodes(std::ostream& out) {
  auto v = view();
  if (!v) {
    out << "error: " << config::describe(v.error()) << "\n";
    return false;
  }
  out << fmt::format("{:<20} {:<16} {:<34} {:<5} {:>9} {:>8} {:>4}  {}\n", "NODE", "HOST",
                     "ROLES", "STATE", "HEARTBEAT", "RTT", "GPUS", "ADDRESS");
  for (const auto& n : v->nodes())
    out << fmt::format("{:<20} {:<16} {:<34} {:<5} {:>7}ms {:>6.2f}ms {:>4}  {}:{}\n",
                       n.node_id(), n.hostname(), role_names(n), n.up() ? "up" : "down",
                       n.last_heartbeat_age_ms(), n.rtt_ms(), n.gpus_size(), n.data_host(),
                       n.data_port());
  out << v->nodes_size() << " node(s)\n";
  return true;
}

bool console::gpus(std::ostream& out) {
  auto v = view();
  if (!v) {
    out << "error: " << config::describe(v.error()) << "\n";
    return false;
  }
  out << fmt::format("{:<20} {:>3}  {:<24} {:>10} {:>10} {:>8} {:>5}  {}\n", "NODE", "GPU",
                     "NAME", "MEMORY", "USED", "SESSIONS", "UTIL", "STATE");
  size_t count = 0;
  for (const auto& n : v->nodes()) {
    for (const auto& g : n.gpus()) {
      ++count;
      uint64_t used = 0;
      uint32_t sessions = 0;
      float util = 0;
      for (const auto& t : n.telemetry().gpus())
        if (t.index() == g.index()) {
          used = t.used_memory();
          sessions = t.sessions();
          util = t.utilization();
        }
      out << fmt::format("{:<20} {:>3}  {:<24} {:>7}MiB {:>7}MiB {:>8} {:>4.0f}%  {}\n",
                         n.node_id(), g.index(), g.name(), g.total_memory() >> 20, used >> 20,
                         sessions, util * 100, n.up() ? "up" : "down");
    }
  }
  out << count << " GPU(s)\n";
  return true;
}

bool console::sessions(std::ostream& out) {
  auto v = view();
  if (!v) {
    out << "error: " << config::describe(v.error()) << "\n";
    return false;
  }
  out << fmt::format("{:<20} {:>8} {:<24} {:>3} {:>10} {:>12}\n", "NODE", "SESSION", "CLIENT",
                     "GPU", "OPS", "ALLOCATED");
  size_t count = 0;
  bool ok = true;
  for (const auto& n : v->nodes()) {
    if (!n.up() || n.gpus_size() == 0)
      continue;
    auto node = actors::remote_actor<actors::node_actor>(sys_, n.data_host(), n.data_port(),
                                                         tls_);
    if (!node) {
      out << fmt::format("{:<20} unreachable at {}:{}: {}\n", n.node_id(), n.data_host(),
                         n.data_port(), sys_.render(node.error()));
      ok = false;
      continue;
    }
    self_->request(*node, request_timeout, actors::status_atom::value)
      .receive(
        [&](actors::pb<proto::NodeStatus>& st) {
          for (const auto& s : st->sessions()) {
            ++count;
            out << fmt::format("{:<20} {:>8} {:<24} {:>3} {:>10} {:>9}MiB\n", n.node_id(),
                               s.session(), s.client_id(), s.gpu_index(), s.ops_executed(),
                               s.allocated_bytes() >> 20);
          }
        },
        [&](caf::error& e) {
          out << fmt::format("{:<20} no answer: {}\n", n.node_id(), config::describe(e));
          ok = false;
        });
  }
  out << count << " session(s)\n";
  return ok;
}

} // namespace gleam::tools
