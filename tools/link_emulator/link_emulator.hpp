#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include <caf/expected.hpp>

#include "tools/link_emulator/link_spec.hpp"

namespace gleam::tools::link_emulator {

/// What a cut does to the connections crossing the link.
enum class cut_mode : uint8_t {
  /// Hold every byte of every connection until restored, then deliver them;
  /// connections stay open (what a Wi-Fi dropout looks like to TCP).
  hold,
  /// Close (reset) every connection at the cut and refuse new ones (accept
  /// and reset at once) until restored.
  reset,
};

/// Parses "hold" or "reset".
[[nodiscard]] caf::expected<cut_mode> parse_cut_mode(const std::string& text);

/// Configuration of one emulated link. Plain value.
struct emulator_config {
  /// Address to listen on for clients.
  std::string listen_host = "127.0.0.1";
  /// Port to listen on; 0 picks a free one (see link_emulator::port()).
  uint16_t listen_port = 0;
  /// Where every accepted connection is forwarded.
  std::string target_host = "127.0.0.1";
  /// Target port.
  uint16_t target_port = 0;
  /// Shaping of both directions.
  link_spec link;
  /// Mode of scripted cuts and of cuts requested without a mode.
  cut_mode mode = cut_mode::hold;
  /// Scripted cut: time after start at which the link drops.
  std::optional<std::chrono::nanoseconds> cut_at;
  /// Scripted cut: how long it stays down (required with cut_at).
  std::chrono::nanoseconds cut_for{0};
  /// Control socket port on listen_host: -1 disables it, 0 picks a free one.
  /// It accepts lines "cut", "cut 3s", "cut reset", "cut 3s reset",
  /// "restore", "stats" and answers one line each.
  int control_port = -1;
  /// SO_SNDBUF/SO_RCVBUF of every socket, in bytes.
  int socket_buffer_bytes = 4 << 20;
  /// Least time before a deadline at which the loop stops sleeping and
  /// polls, for delay accuracy; it widens to the timer lateness it observes
  /// (up to 300 µs). Costs CPU while bytes are in flight.
  std::chrono::nanoseconds spin{std::chrono::microseconds{80}};
  /// Seed of the jitter and loss draws.
  uint64_t seed = 1;
};

/// Counters of a running emulator; a snapshot.
struct link_stats {
  /// Bytes delivered client to target.
  uint64_t bytes_up = 0;
  /// Bytes delivered target to client.
  uint64_t bytes_down = 0;
  /// Connections accepted (including ones refused during a reset cut).
  uint64_t accepted = 0;
  /// Connections open now.
  uint64_t active = 0;
  /// Cuts so far.
  uint64_t cuts = 0;
  /// Loss stalls drawn so far.
  uint64_t stalls = 0;
  /// True while the link is cut.
  bool cut = false;
  /// CPU time the event loop thread has used, in nanoseconds.
  uint64_t cpu_ns = 0;
};

/// Renders stats as one line: "stats bytes_up=... bytes_down=... ...".
std::string to_string(const link_stats& s);

/// A userspace TCP link emulator: accepts clients on a port, connects each
/// to the target and moves bytes both ways through a shaper (rate, delay,
/// jitter, loss stalls) and a cut switch. One event-loop thread (epoll,
/// timerfd, polling the last few µs before a deadline). Memory per
/// connection is bounded: the loop stops reading from a source while its
/// queue holds more than rate*delay plus a margin.
///
/// Thread safety: run() owns all sockets; cut(), restore(), stop() and
/// stats() may be called from any thread, and cut()/restore()/stop() also
/// from a signal handler.
class link_emulator {
public:
  /// Binds the listen (and control) sockets; fails with socket_failed or
  /// resolve_failed naming the address.
  [[nodiscard]] static caf::expected<std::unique_ptr<link_emulator>>
  create(emulator_config cfg);

  link_emulator(const link_emulator&) = delete;
  link_emulator& operator=(const link_emulator&) = delete;

  /// Stops the loop, joins its thread (if start() made one), closes sockets.
  ~link_emulator();

  /// The bound listen port.
  uint16_t port() const noexcept;

  /// The bound control port, 0 when disabled.
  uint16_t control_port() const noexcept;

  /// Runs the event loop on the calling thread until stop().
  void run();

  /// Runs the event loop on a new thread owned by this object.
  void start();

  /// Asks the loop to stop; returns at once. Async-signal-safe.
  void stop() noexcept;

  /// Cuts the link for `duration` (0 = until restore()) in `mode`.
  /// Async-signal-safe.
  void cut(std::chrono::nanoseconds duration, cut_mode mode) noexcept;

  /// Cuts the link in the configured mode until restore().
  void cut() noexcept;

  /// Restores a cut link. Async-signal-safe.
  void restore() noexcept;

  /// A snapshot of the counters.
  link_stats stats() const;

  /// The event loop's state; defined in link_emulator.cpp.
  struct state;

private:
  explicit link_emulator(std::unique_ptr<state> st);

  std::unique_ptr<state> st_;
  std::thread thread_;
};

} // namespace gleam::tools::link_emulator
