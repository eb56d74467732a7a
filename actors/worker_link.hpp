#pragma once

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <caf/actor.hpp>
#include <caf/expected.hpp>

#include "actors/proto/control.pb.h"

namespace gleam::actors {

/// Length-prefixed protobuf messages over a stream socket (the worker
/// control channel: a 4-byte little-endian length, then the encoding).
/// `write_frame` writes all of `msg`; `read_frame` reads one message of at
/// most `limit` bytes. Both return false on a closed or failed socket (or
/// an oversized or unparsable frame) and retry on EINTR.
bool write_frame(int fd, const google::protobuf::Message& msg);
bool read_frame(int fd, google::protobuf::Message& msg, uint32_t limit = 64u << 20);

/// Exit status of a worker process whose op ran longer than
/// [gpu_server] max-op-seconds (it ends itself).
constexpr int worker_exit_op_timeout = 70;

/// What ended a worker process, in words, from waitpid's status
/// ("exited with status 3", "was killed by signal 9 (Killed)", "ended
/// itself: an op ran longer than [gpu_server] max-op-seconds").
std::string describe_worker_exit(int status);

/// One worker process of a GPU server's supervisor (isolation = process)
/// and the thread that talks to it over a socket pair.
///
/// `start` spawns `exe --worker --config-file=CONFIG --worker-gpu=GPU
/// --worker-first-session=N` with the socket on fd 3 (and the tenants' memory
/// table on fd 4, `--worker-ledger-fd=4`, when there is one) and the worker's key in
/// GLEAM_WORKER_KEY (not on its command line). The thread then sends
/// `owner`, as plain messages:
///   (worker_ready_atom, pid, port)           once the worker listens;
///   (worker_reply_atom, pid, id, reply)      for each `ask`, in order
///                                            (reply: an encoded WorkerReply);
///   (worker_notice_atom, pid, reply)        for each frame the worker sends
///                                            unasked (WorkerReply.notice);
///   (worker_exit_atom, pid, status, text)    once the process ended and was
///                                            reaped (waitpid status, and
///                                            describe_worker_exit of it).
/// A worker that does not say it listens within `ready_within` is killed.
/// Requests still queued when the worker ends get no reply: the exit
/// message says they never will.
///
/// Threading: `ask`, `kill` and `terminate` may be called from any thread.
/// The destructor kills a worker that still runs and joins the thread.
class worker_link {
public:
  struct options {
    std::string exe;          // the gleamd binary (/proc/self/exe)
    std::string config_path;  // the node's config file
    int gpu = 0;              // device ordinal the worker serves
    uint64_t first_session = 1;
    std::string key;          // the worker's key (hex)
    /// The GPU's tenants' memory table (executor/memory_ledger.hpp), which
    /// the worker inherits as fd 4 (--worker-ledger-fd=4); -1: none.
    int ledger_fd = -1;
    std::chrono::milliseconds ready_within{60000};
  };

  [[nodiscard]] static caf::expected<std::unique_ptr<worker_link>> start(const options& opts,
                                                                         caf::actor owner);

  ~worker_link();
  worker_link(const worker_link&) = delete;
  worker_link& operator=(const worker_link&) = delete;

  pid_t pid() const noexcept {
    return pid_;
  }

  /// Queues `req`; its reply comes to the owner as worker_reply_atom with `id`.
  void ask(uint64_t id, proto::WorkerRequest req);

  /// SIGKILL: the worker ends at once, its session with it.
  void kill() noexcept;

  /// SIGTERM: the worker stops in order (its session ends).
  void terminate() noexcept;

private:
  worker_link() = default;
  void run();
  bool wait_readable(std::chrono::milliseconds within);

  pid_t pid_ = -1;
  int fd_ = -1;
  int wake_[2] = {-1, -1};
  caf::actor owner_;
  std::chrono::milliseconds ready_within_{60000};
  std::mutex mtx_;
  std::deque<std::pair<uint64_t, proto::WorkerRequest>> queue_;
  bool stopping_ = false;
  std::thread thread_;
};

} // namespace gleam::actors
