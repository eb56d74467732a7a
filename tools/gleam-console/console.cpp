#include "tools/gleam-console/console.hpp"

#include <chrono>
#include <ctime>
#include <sstream>

#include <caf/all.hpp>
#include <caf/io/all.hpp>
#include <fmt/format.h>

#include "actors/network.hpp"
#include "config/config_file.hpp"
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

/// Sessions open on the GPUs of node `n`, from its telemetry.
uint32_t open_sessions(const proto::NodeStatus& n) {
  uint32_t out = 0;
  for (const auto& t : n.telemetry().gpus())
    out += t.sessions();
  return out;
}

/// A node's state as the tables print it: down; draining while sessions
/// still run on a drained node, drained once none does; else up.
const char* state_name(const proto::NodeStatus& n) {
  if (!n.up())
    return "down";
  if (n.drain().draining())
    return open_sessions(n) > 0 ? "draining" : "drained";
  return "up";
}

/// "2026-12-07 14:05:00 UTC" for a unix time in ms.
std::string utc_text(uint64_t unix_ms) {
  std::time_t t = static_cast<std::time_t>(unix_ms / 1000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S UTC", &tm);
  return buf;
}

/// A tenant as the console prints it: "-" for the unnamed tenant "".
std::string tenant_name(const std::string& tenant) {
  return tenant.empty() ? "-" : tenant;
}

const char* help_text =
  "commands:\n"
  "  nodes      every registered node: roles, up/down, heartbeat age, RTT, GPUs,\n"
  "             measured rate of its fetches from peer caches\n"
  "  gpus       every GPU of the cluster: memory, sessions, utilization\n"
  "  sessions   every open client session on the GPU servers\n"
  "  gamma      the contention factor per GPU type and resource: fitted or default\n"
  "  queue      placement requests waiting for a GPU, with the tenant each token\n"
  "             named ('-': the unnamed tenant)\n"
  "  placement explain TASK\n"
  "             the latency model's prediction for TASK (a task signature or a\n"
  "             queued task's id, whose tenant it names) on every GPU, and where\n"
  "             it would go; cached bytes count only chunks the tenant may use\n"
  "  cache stats            each node's weight cache: entries, tier sizes, hits, bytes\n"
  "                         received from clients / filled / from peers (RECEIVED, FILLED, PEER)\n"
  "  cache ls [N]           the N (default 50) most recently used entries of each node\n"
  "  cache evict KEY...     drops entries (keys as 'cache ls' prints them)\n"
  "  cache evict --all      drops every entry not in use\n"
  "  drain NODE [DEADLINE]  maintenance: the scheduler places nothing new on NODE and its\n"
  "                         GPUs open no new sessions; running sessions finish (state\n"
  "                         'draining', then 'drained' in 'nodes'); with DEADLINE (e.g.\n"
  "                         30min, 90s) the sessions still open by then are ended\n"
  "  undrain NODE           NODE takes new sessions again\n"
  "  session kill NODE ID   ends session ID on NODE at once (under isolation = process,\n"
  "                         its worker process); needs the admin token\n"
  "  help       this text\n"
  "  quit       leave the console\n";

} // namespace

console::console(caf::actor_system& sys, std::string host, uint16_t port, bool tls,
                 std::string admin_token)
  : sys_(sys),
    host_(std::move(host)),
    port_(port),
    tls_(tls),
    admin_token_(std::move(admin_token)),
    self_(sys) {
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
  if (cmd == "gamma")
    return gamma(out);
  if (cmd == "queue")
    return queue(out);
  if (cmd == "placement") {
    std::string sub;
    std::string task;
    words >> sub >> task;
    if (sub != "explain" || task.empty()) {
      out << "usage: placement explain TASK (a task signature or a queued task's id)\n";
      return false;
    }
    return explain(task, out);
  }
  if (cmd == "cache")
    return cache(words, out);
  if (cmd == "drain" || cmd == "undrain")
    return drain(cmd == "drain", words, out);
  if (cmd == "session")
    return session(words, out);
  out << "unknown command '" << cmd << "'; " << help_text;
  return false;
}

bool console::nodes(std::ostream& out) {
  auto v = view();
  if (!v) {
    out << "error: " << config::describe(v.error()) << "\n";
    return false;
  }
  out << fmt::format("{:<20} {:<16} {:<34} {:<8} {:>9} {:>8} {:>4} {:>10}  {}\n", "NODE",
                     "HOST", "ROLES", "STATE", "HEARTBEAT", "RTT", "GPUS", "PEER MB/S", "ADDRESS");
  for (const auto& n : v->nodes()) {
    // The measured rate of its fetches from peer caches; "-" before any.
    auto peer = n.telemetry().peer_fetch_rate();
    auto peer_text = peer > 0 ? fmt::format("{:.0f}", peer / 1e6) : std::string{"-"};
    out << fmt::format("{:<20} {:<16} {:<34} {:<8} {:>7}ms {:>6.2f}ms {:>4} {:>10}  {}:{}\n",
                       n.node_id(), n.hostname(), role_names(n), state_name(n),
                       n.last_heartbeat_age_ms(), n.rtt_ms(), n.gpus_size(), peer_text,
                       n.data_host(), n.data_port());
  }
  out << v->nodes_size() << " node(s)\n";
  return true;
}

bool console::drain(bool on, std::istream& words, std::ostream& out) {
  std::string node;
  std::string deadline;
  words >> node >> deadline;
  std::string extra;
  if (node.empty() || (!on && !deadline.empty()) || (words >> extra)) {
    out << "usage: drain NODE [DEADLINE] (e.g. drain gpuhost-1 30min) | undrain NODE\n";
    return false;
  }
  actors::pb<proto::DrainRequest> req;
  req->set_node_id(node);
  req->set_admin_token(admin_token_);
  req->mutable_state()->set_draining(on);
  if (!deadline.empty()) {
    auto d = config::parse_duration(deadline);
    if (!d || d->count() <= 0) {
      out << "error: deadline '" << deadline
          << "': expected a duration from now such as 90s, 30min or 2h\n";
      return false;
    }
    auto now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                    std::chrono::system_clock::now().time_since_epoch())
                    .count();
    req->mutable_state()->set_deadline_unix_ms(
      static_cast<uint64_t>(now_ms)
      + static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(*d).count()));
  }
  caf::expected<proto::NodeStatus> result{proto::NodeStatus{}};
  self_->request(scheduler_, request_timeout, actors::drain_atom::value, std::move(req))
    .receive([&](actors::pb<proto::NodeStatus>& n) { result = std::move(n.value); },
             [&](caf::error& e) { result = std::move(e); });
  if (!result) {
    out << "error: " << config::describe(result.error()) << "\n";
    return false;
  }
  if (!on) {
    out << "node '" << node << "' undrained: it takes new sessions again\n";
    return true;
  }
  auto sessions = open_sessions(*result);
  out << "node '" << node << "' draining: no new placements, its GPUs open no new sessions; "
      << sessions << " session(s) running";
  if (result->drain().deadline_unix_ms() != 0)
    out << "; those still open at " << utc_text(result->drain().deadline_unix_ms())
        << " are ended";
  else
    out << " finish on their own";
  out << "\n";
  return true;
}

bool console::session(std::istream& words, std::ostream& out) {
  std::string sub, node_id, extra;
  uint64_t id = 0;
  words >> sub >> node_id >> id;
  if (sub != "kill" || node_id.empty() || id == 0 || (words >> extra)) {
    out << "usage: session kill NODE SESSION (as 'sessions' lists them)\n";
    return false;
  }
  auto v = view();
  if (!v) {
    out << "error: " << config::describe(v.error()) << "\n";
    return false;
  }
  for (const auto& n : v->nodes()) {
    if (n.node_id() != node_id)
      continue;
    auto node = actors::remote_actor<actors::node_actor>(sys_, n.data_host(), n.data_port(),
                                                         tls_);
    if (!node) {
      out << "error: node '" << node_id << "' unreachable at " << n.data_host() << ":"
          << n.data_port() << ": " << sys_.render(node.error()) << "\n";
      return false;
    }
    caf::expected<bool> ended{false};
    self_->request(*node, request_timeout, actors::kill_atom::value, id, admin_token_)
      .receive([&](bool b) { ended = b; }, [&](caf::error& e) { ended = std::move(e); });
    if (!ended) {
      out << "error: " << config::describe(ended.error()) << "\n";
      return false;
    }
    if (!*ended) {
      out << "node '" << node_id << "' has no session " << id << "\n";
      return false;
    }
    out << "session " << id << " on node '" << node_id
        << "' ended; its client's next call fails\n";
    return true;
  }
  out << "error: no node '" << node_id << "' in the cluster (see 'nodes')\n";
  return false;
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
                         sessions, util * 100, state_name(n));
    }
  }
  out << count << " GPU(s)\n";
  return true;
}

namespace {

/// A session's device memory and its [gpu_server] session-memory quota,
/// for `sessions`: "120MiB" or "120MiB/40960MiB".
std::string session_memory(const proto::SessionSummary& s) {
  auto held = fmt::format("{}MiB", s.allocated_bytes() >> 20);
  return s.memory_quota() == 0 ? held : fmt::format("{}/{}MiB", s.allocated_bytes() >> 20,
                                                    s.memory_quota() >> 20);
}

/// What the session's tenant holds on the GPU against its tenant-memory
/// limit and guaranteed-memory, for `sessions`; "-" without such rules.
std::string tenant_memory(const proto::SessionSummary& s) {
  if (s.tenant_memory_limit() == 0 && s.tenant_memory_guaranteed() == 0)
    return "-";
  auto out = s.tenant_memory_limit() == 0
               ? fmt::format("{}MiB", s.tenant_memory_held() >> 20)
               : fmt::format("{}/{}MiB", s.tenant_memory_held() >> 20,
                             s.tenant_memory_limit() >> 20);
  if (s.tenant_memory_guaranteed() != 0)
    out += fmt::format(", {}MiB guaranteed", s.tenant_memory_guaranteed() >> 20);
  return out;
}

/// The consistency state of a session's link, for `sessions`.
std::string session_link(const proto::SessionSummary& s) {
  std::string out = s.client_gone() ? "lost, waiting for a resume" : "connected";
  if (s.resumes() > 0)
    out += fmt::format(" ({} resume{})", s.resumes(), s.resumes() == 1 ? "" : "s");
  return out;
}

} // namespace

bool console::sessions(std::ostream& out) {
  auto v = view();
  if (!v) {
    out << "error: " << config::describe(v.error()) << "\n";
    return false;
  }
  out << fmt::format("{:<20} {:>8} {:<24} {:<10} {:>3} {:>10} {:>16} {:>30}  {}\n", "NODE",
                     "SESSION", "CLIENT", "TENANT", "GPU", "OPS", "ALLOCATED/QUOTA",
                     "TENANT HOLDS/LIMIT", "LINK");
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
            out << fmt::format("{:<20} {:>8} {:<24} {:<10} {:>3} {:>10} {:>16} {:>30}  {}\n",
                               n.node_id(), s.session(), s.client_id(),
                               s.tenant().empty() ? "-" : s.tenant(), s.gpu_index(),
                               s.ops_executed(), session_memory(s), tenant_memory(s),
                               session_link(s));
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

bool console::gamma(std::ostream& out) {
  caf::error err;
  proto::GammaTable table;
  self_->request(scheduler_, request_timeout, actors::gamma_atom::value)
    .receive([&](actors::pb<proto::GammaTable>& t) { table = std::move(t.value); },
             [&](caf::error& e) { err = std::move(e); });
  if (err) {
    out << "error: " << config::describe(err) << "\n";
    return false;
  }
  out << fmt::format("{:<24} {:<8} {:>7} {:<9} {:>8} {:>8} {:>7}\n", "GPU TYPE", "RESOURCE",
                     "GAMMA", "STATE", "SAMPLES", "ACTIVE", "RMS");
  for (const auto& e : table.entries())
    out << fmt::format("{:<24} {:<8} {:>7.3f} {:<9} {:>8} {:>8} {:>7.3f}\n", e.gpu_type(),
                       e.resource(), e.gamma(), e.converged() ? "fitted" : "default",
                       e.samples(), e.active_samples(), e.rms_residual());
  out << table.entries_size() / 2 << " GPU type(s); alpha = max(1, gamma * summed "
      << "occupancy, the task's own included); default gamma " << table.default_gamma()
      << " until 8 contended runs are seen\n";
  return true;
}

bool console::queue(std::ostream& out) {
  caf::error err;
  proto::PlacementQueue q;
  self_->request(scheduler_, request_timeout, actors::queue_atom::value)
    .receive([&](actors::pb<proto::PlacementQueue>& t) { q = std::move(t.value); },
             [&](caf::error& e) { err = std::move(e); });
  if (err) {
    out << "error: " << config::describe(err) << "\n";
    return false;
  }
  out << fmt::format("{:>6} {:<16} {:<24} {:<28} {:>9} {:<20} {:>9}\n", "TASK", "TENANT",
                     "CLIENT", "SIGNATURE", "WAITED", "WAITS FOR", "START IN");
  for (const auto& t : q.tasks())
    out << fmt::format("{:>6} {:<16} {:<24} {:<28} {:>8.1f}s {:<20} {:>8.1f}s\n",
                       t.placement_id(), tenant_name(t.tenant()), t.client_id(),
                       t.task_signature(), t.waited_s(),
                       t.awaited_server().empty() ? "-" : t.awaited_server(),
                       t.predicted_start_s());
  out << q.tasks_size() << " queued task(s); " << q.placed_total() << " placed so far, "
      << q.pending_sessions() << " placed but not yet seen as a session\n";
  return true;
}

bool console::explain(const std::string& task, std::ostream& out) {
  caf::error err;
  proto::PlacementExplanation x;
  actors::pb<proto::PlacementExplain> req;
  req->set_task(task);
  self_->request(scheduler_, request_timeout, actors::explain_atom::value, req)
    .receive([&](actors::pb<proto::PlacementExplanation>& t) { x = std::move(t.value); },
             [&](caf::error& e) { err = std::move(e); });
  if (err) {
    out << "error: " << config::describe(err) << "\n";
    return false;
  }
  out << "task " << x.task() << " (tenant " << tenant_name(x.tenant()) << "): "
      << (x.known() ? "profile from " + std::to_string(x.samples()) + " finished run(s)"
                    : std::string{"unknown signature, conservative default profile"})
      << fmt::format("; weights {:.2f} GB, memory {:.2f} GB, occupancy gpu {:.2f} net {:.2f}",
                     x.weight_bytes() / 1e9, x.memory_bytes() / 1e9, x.gpu_occupancy(),
                     x.net_occupancy())
      << (x.launches() > 0 ? fmt::format(", {:.0f} launches per run\n", x.launches())
                           : std::string{"\n"});
  for (int i = 0; i < x.gpu_types_size() && i < x.compute_s_size(); ++i)
    out << fmt::format("  solo compute on {}: {:.3f} s\n", x.gpu_types(i), x.compute_s(i));
  out << fmt::format("{:<24} {:<20} {:>4} {:>9} {:>9} {:>9} {:>7} {:>7} {:>10}\n", "SERVER",
                     "GPU TYPE", "FITS", "START", "LOAD", "COMPUTE", "A_GPU", "A_NET", "DONE IN");
  for (const auto& s : x.servers()) {
    if (s.start_s() < 0) {
      out << fmt::format("{:<24} {:<20} {:>4} never: the task needs more memory than it has\n",
                         s.server(), s.gpu_type(), "no");
      continue;
    }
    out << fmt::format("{:<24} {:<20} {:>4} {:>8.2f}s {:>8.2f}s {:>8.2f}s {:>7.2f} {:>7.2f} "
                       "{:>9.2f}s\n",
                       s.server(), s.gpu_type(), s.fits_now() ? "yes" : "no", s.start_s(),
                       s.load_s(), s.compute_s(), s.alpha_gpu(), s.alpha_net(),
                       s.completion_s());
  }
  out << "decision: " << x.summary() << "\n";
  return true;
}

caf::expected<proto::OpResult> console::shard_op(const proto::NodeStatus& n, proto::Op op) {
  auto node = sys_.middleman().remote_actor<actors::node_actor>(n.data_host(), n.data_port());
  if (!node)
    return std::move(node.error());
  caf::expected<proto::OpResult> result{proto::OpResult{}};
  actors::cache_shard_actor shard;
  self_->request(*node, request_timeout, actors::get_shard_atom::value)
    .receive([&](actors::cache_shard_actor& s) { shard = std::move(s); },
             [&](caf::error& e) { result = std::move(e); });
  if (!shard)
    return result;
  actors::pb<proto::OpBatch> batch;
  batch->set_admin_token(admin_token_);
  op.set_seq(1);
  *batch->add_ops() = std::move(op);
  self_->request(shard, request_timeout, std::move(batch))
    .receive(
      [&](actors::pb<proto::BatchReply>& r) {
        if (r->results_size() == 1)
          result = r->results(0);
        else
          result = config::make_error(config::error_code::bad_value, "no answer to the op");
      },
      [&](caf::error& e) { result = std::move(e); });
  return result;
}

namespace {

std::string tier_names(uint32_t mask) {
  std::string out;
  for (auto [bit, name] : {std::pair{1u, "gpu"}, std::pair{2u, "host"}, std::pair{4u, "disk"}})
    if (mask & bit)
      out += (out.empty() ? "" : ",") + std::string(name);
  return out.empty() ? "-" : out;
}

} // namespace

bool console::cache(std::istream& words, std::ostream& out) {
  std::string sub;
  words >> sub;
  proto::Op op;
  if (sub == "stats") {
    op.mutable_cache_stats();
  } else if (sub == "ls") {
    uint32_t limit = 50;
    std::string n;
    if (words >> n) {
      try {
        limit = static_cast<uint32_t>(std::stoul(n));
      } catch (const std::exception&) {
        out << "error: 'cache ls " << n << "': expected a number of entries\n";
        return false;
      }
    }
    op.mutable_cache_list()->set_limit(limit);
  } else if (sub == "evict") {
    auto* ev = op.mutable_cache_evict();
    std::string k;
    while (words >> k) {
      if (k == "--all")
        ev->set_all(true);
      else
        ev->add_keys(k);
    }
    if (!ev->all() && ev->keys_size() == 0) {
      out << "error: 'cache evict' needs keys (as 'cache ls' prints them) or --all\n";
      return false;
    }
  } else {
    out << "error: unknown 'cache " << sub << "'; use cache stats, cache ls [N], cache evict "
        << "KEY...|--all\n";
    return false;
  }
  auto v = view();
  if (!v) {
    out << "error: " << config::describe(v.error()) << "\n";
    return false;
  }
  bool ok = true;
  size_t nodes = 0;
  if (sub == "stats")
    out << fmt::format("{:<20} {:>8} {:>10} {:>10} {:>10} {:>8} {:>8} {:>12} {:>12} {:>9} {:>12} {:>10}\n",
                       "NODE", "ENTRIES", "HOST", "DISK", "VERIFIED", "HITS", "MISSES",
                       "RECEIVED", "FILLED", "REJECTED", "PEER", "GPU");
  for (const auto& n : v->nodes()) {
    bool has_cache = false;
    for (auto r : n.roles())
      has_cache |= r == proto::ROLE_GPU_SERVER || r == proto::ROLE_CACHE_SHARD;
    if (!n.up() || !has_cache)
      continue;
    auto r = shard_op(n, op);
    if (!r) {
      out << fmt::format("{:<20} no cache: {}\n", n.node_id(), config::describe(r.error()));
      ok = false;
      continue;
    }
    if (r->status() != 0) {
      out << fmt::format("{:<20} error: {}\n", n.node_id(), r->error());
      ok = false;
      continue;
    }
    ++nodes;
    if (sub == "stats") {
      const auto& s = r->cache_stats();
      out << fmt::format("{:<20} {:>8} {:>7}MiB {:>7}MiB {:>10} {:>8} {:>8} {:>12} {:>12} {:>9} {:>12} {:>7}MiB\n",
                         n.node_id(), s.entries(), s.host_bytes() >> 20, s.disk_bytes() >> 20,
                         s.verified_entries(), s.hits(), s.misses(), s.received_bytes(),
                         s.filled_bytes(), s.rejected_chunks(), s.peer_bytes(),
                         s.gpu_bytes() >> 20);
    } else if (sub == "ls") {
      const auto& l = r->cache_listing();
      out << fmt::format("{} ({} entries)\n", n.node_id(), l.total());
      out << fmt::format("  {:<38} {:>12} {:<14} {:<8}\n", "KEY", "BYTES", "TIERS", "WEIGHT");
      for (const auto& e : l.entries())
        out << fmt::format("  {:<38} {:>12} {:<14} {:<8}\n", e.key(), e.size(),
                           tier_names(e.tiers()), e.verified() ? "verified" : "-");
    } else {
      const auto& e = r->cache_evicted();
      out << fmt::format("{:<20} evicted {} entries, {} bytes", n.node_id(), e.entries(),
                         e.bytes());
      if (e.in_use_size() > 0)
        out << fmt::format("; {} in use, kept", e.in_use_size());
      out << "\n";
    }
  }
  if (nodes == 0) {
    out << "no node with a weight cache is up\n";
    return false;
  }
  return ok;
}

} // namespace gleam::tools
