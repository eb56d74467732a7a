#include "interpose/runtime.hpp"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <new>
#include <set>
#include <thread>

#include <caf/all.hpp>
#include <caf/io/all.hpp>

#include "actors/interfaces.hpp"
#include "actors/log.hpp"
#include "actors/network.hpp"
#include "actors/type_registry.hpp"
#include "config/client_config.hpp"
#include "interpose/error_map.hpp"
#include "interpose/fatbin/fatbin.hpp"

namespace gleam::interpose {

namespace {

using actors::log;
using actors::log_level;

thread_local cudaError_t thread_last_error = cudaSuccess;
std::atomic<int> process_sticky{cudaSuccess};

/// Everything that needs the network. Created at the first call that needs
/// the server, torn down by an atexit handler.
struct client {
  config::client_config cfg;
  /// Referenced by `system` for its whole life.
  std::unique_ptr<caf::actor_system_config> system_config;
  std::unique_ptr<caf::actor_system> system;
  std::unique_ptr<caf::scoped_actor> self;
  actors::gpu_server_actor server;
  caf::actor proxy;
  proto::SessionOpened opened;
  uint64_t next_seq = 1;
  cudaError_t state = cudaSuccess;
};

client* the_client = nullptr;
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
  r.streams.clear();
  r.events.clear();
}

/// Requests to the server in flight through the proxy (issue #10: lost
/// server detection).
struct client_proxy_state {
  /// Promise of each forwarded request, by a proxy-local id.
  std::map<uint64_t, caf::response_promise> pending;
  uint64_t next_id = 0;
  /// Set once the server's down message arrived; every request fails then.
  std::string down_reason;
  static inline const char* name = "gleam.client_proxy";
};

using proxy_ptr = caf::stateful_actor<client_proxy_state>*;

/// Forwards `xs...` to `server` and answers the proxy's sender with the
/// server's Reply, or with an error once the server is down.
template <class Reply, class... Ts>
caf::response_promise forward(proxy_ptr self, const actors::gpu_server_actor& server,
                              std::chrono::milliseconds timeout, Ts&&... xs) {
  auto rp = self->make_response_promise();
  auto& st = self->state;
  if (!st.down_reason.empty()) {
    rp.deliver(caf::make_error(caf::sec::request_receiver_down, st.down_reason));
    return rp;
  }
  auto id = ++st.next_id;
  st.pending.emplace(id, rp);
  auto finish = [self, id](auto x) {
    auto i = self->state.pending.find(id);
    if (i == self->state.pending.end())
      return; // already failed by the down handler
    i->second.deliver(std::move(x));
    self->state.pending.erase(i);
  };
  self->request(server, caf::duration{timeout}, std::forward<Ts>(xs)...)
    .then([finish](Reply& x) { finish(std::move(x)); },
          [finish](caf::error& e) { finish(std::move(e)); });
  return rp;
}

/// The in-app actor that opens the session, so the server monitors it and
/// frees the session when the app goes away. Op batches go through it too:
/// it monitors the server and, the moment CAF reports the server's node
/// down (connection reset, or no heartbeat within
/// middleman.connection-timeout), fails every request in flight instead of
/// leaving it to the request timeout.
caf::behavior client_proxy(proxy_ptr self, actors::gpu_server_actor server,
                           std::chrono::milliseconds timeout) {
  self->monitor(server);
  self->set_down_handler([=](caf::down_msg& dm) {
    auto& st = self->state;
    st.down_reason = "the GPU server went down: " + caf::to_string(dm.reason);
    for (auto& entry : st.pending)
      entry.second.deliver(caf::make_error(caf::sec::request_receiver_down, st.down_reason));
    st.pending.clear();
  });
  return {
    [=](actors::open_atom, actors::pb<proto::OpenSession>& req) {
      return forward<actors::pb<proto::SessionOpened>>(self, server, timeout,
                                                       actors::open_atom::value,
                                                       std::move(req));
    },
    [=](actors::pb<proto::OpBatch>& batch) {
      return forward<actors::pb<proto::BatchReply>>(self, server, timeout, std::move(batch));
    },
  };
}

std::string render(client& c, const caf::error& e) {
  return c.system ? c.system->render(e) : std::string{"error"};
}

void teardown(client* c) {
  if (c->state == cudaSuccess && c->self && c->server) {
    (*c->self)
      ->request(c->server, caf::duration{std::chrono::seconds{1}},
                actors::close_atom::value, c->opened.session())
      .receive([](bool) {}, [](caf::error&) {});
  }
  if (c->proxy)
    caf::anon_send_exit(c->proxy, caf::exit_reason::user_shutdown);
  c->proxy = nullptr;
  c->server = nullptr;
  c->self.reset();
  // Destroying the actor system joins its threads; bound the wait so that a
  // stuck connection never hangs the app's exit.
  auto done = std::make_shared<std::atomic<bool>>(false);
  auto* sys = c->system.release();
  std::thread destroyer{[sys, done] {
    delete sys;
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
  std::lock_guard<std::mutex> guard{*client_mutex};
  auto* c = the_client;
  the_client = nullptr;
  if (c == nullptr)
    return;
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
  // A server whose host vanished (no TCP reset) is down after 2 s of silence;
  // gleamd sends heartbeats every 500 ms.
  sc.set("middleman.heartbeat-interval", caf::timespan{std::chrono::milliseconds{500}});
  sc.set("middleman.connection-timeout", caf::timespan{std::chrono::seconds{2}});
  sc.set("logger.file-verbosity", caf::atom("quiet"));
  sc.set("logger.console-verbosity", caf::atom("quiet"));
  c.system = std::make_unique<caf::actor_system>(sc);
  c.self = std::make_unique<caf::scoped_actor>(*c.system);
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
    req->set_client_id(std::to_string(::getpid()));
    req->set_task_signature(c.cfg.task_signature);
    proto::PlacementReply placed;
    bool got = false;
    self->request(sched, timeout, actors::place_atom::value, req)
      .receive(
        [&](actors::pb<proto::PlacementReply>& r) {
          placed = std::move(r.value);
          got = true;
        },
        [&](caf::error& e) { why = render(c, e); });
    if (!got)
      return unreachable(c, where, "placement failed: " + why);
    if (!placed.ok())
      return unreachable(c, where, "no GPU server: " + placed.error());
    host = placed.data_host();
    port = static_cast<uint16_t>(placed.data_port());
    gpu = placed.gpu_index();
  }
  auto where = host + ":" + std::to_string(port);
  auto node = actors::remote_actor<actors::node_actor>(*c.system, host, port,
                                                       c.cfg.tls.enabled);
  if (!node)
    return unreachable(c, where, render(c, node.error()));
  std::string why;
  self->request(*node, connect_timeout, actors::get_gpu_atom::value, gpu)
    .receive([&](actors::gpu_server_actor& g) { c.server = g; },
             [&](caf::error& e) { why = render(c, e); });
  if (!c.server)
    return unreachable(c, where, "no GPU server " + std::to_string(gpu) + ": " + why);
  c.proxy = c.system->spawn(client_proxy, c.server, c.cfg.request_timeout);
  actors::pb<proto::OpenSession> open;
  char hostname[256] = {};
  ::gethostname(hostname, sizeof(hostname) - 1);
  open->set_client_id(std::string{hostname} + ":" + std::to_string(::getpid()));
  open->set_task_signature(c.cfg.task_signature);
  open->set_protocol_version(1);
  open->set_auth_token(c.cfg.auth_token); // [client] auth-token / GLEAM_TOKEN
  bool opened = false;
  self->request(c.proxy, timeout, actors::open_atom::value, open)
    .receive(
      [&](actors::pb<proto::SessionOpened>& r) {
        c.opened = std::move(r.value);
        opened = true;
      },
      [&](caf::error& e) { why = render(c, e); });
  if (!opened)
    return unreachable(c, where, "opening a session failed: " + why);
  if (c.opened.devices_size() == 0)
    return unreachable(c, where, "the session has no device");
  log(log_level::info, "session {} on {} (GPU {}: {})", c.opened.session(),
      where, gpu, c.opened.devices(0).name());
}

/// The client, connecting if needed. Call with client_mutex held.
client& get_client() {
  if (the_client == nullptr) {
    std::call_once(*atfork_once, [] {
      ::pthread_atfork(nullptr, nullptr, after_fork_in_child);
    });
    auto* c = new client;
    open_connection(*c);
    the_client = c;
    std::atexit(at_exit);
  }
  return *the_client;
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

cudaError_t run_ops(std::vector<proto::Op>& ops,
                    std::vector<proto::OpResult>* results) {
  std::lock_guard<std::mutex> guard{*client_mutex};
  auto& c = get_client();
  if (c.state != cudaSuccess)
    return c.state;
  actors::pb<proto::OpBatch> batch;
  batch->set_session(c.opened.session());
  auto count = static_cast<int>(ops.size());
  for (auto& op : ops) {
    op.set_seq(c.next_seq++);
    *batch->add_ops() = std::move(op);
  }
  ops.clear();
  proto::BatchReply reply;
  std::string why;
  bool got = false;
  (*c.self)
    ->request(c.proxy, caf::duration{c.cfg.request_timeout}, std::move(batch)) // via the proxy: fails fast when the server goes down
    .receive(
      [&](actors::pb<proto::BatchReply>& r) {
        reply = std::move(r.value);
        got = true;
      },
      [&](caf::error& e) { why = render(c, e); });
  if (!got) {
    std::fprintf(stderr,
                 "gleam: lost the Gleam session %llu (%s); every further CUDA "
                 "call fails with cudaErrorDevicesUnavailable\n",
                 static_cast<unsigned long long>(c.opened.session()), why.c_str());
    c.state = cudaErrorDevicesUnavailable;
    return c.state;
  }
  cudaError_t first = cudaSuccess;
  for (const auto& r : reply.results()) {
    if (r.status() != 0 && first == cudaSuccess) {
      first = to_cuda_error(r.status());
      log(log_level::info, "op {} failed: {} ({})", r.seq(), r.status(), r.error());
    }
  }
  if (first == cudaSuccess && reply.results_size() < count)
    first = cudaErrorUnknown;
  if (results != nullptr)
    results->assign(reply.results().begin(), reply.results().end());
  return first;
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
  load->set_image(static_cast<const char*>(m.image), m.image_size);
  for (const auto& f : m.functions)
    load->add_functions(f->name);
  for (const auto& v : m.variables)
    load->add_variables(v->name);
  proto::OpResult result;
  auto err = run_op(std::move(op), &result);
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
  auto h = r.host_ranges.upper_bound(addr);
  if (h != r.host_ranges.begin()) {
    --h;
    if (addr >= h->first && addr < h->first + h->second.size)
      return pointer_kind::host_pinned;
  }
  return pointer_kind::host_pageable;
}

namespace {

constexpr size_t max_chunk = size_t{64} << 20;

/// False when `p` lies in one of our allocations but [p, p + count) runs
/// past its end; addresses outside every allocation are left to the server.
bool fits_allocation(const void* p, size_t count) {
  auto& r = reg();
  std::lock_guard<std::recursive_mutex> guard{r.mutex};
  auto addr = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p));
  auto i = r.allocations.upper_bound(addr);
  if (i == r.allocations.begin())
    return true;
  --i;
  if (addr >= i->first + i->second)
    return true;
  return count <= i->first + i->second - addr;
}

} // namespace

cudaError_t copy(void* dst, const void* src, size_t count, cudaMemcpyKind kind,
                 cudaStream_t stream, bool async) {
  if (count == 0)
    return cudaSuccess;
  if (kind == cudaMemcpyDefault) {
    bool d_dev = classify(dst) == pointer_kind::device;
    bool s_dev = classify(src) == pointer_kind::device;
    kind = d_dev ? (s_dev ? cudaMemcpyDeviceToDevice : cudaMemcpyHostToDevice)
                 : (s_dev ? cudaMemcpyDeviceToHost : cudaMemcpyHostToHost);
  }
  auto s = wire_stream(stream);
  if (kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice)
    if (!fits_allocation(src, count))
      return cudaErrorInvalidValue;
  if (kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice)
    if (!fits_allocation(dst, count))
      return cudaErrorInvalidValue;
  switch (kind) {
    case cudaMemcpyHostToHost:
      if (async)
        if (auto err = sync_stream(stream); err != cudaSuccess)
          return err;
      std::memmove(dst, src, count);
      return cudaSuccess;
    case cudaMemcpyHostToDevice: {
      std::vector<proto::Op> ops;
      for (size_t off = 0; off < count; off += max_chunk) {
        auto n = std::min(max_chunk, count - off);
        proto::Op op;
        auto* m = op.mutable_memcpy_htod();
        m->set_dst(reinterpret_cast<uintptr_t>(dst) + off);
        m->set_data(static_cast<const char*>(src) + off, n);
        m->set_stream(s);
        m->set_async(async);
        ops.push_back(std::move(op));
        // One chunk a batch: bulk messages stay within 64 MiB.
        if (auto err = run_ops(ops, nullptr); err != cudaSuccess)
          return err;
      }
      return cudaSuccess;
    }
    case cudaMemcpyDeviceToHost: {
      for (size_t off = 0; off < count; off += max_chunk) {
        auto n = std::min(max_chunk, count - off);
        proto::Op op;
        auto* m = op.mutable_memcpy_dtoh();
        m->set_src(reinterpret_cast<uintptr_t>(src) + off);
        m->set_size(n);
        m->set_stream(s);
        m->set_async(async);
        proto::OpResult result;
        if (auto err = run_op(std::move(op), &result); err != cudaSuccess)
          return err;
        if (result.data().size() != n)
          return cudaErrorUnknown;
        std::memcpy(static_cast<char*>(dst) + off, result.data().data(), n);
      }
      return cudaSuccess;
    }
    case cudaMemcpyDeviceToDevice: {
      proto::Op op;
      auto* m = op.mutable_memcpy_dtod();
      m->set_dst(reinterpret_cast<uintptr_t>(dst));
      m->set_src(reinterpret_cast<uintptr_t>(src));
      m->set_size(count);
      m->set_stream(s);
      m->set_async(async);
      return run_op(std::move(op));
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

cudaError_t sync_stream(cudaStream_t stream) {
  proto::Op op;
  op.mutable_stream_synchronize()->set_stream(wire_stream(stream));
  return run_op(std::move(op));
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
