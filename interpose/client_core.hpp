#pragma once

// The client's core, shared by the files of libgleam_interpose's runtime
// (internal: not part of the interposer's interface, interpose/runtime.hpp):
// the client and its connection (connection.cpp), the batcher and its
// window (batcher.cpp), errors, registry and memory policy (runtime.cpp).

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include <caf/all.hpp>

#include "actors/interfaces.hpp"
#include "actors/log.hpp"
#include "actors/multiplexer_loop.hpp"
#include "config/client_config.hpp"
#include "consistency/pending_window.hpp"
#include "interpose/error_map.hpp"
#include "interpose/message_size.hpp"
#include "interpose/runtime.hpp"

namespace gleam::interpose::core {

using actors::log;
using actors::log_level;

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

inline bool sticky_status(int32_t status) {
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
  /// The stream of the last op queued when that op copies host bytes to
  /// the device (whose bytes travel in the op): PyTorch's blocking upload
  /// from pageable memory is such a copy and then a synchronize of its
  /// stream, which upload_is_tail lets pass without a round trip.
  std::optional<uint64_t> upload_tail;
  /// Set once the session launched a graph: its host nodes and copies to
  /// host memory act on the app's memory while the device runs it, so
  /// every synchronize of this session waits for the server.
  bool graph_launched = false;
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

/// The process's client (null before the first call that needs the server
/// and after the exit handler). Guarded by client_mutex.
extern client* the_client;
/// Set once the exit handler closed the session. Guarded by client_mutex.
extern bool exited;
extern std::mutex* client_mutex;
extern std::once_flag* atfork_once;
/// The first sticky error of the process, once one happened.
extern std::atomic<int> process_sticky;
/// Set by cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync): waits sleep.
extern std::atomic<bool> wait_blocking;
/// Set while this thread sends the dirty pages of host mirrors.
extern thread_local bool uploading_mirrors;

// --- connection.cpp -----------------------------------------------------------

/// "host:pid" of this app: sessions and placement requests name it so.
std::string client_id();
/// The client, connecting if needed. Call with client_mutex held.
client& get_client();
/// Marks the session lost: every later call fails with
/// cudaErrorDevicesUnavailable.
void lose(client& c, const std::string& why);
/// Opens a new connection and resumes the session; false with `why`.
bool reconnect(client& c, std::string& why);
/// Waits for the reply to `f` (see connection.cpp).
bool await_reply(client& c, const flight& f, proto::BatchReply& reply, std::string& why,
                 bool& refused);
/// `c.server` untyped: batches travel as a kept caf::message.
caf::actor untyped_server(const client& c);
std::string render(client& c, const caf::error& e);

// --- batcher.cpp -----------------------------------------------------------------

/// Waits for the oldest batch in flight and reconciles its reply.
void reconcile_oldest(client& c);
void count_wait(client& c, std::chrono::steady_clock::duration waited);
/// Sends the queued ops as one batch (waiting for room first); returns how
/// long it waited for room.
std::chrono::steady_clock::duration send_queue(client& c, uint64_t owned_from,
                                               result_sink sink, cudaError_t* status,
                                               bool note_full = true);
/// Sends the queue and waits for every batch in flight.
cudaError_t drain(client& c, std::string_view reason,
                  std::chrono::steady_clock::duration waited = {});
/// The op's name in the wire schema; lives as long as the process.
std::string_view op_name(const proto::Op& op);
/// Appends `op` to the queue under the next seq and returns that seq.
uint64_t enqueue(client& c, proto::Op&& op);
/// Reconciles the batches whose replies are in the mailbox already.
void collect_replies(client& c);
/// Sends queued ops once they waited the flush delay (the flusher thread).
void flusher_loop(client* c, std::mutex* mutex);

} // namespace gleam::interpose::core
