#pragma once

#include <chrono>
#include <string_view>

namespace gleam::interpose {

/// GLEAM_WAIT_REPORT=1: where the client waited for the server. Every wait
/// (a synchronizing call's round trip, a full window of batches in flight)
/// is counted under its reason, and at exit the counts and the time waited
/// go to stderr, most time first, as
///   gleam wait report: N waits, S s
///   gleam wait    REASON COUNT SECONDS
/// (and the calls answered without one, note_answered_locally)
/// so that an app that is slow over a LAN shows which of its calls make it
/// wait (each costs at least one round trip of the link).
///
/// Thread-safe. Costs nothing when the variable is unset.

/// Whether the report is on (GLEAM_WAIT_REPORT=1, read once).
bool wait_report_enabled() noexcept;

/// Counts one wait of `waited` under `reason` (an op's name, e.g.
/// "memcpy_dtoh", or "window_full").
void note_wait(std::string_view reason, std::chrono::steady_clock::duration waited) noexcept;

/// note_wait, also counted under the op queued just before the waiting one
/// (printed below the reason's line as "gleam wait      after PREVIOUS N S",
/// e.g. stream_synchronize after memcpy_htod), so that the report shows
/// which pattern of the app makes it wait.
void note_wait(std::string_view reason, std::string_view previous,
               std::chrono::steady_clock::duration waited) noexcept;

/// Counts a synchronizing call that returned without a round trip (e.g.
/// "stream_synchronize after an upload"), printed after the waits as
///   gleam local   REASON COUNT
void note_answered_locally(std::string_view reason) noexcept;

} // namespace gleam::interpose
