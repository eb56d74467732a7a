// The client's connection: the actor system, opening, resuming and losing
// the session, the client proxy and host-call runner, fork and exit.
#include "interpose/client_core.hpp"

#include <dlfcn.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <limits.h>
#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <map>
#include <mutex>
#include <new>
#include <optional>
#include <set>
#include <thread>
#include <utility>

#include <caf/all.hpp>
#include <caf/io/all.hpp>

#include "actors/error.hpp"
#include "actors/interfaces.hpp"
#include "actors/log.hpp"
#include "actors/multiplexer_loop.hpp"
#include "actors/network.hpp"
#include "actors/type_registry.hpp"
#include "config/client_config.hpp"
#include "consistency/pending_window.hpp"
#include "consistency/replay_log.hpp"
#include "interpose/capture_state.hpp"
#include "interpose/error_map.hpp"
#include "interpose/fatbin/fatbin.hpp"
#include "interpose/host_copies.hpp"
#include "interpose/message_size.hpp"
#include "interpose/mirror.hpp"
#include "interpose/upload.hpp"
#include "interpose/vmm.hpp"
#include "interpose/wait_report.hpp"
#include "wire/protocol.hpp"

namespace gleam::interpose::core {


/// "host:pid" of this app: sessions and placement requests name it so.
std::string client_id() {
  char hostname[256] = {};
  ::gethostname(hostname, sizeof(hostname) - 1);
  return std::string{hostname} + ":" + std::to_string(::getpid());
}

client* the_client = nullptr;
/// Set once the atexit handler closed the session: calls that come later
/// (exit handlers of a static CUDA runtime, of libraries unloading) fail
/// with cudaErrorCudartUnloading, as during a local driver's teardown,
/// instead of opening a new session. Guarded by client_mutex.
bool exited = false;
std::mutex* client_mutex = new std::mutex;
std::once_flag* atfork_once = new std::once_flag;

void after_fork_in_child() {
  // The parent's actor system has no threads here: leak it, start afresh.
  the_client = nullptr;
  client_mutex = new std::mutex;
  // The parent's session and everything in it are not the child's: modules
  // load again on first use; device allocations, streams and events of the
  // parent do not exist for the child. Only this thread runs now.
  auto& r = reg();
  new (&r.mutex) std::recursive_mutex;
  for (auto& m : r.modules)
    forget_server_state(*m);
  r.allocations.clear();
  r.slabs.clear();
  r.streams.clear();
  r.events.clear();
  r.pools.clear();
  vmm_forget_all();
}

/// The client proxy's state: the open request it forwards.
struct client_proxy_state {
  std::optional<caf::response_promise> opening;
  static inline const char* name = "gleam.client_proxy";
};

/// The in-app actor that opens the session, so the server monitors it and
/// frees the session when the app goes away. It monitors the server too:
/// the moment CAF reports the server's node down (connection reset, or no
/// heartbeat within middleman.connection-timeout), it says so in `watch`
/// and the waits for batch replies fail instead of waiting for the request
/// timeout. Batches go from the app's blocking actor to the server directly
/// (loopback: 275 -> 150 us a sync call without the hop through this
/// actor); it runs detached, so that the open never waits for a scheduler
/// thread.
caf::behavior client_proxy(caf::stateful_actor<client_proxy_state>* self,
                           actors::gpu_server_actor server,
                           std::shared_ptr<server_watch> watch,
                           std::chrono::milliseconds timeout, caf::actor host_runner) {
  self->monitor(server);
  self->set_down_handler([=](caf::down_msg& dm) {
    auto reason = "the GPU server went down: " + caf::to_string(dm.reason);
    {
      std::lock_guard<std::mutex> guard{watch->mutex};
      watch->reason = reason;
    }
    watch->down = true;
    if (self->state.opening) {
      self->state.opening->deliver(caf::make_error(caf::sec::request_receiver_down, reason));
      self->state.opening.reset();
    }
  });
  return {
    [=](actors::open_atom, actors::pb<proto::OpenSession>& req) {
      auto rp = self->make_response_promise();
      self->state.opening = rp;
      self->request(server, caf::duration{timeout}, actors::open_atom::value, std::move(req))
        .then(
          [=](actors::pb<proto::SessionOpened>& r) {
            if (self->state.opening)
              self->state.opening->deliver(std::move(r));
            self->state.opening.reset();
          },
          [=](caf::error& e) {
            if (self->state.opening)
              self->state.opening->deliver(std::move(e));
            self->state.opening.reset();
          });
      return rp;
    },
    // A host node of the session's graph reached: host_call_runner runs the
    // function, so this actor stays free to notice a lost server.
    [=](actors::host_call_atom a, uint64_t session, uint64_t callback, uint64_t invocation) {
      return self->delegate(host_runner, a, session, callback, invocation);
    },
    // A memcpy node's host end (interpose/host_copies.hpp), on the same thread.
    [=](actors::host_copy_atom a, uint64_t session, uint64_t copy, uint64_t offset,
        std::string& data, uint64_t want) {
      return self->delegate(host_runner, a, session, copy, offset, std::move(data), want);
    },
  };
}

/// Runs the app's host functions for the server's host nodes, one at a
/// time, on a thread of its own (CUDA runs them on a driver thread too).
caf::behavior host_call_runner(caf::event_based_actor*) {
  return {
    [](actors::host_call_atom, uint64_t session, uint64_t callback,
       uint64_t invocation) -> caf::result<bool> {
      if (!run_host_call(session, callback, invocation))
        return actors::make_error(actors::error_code::no_host_function,
                                  "host function " + std::to_string(callback)
                                    + " was never registered in this process");
      return true;
    },
    [](actors::host_copy_atom, uint64_t, uint64_t copy, uint64_t offset, std::string& data,
       uint64_t want) -> caf::result<std::string> {
      std::string out;
      if (!serve_host_copy(copy, offset, data, want, &out))
        return actors::make_error(actors::error_code::no_host_function,
                                  "host copy " + std::to_string(copy)
                                    + " was never registered in this process, or the "
                                      "server asked past its bytes");
      return out;
    },
  };
}

std::string render(client& c, const caf::error& e) {
  return c.system ? c.system->render(e) : std::string{"error"};
}

/// `c.server` untyped: batches travel as a kept caf::message, which the
/// typed handle does not take.
caf::actor untyped_server(const client& c) {
  return caf::actor_cast<caf::actor>(c.server);
}

void teardown(client* c) {
  // From the blocking actor, as the batches: the close never overtakes the
  // last batch sent at exit.
  if (c->state == cudaSuccess && c->self && c->server && !c->watch->down) {
    actors::pb<proto::CloseSession> close;
    close->set_session(c->opened.session());
    close->set_secret(c->opened.secret());
    (*c->self)
      ->request(untyped_server(*c), caf::duration{std::chrono::seconds{1}},
                actors::close_atom::value, std::move(close))
      .receive([](bool) {}, [](caf::error&) {});
  }
  if (c->proxy)
    caf::anon_send_exit(c->proxy, caf::exit_reason::user_shutdown);
  if (c->host_runner)
    caf::anon_send_exit(c->host_runner, caf::exit_reason::user_shutdown);
  c->proxy = nullptr;
  c->host_runner = nullptr;
  c->server = nullptr;
  c->self.reset();
  // Destroying the actor system joins its threads; bound the wait so that a
  // stuck connection never hangs the app's exit.
  auto done = std::make_shared<std::atomic<bool>>(false);
  auto* sys = c->system.release();
  auto* loop = c->network_loop.release();
  std::thread destroyer{[sys, loop, done] {
    if (loop != nullptr)
      loop->stop();
    delete sys;
    delete loop;
    done->store(true);
  }};
  for (int i = 0; i < 300 && !done->load(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds{10});
  if (done->load()) {
    destroyer.join();
    c->system_config.reset();
  } else {
    // Leak the configuration with the system that still uses it.
    c->system_config.release();
    destroyer.detach();
  }
}



void at_exit() {
  std::thread flusher;
  {
    std::lock_guard<std::mutex> guard{*client_mutex};
    if (the_client == nullptr)
      return;
    the_client->stopping = true;
    the_client->wake.notify_all();
    flusher = std::move(the_client->flusher);
  }
  if (flusher.joinable())
    flusher.join();
  std::lock_guard<std::mutex> guard{*client_mutex};
  auto* c = the_client;
  the_client = nullptr;
  exited = true;
  if (c == nullptr)
    return;
  // Ops the app left queued still run, as they would on a local GPU: they
  // go out ahead of the close (same sender, so in order); their replies are
  // not waited for, so a hung server cannot hold the exit for long.
  if (c->state == cudaSuccess)
    send_queue(*c, 0, {}, nullptr);
  teardown(c);
}

void unreachable(client& c, const std::string& where, const std::string& why) {
  std::fprintf(stderr,
               "gleam: cannot reach a Gleam server at %s (%s): start gleamd "
               "(deploy/examples/all-in-one.conf) or set "
               "GLEAM_SERVER/GLEAM_SCHEDULER\n",
               where.c_str(), why.c_str());
  c.state = cudaErrorNoDevice;
}

/// `redirected`: the session runs in a worker process of the GPU server
/// (SessionOpened.worker_port), where the client resumes it.
enum class attach_result { ok, refused, unreachable, redirected };

/// Connects to the GPU server at c.server_host:`port` (GPU `gpu`) and
/// opens a session through a new client proxy, or resumes session `resume`
/// with `secret` (after a lost connection, or where a GPU server's reply
/// sent it). Connecting is bounded by `within`, the open by `open_within`.
/// `why` says what failed; `refused`: the server answered and said no (a
/// wrong token, a session it no longer has), so trying again does not help;
/// `redirected`: the reply, in `redirect`, names the worker port to resume
/// at, and nothing else changed.
attach_result attach_at(client& c, uint16_t port, uint32_t gpu, uint64_t resume,
                        const std::string& secret, caf::duration within,
                        caf::duration open_within, std::string& why,
                        proto::SessionOpened& redirect) {
  auto& self = *c.self;
  auto tls = c.cfg.tls.enabled;
  // The middleman's connect, bounded (remote_actor waits for ever when a
  // link lets the TCP connection through and then stalls).
  caf::actor node_untyped;
  self->request(actors::network_handle(*c.system, tls), within, caf::connect_atom::value,
                c.server_host, port)
    .receive(
      [&](const caf::node_id&, caf::strong_actor_ptr& ptr, const std::set<std::string>&) {
        node_untyped = caf::actor_cast<caf::actor>(std::move(ptr));
      },
      [&](caf::error& e) { why = render(c, e); });
  if (!node_untyped) {
    if (why.empty())
      why = "no node actor on that port";
    return attach_result::unreachable;
  }
  auto node = caf::actor_cast<actors::node_actor>(node_untyped);
  actors::gpu_server_actor server;
  self->request(node, within, actors::get_gpu_atom::value, gpu)
    .receive([&](actors::gpu_server_actor& g) { server = g; },
             [&](caf::error& e) { why = render(c, e); });
  if (!server) {
    why = "no GPU server " + std::to_string(gpu) + ": " + why;
    return attach_result::unreachable;
  }
  auto watch = std::make_shared<server_watch>();
  auto proxy = c.system->spawn<caf::detached>(client_proxy, server, watch,
                                              c.cfg.request_timeout, c.host_runner);
  actors::pb<proto::OpenSession> open;
  open->set_client_id(client_id());
  open->set_task_signature(c.cfg.task_signature);
  open->set_protocol_version(wire::protocol_version);
  open->set_auth_token(c.cfg.auth_token); // [client] auth-token / GLEAM_TOKEN
  open->set_resume_session(resume);
  if (resume != 0) {
    // The session is ours by its secret, not by its id.
    open->set_resume_secret(secret);
    // Host nodes of the session's graphs may hold the server's GPU work
    // (and with it the server) until they reach this process again: the new
    // proxy goes to their router first, through the node. A node that has
    // none (a session without host nodes) changes nothing.
    self
      ->request(node, within, actors::host_attach_atom::value, gpu, resume, secret, proxy)
      .receive([](bool) {}, [](caf::error&) {});
  }
  auto result = attach_result::unreachable;
  self->request(proxy, open_within, actors::open_atom::value, open)
    .receive(
      [&](actors::pb<proto::SessionOpened>& r) {
        if (r->worker_port() != 0) {
          redirect = std::move(r.value);
          result = attach_result::redirected;
          return;
        }
        // A server of another protocol (one that did not refuse the
        // session itself) or a driver older than this runtime: one clear
        // error, no op stream.
        if (auto mismatch = wire::protocol_mismatch(wire::protocol_version,
                                                    r->protocol_version());
            !mismatch.empty()) {
          why = mismatch;
          result = attach_result::refused;
        } else if (r->driver_version() < wire::cuda_runtime_version) {
          why = "the server's CUDA driver (" + wire::cuda_version_text(r->driver_version())
                + ") is older than CUDA " + wire::cuda_version_text(wire::cuda_runtime_version)
                + ", the runtime this client implements: update the GPU host's NVIDIA driver "
                  "(580 or newer)";
          result = attach_result::refused;
        } else {
          c.opened = std::move(r.value);
          result = attach_result::ok;
        }
      },
      [&](caf::error& e) {
        why = render(c, e);
        // An answer from the server (not a lost or slow connection).
        if (e.category() == caf::atom("gleam_act") || e.category() == caf::atom("gleam_exec"))
          result = attach_result::refused;
      });
  if (result != attach_result::ok) {
    caf::anon_send_exit(proxy, caf::exit_reason::user_shutdown);
    return result;
  }
  if (c.proxy)
    caf::anon_send_exit(c.proxy, caf::exit_reason::user_shutdown);
  c.server = server;
  c.proxy = proxy;
  c.watch = std::move(watch);
  return attach_result::ok;
}

/// attach_at the GPU server the client was given (c.server_port, GPU
/// c.server_gpu); when it runs the session in a worker process, at the
/// worker, resuming the session there (a new session with the secret the
/// reply carried). A session whose worker is gone is refused by the GPU
/// server with the reason.
attach_result attach(client& c, uint64_t resume, caf::duration within,
                     caf::duration open_within, std::string& why) {
  proto::SessionOpened redirect;
  auto r = attach_at(c, c.server_port, c.server_gpu, resume, c.opened.secret(), within,
                     open_within, why, redirect);
  if (r != attach_result::redirected)
    return r;
  if (redirect.worker_port() > UINT16_MAX) {
    why = "the GPU server named an invalid worker port";
    return attach_result::refused;
  }
  const auto& secret = resume != 0 ? c.opened.secret() : redirect.secret();
  proto::SessionOpened again;
  // A worker serves GPU 0 of its own: the one it was started for.
  r = attach_at(c, static_cast<uint16_t>(redirect.worker_port()), 0, redirect.session(),
                secret, within, open_within, why, again);
  if (r == attach_result::redirected) {
    why = "the session's worker process redirected the client again";
    return attach_result::refused;
  }
  if (r != attach_result::ok)
    why = "the session's worker process (port " + std::to_string(redirect.worker_port())
          + "): " + why;
  return r;
}

void open_connection(client& c) {
  auto cfg = config::load_client_config();
  if (!cfg) {
    std::fprintf(stderr, "gleam: invalid client configuration: %s\n",
                 caf::to_string(cfg.error()).c_str());
    c.state = cudaErrorNoDevice;
    return;
  }
  c.cfg = std::move(*cfg);
  actors::set_log_tag("gleam-client");
  actors::set_log_level(c.cfg.log_level);
  c.system_config = std::make_unique<caf::actor_system_config>();
  auto& sc = *c.system_config;
  actors::add_message_types(sc);
  actors::load_network(sc, c.cfg.tls); // [tls] / GLEAM_TLS*: OpenSSL manager
  sc.set("scheduler.max-threads", 2);
  // Replies are deserialized on the middleman's own thread instead of being
  // handed to a BASP worker first: one thread hop less per round trip
  // (loopback here: 215 us -> 52 us a sync call; tools/bench/README.md).
  // GLEAM_CAF_WORKERS=N restores N workers, for measurements.
  size_t workers = 0;
  if (const char* w = std::getenv("GLEAM_CAF_WORKERS"))
    workers = static_cast<size_t>(std::strtoul(w, nullptr, 10));
  sc.set("middleman.workers", workers);
  // A server whose host vanished (no TCP reset) is down after 2 s of silence;
  // gleamd sends heartbeats every 500 ms.
  sc.set("middleman.heartbeat-interval", caf::timespan{std::chrono::milliseconds{500}});
  sc.set("middleman.connection-timeout", caf::timespan{actors::connection_timeout});
  sc.set("logger.file-verbosity", caf::atom("quiet"));
  sc.set("logger.console-verbosity", caf::atom("quiet"));
  // The network thread polls for [client] poll after each event, so the
  // request of the next sync call and its reply find it awake.
  c.network_loop = std::make_unique<actors::multiplexer_loop>(sc, c.cfg.poll);
  c.system = std::make_unique<caf::actor_system>(sc);
  c.network_loop->start(*c.system);
  c.self = std::make_unique<caf::scoped_actor>(*c.system);
  c.host_runner = c.system->spawn<caf::detached>(host_call_runner);
  auto& self = *c.self;
  auto timeout = caf::duration{c.cfg.request_timeout};
  auto connect_timeout = caf::duration{c.cfg.connect_timeout};
  std::string host;
  uint16_t port = 0;
  uint32_t gpu = c.cfg.server_gpu;
  if (!c.cfg.server_host.empty()) {
    host = c.cfg.server_host;
    port = c.cfg.server_port;
  } else {
    auto where = c.cfg.scheduler_host + ":" + std::to_string(c.cfg.scheduler_port);
    auto node = actors::remote_actor<actors::node_actor>(
      *c.system, c.cfg.scheduler_host, c.cfg.scheduler_port, c.cfg.tls.enabled);
    if (!node)
      return unreachable(c, where, render(c, node.error()));
    actors::scheduler_actor sched;
    std::string why;
    self->request(*node, connect_timeout, actors::get_scheduler_atom::value)
      .receive([&](actors::scheduler_actor& s) { sched = s; },
               [&](caf::error& e) { why = render(c, e); });
    if (!sched)
      return unreachable(c, where, "no scheduler: " + why);
    actors::pb<proto::PlacementRequest> req;
    req->set_client_id(client_id()); // its host names the uplink its loads share
    req->set_task_signature(c.cfg.task_signature);
    req->set_auth_token(c.cfg.auth_token); // names the task's tenant, as in OpenSession
    proto::PlacementReply placed;
    bool got = false;
    bool refused = false;
    self->request(sched, timeout, actors::place_atom::value, req)
      .receive(
        [&](actors::pb<proto::PlacementReply>& r) {
          placed = std::move(r.value);
          got = true;
        },
        [&](caf::error& e) {
          why = render(c, e);
          refused = e.category() == caf::atom("gleam_act");
        });
    if (refused) {
      // The scheduler is there and said no (a token naming no tenant).
      std::fprintf(stderr, "gleam: the Gleam scheduler at %s refused the placement: %s\n",
                   where.c_str(), why.c_str());
      c.state = cudaErrorNoDevice;
      return;
    }
    if (!got)
      return unreachable(c, where, "placement failed: " + why);
    if (!placed.ok())
      return unreachable(c, where, "no GPU server: " + placed.error());
    host = placed.data_host();
    port = static_cast<uint16_t>(placed.data_port());
    gpu = placed.gpu_index();
  }
  c.server_host = host;
  c.server_port = port;
  c.server_gpu = gpu;
  auto where = host + ":" + std::to_string(port);
  std::string why;
  switch (attach(c, 0, connect_timeout, timeout, why)) {
    case attach_result::ok:
      break;
    case attach_result::refused:
    case attach_result::redirected: // attach follows a redirect itself
      // The server is there and said no: starting a gleamd would not help.
      std::fprintf(stderr, "gleam: the Gleam server at %s refused the session: %s\n",
                   where.c_str(), why.c_str());
      c.state = cudaErrorNoDevice;
      return;
    case attach_result::unreachable:
      return unreachable(c, where, why);
  }
  if (c.opened.devices_size() == 0)
    return unreachable(c, where, "the session has no device");
  log(log_level::info, "session {} on {} (GPU {}: {})", c.opened.session(),
      where, gpu, c.opened.devices(0).name());
}

void flusher_loop(client* c, std::mutex* mutex);

/// The client, connecting if needed. Call with client_mutex held.
client& get_client() {
  if (the_client == nullptr && exited) {
    // Never connected and never torn down: every call sees the state.
    the_client = new client;
    the_client->state = cudaErrorCudartUnloading;
  }
  if (the_client == nullptr) {
    std::call_once(*atfork_once, [] {
      ::pthread_atfork(nullptr, nullptr, after_fork_in_child);
    });
    auto* c = new client;
    open_connection(*c);
    c->async = c->cfg.async;
    if (const char* us = std::getenv("GLEAM_FLUSH_US"))
      c->flush_delay = std::chrono::microseconds{std::strtoul(us, nullptr, 10)};
    // Strict synchronous mode: one batch in flight, every op waited for.
    // The server answers again after a reconnect only as many batches as
    // its replay log keeps.
    static_assert(config::client_config::max_pending_batch_limit
                  <= consistency::replay_log<int>::default_capacity);
    c->window = consistency::pending_window{c->async ? c->cfg.max_pending_batch : 1u,
                                            sticky_status};
    if (c->state == cudaSuccess && c->async)
      c->flusher = std::thread{flusher_loop, c, client_mutex};
    the_client = c;
    std::atexit(at_exit);
  }
  return *the_client;
}

/// Marks the session lost: every later call fails with
/// cudaErrorDevicesUnavailable.
void lose(client& c, const std::string& why) {
  if (c.state == cudaSuccess)
    std::fprintf(stderr,
                 "gleam: lost the Gleam session %llu (%s); every further CUDA "
                 "call fails with cudaErrorDevicesUnavailable\n",
                 static_cast<unsigned long long>(c.opened.session()), why.c_str());
  c.state = cudaErrorDevicesUnavailable;
  static_cast<void>(c.window.abandon());
  c.flights.clear();
  c.queue->clear_ops();
  c.queued_bytes = 0;
}

/// Set by cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync): waits sleep.
std::atomic<bool> wait_blocking{false};

/// Waits for the reply to `f`: true with `reply`, false with `why` when
/// the request failed or the client proxy saw the server go down;
/// `refused` says the server itself refused the batch (e.g. it holds no
/// such session, or not with this secret): no reconnect gets it back.
bool await_reply(client& c, const flight& f, proto::BatchReply& reply, std::string& why,
                 bool& refused) {
  bool got = false;
  bool answered = false;
  refused = false;
  auto on_reply = [&](actors::pb<proto::BatchReply>& r) {
    reply = std::move(r.value);
    got = answered = true;
  };
  auto on_error = [&](caf::error& e) {
    why = render(c, e);
    refused = e.category() == caf::atom("gleam_act");
    answered = true;
  };
  // First polls, with the network thread held awake, for up to 10x
  // [client] poll: a reply within that finds both threads running, no
  // wake-up on its way (actors/multiplexer_loop.hpp). The mailbox is looked
  // at without CAF's receive until something is there.
  if (c.cfg.poll.count() > 0 && !wait_blocking.load(std::memory_order_relaxed)) {
    actors::multiplexer_hold hold{c.network_loop.get()};
    auto& self = *c.self;
    auto deadline = std::chrono::steady_clock::now() + 10 * c.cfg.poll;
    while (!answered && std::chrono::steady_clock::now() < deadline && !c.watch->down) {
      if (self->mailbox().empty()) {
        actors::cpu_relax();
        continue;
      }
      caf::blocking_actor::accept_one_cond rc;
      self->varargs_receive(rc, f.handle.id(), on_reply, on_error,
                            caf::after(std::chrono::seconds{0}) >> [] {});
    }
  }
  // In slices, so that a server the proxy saw go down fails the wait at
  // once instead of at the request timeout.
  while (!answered) {
    caf::blocking_actor::accept_one_cond rc;
    (*c.self)->varargs_receive(
      rc, f.handle.id(), on_reply, on_error,
      caf::after(watch_slice) >> [&] {
        if (!c.watch->down)
          return;
        std::lock_guard<std::mutex> guard{c.watch->mutex};
        why = c.watch->reason;
        answered = true;
      });
  }
  return got;
}

/// Whether the host at `host`:`port` answers a TCP connect with a refusal
/// on every address it has: it is reachable and nothing listens there, so
/// the Gleam server was stopped or killed and its sessions are gone. A
/// dropped link (no answer, an unreachable network) or a listener on any
/// address says no.
bool connect_refused(const std::string& host, uint16_t port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found) != 0)
    return false;
  bool refused = false;
  for (auto* a = found; a != nullptr; a = a->ai_next) {
    int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK, a->ai_protocol);
    if (fd < 0)
      continue;
    int rc = ::connect(fd, a->ai_addr, a->ai_addrlen);
    int err = rc == 0 ? 0 : errno;
    if (err == EINPROGRESS) {
      pollfd p{fd, POLLOUT, 0};
      err = ETIMEDOUT;
      if (::poll(&p, 1, 500) == 1) {
        socklen_t len = sizeof(err);
        ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
      }
    }
    ::close(fd);
    if (err != ECONNREFUSED) {
      refused = false;
      break;
    }
    refused = true;
  }
  ::freeaddrinfo(found);
  return refused;
}

/// After the connection to the server was lost (`why`): gets the session
/// back within [client] reconnect-for, with backoff, and sends every batch
/// in flight again, in order. The server skips the ops it ran already and
/// answers a batch whose reply was lost from its replay log, so nothing
/// runs twice and a sync call in flight is answered once. False, with `why`
/// extended, when the session cannot be had back in time.
bool reconnect(client& c, std::string& why) {
  if (c.cfg.reconnect_for.count() <= 0 || c.server_host.empty())
    return false;
  auto where = c.server_host + ":" + std::to_string(c.server_port);
  auto now = std::chrono::steady_clock::now();
  if (c.flights.empty() || c.flights.front().id != c.stuck_flight || c.stuck_drops == 0) {
    c.stuck_flight = c.flights.empty() ? 0 : c.flights.front().id;
    c.stuck_since = now;
    c.stuck_drops = 0;
  }
  ++c.stuck_drops;
  if (!c.flights.empty() && c.stuck_drops > 1 && now - c.stuck_since >= c.cfg.reconnect_for) {
    why += fmt::format("; the connection was lost {} times in {} ms and no batch was answered "
                       "in between (one cause: a link so slow that a message of up to {} KiB "
                       "takes longer than the {} s connection timeout to cross it, below about "
                       "{:.1f} Mbit/s)",
                       c.stuck_drops,
                       std::chrono::duration_cast<std::chrono::milliseconds>(now - c.stuck_since)
                           .count(),
                       max_message_payload >> 10, actors::connection_timeout.count(),
                       max_message_payload * 8e-6 / actors::connection_timeout.count());
    return false;
  }
  std::fprintf(stderr, "gleam: lost the connection to the Gleam server at %s (%s); "
                       "reconnecting for up to %lld ms\n",
               where.c_str(), why.c_str(),
               static_cast<long long>(c.cfg.reconnect_for.count()));
  auto start = std::chrono::steady_clock::now();
  auto deadline = start + c.cfg.reconnect_for;
  auto backoff = std::chrono::milliseconds{100};
  auto bound = std::min(c.cfg.connect_timeout, std::chrono::milliseconds{2000});
  int attempts = 0;
  for (;;) {
    std::string failed;
    ++attempts;
    auto r = attach(c, c.opened.session(), caf::duration{bound}, caf::duration{bound}, failed);
    if (r == attach_result::ok)
      break;
    if (r == attach_result::unreachable && connect_refused(c.server_host, c.server_port)) {
      why += "; nothing listens at " + where + " any more: the Gleam server stopped";
      return false;
    }
    if (r == attach_result::refused || std::chrono::steady_clock::now() + backoff >= deadline) {
      why += "; getting the session back failed after " + std::to_string(attempts)
             + " attempts: " + failed;
      return false;
    }
    std::this_thread::sleep_for(backoff);
    backoff = std::min(backoff * 2, std::chrono::milliseconds{1000});
  }
  for (auto& f : c.flights)
    f.handle = (*c.self)->request(untyped_server(c), caf::duration{c.cfg.request_timeout},
                                  f.batch);
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
              std::chrono::steady_clock::now() - start)
              .count();
  std::fprintf(stderr, "gleam: reconnected to %s after %lld ms; session %llu resumed, %zu "
                       "batches sent again\n",
               where.c_str(), static_cast<long long>(ms),
               static_cast<unsigned long long>(c.opened.session()), c.flights.size());
  return true;
}

} // namespace gleam::interpose::core
