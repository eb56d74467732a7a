#pragma once

#include <chrono>

#include <caf/blocking_actor.hpp>

namespace gleam::actors {

/// A blocking actor whose wait for mail polls its mailbox for `poll` before
/// it sleeps on CAF's condition variable. The wait starts right after a
/// message was handled, so an actor that gets mail more often than every
/// `poll` never sleeps and the thread handing it a message wakes nobody
/// (see multiplexer_loop for what a wake-up costs). 0: never polls.
/// Everything else is caf::blocking_actor: the subclass writes act().
class polling_actor : public caf::blocking_actor {
public:
  polling_actor(caf::actor_config& cfg, std::chrono::microseconds poll)
    : caf::blocking_actor(cfg), poll_(poll) {
  }

  void await_data() override;

  bool await_data(timeout_type timeout) override;

private:
  /// Polls until mail is there (true) or `deadline` passes (false).
  bool poll_until(std::chrono::steady_clock::time_point deadline);

  std::chrono::microseconds poll_;
};

} // namespace gleam::actors
