#include "actors/session_supervisor.hpp"

#include <chrono>
#include <deque>
#include <map>
#include <optional>

#include <unistd.h>

#include <caf/all.hpp>

#include "actors/auth.hpp"
#include "actors/error.hpp"
#include "actors/log.hpp"
#include "actors/worker_link.hpp"
#include "executor/session_secret.hpp"

namespace gleam::actors {

namespace {

constexpr auto status_interval = std::chrono::milliseconds{500};

/// How many ended sessions keep their reason for a resume that asks later.
constexpr size_t ended_kept = 1024;

/// One worker process as the supervisor sees it.
struct worker_entry {
  std::unique_ptr<worker_link> link;
  std::string key;        // its key: the auth_token of the opens sent to it
  uint16_t port = 0;      // 0 until it listens
  uint64_t session = 0;   // its session; 0: a spare
  bool opening = false;   // an open is on its way to it
  bool asked_status = false;
  std::string end_reason; // set when the supervisor ends it (an admin, a drain)
  /// From its last status, each with the worker's pid.
  std::vector<proto::SessionSummary> sessions;
};

/// An open waiting for a spare worker.
struct waiting_open {
  caf::response_promise promise;
  proto::OpenSession request;
  std::string tenant;
};

/// A request asked of a worker, until its reply.
struct pending_request {
  int32_t pid = 0;
  /// An open's: the client's promise (a status has none).
  std::optional<caf::response_promise> promise;
};

struct supervisor_state {
  config::node_config cfg;
  int ordinal = 0;
  proto::GpuInfo info;
  std::shared_ptr<telemetry_board> board;
  size_t slot = 0;
  admission rules;
  proto::DrainState drain;
  std::map<int32_t, worker_entry> workers; // by pid
  std::map<uint64_t, int32_t> sessions;    // session -> its worker's pid
  std::map<uint64_t, std::string> ended;   // session -> why it ended
  std::deque<uint64_t> ended_order;
  std::deque<waiting_open> waiting;
  std::map<uint64_t, pending_request> pending;
  uint64_t next_request = 1;
  uint64_t next_session = 1;
  /// Workers that ended before they listened, in a row: each doubles the
  /// wait before the next start (a worker that cannot start does not make
  /// gleamd start one per millisecond).
  uint32_t failed_starts = 0;
  std::chrono::steady_clock::time_point start_after{};
  bool stopping = false;
  /// The GPU's tenants' memory table, shared with the workers; null when
  /// no tenant has memory rules.
  std::shared_ptr<executor::memory_ledger> ledger;
  static inline const char* name = "gleam.session_supervisor";
};

using supervisor = caf::stateful_actor<supervisor_state>;

std::string hex(const std::string& bytes) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out.push_back(digits[c >> 4]);
    out.push_back(digits[c & 15]);
  }
  return out;
}

/// This process's binary (workers are gleamd itself), by its path so that
/// `ps` names them.
std::string self_exe() {
  char buf[4096];
  auto n = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0)
    return "/proc/self/exe";
  return std::string(buf, static_cast<size_t>(n));
}

uint64_t unix_ms() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                 std::chrono::system_clock::now().time_since_epoch())
                                 .count());
}

/// Workers ready for an open, and those still starting.
std::pair<size_t, size_t> idle_workers(const supervisor_state& st) {
  size_t ready = 0, starting = 0;
  for (const auto& [pid, w] : st.workers) {
    if (w.session != 0 || w.opening || !w.end_reason.empty())
      continue;
    (w.port != 0 ? ready : starting) += 1;
  }
  return {ready, starting};
}

void fail_waiting(supervisor_state& st, const std::string& why) {
  for (auto& w : st.waiting)
    w.promise.deliver(make_error(error_code::worker_failed, why));
  st.waiting.clear();
}

/// Starts workers until the idle ones (ready or starting) cover
/// [gpu_server] spare-workers plus the opens waiting for one.
void replenish(supervisor* self) {
  auto& st = self->state;
  if (st.stopping || std::chrono::steady_clock::now() < st.start_after)
    return; // the next tick tries again
  auto want = st.cfg.spare_workers + st.waiting.size();
  for (;;) {
    auto [ready, starting] = idle_workers(st);
    if (ready + starting >= want)
      return;
    auto key = executor::make_session_secret();
    if (!key) {
      log(log_level::error, "gpu {}: no random key for a worker process: {}", st.ordinal,
          caf::to_string(key.error()));
      fail_waiting(st, "the GPU server could not start a worker process for the session "
                       "(no random key); see gleamd's log");
      return;
    }
    worker_link::options opts;
    opts.exe = self_exe();
    opts.config_path = st.cfg.source;
    opts.gpu = st.ordinal;
    opts.first_session = st.next_session++;
    opts.key = hex(*key);
    opts.ledger_fd = st.ledger ? st.ledger->fd() : -1;
    auto link = worker_link::start(opts, caf::actor_cast<caf::actor>(self));
    if (!link) {
      log(log_level::error, "gpu {}: {}", st.ordinal, caf::to_string(link.error()));
      fail_waiting(st, "the GPU server could not start a worker process for the session; "
                       "see gleamd's log");
      return;
    }
    auto pid = static_cast<int32_t>((*link)->pid());
    auto& w = st.workers[pid];
    w.link = std::move(*link);
    w.key = std::move(opts.key);
    log(log_level::debug, "gpu {}: worker process {} started", st.ordinal, pid);
  }
}

/// Sends the oldest waiting opens to ready spare workers.
void dispatch_opens(supervisor* self) {
  auto& st = self->state;
  for (auto& [pid, w] : st.workers) {
    if (st.waiting.empty())
      break;
    if (w.session != 0 || w.opening || w.port == 0 || !w.end_reason.empty())
      continue;
    auto job = std::move(st.waiting.front());
    st.waiting.pop_front();
    auto open = job.request;
    open.set_auth_token(w.key);
    open.set_tenant(job.tenant);
    open.clear_resume_session();
    open.clear_resume_secret();
    proto::WorkerRequest req;
    req.set_open(open.SerializeAsString());
    auto id = st.next_request++;
    st.pending[id] = pending_request{pid, std::move(job.promise)};
    w.opening = true;
    w.link->ask(id, std::move(req));
  }
  replenish(self);
}

void remember_end(supervisor_state& st, uint64_t session, std::string why) {
  st.ended[session] = std::move(why);
  st.ended_order.push_back(session);
  while (st.ended_order.size() > ended_kept) {
    st.ended.erase(st.ended_order.front());
    st.ended_order.pop_front();
  }
}

proto::NodeStatus node_status(const supervisor_state& st) {
  proto::NodeStatus out;
  *out.add_gpus() = st.info;
  for (const auto& [pid, w] : st.workers)
    for (const auto& s : w.sessions)
      *out.add_sessions() = s;
  return out;
}

void post_telemetry(supervisor_state& st) {
  if (!st.board)
    return;
  proto::GpuTelemetry t;
  t.set_index(static_cast<uint32_t>(st.ordinal));
  std::vector<proto::SessionSummary> running;
  uint64_t used = 0;
  for (const auto& [pid, w] : st.workers)
    for (const auto& s : w.sessions) {
      used += s.allocated_bytes();
      *t.add_running() = s;
      running.push_back(s);
    }
  t.set_sessions(static_cast<uint32_t>(running.size()));
  t.set_used_memory(used);
  st.board->post(st.slot, std::move(t), std::move(running));
}

/// Ends session `id`'s worker for `why` (an admin, a drain): SIGKILL, so
/// that nothing of the session runs on; the worker's exit does the rest.
bool end_worker_of(supervisor_state& st, uint64_t id, const std::string& why) {
  auto s = st.sessions.find(id);
  if (s == st.sessions.end())
    return false;
  auto w = st.workers.find(s->second);
  if (w == st.workers.end())
    return false;
  w->second.end_reason = why;
  w->second.link->kill();
  return true;
}

caf::result<pb<proto::SessionOpened>> open(supervisor* self, const proto::OpenSession& req) {
  auto& st = self->state;
  auto tenant = tenant_of(st.rules, req.auth_token(), "the GPU server");
  if (!tenant) {
    log(log_level::warning, "gpu {}: OpenSession from '{}' refused: {} auth token", st.ordinal,
        req.client_id(), req.auth_token().empty() ? "no" : "wrong");
    return std::move(tenant.error());
  }
  if (auto resume = req.resume_session(); resume != 0) {
    // The worker checks the secret and the tenant when the client resumes
    // there; here only where the session lives is said, or why it ended.
    if (auto e = st.ended.find(resume); e != st.ended.end())
      return make_error(error_code::session_ended,
                        "session " + std::to_string(resume) + " has ended: its worker process "
                          + e->second + "; open a new session");
    auto s = st.sessions.find(resume);
    auto w = s == st.sessions.end() ? st.workers.end() : st.workers.find(s->second);
    if (w == st.workers.end())
      return make_error(error_code::session_unknown,
                        "session " + std::to_string(resume)
                          + " is not open on this GPU server; open a new session");
    proto::SessionOpened redirect;
    redirect.set_session(resume);
    redirect.set_worker_port(w->second.port);
    return pb<proto::SessionOpened>{std::move(redirect)};
  }
  if (st.drain.draining()) {
    log(log_level::info, "gpu {}: OpenSession from '{}' refused: node '{}' is draining",
        st.ordinal, req.client_id(), st.cfg.node_id);
    return draining_error(st.cfg.node_id);
  }
  auto rp = self->make_response_promise();
  st.waiting.push_back(waiting_open{rp, req, *tenant});
  dispatch_opens(self);
  return rp;
}

void on_open_reply(supervisor* self, int32_t pid, pending_request& p,
                   const proto::WorkerReply& reply) {
  auto& st = self->state;
  auto w = st.workers.find(pid);
  if (w != st.workers.end())
    w->second.opening = false;
  if (!reply.error().empty() || reply.opened().empty()) {
    p.promise->deliver(caf::error{static_cast<uint8_t>(reply.error_code()),
                                  static_cast<caf::atom_value>(reply.error_category()),
                                  caf::make_message(reply.error())});
    return;
  }
  proto::SessionOpened opened;
  if (!opened.ParseFromString(reply.opened()) || w == st.workers.end()) {
    p.promise->deliver(make_error(error_code::worker_failed,
                                  "the session's worker process gave no usable answer"));
    return;
  }
  w->second.session = opened.session();
  st.sessions[opened.session()] = pid;
  opened.set_worker_port(w->second.port);
  log(log_level::info, "gpu {}: session {} opened in worker process {} (port {})", st.ordinal,
      opened.session(), pid, w->second.port);
  p.promise->deliver(pb<proto::SessionOpened>{std::move(opened)});
  replenish(self);
}

void on_status_reply(supervisor* self, int32_t pid, const proto::WorkerReply& reply) {
  auto& st = self->state;
  auto w = st.workers.find(pid);
  if (w == st.workers.end())
    return;
  w->second.asked_status = false;
  proto::NodeStatus status;
  if (reply.status().empty() || !status.ParseFromString(reply.status()))
    return; // busy past the worker's wait: the last status stands
  w->second.sessions.assign(status.sessions().begin(), status.sessions().end());
  // The client's first resume is how it attaches to its worker, not a
  // reconnect.
  for (auto& s : w->second.sessions) {
    s.set_worker_pid(static_cast<uint32_t>(pid));
    if (s.resumes() > 0)
      s.set_resumes(s.resumes() - 1);
  }
}

void on_exit(supervisor* self, int32_t pid, const std::string& how) {
  auto& st = self->state;
  auto w = st.workers.find(pid);
  if (w == st.workers.end())
    return;
  auto& entry = w->second;
  // The driver freed what the worker's session held.
  if (st.ledger)
    static_cast<void>(st.ledger->forget_process(pid));
  if (entry.port == 0 && entry.end_reason.empty() && !st.stopping) {
    auto wait = std::chrono::milliseconds{500LL << std::min<uint32_t>(st.failed_starts, 6)};
    ++st.failed_starts;
    st.start_after = std::chrono::steady_clock::now() + wait;
    log(log_level::error, "gpu {}: worker process {} {} before it listened; the next starts in "
                          "{} ms (see its log lines above)",
        st.ordinal, pid, how, wait.count());
    fail_waiting(st, "the GPU server's worker process for the session " + how
                       + " before it started serving; see gleamd's log");
  }
  if (entry.session != 0) {
    auto why = entry.end_reason.empty() ? how : entry.end_reason;
    log(entry.end_reason.empty() && how.find("status 0") == std::string::npos
          ? log_level::warning
          : log_level::info,
        "gpu {}: session {} ended: its worker process {} {}", st.ordinal, entry.session, pid,
        why);
    remember_end(st, entry.session, why);
    st.sessions.erase(entry.session);
  }
  // Requests it will never answer.
  for (auto i = st.pending.begin(); i != st.pending.end();) {
    if (i->second.pid != pid) {
      ++i;
      continue;
    }
    if (i->second.promise)
      i->second.promise->deliver(make_error(
        error_code::worker_failed, "the session's worker process " + how + " while opening it"));
    i = st.pending.erase(i);
  }
  // The link's thread ended before it sent this: the destructor joins at once.
  st.workers.erase(w);
  post_telemetry(st);
  dispatch_opens(self);
}

caf::behavior supervisor_behavior(supervisor* self, config::node_config cfg, int ordinal,
                                  proto::GpuInfo info, std::shared_ptr<telemetry_board> board,
                                  size_t slot, std::shared_ptr<executor::memory_ledger> ledger) {
  auto& st = self->state;
  st.ledger = std::move(ledger);
  st.cfg = std::move(cfg);
  st.ordinal = ordinal;
  st.info = std::move(info);
  st.board = std::move(board);
  st.slot = slot;
  st.rules = admission{st.cfg.auth_token, st.cfg.tenants, st.cfg.admin_token,
                       st.cfg.cluster_secret};
  self->set_exit_handler([self](const caf::exit_msg& em) {
    auto& s = self->state;
    s.stopping = true;
    fail_waiting(s, "the GPU server is stopping");
    // Each link's destructor kills its worker and reaps it.
    s.workers.clear();
    self->quit(em.reason);
  });
  replenish(self);
  post_telemetry(st);
  self->delayed_send(self, status_interval, tick_atom::value, uint64_t{0});
  return {
    [=](open_atom, const pb<proto::OpenSession>& req) -> caf::result<pb<proto::SessionOpened>> {
      return open(self, req.value);
    },
    [=](const pb<proto::OpBatch>& batch) -> caf::result<pb<proto::BatchReply>> {
      // Clients send batches to the session's worker (SessionOpened.worker_port).
      return make_error(error_code::session_unknown,
                        "session " + std::to_string(batch->session())
                          + " runs in a worker process of this GPU server: send its batches "
                            "to the port its SessionOpened names");
    },
    [=](close_atom, const pb<proto::CloseSession>& req) -> caf::result<bool> {
      return make_error(error_code::session_unknown,
                        "session " + std::to_string(req->session())
                          + " runs in a worker process of this GPU server: close it there");
    },
    [=](status_atom) { return pb<proto::NodeStatus>{node_status(self->state)}; },
    [=](drain_atom, const pb<proto::DrainState>& state) {
      auto& s = self->state;
      s.drain = state.value;
      if (!s.drain.draining() || s.drain.deadline_unix_ms() == 0
          || unix_ms() < s.drain.deadline_unix_ms())
        return;
      for (auto [id, pid] : s.sessions) {
        static_cast<void>(pid);
        log(log_level::warning, "gpu {}: session {} ended: node '{}' was drained and its "
                                "deadline passed",
            s.ordinal, id, s.cfg.node_id);
        end_worker_of(s, id, "was ended: the node was drained and its deadline passed");
      }
    },
    [=](kill_atom, uint64_t id) -> bool {
      auto& s = self->state;
      if (!end_worker_of(s, id, "was killed by an admin (gleam-console session kill)"))
        return false;
      log(log_level::warning, "gpu {}: session {} killed by an admin", s.ordinal, id);
      return true;
    },
    [=](tick_atom, uint64_t) {
      auto& s = self->state;
      for (auto& [pid, w] : s.workers) {
        if (w.session == 0 || w.port == 0 || w.asked_status)
          continue;
        proto::WorkerRequest req;
        req.set_status(true);
        auto id = s.next_request++;
        s.pending[id] = pending_request{pid, std::nullopt};
        w.asked_status = true;
        w.link->ask(id, std::move(req));
      }
      post_telemetry(s);
      replenish(self); // after a failed start's wait
      self->delayed_send(self, status_interval, tick_atom::value, uint64_t{0});
    },
    [=](worker_ready_atom, int32_t pid, uint32_t port) {
      auto& s = self->state;
      auto w = s.workers.find(pid);
      if (w == s.workers.end())
        return;
      w->second.port = static_cast<uint16_t>(port);
      s.failed_starts = 0;
      log(log_level::debug, "gpu {}: worker process {} listens on port {}", s.ordinal, pid,
          port);
      dispatch_opens(self);
    },
    [=](worker_reply_atom, int32_t pid, uint64_t id, const std::string& bytes) {
      auto& s = self->state;
      auto p = s.pending.find(id);
      if (p == s.pending.end())
        return;
      auto request = std::move(p->second);
      s.pending.erase(p);
      proto::WorkerReply reply;
      if (!reply.ParseFromString(bytes))
        reply.set_error("unparsable reply");
      if (request.promise)
        on_open_reply(self, pid, request, reply);
      else
        on_status_reply(self, pid, reply);
    },
    [=](worker_notice_atom, int32_t, const std::string& bytes) {
      // What a worker measured about its session, for the scheduler, as a
      // GPU server of shared mode reports it.
      auto& s = self->state;
      proto::WorkerReply notice;
      if (!s.board || !notice.ParseFromString(bytes))
        return;
      for (const auto& e : notice.ended()) {
        proto::SessionEnded ended;
        if (ended.ParseFromString(e))
          s.board->post_ended(std::move(ended));
      }
    },
    [=](worker_exit_atom, int32_t pid, int32_t, const std::string& how) {
      on_exit(self, pid, how);
    },
  };
}

} // namespace

gpu_server_actor spawn_session_supervisor(caf::actor_system& sys,
                                          const config::node_config& cfg, int ordinal,
                                          proto::GpuInfo info,
                                          std::shared_ptr<telemetry_board> board, size_t slot,
                                          std::shared_ptr<executor::memory_ledger> ledger) {
  // Detached: a worker's start-up or a slow reply never holds a scheduler thread.
  auto handle = sys.spawn<caf::detached>(supervisor_behavior, cfg, ordinal, std::move(info),
                                         std::move(board), slot, std::move(ledger));
  return caf::actor_cast<gpu_server_actor>(handle);
}

} // namespace gleam::actors
