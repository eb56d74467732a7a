#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>

#include "executor/host_calls.hpp"

namespace gleam::actors {

/// The server's way back to its clients for host nodes (executor/host_calls.hpp):
/// `call` asks the session's client proxy to run a host function,
/// `(host_call_atom, session, callback, invocation) -> bool`, and waits for
/// its answer. The client runs each invocation once, however often it is
/// asked (a request that timed out is asked again), so a call outlives a
/// slow function and a reconnect: while the session has no client (the
/// link dropped) the call waits for the resumed one, until the session
/// ends or its client stayed unreachable for `grace` (the function is then
/// skipped, logged, and the session is freed as any orphan is).
///
/// The router lives outside the GPU server's mailbox: a GPU server blocked
/// in a stream sync whose stream waits on a host node cannot take the
/// resume of the client it waits for, so a reconnecting client reattaches
/// through the node actor first (reattach). One router per GPU server;
/// thread-safe.
class host_call_router final : public executor::host_call_port {
public:
  /// `retry`: how long one request waits for its answer before the client
  /// is asked again (and whether it is still attached is looked at).
  /// `grace`: how long a call waits for a client that is unreachable.
  host_call_router(caf::actor_system& sys, std::chrono::milliseconds grace,
                   std::chrono::milliseconds retry = std::chrono::milliseconds{500});

  /// Session `session`'s client proxy is `client` from now on (open, and
  /// resume after a reconnect: the GPU server checked the session's secret
  /// before); records `secret`, the session's secret
  /// (SessionOpened.secret), which reattach asks for.
  void attach(uint64_t session, caf::actor client, std::string secret);

  /// attach for a reconnecting client, which only the holder of the
  /// session's secret may do, and only while the session lives: false
  /// otherwise, the same for an unknown session and another secret
  /// (logged). Compared in constant time.
  bool reattach(uint64_t session, const std::string& secret, caf::actor client);

  /// The client of `session` is gone: calls wait for attach or end.
  void detach(uint64_t session);

  void call(uint64_t session, uint64_t callback) override;

  /// `(host_copy_atom, session, copy, offset, to_client, want) -> bytes`
  /// to the session's client, retried like call; a request is idempotent.
  bool copy(uint64_t session, uint64_t copy, uint64_t offset, const std::string& to_client,
            uint64_t want, std::string* from_client) override;

  void end(uint64_t session) override;

  /// Host calls the clients answered, for tests and the console.
  [[nodiscard]] uint64_t answered() const;

private:
  using clock = std::chrono::steady_clock;

  struct entry {
    caf::actor client;
    /// The session's secret, recorded at its first attach.
    std::string secret;
    /// Since when the client cannot be reached (its handle failed, or it
    /// was detached); unset while it answers.
    clock::time_point gone_since{};
    uint64_t next_invocation = 1;
  };

  /// One request to a client: sets `done` once answered (or refused for
  /// good), `lost` when this handle of the client failed.
  using request_fn = std::function<void(caf::scoped_actor& self, const caf::actor& client,
                                        bool& done, bool& lost)>;

  /// Sends `request` to the client of `session` until it is answered,
  /// waiting for a reattach while the client is gone, within grace_ (then
  /// `what` is logged as skipped). True when answered.
  bool deliver(uint64_t session, const char* what, uint64_t id, const request_fn& request);

  /// The handler of a failed request: sets `done` for the client's refusal
  /// (logged, with `what` and `id`), `lost` for anything but a timeout.
  void on_error(const caf::error& e, uint64_t session, const char* what, uint64_t id,
                bool& done, bool& lost);

  /// Marks the client of `session` unreachable (first time: now); true
  /// once it has been so for longer than grace_.
  bool unreachable(uint64_t session);

  caf::actor_system& sys_;
  std::chrono::milliseconds grace_;
  std::chrono::milliseconds retry_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  /// Sessions attached and not ended; a call of any other returns at once.
  std::map<uint64_t, entry> sessions_;
  uint64_t answered_ = 0;
};

} // namespace gleam::actors
