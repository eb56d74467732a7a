#include "interpose/runtime.hpp"

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

namespace gleam::interpose {

namespace {

/// "host:pid" of this app: sessions and placement requests name it so.
std::string client_id() {
  char hostname[256] = {};
  ::gethostname(hostname, sizeof(hostname) - 1);
  return std::string{hostname} + ":" + std::to_string(::getpid());
}

using actors::log;
using actors::log_level;

thread_local cudaError_t thread_last_error = cudaSuccess;
std::atomic<int> process_sticky{cudaSuccess};

/// The reply handle of one batch request of the client's blocking actor.
using batch_handle = decltype(std::declval<caf::blocking_actor&>().request(
  std::declval<const caf::actor&>(), caf::duration{},
  std::declval<actors::pb<proto::OpBatch>>()));

/// Whether the server's node went down, as the client proxy saw it; read
/// by the waits for batch replies.
struct server_watch {
  std::atomic<bool> down{false};
  std::mutex mutex;
  std::string reason;
};

/// How often a wait for a batch reply looks at the server_watch: the bound
/// on how late a lost server is noticed beyond CAF's down message.
constexpr std::chrono::milliseconds watch_slice{20};

/// A batch sent and not yet reconciled.
struct flight {
  /// Its id in the pending window.
  uint64_t id = 0;
  batch_handle handle;
  /// The batch as sent (shared, not copied), for a re-send after a
  /// reconnect, and the seq of its last op.
  caf::message batch;
  uint64_t last_seq = 0;
  /// Receives the results of the batch's owned ops; may be empty.
  result_sink sink;
  /// Receives the first failure of the owned ops; may be null.
  cudaError_t* status = nullptr;
  /// Ops at or after this seq are owned (0: none).
  uint64_t owned_from = 0;
};

/// Bounds of the submission queue: a batch leaves when it holds this many
/// ops or bytes of payload, when its oldest op waited flush_delay, or at
/// once when its first op comes after flush_delay without a batch sent.
constexpr int max_batch_ops = 256;
constexpr size_t max_batch_bytes = max_message_payload;
constexpr auto default_flush_delay = std::chrono::microseconds{200};

bool sticky_status(int32_t status) {
  return is_sticky(to_cuda_error(status));
}

/// Everything that needs the network. Created at the first call that needs
/// the server, torn down by an atexit handler. Guarded by client_mutex.
struct client {
  config::client_config cfg;
  /// Referenced by `system` for its whole life.
  std::unique_ptr<caf::actor_system_config> system_config;
  /// Runs the network, polling while replies are awaited ([client] poll).
  /// Stopped before `system` is destroyed.
  std::unique_ptr<actors::multiplexer_loop> network_loop;
  std::unique_ptr<caf::actor_system> system;
  std::unique_ptr<caf::scoped_actor> self;
  actors::gpu_server_actor server;
  /// The in-app actor that opened the session and watches the server (client_proxy).
  caf::actor proxy;
  /// Runs the host functions of graph host nodes the server asks for
  /// (host_call_runner); outlives reconnects.
  caf::actor host_runner;
  std::shared_ptr<server_watch> watch = std::make_shared<server_watch>();
  proto::SessionOpened opened;
  uint64_t next_seq = 1;
  cudaError_t state = cudaSuccess;
  /// Asynchronous forwarding (GLEAM_ASYNC, [client] async).
  bool async = true;
  /// Batches in flight and the errors of async ops.
  consistency::pending_window window{8, sticky_status};
  /// Ops submitted and not sent yet, in seq order.
  actors::pb<proto::OpBatch> queue;
  size_t queued_bytes = 0;
  std::chrono::steady_clock::time_point first_queued;
  /// When the last batch left.
  std::chrono::steady_clock::time_point last_sent;
  /// How long a queued op may wait for company (GLEAM_FLUSH_US).
  std::chrono::microseconds flush_delay = default_flush_delay;
  /// Sent batches, oldest first (the window's order).
  std::deque<flight> flights;
  /// The last seq of the newest batch whose reply was reconciled (sent to
  /// the server as OpBatch.replied_through).
  uint64_t replied_through = 0;
  /// Times, and ns in all, this session blocked on the server (drain, a
  /// full window): sent with each batch for the node's metrics.
  uint64_t waits = 0;
  /// Names of the last two ops queued: the wait report says what came just
  /// before a synchronizing op.
  std::string_view last_op = "none";
  std::string_view op_before_last = "none";
  /// A stream whose work is known complete: the last op sent was a
  /// synchronous one on it (a device-to-host copy, a stream synchronize)
  /// whose reply came, and nothing was queued since. A synchronize of it
  /// needs no round trip.
  std::optional<uint64_t> idle_stream;
  uint64_t wait_ns = 0;
  /// Where the session lives, for a reconnect.
  std::string server_host;
  uint16_t server_port = 0;
  uint32_t server_gpu = 0;
  /// Drops since the oldest batch in flight (stuck_flight) was last seen
  /// answered, and when the first of them came: a link on which no batch
  /// gets through between drops fails after reconnect-for, not never.
  uint64_t stuck_flight = 0;
  int stuck_drops = 0;
  std::chrono::steady_clock::time_point stuck_since;
  /// The flusher thread sends a queue that waited flush_delay.
  std::condition_variable wake;
  bool stopping = false;
  std::thread flusher;
};

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

std::chrono::steady_clock::duration send_queue(client& c, uint64_t owned_from,
                                               result_sink sink, cudaError_t* status,
                                               bool note_full = true);

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

enum class attach_result { ok, refused, unreachable };

/// Connects to the GPU server at c.server_host:port (GPU c.server_gpu) and
/// opens a session through a new client proxy, or resumes session `resume`
/// (after a lost connection). Connecting is bounded by `within`, the open
/// by `open_within`. `why` says
/// what failed; `refused`: the server answered and said no (a wrong token,
/// a session it no longer has), so trying again does not help.
attach_result attach(client& c, uint64_t resume, caf::duration within,
                     caf::duration open_within, std::string& why) {
  auto& self = *c.self;
  auto tls = c.cfg.tls.enabled;
  // The middleman's connect, bounded (remote_actor waits for ever when a
  // link lets the TCP connection through and then stalls).
  caf::actor node_untyped;
  self->request(actors::network_handle(*c.system, tls), within, caf::connect_atom::value,
                c.server_host, c.server_port)
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
  self->request(node, within, actors::get_gpu_atom::value, c.server_gpu)
    .receive([&](actors::gpu_server_actor& g) { server = g; },
             [&](caf::error& e) { why = render(c, e); });
  if (!server) {
    why = "no GPU server " + std::to_string(c.server_gpu) + ": " + why;
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
    open->set_resume_secret(c.opened.secret());
    // Host nodes of the session's graphs may hold the server's GPU work
    // (and with it the server) until they reach this process again: the new
    // proxy goes to their router first, through the node. A node that has
    // none (a session without host nodes) changes nothing.
    self
      ->request(node, within, actors::host_attach_atom::value, c.server_gpu, resume,
                c.opened.secret(), proxy)
      .receive([](bool) {}, [](caf::error&) {});
  }
  auto result = attach_result::unreachable;
  self->request(proxy, open_within, actors::open_atom::value, open)
    .receive(
      [&](actors::pb<proto::SessionOpened>& r) {
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

/// Waits for the reply of the oldest batch in flight and reconciles it.
void reconcile_oldest(client& c) {
  proto::BatchReply reply;
  for (;;) {
    std::string why;
    bool refused = false;
    if (await_reply(c, c.flights.front(), reply, why, refused))
      break;
    if (refused)
      return lose(c, "the server refused a batch: " + why);
    if (!reconnect(c, why))
      return lose(c, why);
  }
  auto f = std::move(c.flights.front());
  c.flights.pop_front();
  c.replied_through = f.last_seq;
  std::vector<consistency::op_status> outcome;
  outcome.reserve(static_cast<size_t>(reply.results_size()));
  for (const auto& r : reply.results()) {
    outcome.push_back({r.seq(), r.status(), r.status() != 0 ? r.error() : std::string{}});
    if (r.status() >= CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED
        && r.status() <= CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD)
      captures().note_capture_error();
    if (r.status() != 0)
      log(log_level::info, "op {} failed: {} ({})", r.seq(), r.status(), r.error());
  }
  auto done = c.window.completed(f.id, outcome);
  if (!done)
    return lose(c, caf::to_string(done.error()));
  if (auto s = c.window.sticky(); s != 0) {
    int expected = cudaSuccess;
    process_sticky.compare_exchange_strong(expected, static_cast<int>(to_cuda_error(s)));
  }
  if (f.status != nullptr && *f.status == cudaSuccess && done->owned_status != 0)
    *f.status = to_cuda_error(done->owned_status);
  if (f.sink && f.owned_from != 0)
    for (auto& r : *reply.mutable_results())
      if (r.seq() >= f.owned_from)
        f.sink(r);
}

/// Counts one wait of the session on the server (reported to it with the
/// next batch).
void count_wait(client& c, std::chrono::steady_clock::duration waited) {
  ++c.waits;
  c.wait_ns += static_cast<uint64_t>(
    std::chrono::duration_cast<std::chrono::nanoseconds>(waited).count());
}

/// Sends the queued ops as one batch (waiting for room in the window
/// first) and returns how long it waited for room. With `note_full` the
/// wait counts as "window_full" in the wait report (a queue at its bounds);
/// a synchronizing call counts it with its own wait instead (drain). Ops
/// with seq >= owned_from are owned: their results go to `sink`, their first
/// failure to `*status`.
std::chrono::steady_clock::duration send_queue(client& c, uint64_t owned_from,
                                               result_sink sink, cudaError_t* status,
                                               bool note_full) {
  std::chrono::steady_clock::duration waited{};
  if (c.queue->ops_size() == 0)
    return waited;
  if (!c.window.has_room()) {
    auto begin = std::chrono::steady_clock::now();
    while (!c.window.has_room() && c.state == cudaSuccess)
      reconcile_oldest(c);
    waited = std::chrono::steady_clock::now() - begin;
    if (note_full) {
      note_wait("window_full", waited);
      count_wait(c, waited);
    }
  }
  if (c.state != cudaSuccess)
    return waited;
  auto first = c.queue->ops(0).seq();
  auto last = c.queue->ops(c.queue->ops_size() - 1).seq();
  auto id = c.window.sent(first, last, owned_from);
  if (!id) {
    lose(c, caf::to_string(id.error()));
    return waited;
  }
  actors::pb<proto::OpBatch> batch;
  std::swap(batch, c.queue);
  batch->set_session(c.opened.session());
  batch->set_session_secret(c.opened.secret());
  batch->set_replied_through(c.replied_through);
  batch->set_client_waits(c.waits);
  batch->set_client_wait_ns(c.wait_ns);
  c.queued_bytes = 0;
  c.last_sent = std::chrono::steady_clock::now();
  // Kept (a reference, not a copy) until its reply is reconciled: a
  // reconnect sends it again.
  auto msg = caf::make_message(std::move(batch));
  auto handle = (*c.self)->request(untyped_server(c), caf::duration{c.cfg.request_timeout}, msg);
  c.flights.push_back({*id, std::move(handle), std::move(msg), last, std::move(sink), status,
                       owned_from});
  return waited;
}

/// Sends the queue and waits for every batch in flight; the wait, with
/// `waited` before it (the call's wait for room in the window), counts once
/// under `reason` in the wait report.
cudaError_t drain(client& c, std::string_view reason,
                  std::chrono::steady_clock::duration waited = {}) {
  waited += send_queue(c, 0, {}, nullptr, false);
  if (c.flights.empty() && waited.count() == 0)
    return c.state;
  auto begin = std::chrono::steady_clock::now();
  while (!c.flights.empty() && c.state == cudaSuccess)
    reconcile_oldest(c);
  waited += std::chrono::steady_clock::now() - begin;
  if (reason == c.last_op)
    note_wait(reason, c.op_before_last, waited);
  else
    note_wait(reason, waited);
  count_wait(c, waited);
  return c.state;
}

/// The op's name in the wire schema (e.g. "memcpy_dtoh"); lives as long as
/// the process.
std::string_view op_name(const proto::Op& op) {
  const auto* field = proto::Op::descriptor()->FindFieldByNumber(static_cast<int>(op.kind_case()));
  return field != nullptr ? std::string_view{field->name()} : std::string_view{"op"};
}

/// Bytes an op puts on the wire: its own encoding, and for a device-to-host
/// copy the bytes its result brings back. What bounds a batch (and so one
/// message either way) to about max_batch_bytes: every op counts, bulk ones
/// (chunk uploads, copies, images) for what they carry.
size_t payload_bytes(const proto::Op& op) {
  size_t out = op.ByteSizeLong();
  switch (op.kind_case()) {
    case proto::Op::kMemcpyDtoh:
      return out + op.memcpy_dtoh().size();
    case proto::Op::kMemcpy2D:
      if (op.memcpy_2d().kind() == proto::Memcpy2D::DTOH)
        return out + op.memcpy_2d().width() * op.memcpy_2d().height();
      return out;
    default:
      return out;
  }
}

/// Set while this thread sends the dirty pages of host mirrors: those
/// uploads write what the host holds, so they leave the mirrors current.
thread_local bool uploading_mirrors = false;

/// Appends `op` to the queue under the next seq and returns that seq.
uint64_t enqueue(client& c, proto::Op&& op) {
  if (!uploading_mirrors)
    mirror_note_op(op);
  auto seq = c.next_seq++;
  op.set_seq(seq);
  // Capture rules (capture_state.hpp), judged on the app's calling thread:
  // the executor judges flagged ops as the app's driver would, against the
  // captures named here. Lazy module loads are Gleam's own work.
  if (op.kind_case() != proto::Op::kModuleLoad)
    for (auto origin : thread_prohibited_by()) {
      op.set_capture_checked(true);
      op.add_prohibited_by(origin);
    }
  if (c.queue->ops_size() == 0)
    c.first_queued = std::chrono::steady_clock::now();
  c.op_before_last = c.last_op;
  c.last_op = op_name(op);
  c.idle_stream.reset();
  c.queued_bytes += payload_bytes(op);
  *c.queue->add_ops() = std::move(op);
  return seq;
}

/// Reconciles the batches whose replies are in the mailbox already, without
/// waiting for any other.
void collect_replies(client& c) {
  while (!c.flights.empty() && c.state == cudaSuccess && !(*c.self)->mailbox().empty())
    reconcile_oldest(c);
}

/// How often the flusher looks for replies while the window is full.
constexpr auto full_window_poll = std::chrono::microseconds{50};

/// Sends a queue that waited flush_delay, so that async work reaches the
/// GPU while the app computes on the host. With the window full it does not
/// wait for a reply holding the client: the queue keeps gathering the app's
/// ops (one larger batch) until a reply makes room, so that a link whose
/// round trip spans more than max_pending_batch flushes costs the app no
/// wait; only a queue at its bounds (max_batch_ops, max_batch_bytes) waits
/// for room, in the app's call.
void flusher_loop(client* c, std::mutex* mutex) {
  std::unique_lock<std::mutex> lock{*mutex};
  while (!c->stopping) {
    if (c->queue->ops_size() == 0 || c->state != cudaSuccess) {
      c->wake.wait(lock);
      continue;
    }
    auto now = std::chrono::steady_clock::now();
    auto due = c->first_queued + c->flush_delay;
    if (now < due) {
      c->wake.wait_until(lock, due);
      continue;
    }
    try {
      if (!c->window.has_room())
        collect_replies(*c);
      if (!c->window.has_room()) {
        c->wake.wait_until(lock, now + full_window_poll);
        continue;
      }
      send_queue(*c, 0, {}, nullptr);
    } catch (...) {
      // Out of memory while sending: the next synchronizing call retries.
      c->first_queued = std::chrono::steady_clock::now();
    }
  }
}

} // namespace

void report_unsupported(const char* name, const char* reason) noexcept {
  // Every unsupported call fails with cudaErrorNotSupported (the generated
  // stubs return it; the last error is recorded here).
  thread_last_error = cudaErrorNotSupported;
  static std::mutex mutex;
  static std::set<std::string> reported;
  try {
    std::lock_guard<std::mutex> guard{mutex};
    if (reported.insert(name).second)
      std::fprintf(stderr, "gleam: %s is not supported: %s\n", name, reason);
  } catch (...) {
    std::fprintf(stderr, "gleam: %s is not supported\n", name);
  }
}

cudaError_t record(cudaError_t x) noexcept {
  // cudaErrorNotReady (queries) is a status, not an error: CUDA leaves the
  // last error alone.
  if (x != cudaSuccess && x != cudaErrorNotReady) {
    thread_last_error = x;
    if (is_sticky(x)) {
      int expected = cudaSuccess;
      process_sticky.compare_exchange_strong(expected, static_cast<int>(x));
    }
  }
  return x;
}

cudaError_t last_error(bool clear) noexcept {
  auto x = thread_last_error;
  if (clear)
    thread_last_error = cudaSuccess;
  // An async op's error reconciled since: it is the last error now.
  if (x == cudaSuccess) {
    try {
      std::lock_guard<std::mutex> guard{*client_mutex};
      if (the_client != nullptr) {
        auto d = clear ? the_client->window.take_deferred() : the_client->window.peek_deferred();
        if (d != 0)
          x = to_cuda_error(d);
      }
    } catch (...) {
      x = cudaErrorUnknown;
    }
  }
  if (auto s = sticky_error(); s != cudaSuccess)
    return s;
  return x;
}

cudaError_t sticky_error() noexcept {
  return static_cast<cudaError_t>(process_sticky.load());
}

cudaError_t connect() noexcept {
  try {
    std::lock_guard<std::mutex> guard{*client_mutex};
    return get_client().state;
  } catch (...) {
    return cudaErrorNoDevice;
  }
}

bool connected() noexcept {
  std::lock_guard<std::mutex> guard{*client_mutex};
  return the_client != nullptr && the_client->state == cudaSuccess;
}

const proto::SessionOpened& session() {
  return the_client->opened;
}

namespace {

/// Sends the dirty pages of host mirrors (interpose/mirror.hpp) ahead of
/// the op about to be queued, each upload an op of its own so that bulk
/// stays in bounded batches; their errors arrive like any async op's.
void upload_mirrors() {
  if (!mirrors_active() || uploading_mirrors)
    return;
  uploading_mirrors = true;
  internal_ops internal;
  std::vector<proto::Op> ops;
  while (mirror_next_upload(ops)) {
    for (auto& op : ops)
      static_cast<void>(submit(std::move(op))); // errors: deferred, as for any async op
    ops.clear();
  }
  uploading_mirrors = false;
}

/// Declared before a function's client lock: once the lock is released,
/// host mirrors learn that a round trip completed.
struct round_trip_end {
  bool armed = true;
  ~round_trip_end() {
    if (armed)
      mirror_after_round_trip();
  }
};

} // namespace

/// The stream whose work is complete once `op` returned: a device-to-host
/// copy of at least one byte (the server waits for its stream before it
/// answers) or a stream synchronize.
std::optional<uint64_t> stream_completed_by(const proto::Op& op);

/// After a drained call whose last op was `completes`' stream-completing op:
/// that stream is idle until the next op is queued.
void note_completion(client& c, std::optional<uint64_t> completes, cudaError_t status) {
  if (status == cudaSuccess && completes && c.queue->ops_size() == 0 && c.flights.empty())
    c.idle_stream = completes;
}

std::optional<uint64_t> stream_completed_by(const proto::Op& op) {
  switch (op.kind_case()) {
    case proto::Op::kMemcpyDtoh:
      if (op.memcpy_dtoh().size() > 0)
        return op.memcpy_dtoh().stream();
      return std::nullopt;
    case proto::Op::kStreamSynchronize:
      return op.stream_synchronize().stream();
    default:
      return std::nullopt;
  }
}

cudaError_t run_ops(std::vector<proto::Op>& ops,
                    std::vector<proto::OpResult>* results) {
  upload_mirrors();
  round_trip_end end;
  std::lock_guard<std::mutex> guard{*client_mutex};
  auto& c = get_client();
  if (c.state != cudaSuccess)
    return c.state;
  if (results != nullptr)
    results->clear();
  if (ops.empty())
    return cudaSuccess;
  auto reason = op_name(ops.back());
  auto completes = stream_completed_by(ops.back());
  uint64_t owned_from = 0;
  for (auto& op : ops) {
    auto seq = enqueue(c, std::move(op));
    if (owned_from == 0)
      owned_from = seq;
  }
  ops.clear();
  result_sink sink;
  if (results != nullptr)
    sink = [results](proto::OpResult& r) { results->push_back(std::move(r)); };
  cudaError_t status = cudaSuccess;
  auto waited = send_queue(c, owned_from, std::move(sink), &status, false);
  if (auto err = drain(c, reason, waited); err != cudaSuccess)
    return err;
  note_completion(c, completes, status);
  return status;
}

cudaError_t run_op(proto::Op op, proto::OpResult* result) {
  std::vector<proto::Op> ops;
  ops.push_back(std::move(op));
  std::vector<proto::OpResult> results;
  auto err = run_ops(ops, &results);
  if (result != nullptr && !results.empty())
    *result = std::move(results.front());
  return err;
}

cudaError_t submit(proto::Op op) {
  upload_mirrors();
  round_trip_end end{false};
  std::lock_guard<std::mutex> guard{*client_mutex};
  auto& c = get_client();
  if (c.state != cudaSuccess)
    return c.state;
  if (!c.async) {
    end.armed = true;
    cudaError_t status = cudaSuccess;
    auto reason = op_name(op);
    auto seq = enqueue(c, std::move(op));
    auto waited = send_queue(c, seq, {}, &status, false);
    if (auto err = drain(c, reason, waited); err != cudaSuccess)
      return err;
    return status;
  }
  // A batch stays within max_batch_bytes unless one op alone is larger: a
  // message that takes longer than the connection timeout to cross the
  // link loses the connection.
  if (c.queue->ops_size() > 0 && c.queued_bytes + payload_bytes(op) > max_batch_bytes)
    send_queue(c, 0, {}, nullptr);
  enqueue(c, std::move(op));
  // The first op after a quiet flush_delay leaves at once: the GPU starts on
  // it one flush_delay earlier (a decode step's first kernel after its token
  // read-back), and the ops behind it gather for the timer as before.
  auto quiet = c.queue->ops_size() == 1 && c.window.has_room()
               && std::chrono::steady_clock::now() - c.last_sent >= c.flush_delay;
  if (quiet || c.queue->ops_size() >= max_batch_ops || c.queued_bytes >= max_batch_bytes)
    send_queue(c, 0, {}, nullptr);
  else if (c.queue->ops_size() == 1)
    c.wake.notify_one(); // the flusher times this queue (sync calls send theirs at once)
  return c.state;
}

bool legacy_capture_conflict(cudaStream_t stream) {
  auto h = wire_stream(stream);
  if ((h != 0 && h != 1) || !captures().any())
    return false;
  // The legacy stream depends on every blocking stream (the built-in ones
  // included).
  auto& r = reg();
  std::lock_guard<std::recursive_mutex> guard{r.mutex};
  return captures().any_stream([&](uint64_t s) {
    if (s <= 2)
      return true;
    auto i = r.streams.find(s);
    return i != r.streams.end() && (i->second.first & cudaStreamNonBlocking) == 0;
  });
}

cudaError_t submit_on(cudaStream_t stream, proto::Op op) {
  if (legacy_capture_conflict(stream))
    return deliver_deferred(run_op(std::move(op)));
  return submit(std::move(op));
}

cudaError_t run_pipelined(size_t count, const std::function<proto::Op(size_t)>& make,
                          const result_sink& sink) {
  upload_mirrors();
  round_trip_end end;
  std::lock_guard<std::mutex> guard{*client_mutex};
  auto& c = get_client();
  if (c.state != cudaSuccess)
    return c.state;
  cudaError_t status = cudaSuccess;
  std::string_view reason = "pipelined";
  std::chrono::steady_clock::duration waited{};
  std::optional<uint64_t> completes;
  for (size_t i = 0; i < count && status == cudaSuccess && c.state == cudaSuccess; ++i) {
    auto op = make(i);
    reason = op_name(op);
    completes = stream_completed_by(op);
    auto seq = enqueue(c, std::move(op));
    waited += send_queue(c, seq, sink, &status, false);
  }
  if (auto err = drain(c, reason, waited); err != cudaSuccess)
    return err;
  note_completion(c, completes, status);
  return status;
}

cudaError_t flush() {
  upload_mirrors();
  round_trip_end end;
  std::lock_guard<std::mutex> guard{*client_mutex};
  auto& c = get_client();
  if (c.state != cudaSuccess)
    return c.state;
  return drain(c, "flush");
}

cudaError_t deliver_deferred(cudaError_t own) noexcept {
  if (own != cudaSuccess)
    return own;
  try {
    std::lock_guard<std::mutex> guard{*client_mutex};
    if (the_client == nullptr)
      return own;
    std::string detail;
    if (auto d = the_client->window.take_deferred(&detail); d != 0) {
      log(log_level::info, "an earlier async op failed: {} ({})", d, detail);
      return to_cuda_error(d);
    }
  } catch (...) {
    return cudaErrorUnknown;
  }
  return own;
}

void set_wait_flags(unsigned flags) noexcept {
  wait_blocking = (flags & cudaDeviceScheduleMask) == cudaDeviceScheduleBlockingSync;
}

bool async_enabled() noexcept {
  try {
    std::lock_guard<std::mutex> guard{*client_mutex};
    return get_client().async;
  } catch (...) {
    return false;
  }
}

registry& reg() {
  static auto* r = new registry;
  return *r;
}

void forget_server_state(module_record& m) noexcept {
  if (m.image == nullptr)
    return; // an unparsable fatbin keeps its load error
  m.handle = 0;
  m.loaded = false;
  m.load_error = cudaSuccess;
  for (auto& f : m.functions) {
    f->found = false;
    f->params.clear();
    f->attributes.clear();
  }
  for (auto& v : m.variables) {
    v->found = false;
    v->dptr = 0;
  }
}

cudaError_t load_module(module_record& m) {
  if (m.loaded)
    return m.load_error;
  proto::Op op;
  auto* load = op.mutable_module_load();
  if (m.handle == 0)
    m.handle = next_handle();
  load->set_module(m.handle);
  for (const auto& f : m.functions)
    load->add_functions(f->name);
  for (const auto& v : m.variables)
    load->add_variables(v->name);
  proto::OpResult result;
  auto err = load_module_cached(std::move(op), m.image, m.image_size, &result);
  if (err == cudaErrorNoDevice || err == cudaErrorDevicesUnavailable)
    return err;
  m.loaded = true;
  m.load_error = err;
  if (err != cudaSuccess) {
    log(log_level::warning, "loading a fatbin of {} bytes failed: {}",
        m.image_size, result.error());
    return err;
  }
  const auto& loaded = result.module();
  for (const auto& fi : loaded.functions())
    for (auto& f : m.functions)
      if (f->name == fi.name()) {
        f->found = fi.found();
        f->params.assign(fi.params().begin(), fi.params().end());
        for (const auto& [k, v] : fi.attributes())
          f->attributes[k] = v;
      }
  for (const auto& vi : loaded.variables())
    for (auto& v : m.variables)
      if (v->name == vi.name()) {
        v->found = vi.found();
        v->dptr = vi.dptr();
        if (vi.size() != 0)
          v->size = vi.size();
      }
  return cudaSuccess;
}

cudaError_t resolve_function(const void* host, function_record** out) {
  auto& r = reg();
  std::lock_guard<std::recursive_mutex> guard{r.mutex};
  auto i = r.functions.find(host);
  if (i == r.functions.end())
    return cudaErrorInvalidDeviceFunction;
  auto* f = i->second;
  if (auto err = load_module(*f->module); err != cudaSuccess)
    return err;
  if (!f->found)
    return cudaErrorInvalidDeviceFunction;
  *out = f;
  return cudaSuccess;
}

cudaError_t resolve_variable(const void* host, variable_record** out) {
  auto& r = reg();
  std::lock_guard<std::recursive_mutex> guard{r.mutex};
  auto i = r.variables.find(host);
  if (i == r.variables.end())
    return cudaErrorInvalidSymbol;
  if (auto err = load_module(*i->second->module); err != cudaSuccess)
    return err;
  if (!i->second->found)
    return cudaErrorInvalidSymbol;
  *out = i->second;
  return cudaSuccess;
}

cudaError_t symbol_end(const void* symbol, size_t offset, size_t count, cudaMemcpyKind kind,
                       bool to_symbol, void** out) {
  auto host_side = to_symbol ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
  if (kind != host_side && kind != cudaMemcpyDeviceToDevice && kind != cudaMemcpyDefault)
    return cudaErrorInvalidMemcpyDirection;
  variable_record* v = nullptr;
  if (auto err = resolve_variable(symbol, &v); err != cudaSuccess)
    return err;
  if (offset > v->size || count > v->size - offset)
    return cudaErrorInvalidValue;
  *out = reinterpret_cast<void*>(static_cast<uintptr_t>(v->dptr + offset));
  return cudaSuccess;
}

pointer_kind classify(const void* p) noexcept {
  auto& r = reg();
  std::lock_guard<std::recursive_mutex> guard{r.mutex};
  auto addr = reinterpret_cast<uintptr_t>(p);
  auto i = r.allocations.upper_bound(addr);
  if (i != r.allocations.begin()) {
    --i;
    if (addr >= i->first && addr < i->first + std::max<uint64_t>(i->second, 1))
      return pointer_kind::device;
  }
  // The device's virtual address ranges, mapped or not (interpose/vmm.hpp).
  if (vmm_locate(addr) != vmm_place::outside)
    return pointer_kind::device;
  auto h = r.host_ranges.upper_bound(addr);
  if (h != r.host_ranges.begin()) {
    --h;
    if (addr >= h->first && addr < h->first + h->second.size)
      return pointer_kind::host_pinned;
  }
  return pointer_kind::host_pageable;
}

namespace {

/// Bulk copies travel in chunks of at most this many bytes, one batch each,
/// pipelined under the window (DESIGN.md: bounded bulk).
constexpr size_t max_chunk = max_message_payload;

} // namespace

bool fits_allocation(const void* p, size_t count) {
  auto& r = reg();
  std::lock_guard<std::recursive_mutex> guard{r.mutex};
  auto addr = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p));
  // Adjacent read-write mappings are one range; a reserved range without
  // a mapping, or a mapping without access, holds nothing a copy may touch.
  switch (vmm_locate(addr)) {
    case vmm_place::mapped:
      return count <= vmm_read_write_span(addr);
    case vmm_place::reserved:
      return false;
    case vmm_place::outside:
      break;
  }
  auto i = r.allocations.upper_bound(addr);
  if (i == r.allocations.begin())
    return true;
  --i;
  if (addr >= i->first + i->second)
    return true;
  return count <= i->first + i->second - addr;
}

cudaMemcpyKind effective_kind(const void* dst, const void* src, cudaMemcpyKind kind) {
  if (kind == cudaMemcpyDefault) {
    bool d = classify(dst) == pointer_kind::device;
    bool s = classify(src) == pointer_kind::device;
    return d ? (s ? cudaMemcpyDeviceToDevice : cudaMemcpyHostToDevice)
             : (s ? cudaMemcpyDeviceToHost : cudaMemcpyHostToHost);
  }
  auto unified = [](const void* p) {
    auto m = mirror_at_host(p);
    return m && m->refresh == mirror_refresh::lazy;
  };
  if (kind != cudaMemcpyHostToDevice && kind != cudaMemcpyDeviceToHost
      && kind != cudaMemcpyHostToHost)
    return kind;
  bool d = kind == cudaMemcpyHostToDevice || unified(dst);
  bool s = kind == cudaMemcpyDeviceToHost || unified(src);
  return d ? (s ? cudaMemcpyDeviceToDevice : cudaMemcpyHostToDevice)
           : (s ? cudaMemcpyDeviceToHost : cudaMemcpyHostToHost);
}

cudaError_t copy(void* dst, const void* src, size_t count, cudaMemcpyKind kind,
                 cudaStream_t stream, bool async) {
  if (count == 0)
    return cudaSuccess;
  kind = effective_kind(dst, src, kind);
  auto s = wire_stream(stream);
  if (kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice)
    if (!fits_allocation(src, count))
      return cudaErrorInvalidValue;
  if (kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice)
    if (!fits_allocation(dst, count))
      return cudaErrorInvalidValue;
  // Captured between device and host memory: nodes that carry the bytes
  // across at every replay (interpose/host_copies.hpp).
  if (async && (kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToHost)
      && captures().status(s) != cudaStreamCaptureStatusNone)
    return capture_host_copy(stream, dst, count, src, count, count, 1, kind);
  switch (kind) {
    case cudaMemcpyHostToHost:
      if (async && captures().status(s) != cudaStreamCaptureStatusNone) {
        // A host-to-host node would run on the server, not on this memory.
        report_unsupported("cudaMemcpyAsync host-to-host during capture",
                           "copies of host memory cannot be captured through "
                           "gleam; copy outside the captured region");
        captures().invalidate(s);
        return cudaErrorStreamCaptureUnsupported;
      }
      if (async) {
        internal_ops internal;
        if (auto err = sync_stream(stream); err != cudaSuccess)
          return err;
      }
      std::memmove(dst, src, count);
      return cudaSuccess;
    case cudaMemcpyHostToDevice: {
      if (count >= cached_upload_threshold()) { // the weight cache: interpose/upload.hpp
        auto err = cached_upload(dst, src, count, stream, async);
        return async ? err : deliver_deferred(err);
      }
      auto chunks = (count + max_chunk - 1) / max_chunk;
      auto make = [&](size_t i) {
        auto off = i * max_chunk;
        auto n = std::min(max_chunk, count - off);
        proto::Op op;
        auto* m = op.mutable_memcpy_htod();
        m->set_dst(reinterpret_cast<uintptr_t>(dst) + off);
        // The bytes are copied here: the app may reuse its buffer at once.
        m->set_data(static_cast<const char*>(src) + off, n);
        m->set_stream(s);
        m->set_async(async);
        return op;
      };
      if (async) {
        for (size_t i = 0; i < chunks; ++i)
          if (auto err = submit_on(stream, make(i)); err != cudaSuccess)
            return err;
        return cudaSuccess;
      }
      return deliver_deferred(run_pipelined(chunks, make, {}));
    }
    case cudaMemcpyDeviceToHost: {
      auto chunks = (count + max_chunk - 1) / max_chunk;
      size_t next = 0;
      bool short_reply = false;
      auto make = [&](size_t i) {
        auto off = i * max_chunk;
        proto::Op op;
        auto* m = op.mutable_memcpy_dtoh();
        m->set_src(reinterpret_cast<uintptr_t>(src) + off);
        m->set_size(std::min(max_chunk, count - off));
        m->set_stream(s);
        m->set_async(async);
        return op;
      };
      auto sink = [&](proto::OpResult& r) {
        auto off = next++ * max_chunk;
        if (r.status() != 0)
          return;
        auto n = std::min(max_chunk, count - off);
        if (r.data().size() != n) {
          short_reply = true;
          return;
        }
        std::memcpy(static_cast<char*>(dst) + off, r.data().data(), n);
      };
      auto err = run_pipelined(chunks, make, sink);
      if (err == cudaSuccess && short_reply)
        err = cudaErrorUnknown;
      return async ? err : deliver_deferred(err);
    }
    case cudaMemcpyDeviceToDevice: {
      proto::Op op;
      auto* m = op.mutable_memcpy_dtod();
      m->set_dst(reinterpret_cast<uintptr_t>(dst));
      m->set_src(reinterpret_cast<uintptr_t>(src));
      m->set_size(count);
      m->set_stream(s);
      m->set_async(async);
      if (async)
        return submit_on(stream, std::move(op));
      return deliver_deferred(run_op(std::move(op)));
    }
    default:
      return cudaErrorInvalidMemcpyDirection;
  }
}

int device_attribute(int attr, int fallback) {
  const auto& opened = session();
  auto dev = reg().device;
  if (dev < 0 || dev >= opened.devices_size())
    return fallback;
  const auto& attrs = opened.devices(dev).attributes();
  auto i = attrs.find(attr);
  return i != attrs.end() ? i->second : fallback;
}

cudaError_t known_stream(cudaStream_t stream) {
  auto h = wire_stream(stream);
  if (h <= 2)
    return cudaSuccess;
  auto& r = reg();
  std::lock_guard<std::recursive_mutex> guard{r.mutex};
  return r.streams.count(h) != 0 ? cudaSuccess : cudaErrorInvalidResourceHandle;
}

cudaError_t sync_stream(cudaStream_t stream) {
  {
    std::lock_guard<std::mutex> guard{*client_mutex};
    if (the_client != nullptr && the_client->state == cudaSuccess
        && the_client->idle_stream == wire_stream(stream)
        && the_client->queue->ops_size() == 0 && the_client->flights.empty()) {
      return cudaSuccess;
    }
  }
  proto::Op op;
  op.mutable_stream_synchronize()->set_stream(wire_stream(stream));
  return deliver_deferred(run_op(std::move(op)));
}

namespace {

/// GLEAM_CHECK_NO_DRIVER=1: fail the process at exit if the real driver got
/// loaded (the interposer must stand in for it entirely).
__attribute__((destructor)) void check_no_driver() {
  const char* v = std::getenv("GLEAM_CHECK_NO_DRIVER");
  if (v == nullptr || std::strcmp(v, "1") != 0)
    return;
  // Our own libcuda.so.1 lies in driver/ next to this library; any other libcuda.so*
  // mapped into the process is the vendor's.
  std::string ours;
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&check_no_driver), &info) != 0
      && info.dli_fname != nullptr) {
    char resolved[PATH_MAX];
    if (::realpath(info.dli_fname, resolved) != nullptr) {
      ours = resolved;
      ours = ours.substr(0, ours.rfind('/') + 1) + "driver/libcuda.so.1";
    }
  }
  std::ifstream maps{"/proc/self/maps"};
  std::string line;
  while (std::getline(maps, line)) {
    if (line.find("/libcuda.so") == std::string::npos)
      continue;
    auto path = line.substr(line.find('/'));
    char resolved[PATH_MAX];
    if (!ours.empty() && ::realpath(path.c_str(), resolved) != nullptr && ours == resolved)
      continue;
    std::fprintf(stderr, "gleam: the real CUDA driver was loaded into this process (%s)\n",
                 path.c_str());
    std::fflush(stderr);
    ::_exit(97);
  }
}

} // namespace

} // namespace gleam::interpose
