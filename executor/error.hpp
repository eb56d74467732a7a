#pragma once

#include <cstdint>
#include <string>

#include <caf/atom.hpp>
#include <caf/error.hpp>

namespace gleam::executor {

/// Failures of the executor itself (not of an op: an op's failure is a
/// CUresult in its OpResult). Category atom: "gleam_exec".
enum class error_code : uint8_t {
  /// libcuda.so.1 could not be loaded: this host has no NVIDIA driver.
  no_driver = 1,
  /// The driver lacks an entry point the executor needs (driver too old).
  missing_symbol,
  /// A driver call needed to bring up the device or a session failed.
  driver_call_failed,
  /// The requested device ordinal does not exist on this host.
  no_such_device,
  /// A session id that this executor does not know (closed or expired).
  unknown_session,
  /// The vendor's libcublas.so.13 / libcublasLt.so.13 could not be loaded.
  no_blas_library,
  /// Another vendor library (libcurand.so.10, …) could not be loaded.
  no_vendor_library,
  /// The client speaks another protocol version (wire/protocol.hpp).
  protocol_mismatch,
  /// The CSPRNG could not make a session secret (executor/session_secret.hpp).
  no_secure_random,
  /// The tenants' memory table (executor/memory_ledger.hpp) could not be
  /// made, mapped, or was given rules it cannot hold.
  ledger_failed,
};

/// The CAF error category of this component.
constexpr caf::atom_value error_category = caf::atom("gleam_exec");

/// Human-readable name of `x`, e.g. "no_driver".
std::string to_string(error_code x);

/// Wraps `x` into a caf::error of category "gleam_exec".
caf::error make_error(error_code x);

/// Wraps `x` into a caf::error carrying `detail`, the message a user reads.
caf::error make_error(error_code x, std::string detail);

} // namespace gleam::executor
