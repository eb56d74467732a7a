#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include <caf/expected.hpp>

#include "config/tls_config.hpp"

namespace gleam::config {

/// How a client (the interposer inside an app) reaches Gleam. Built from an
/// optional config file (GLEAM_CONFIG or `gleam-run --config`) overridden by
/// environment variables, so an app needs no file at all.
struct client_config {
  /// Direct GPU server "HOST:PORT" (GLEAM_SERVER, [client] server); when set,
  /// the scheduler is not asked.
  std::string server_host;
  uint16_t server_port = 0;
  uint32_t server_gpu = 0; // GLEAM_GPU, [client] gpu
  /// Scheduler "HOST:PORT" (GLEAM_SCHEDULER, [client] scheduler); default
  /// 127.0.0.1:4750, the embedded all-in-one node.
  std::string scheduler_host = "127.0.0.1";
  uint16_t scheduler_port = 4750;
  bool async = true;            // GLEAM_ASYNC=on|off, [client] async
  bool cache = true;            // GLEAM_CACHE=on|off, [client] cache
  /// Host-to-device copies of at least this many bytes go through the
  /// weight cache (GLEAM_CACHE_THRESHOLD, [client] cache-threshold).
  uint64_t cache_threshold = uint64_t{1} << 20;
  /// Chunk size of cached uploads, bytes, 4 KiB..16 MiB
  /// (GLEAM_CACHE_CHUNK, [client] cache-chunk).
  uint64_t cache_chunk = uint64_t{16} << 20;
  /// Key cached uploads by SHA-256 instead of XXH3-128, so that other
  /// tenants of the server may share them (GLEAM_CACHE_HASH=sha256|xxh3,
  /// [client] cache-hash).
  bool cache_sha256 = false;
  /// Whether cached uploads' misses travel compressed (byte-grouped zstd,
  /// wire/byte_codec.hpp): "auto" where it is faster on the measured link,
  /// "on", "off" (GLEAM_COMPRESS, [client] compress).
  std::string compress = "auto";
  /// Largest slab of device memory the client carves cudaMalloc's from
  /// without a round trip (interpose/slab_pool.hpp); 0: every cudaMalloc
  /// asks the server (GLEAM_ALLOC_SLAB, [client] alloc-slab).
  uint64_t alloc_slab = uint64_t{1} << 30;
  /// [client] max-pending-batch: op batches in flight at once, at most
  /// max_pending_batch_limit (a server keeps the replies of that many
  /// unconfirmed batches, to answer them again after a reconnect:
  /// consistency::replay_log).
  uint32_t max_pending_batch = 8;
  static constexpr uint32_t max_pending_batch_limit = 16;
  /// How long the client's network thread polls for the next event after
  /// one instead of sleeping; an app thread waiting for a reply polls for up
  /// to 10x this before it sleeps (unless the app asked
  /// cudaDeviceScheduleBlockingSync). 0 = nothing polls, every wait sleeps.
  /// GLEAM_POLL, [client] poll (actors/multiplexer_loop.hpp).
  std::chrono::microseconds poll{2000};
  std::chrono::milliseconds connect_timeout{5000}; // [client] connect-timeout
  std::chrono::milliseconds request_timeout{120000}; // [client] request-timeout
  /// How long the client tries to get its session back after losing the
  /// server's connection (a Wi-Fi drop); 0 = fail at once. Below gleamd's
  /// default [gpu_server] session-grace of 30 s. [client] reconnect-for
  std::chrono::milliseconds reconnect_for{20000};
  std::string task_signature;   // GLEAM_TASK, [client] task
  std::string log_level = "warning"; // GLEAM_LOG, [client] log-level
  /// GLEAM_TOKEN, [client] auth-token: sent in OpenSession; "" = none.
  std::string auth_token;
  /// [tls] section, overridden by GLEAM_TLS=on|off, GLEAM_TLS_CERT,
  /// GLEAM_TLS_KEY, GLEAM_TLS_CA.
  tls_config tls;
};

/// Reads the client config: the file named by GLEAM_CONFIG (if any), then
/// environment overrides. Errors name the file or variable and the problem.
[[nodiscard]] caf::expected<client_config> load_client_config();

/// Same, from explicit inputs (for tests): file text ("" = none) and a
/// lookup for environment variables.
[[nodiscard]] caf::expected<client_config>
parse_client_config(const std::string& text, const std::string& origin,
                    const char* (*getenv_fn)(const char*));

} // namespace gleam::config
