// The batcher: the queue of ops, batches in flight under the pending
// window, reconciliation of their replies, and the entry points that run,
// submit and flush ops (interpose/runtime.hpp).
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
    // Out of memory is the app's to handle, but a quota or tenant rule of
    // the server may be why: its reason is worth a line at the default level.
    if (r.status() == CUDA_ERROR_OUT_OF_MEMORY)
      log(log_level::warning, "out of device memory: {}", r.error());
    else if (r.status() != 0)
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
                  std::chrono::steady_clock::duration waited) {
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

/// The stream of `op` when it copies host bytes carried in the op to the
/// device: once queued, those bytes are Gleam's, and running the copy later
/// changes nothing the app can see on the host.
std::optional<uint64_t> uploaded_stream(const proto::Op& op) {
  switch (op.kind_case()) {
    case proto::Op::kMemcpyHtod:
      return op.memcpy_htod().stream();
    case proto::Op::kMemcpy2D:
      if (op.memcpy_2d().kind() == proto::Memcpy2D::HTOD)
        return op.memcpy_2d().stream();
      return std::nullopt;
    default:
      return std::nullopt;
  }
}

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
  c.upload_tail = uploaded_stream(op);
  if (op.kind_case() == proto::Op::kGraphLaunch)
    c.graph_launched = true;
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

} // namespace core

using namespace core;

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
/// answers), a stream synchronize, or a stream query that found it done.
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
    case proto::Op::kStreamQuery: // only when it answered cudaSuccess
      return op.stream_query().stream();
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

} // namespace gleam::interpose
