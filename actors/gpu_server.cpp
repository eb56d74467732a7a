#include "actors/gpu_server.hpp"

#include <algorithm>
#include <chrono>
#include <map>

#include <caf/all.hpp>

#include "actors/error.hpp"
#include "actors/log.hpp"
#include "actors/session_meter.hpp"
#include "config/error.hpp"
#include "executor/driver_api.hpp"
#include "executor/executor.hpp"
#include "executor/session.hpp"
#include "executor/weight_cache.hpp"

namespace gleam::actors {

namespace {

uint64_t unix_ns() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                 std::chrono::system_clock::now().time_since_epoch())
                                 .count());
}

struct gpu_server_state {
  std::shared_ptr<executor::driver_api> driver; // keeps the driver loaded
  std::shared_ptr<executor::executor> exec;
  std::shared_ptr<telemetry_board> board;
  size_t slot = 0;
  std::chrono::milliseconds grace{30000};
  std::string auth_token; // [node] auth-token; "" = sessions need none
  std::vector<std::pair<std::string, std::string>> tenants; // [node] tenants
  /// Session -> the CAF node (client process) that opened or resumed it;
  /// ops and closes from any other node are refused (issue #10 isolation).
  std::map<uint64_t, caf::node_id> session_owner;
  std::map<caf::actor_addr, std::vector<uint64_t>> sessions_by_client;
  /// Session -> the client actor that opened or last resumed it: only its
  /// going away orphans the session (an old connection's proxy may be
  /// reported down after the client reconnected).
  std::map<uint64_t, caf::actor_addr> session_client;
  std::map<uint64_t, bool> orphaned; // session -> client gone
  session_meter meter;                // phases and overlaps for the scheduler
  static inline const char* name = "gleam.gpu_server";
};

using server_ptr = gpu_server_actor::stateful_pointer<gpu_server_state>;

void post_telemetry(server_ptr self) {
  auto& st = self->state;
  if (!st.board)
    return;
  auto sessions = st.exec->sessions();
  proto::GpuTelemetry t;
  t.set_index(static_cast<uint32_t>(st.exec->ordinal()));
  t.set_sessions(static_cast<uint32_t>(sessions.size()));
  uint64_t used = 0;
  for (auto& s : sessions) {
    used += s.allocated_bytes();
    st.meter.annotate(s);
    *t.add_running() = s;
  }
  t.set_used_memory(used);
  st.board->post(st.slot, std::move(t), std::move(sessions));
}

/// Records the end of session `id` for the scheduler (before it is closed).
void report_end(server_ptr self, uint64_t id) {
  auto& st = self->state;
  proto::SessionEnded ended;
  if (!st.board
      || !st.meter.on_close(id, unix_ns(), static_cast<uint32_t>(st.exec->ordinal()),
                            st.exec->gpu_info().name(), ended))
    return;
  st.board->post_ended(std::move(ended));
}

/// True when the current message comes from the client process that opened
/// session `id`, or `id` has no recorded owner (unknown sessions are the
/// executor's to refuse).
bool sender_owns(server_ptr self, uint64_t id) {
  auto i = self->state.session_owner.find(id);
  if (i == self->state.session_owner.end())
    return true;
  auto sender = self->current_sender();
  return sender && sender->node() == i->second;
}

caf::error refuse_foreign(server_ptr self, uint64_t id, const char* what) {
  auto sender = self->current_sender();
  log(log_level::warning, "gpu {}: refused {} for session {} from {}: not its client",
      self->state.exec->ordinal(), what, id,
      sender ? caf::to_string(sender->node()) : std::string{"an anonymous sender"});
  return make_error(error_code::session_unknown,
                    "session " + std::to_string(id)
                      + " belongs to another client; open a session of your own");
}

gpu_server_actor::behavior_type gpu_server_impl(server_ptr self,
                                                std::shared_ptr<executor::driver_api> driver,
                                                std::shared_ptr<executor::executor> exec,
                                                std::shared_ptr<telemetry_board> board,
                                                size_t slot, std::chrono::milliseconds grace,
                                                std::string auth_token,
                                                std::vector<std::pair<std::string, std::string>>
                                                  tenants) {
  auto& st = self->state;
  st.driver = std::move(driver);
  st.exec = std::move(exec);
  st.board = std::move(board);
  st.slot = slot;
  st.grace = grace;
  st.auth_token = std::move(auth_token);
  st.tenants = std::move(tenants);
  post_telemetry(self);
  self->set_down_handler([=](const caf::down_msg& dm) {
    auto i = self->state.sessions_by_client.find(dm.source);
    if (i == self->state.sessions_by_client.end())
      return;
    for (auto id : i->second) {
      auto c = self->state.session_client.find(id);
      if (c != self->state.session_client.end() && c->second != dm.source)
        continue; // resumed by a newer proxy of its client
      self->state.orphaned[id] = true;
      log(log_level::info, "gpu {}: client of session {} is gone; session kept for {} ms",
          self->state.exec->ordinal(), id, self->state.grace.count());
      self->delayed_send(self, self->state.grace, tick_atom::value, id);
    }
    self->state.sessions_by_client.erase(i);
  });
  return {
    [=](open_atom, const pb<proto::OpenSession>& req) -> caf::result<pb<proto::SessionOpened>> {
      // --- client identity (issue #10) ---
      auto tenant = tenant_of(self->state.auth_token, self->state.tenants, req.value);
      if (!tenant) {
        log(log_level::warning, "gpu {}: OpenSession from '{}' refused: {} auth token",
            self->state.exec->ordinal(), req->client_id(),
            req->auth_token().empty() ? "no" : "wrong");
        return std::move(tenant.error());
      }
      auto client = self->current_sender();
      // A resume (after the client lost its link) comes from the process
      // that opened the session, nobody else.
      if (auto resume = req->resume_session(); resume != 0 && !sender_owns(self, resume))
        return refuse_foreign(self, resume, "a resume");
      auto opened = self->state.exec->open_session(req.value, *tenant);
      if (!opened)
        return std::move(opened.error());
      if (client) {
        auto addr = caf::actor_cast<caf::actor_addr>(client);
        auto& ids = self->state.sessions_by_client[addr];
        if (ids.empty())
          self->monitor(client);
        ids.push_back(opened->session());
        self->state.session_owner[opened->session()] = client->node();
        self->state.session_client[opened->session()] = addr;
      }
      if (req->resume_session() != 0)
        log(log_level::info, "gpu {}: session {} resumed by its client after a reconnect",
            self->state.exec->ordinal(), opened->session());
      self->state.orphaned.erase(opened->session());
      self->state.meter.on_open(opened->session(), req->client_id(), req->task_signature(),
                                unix_ns());
      log(log_level::info, "gpu {}: session {} opened for '{}'", self->state.exec->ordinal(),
          opened->session(), req->client_id());
      post_telemetry(self);
      return pb<proto::SessionOpened>{std::move(*opened)};
    },
    [=](const pb<proto::OpBatch>& batch) -> caf::result<pb<proto::BatchReply>> {
      if (!sender_owns(self, batch->session()))
        return refuse_foreign(self, batch->session(), "an op batch");
      auto& st = self->state;
      auto begin = unix_ns();
      auto reply = st.exec->execute(batch.value);
      // A refused or failed op is logged with its reason (issue #10); answers
      // such as CUDA_ERROR_NOT_READY carry no text and are not.
      for (const auto& r : reply.results())
        if (r.status() != 0 && !r.error().empty())
          log(log_level::info, "gpu {}: session {} op {} failed with CUresult {}: {}",
              st.exec->ordinal(), batch->session(), r.seq(), r.status(), r.error());
      const auto* sess = st.exec->find_session(batch->session());
      auto allocated = sess != nullptr ? sess->device_bytes() : 0;
      if (st.meter.on_batch(batch.value, begin, unix_ns(), allocated))
        post_telemetry(self); // the scheduler sees the compute phase begin
      return pb<proto::BatchReply>{std::move(reply)};
    },
    [=](close_atom, uint64_t id) -> caf::result<bool> {
      if (!sender_owns(self, id))
        return refuse_foreign(self, id, "a close");
      self->state.session_owner.erase(id);
      self->state.session_client.erase(id);
      bool known = self->state.exec->find_session(id) != nullptr;
      report_end(self, id);
      self->state.exec->close_session(id);
      self->state.orphaned.erase(id);
      for (auto& [addr, ids] : self->state.sessions_by_client)
        ids.erase(std::remove(ids.begin(), ids.end(), id), ids.end());
      if (known)
        log(log_level::info, "gpu {}: session {} closed", self->state.exec->ordinal(), id);
      post_telemetry(self);
      return known;
    },
    [=](status_atom) {
      post_telemetry(self);
      proto::NodeStatus status;
      *status.add_gpus() = self->state.exec->gpu_info();
      for (auto& s : self->state.exec->sessions()) {
        s.set_client_gone(self->state.orphaned.count(s.session()) != 0);
        *status.add_sessions() = std::move(s);
      }
      return pb<proto::NodeStatus>{std::move(status)};
    },
    [=](tick_atom, uint64_t id) {
      auto i = self->state.orphaned.find(id);
      if (i == self->state.orphaned.end())
        return;
      self->state.orphaned.erase(i);
      report_end(self, id);
      self->state.session_owner.erase(id);
      self->state.session_client.erase(id);
      self->state.exec->close_session(id);
      log(log_level::warning,
          "gpu {}: session {} expired after its client was gone for {} ms; its GPU memory is "
          "freed",
          self->state.exec->ordinal(), id, self->state.grace.count());
      post_telemetry(self);
    },
  };
}

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

bool auth_token_matches(const std::string& expected, const std::string& given) noexcept {
  if (expected.empty())
    return true;
  unsigned char diff = expected.size() == given.size() ? 0 : 1;
  for (size_t i = 0; i < expected.size(); ++i)
    diff |= static_cast<unsigned char>(expected[i] ^ (i < given.size() ? given[i] : 0));
  return diff == 0;
}

caf::error check_auth_token(const std::string& expected, const proto::OpenSession& req) {
  if (auth_token_matches(expected, req.auth_token()))
    return {};
  return make_error(error_code::unauthorized,
                    std::string{"the GPU server requires an auth token and the one presented is "}
                      + (req.auth_token().empty() ? "missing" : "wrong")
                      + ": set GLEAM_TOKEN (or [client] auth-token) to the server's [node] "
                        "auth-token");
}

caf::expected<std::string>
tenant_of(const std::string& auth_token,
          const std::vector<std::pair<std::string, std::string>>& tenants,
          const proto::OpenSession& req) {
  if (tenants.empty()) {
    if (auto refused = check_auth_token(auth_token, req))
      return refused;
    return std::string{};
  }
  // Every token is compared, so the time does not say which one matched.
  const std::string* found = nullptr;
  for (const auto& [name, token] : tenants)
    if (auth_token_matches(token, req.auth_token()) && found == nullptr)
      found = &name;
  if (found != nullptr)
    return *found;
  if (!auth_token.empty() && auth_token_matches(auth_token, req.auth_token()))
    return std::string{};
  return make_error(error_code::unauthorized,
                    std::string{"the GPU server admits its tenants only and the token presented "
                                "is "}
                      + (req.auth_token().empty() ? "missing" : "wrong")
                      + ": set GLEAM_TOKEN (or [client] auth-token) to your tenant's token");
}

caf::expected<size_t> count_gpus(const config::node_config& cfg) {
  auto api = executor::driver_api::load();
  if (!api)
    return std::move(api.error());
  auto devices = device_list(**api, cfg);
  if (!devices)
    return std::move(devices.error());
  return devices->size();
}

caf::expected<gpu_service> start_gpu_servers(caf::actor_system& sys,
                                             const config::node_config& cfg,
                                             const std::shared_ptr<telemetry_board>& board,
                                             std::shared_ptr<executor::weight_cache> cache) {
  auto loaded = executor::driver_api::load();
  if (!loaded)
    return std::move(loaded.error());
  gpu_service service;
  service.driver = std::shared_ptr<executor::driver_api>(std::move(*loaded));
  auto devices = device_list(*service.driver, cfg);
  if (!devices)
    return std::move(devices.error());
  for (size_t slot = 0; slot < devices->size(); ++slot) {
    auto exec = executor::executor::make(*service.driver, (*devices)[slot]);
    if (!exec)
      return std::move(exec.error());
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
    service.infos.push_back((*exec)->gpu_info());
    std::shared_ptr<executor::executor> carried{std::move(*exec)};
    service.servers.push_back(sys.spawn<caf::detached>(gpu_server_impl, service.driver, carried,
                                                       board, slot, cfg.session_grace,
                                                       cfg.auth_token, cfg.tenants));
  }
  return service;
}

} // namespace gleam::actors
