#include "actors/polling_actor.hpp"

#include "actors/multiplexer_loop.hpp"

namespace gleam::actors {

bool polling_actor::poll_until(std::chrono::steady_clock::time_point deadline) {
  // The owner's view of its mailbox: the cache it fetched and the inbox
  // others push to (an atomic read).
  while (mailbox().empty()) {
    if (std::chrono::steady_clock::now() >= deadline)
      return false;
    cpu_relax();
  }
  return true;
}

void polling_actor::await_data() {
  if (poll_.count() > 0 && poll_until(std::chrono::steady_clock::now() + poll_))
    return;
  caf::blocking_actor::await_data();
}

bool polling_actor::await_data(timeout_type timeout) {
  if (poll_.count() > 0) {
    auto left = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      timeout - timeout_type::clock::now());
    if (poll_until(std::chrono::steady_clock::now() + std::min<std::chrono::steady_clock::duration>(left, poll_)))
      return true;
  }
  return caf::blocking_actor::await_data(timeout);
}

} // namespace gleam::actors
