#pragma once

#include <cstdint>
#include <string>

/// The versions client and server compare when a session opens
/// (OpenSession.protocol_version, SessionOpened.protocol_version and
/// driver_version): one clear error naming both sides instead of a
/// desynchronised op stream. Thread-safe, no CUDA calls.
namespace gleam::wire {

/// The version of the op vocabulary (actors/proto/*.proto and the packing
/// of wire/): raised whenever a change makes a message of one side mean
/// something else, or nothing, to the other. Client and server must speak
/// the same one.
inline constexpr uint32_t protocol_version = 4;

/// The CUDA runtime version Gleam's client libraries implement
/// (cudaRuntimeGetVersion): the server's driver must be at least as new.
inline constexpr int32_t cuda_runtime_version = 13000;

/// "13.0" for 13000 (CUDA's major * 1000 + minor * 10).
inline std::string cuda_version_text(int32_t v) {
  return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
}

/// Why a client speaking `client` cannot use a server speaking `server`,
/// and which side to upgrade; empty when they match.
inline std::string protocol_mismatch(uint32_t client, uint32_t server) {
  if (client == server)
    return {};
  return "this client speaks Gleam protocol " + std::to_string(client) + " and the server "
         + std::to_string(server) + ": "
         + (client < server ? "upgrade Gleam on the client (gleam-run and its libraries) to the "
                              "server's release"
                            : "upgrade gleamd on the GPU host to the client's release");
}

} // namespace gleam::wire
