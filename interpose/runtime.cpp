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

namespace core {

std::atomic<int> process_sticky{cudaSuccess};

} // namespace core

using namespace core;

namespace {

thread_local cudaError_t thread_last_error = cudaSuccess;

} // namespace

void log_unsupported_once(const char* name, const char* reason) noexcept {
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

void report_unsupported(const char* name, const char* reason) noexcept {
  // Every unsupported call fails with cudaErrorNotSupported (the generated
  // stubs return it; the last error is recorded here).
  thread_last_error = cudaErrorNotSupported;
  log_unsupported_once(name, reason);
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

bool stream_known_idle(cudaStream_t stream) noexcept {
  std::lock_guard<std::mutex> guard{*client_mutex};
  return the_client != nullptr && the_client->state == cudaSuccess
         && the_client->idle_stream == wire_stream(stream)
         && the_client->queue->ops_size() == 0 && the_client->flights.empty();
}

bool upload_is_tail(cudaStream_t stream) noexcept {
  if (mirrors_active())
    return false;
  std::lock_guard<std::mutex> guard{*client_mutex};
  const auto* c = the_client;
  return c != nullptr && c->state == cudaSuccess && c->async && !c->graph_launched
         && c->upload_tail == wire_stream(stream);
}

cudaError_t sync_stream(cudaStream_t stream) {
  if (stream_known_idle(stream))
    return cudaSuccess;
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
