#include "actors/gpu_server.hpp"

#include <algorithm>
#include <chrono>
#include <map>

#include <malloc.h>
#include <signal.h>
#include <unistd.h>

#include <caf/all.hpp>

#include "actors/error.hpp"
#include "actors/host_call_router.hpp"
#include "actors/log.hpp"
#include "actors/multiplexer_loop.hpp"
#include "actors/op_watchdog.hpp"
#include "actors/polling_actor.hpp"
#include "actors/session_grace.hpp"
#include "actors/session_meter.hpp"
#include "actors/session_supervisor.hpp"
#include "config/error.hpp"
#include "executor/driver_api.hpp"
#include "executor/executor.hpp"
#include "executor/session.hpp"
#include "executor/weight_cache.hpp"

namespace gleam::actors {

namespace {

/// The tenants' memory rules of [gpu_server] tenant-memory and
/// guaranteed-memory, one per tenant that has either.
std::vector<executor::memory_ledger::rule> memory_rules(const config::node_config& cfg) {
  std::vector<executor::memory_ledger::rule> rules;
  auto entry = [&](const std::string& tenant) -> executor::memory_ledger::rule& {
    for (auto& r : rules)
      if (r.tenant == tenant)
        return r;
    rules.push_back({tenant, 0, 0});
    return rules.back();
  };
  for (const auto& [tenant, bytes] : cfg.tenant_memory)
    entry(tenant).limit = bytes;
  for (const auto& [tenant, bytes] : cfg.guaranteed_memory)
    entry(tenant).guaranteed = bytes;
  return rules;
}

uint64_t unix_ns() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                 std::chrono::system_clock::now().time_since_epoch())
                                 .count());
}

/// One GPU's server: runs each session's op batches on the executor, in
/// issue order, on its own thread. A blocking actor whose wait for mail
/// polls for [node] poll after each message (polling_actor), so the next
/// batch of a busy client finds it awake; the typed interface
/// (gpu_server_actor) is the one its handlers below implement. While it
/// executes a batch it holds the multiplexer loop, so the reply leaves
/// without waking the network thread.
class gpu_server final : public polling_actor {
public:
  gpu_server(caf::actor_config& cfg, std::shared_ptr<executor::driver_api> driver,
             std::shared_ptr<executor::executor> exec, std::shared_ptr<telemetry_board> board,
             size_t slot, const config::node_config& node, multiplexer_loop* loop,
             std::shared_ptr<host_call_router> router)
    : polling_actor(cfg, node.poll),
      driver_(std::move(driver)),
      exec_(std::move(exec)),
      board_(std::move(board)),
      slot_(slot),
      admission_{node.auth_token, node.tenants, node.admin_token, node.cluster_secret},
      node_id_(node.node_id),
      loop_(loop),
      router_(std::move(router)),
      orphans_(node.session_grace),
      worker_(node.worker) {
  }

  const char* name() const override {
    return "gleam.gpu_server";
  }

  void act() override {
    post_telemetry();
    bool running = true;
    receive_while(running)(
      [&](open_atom, const pb<proto::OpenSession>& req) -> caf::result<pb<proto::SessionOpened>> {
        return open(req.value);
      },
      [&](const pb<proto::OpBatch>& batch) -> caf::result<pb<proto::BatchReply>> {
        return execute(batch.value);
      },
      [&](close_atom, const pb<proto::CloseSession>& req) -> caf::result<bool> {
        return close(req.value);
      },
      [&](status_atom) { return pb<proto::NodeStatus>{status()}; },
      [&](drain_atom, const pb<proto::DrainState>& state) { on_drain(state.value); },
      [&](kill_atom, uint64_t id) { return kill(id); },
      [&](tick_atom, uint64_t id) { expire(id); },
      [&](const caf::down_msg& dm) { client_gone(dm.source); },
      [&](const caf::exit_msg& em) {
        running = false;
        fail_state(em.reason);
      },
      // Anything else (a client speaking another protocol) is refused, not
      // left in the mailbox.
      caf::others >> [&](caf::message_view& x) -> caf::result<caf::message> {
        log(log_level::warning, "gpu {}: refused an unexpected message {}", exec_->ordinal(),
            caf::to_string(x.copy_content_to_message()));
        return caf::sec::unexpected_message;
      });
    release_gpu();
  }

private:
  /// Frees the sessions' GPU resources and the context here, before the
  /// actor counts as done, so that a node's stop times it (the log) instead
  /// of the actor system's teardown waiting for it unseen.
  void release_gpu() {
    auto ordinal = exec_->ordinal();
    auto sessions = exec_->sessions().size();
    auto t0 = std::chrono::steady_clock::now();
    exec_.reset();
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - t0);
    log(log_level::info, "gpu {}: stopped; {} session(s) and the GPU context released in {} ms",
        ordinal, sessions, ms.count());
  }

  void post_telemetry() {
    if (!board_)
      return;
    auto sessions = exec_->sessions();
    proto::GpuTelemetry t;
    t.set_index(static_cast<uint32_t>(exec_->ordinal()));
    t.set_sessions(static_cast<uint32_t>(sessions.size()));
    uint64_t used = 0;
    for (auto& s : sessions) {
      used += s.allocated_bytes();
      meter_.annotate(s);
      *t.add_running() = s;
    }
    t.set_used_memory(used);
    board_->post(slot_, std::move(t), std::move(sessions));
  }

  /// Records the end of session `id` for the scheduler (before it is closed).
  void report_end(uint64_t id) {
    proto::SessionEnded ended;
    if (!board_
        || !meter_.on_close(id, unix_ns(), static_cast<uint32_t>(exec_->ordinal()),
                            exec_->gpu_info().name(), ended))
      return;
    board_->post_ended(std::move(ended));
  }

  /// Who sent the current message, for the log.
  std::string sender_name() {
    auto sender = current_sender();
    return sender ? caf::to_string(sender->node()) : std::string{"an anonymous sender"};
  }

  /// Refuses `what` ("an op batch", "a close") for session `id`, whose
  /// secret the sender did not prove: logged (saying whether the id
  /// exists, for the admin), answered with executor::refusal_text (the
  /// same for an unknown id, so the peer learns nothing).
  caf::error refuse_unproven(uint64_t id, const char* what, bool secret_missing) {
    log(log_level::warning, "gpu {}: refused {} for session {} from {}: {}", exec_->ordinal(),
        what, id, sender_name(),
        exec_->find_session(id) == nullptr ? "no such session is open"
        : secret_missing                   ? "it carries no session secret"
                                           : "the session's secret does not match");
    return make_error(error_code::session_unknown, exec_->refusal_text(id));
  }

  /// In a worker process: a new session only for the supervisor (the
  /// worker's key), with the tenant it admitted; a resume for whoever
  /// proves the session's secret (the executor checks it), as the
  /// session's own tenant.
  caf::expected<std::string> worker_tenant(const proto::OpenSession& req) {
    if (req.resume_session() != 0) {
      const auto* s = exec_->find_session(req.resume_session());
      return s != nullptr ? s->tenant : std::string{};
    }
    if (!auth_token_matches(worker_.key, req.auth_token()))
      return make_error(error_code::unauthorized,
                        "this is a worker process of a GPU server: open sessions at the GPU "
                        "server's node port, which places them here");
    return req.tenant();
  }

  caf::result<pb<proto::SessionOpened>> open(const proto::OpenSession& req) {
    // --- client identity (issue #10) ---
    auto tenant = worker_.active ? worker_tenant(req)
                                 : tenant_of(admission_, req.auth_token(), "the GPU server");
    if (!tenant) {
      log(log_level::warning, "gpu {}: OpenSession from '{}' refused: {} auth token",
          exec_->ordinal(), req.client_id(), req.auth_token().empty() ? "no" : "wrong");
      return std::move(tenant.error());
    }
    // A drained node finishes what runs (resumes included) and starts
    // nothing new.
    if (drain_.draining() && req.resume_session() == 0) {
      log(log_level::info, "gpu {}: OpenSession from '{}' refused: node '{}' is draining",
          exec_->ordinal(), req.client_id(), node_id_);
      return draining_error(node_id_);
    }
    auto client = current_sender();
    // A resume (after the client lost its link) proves the session's
    // secret; the executor refuses it otherwise, with one answer for every
    // reason.
    auto opened = exec_->open_session(req, *tenant);
    if (!opened) {
      if (auto resume = req.resume_session(); resume != 0) {
        const auto* s = exec_->find_session(resume);
        log(log_level::warning, "gpu {}: refused a resume of session {} by '{}' from {}: {}",
            exec_->ordinal(), resume, req.client_id(), sender_name(),
            s == nullptr                  ? "no such session is open"
            : s->tenant != *tenant        ? "the session is another tenant's"
            : req.resume_secret().empty() ? "it carries no session secret"
                                          : "the session's secret does not match");
      }
      return std::move(opened.error());
    }
    if (client) {
      auto addr = caf::actor_cast<caf::actor_addr>(client);
      auto& ids = sessions_by_client_[addr];
      if (ids.empty())
        monitor(client);
      ids.push_back(opened->session());
      session_client_[opened->session()] = addr;
      router_->attach(opened->session(), caf::actor_cast<caf::actor>(client),
                      opened->secret());
    }
    if (req.resume_session() != 0 && worker_.active)
      log(log_level::info, "gpu {}: session {} attached by its client", exec_->ordinal(),
          opened->session());
    else if (req.resume_session() != 0)
      log(log_level::info, "gpu {}: session {} resumed by its client after a reconnect",
          exec_->ordinal(), opened->session());
    orphans_.back(opened->session());
    meter_.on_open(opened->session(), req.client_id(), req.task_signature(), *tenant,
                   unix_ns());
    log(log_level::info, "gpu {}: session {} opened for '{}'", exec_->ordinal(),
        opened->session(), req.client_id());
    post_telemetry();
    return pb<proto::SessionOpened>{std::move(*opened)};
  }

  caf::result<pb<proto::BatchReply>> execute(const proto::OpBatch& batch) {
    if (!exec_->authenticate(batch.session(), batch.session_secret()))
      return refuse_unproven(batch.session(), "an op batch", batch.session_secret().empty());
    multiplexer_hold hold{loop_};
    auto begin = unix_ns();
    op_watchdog_begin();
    auto reply = exec_->execute(batch);
    op_watchdog_end();
    // A refused or failed op is logged with its reason (issue #10); answers
    // such as CUDA_ERROR_NOT_READY carry no text and are not.
    for (const auto& r : reply.results())
      if (r.status() != 0 && !r.error().empty())
        log(log_level::info, "gpu {}: session {} op {} failed with CUresult {}: {}",
            exec_->ordinal(), batch.session(), r.seq(), r.status(), r.error());
    const auto* sess = exec_->find_session(batch.session());
    auto allocated = sess != nullptr ? sess->device_bytes() : 0;
    meter_.on_reply(batch, reply);
    // The scheduler sees the compute phase begin and the GPU's memory in
    // use change (placement and the console read the board).
    auto& posted = posted_allocated_[batch.session()];
    if (meter_.on_batch(batch, begin, unix_ns(), allocated) || posted != allocated) {
      posted = allocated;
      post_telemetry();
    }
    return pb<proto::BatchReply>{std::move(reply)};
  }

  caf::result<bool> close(const proto::CloseSession& req) {
    auto id = req.session();
    if (!exec_->authenticate(id, req.secret()))
      return refuse_unproven(id, "a close", req.secret().empty());
    session_client_.erase(id);
    posted_allocated_.erase(id);
    report_end(id);
    exec_->close_session(id);
    orphans_.back(id);
    for (auto& [addr, ids] : sessions_by_client_)
      ids.erase(std::remove(ids.begin(), ids.end(), id), ids.end());
    log(log_level::info, "gpu {}: session {} closed", exec_->ordinal(), id);
    after_end();
    return true;
  }

  proto::NodeStatus status() {
    post_telemetry();
    proto::NodeStatus out;
    *out.add_gpus() = exec_->gpu_info();
    for (auto& s : exec_->sessions()) {
      s.set_client_gone(orphans_.orphaned(s.session()));
      *out.add_sessions() = std::move(s);
    }
    return out;
  }

  void client_gone(const caf::actor_addr& source) {
    auto i = sessions_by_client_.find(source);
    if (i == sessions_by_client_.end())
      return;
    for (auto id : i->second) {
      auto c = session_client_.find(id);
      if (c != session_client_.end() && c->second != source)
        continue; // resumed by a newer proxy of its client
      orphans_.gone(id, std::chrono::steady_clock::now());
      router_->detach(id);
      log(log_level::info, "gpu {}: client of session {} is gone; session kept for {} ms",
          exec_->ordinal(), id, orphans_.grace().count());
      caf::delayed_anon_send(caf::actor_cast<caf::actor>(this), orphans_.grace(), tick_atom::value,
                             id);
    }
    sessions_by_client_.erase(i);
  }

  void expire(uint64_t id) {
    if (!orphans_.expire(id, std::chrono::steady_clock::now()))
      return; // resumed meanwhile, or orphaned again later: a newer timer runs
    end_session(id);
    log(log_level::warning,
        "gpu {}: session {} expired after its client was gone for {} ms; its GPU memory is "
        "freed",
        exec_->ordinal(), id, orphans_.grace().count());
    after_end();
  }

  /// Ends session `id` from the server's side (its client does not close
  /// it): reported to the scheduler, its resources freed.
  void end_session(uint64_t id) {
    report_end(id);
    session_client_.erase(id);
    posted_allocated_.erase(id);
    exec_->close_session(id);
    orphans_.back(id);
    for (auto& [addr, ids] : sessions_by_client_)
      ids.erase(std::remove(ids.begin(), ids.end(), id), ids.end());
  }

  /// The node's maintenance state: kept for open(); once a drain's deadline
  /// has passed, the sessions still open are ended.
  void on_drain(const proto::DrainState& state) {
    drain_ = state;
    if (!state.draining() || state.deadline_unix_ms() == 0
        || unix_ns() / 1'000'000 < state.deadline_unix_ms())
      return;
    auto sessions = exec_->sessions();
    if (sessions.empty())
      return;
    for (const auto& s : sessions) {
      end_session(s.session());
      log(log_level::warning,
          "gpu {}: session {} of '{}' ended: node '{}' was drained and its deadline passed",
          exec_->ordinal(), s.session(), s.client_id(), node_id_);
    }
    after_end();
  }

  /// After a session ended: the scheduler learns of it, and once the GPU is
  /// idle the heap memory its sessions freed goes back to the system (glibc
  /// keeps it in per-thread arenas otherwise, and the server's RSS stays at
  /// its peak).
  void after_end() {
    post_telemetry();
    if (exec_->session_count() != 0)
      return;
    // A worker process serves one session: it ends with it, and its CUDA
    // context with it (gleamd's main waits for this signal).
    if (worker_.active) {
      log(log_level::info, "gpu {}: the worker's session ended; the worker process stops",
          exec_->ordinal());
      ::kill(::getpid(), SIGTERM);
      return;
    }
    static_cast<void>(malloc_trim(0));
  }

  /// gleam-console "session kill ID": ends the session at once, from the
  /// server's side (its client's next call fails); false when it is not
  /// open here.
  bool kill(uint64_t id) {
    if (exec_->find_session(id) == nullptr)
      return false;
    log(log_level::warning, "gpu {}: session {} killed by an admin", exec_->ordinal(), id);
    end_session(id);
    after_end();
    return true;
  }

  std::shared_ptr<executor::driver_api> driver_; // keeps the driver loaded
  std::shared_ptr<executor::executor> exec_;
  std::shared_ptr<telemetry_board> board_;
  size_t slot_ = 0;
  admission admission_; // [node] auth-token and tenants
  std::string node_id_;
  proto::DrainState drain_; // the node's maintenance state (on_drain)
  multiplexer_loop* loop_; // may be null: CAF's own network thread
  /// Host nodes of the sessions' graphs call back into their clients
  /// through it (actors/host_call_router.hpp); the executor holds it too.
  std::shared_ptr<host_call_router> router_;
  std::map<caf::actor_addr, std::vector<uint64_t>> sessions_by_client_;
  /// Session -> the client actor that opened or last resumed it: only its
  /// going away orphans the session (an old connection's proxy may be
  /// reported down after the client reconnected).
  std::map<uint64_t, caf::actor_addr> session_client_;
  /// Each session's device memory as last posted to the telemetry board.
  std::map<uint64_t, uint64_t> posted_allocated_;
  session_grace orphans_; // sessions whose client is gone
  session_meter meter_;                // phases and overlaps for the scheduler
  config::node_config::worker_settings worker_; // set in a worker process
};

caf::expected<std::vector<int>> device_list(executor::driver_api& api,
                                            const config::node_config& cfg) {
  int count = 0;
  if (auto rc = api.cuDeviceGetCount(&count); rc != CUDA_SUCCESS)
    return make_error(error_code::no_such_gpu,
                      "cuDeviceGetCount failed: " + api.describe(rc));
  std::vector<int> devices = cfg.devices;
  if (devices.empty())
    for (int i = 0; i < count; ++i)
      devices.push_back(i);
  for (int d : devices)
    if (d >= count)
      return make_error(error_code::no_such_gpu,
                        cfg.source + ": key 'gpu_server.devices' names device "
                          + std::to_string(d) + " but this host has " + std::to_string(count)
                          + " GPU(s)");
  if (devices.empty())
    return make_error(error_code::no_such_gpu,
                      "the CUDA driver reports no GPU on this host: the gpu_server role "
                      "needs an NVIDIA GPU");
  return devices;
}

} // namespace

caf::expected<size_t> count_gpus(const config::node_config& cfg,
                                 std::shared_ptr<executor::driver_api> driver) {
  if (!driver) {
    auto api = executor::driver_api::load();
    if (!api)
      return std::move(api.error());
    driver = std::move(*api);
  }
  auto devices = device_list(*driver, cfg);
  if (!devices)
    return std::move(devices.error());
  return devices->size();
}

caf::expected<gpu_service> start_gpu_servers(caf::actor_system& sys,
                                             const config::node_config& cfg,
                                             const std::shared_ptr<telemetry_board>& board,
                                             std::shared_ptr<executor::weight_cache> cache,
                                             multiplexer_loop* loop,
                                             std::shared_ptr<executor::driver_api> driver) {
  gpu_service service;
  if (driver) {
    service.driver = std::move(driver);
  } else {
    auto loaded = executor::driver_api::load();
    if (!loaded)
      return std::move(loaded.error());
    service.driver = std::shared_ptr<executor::driver_api>(std::move(*loaded));
  }
  auto devices = device_list(*service.driver, cfg);
  if (!devices)
    return std::move(devices.error());
  auto process_isolation = cfg.isolation == config::node_config::isolation_mode::process
                           && !cfg.worker.active;
  auto rules = memory_rules(cfg);
  for (size_t slot = 0; slot < devices->size(); ++slot) {
    // Each GPU's tenants' memory table: a worker maps its supervisor's.
    std::shared_ptr<executor::memory_ledger> ledger;
    if (cfg.worker.active && cfg.worker.ledger_fd >= 0) {
      auto attached = executor::memory_ledger::attach(cfg.worker.ledger_fd);
      if (!attached)
        return std::move(attached.error());
      ledger = std::move(*attached);
    } else if (!cfg.worker.active && !rules.empty()) {
      auto made = executor::memory_ledger::create(rules);
      if (!made)
        return std::move(made.error());
      ledger = std::move(*made);
    }
    auto exec = executor::executor::make(*service.driver, (*devices)[slot]);
    if (!exec)
      return std::move(exec.error());
    if (process_isolation) {
      // The GPU as clients see it; the context made to ask goes with the
      // executor: every session gets one of its own, in its worker.
      auto info = (*exec)->gpu_info();
      exec->reset();
      service.infos.push_back(info);
      service.host_calls.push_back(nullptr);
      service.servers.push_back(spawn_session_supervisor(sys, cfg, (*devices)[slot],
                                                         std::move(info), board, slot,
                                                         std::move(ledger)));
      continue;
    }
    if (cfg.worker.active) {
      (*exec)->start_session_ids_at(cfg.worker.first_session);
      (*exec)->set_no_cache_reason(
        "this GPU server runs each session in a worker process of its own ([gpu_server] "
        "isolation = \"process\"), which does not use the node's weight cache yet; set "
        "GLEAM_CACHE=off on the client to skip asking");
    }
    (*exec)->set_session_memory_quota(cfg.session_memory_bytes);
    (*exec)->set_memory_ledger(std::move(ledger));
    (*exec)->set_cache(cache); // the weight cache: executor/cache_ops.hpp
    if (cache && slot == 0)
      cache->use_pinned_memory(service.driver);
    if (cache && cfg.cache_gpu_bytes > 0 && devices->size() == 1) {
      if (auto err = cache->attach_device_tier((*exec)->make_device_tier(cfg.cache_gpu_bytes)))
        log(log_level::warning, "no GPU tier for the weight cache: {}", config::describe(err));
    } else if (cache && cfg.cache_gpu_bytes > 0 && slot == 0) {
      log(log_level::warning, "[cache] gpu-capacity is used on single-GPU nodes only; this "
                              "node serves {} GPUs, hits fill from host memory and disk",
          devices->size());
    }
    auto router = std::make_shared<host_call_router>(sys, cfg.session_grace);
    (*exec)->set_host_calls(router);
    service.infos.push_back((*exec)->gpu_info());
    service.host_calls.push_back(router);
    std::shared_ptr<executor::executor> carried{std::move(*exec)};
    service.servers.push_back(caf::actor_cast<gpu_server_actor>(
      sys.spawn<gpu_server>(service.driver, carried, board, slot, cfg, loop, router)));
  }
  return service;
}

} // namespace gleam::actors
