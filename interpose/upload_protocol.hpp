#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "actors/proto/ops.pb.h"
#include "cache_store/hash.hpp"
#include "interpose/message_size.hpp"
#include "interpose/upload_compression.hpp"

namespace gleam::interpose {

class transfer_progress;

/// Sends ops as one batch and waits: run_ops' contract (fills one result per
/// executed op, returns the first failing op's error).
using op_sender = std::function<cudaError_t(std::vector<proto::Op>& ops,
                                            std::vector<proto::OpResult>* results)>;

/// What one cached upload did.
struct upload_stats {
  /// Chunks of the copy.
  uint64_t chunks = 0;
  /// Chunks (and their bytes) that travelled because the server lacked them.
  uint64_t sent_chunks = 0;
  uint64_t sent_bytes = 0;
  /// What those bytes took on the wire (fewer where they travelled packed).
  uint64_t wire_bytes = 0;
  /// Bytes the server filled from its cache (or a peer shard).
  uint64_t cached_bytes = 0;
  /// Key bytes and message count of the key phase.
  uint64_t key_messages = 0;
  /// Seconds spent hashing on the client.
  double hash_seconds = 0;
  /// Seconds spent waiting for the answers to key messages (the round trip
  /// and the server's fills from its cache).
  double key_seconds = 0;
  /// The server's reason when it refused the copy (empty on success).
  std::string error;
};

/// Most keys in one CacheFill message (about 1.1 MiB of keys).
constexpr size_t max_keys_per_fill = 65536;

/// Most chunk bytes in one batch of CacheUploads; a larger chunk travels in
/// parts of at most this many bytes (ops.proto, CacheUpload).
constexpr uint64_t max_upload_batch_bytes = max_message_payload;

/// The hash-first upload of `count` bytes at `src` to device address `dst`:
/// hashes chunks of `chunk` bytes (with `algo`: XXH3-128 by default,
/// SHA-256 for chunks shared across tenants; on all hardware threads for
/// large copies), sends their keys in CacheFill messages (one for up to
/// max_keys_per_fill chunks), then the chunks the server lacks in
/// CacheUploads of at most max_upload_batch_bytes (a larger chunk in parts),
/// batched up to that many bytes a message; with `compression`, each part
/// packed where it decides so (CacheUpload.codec). `progress` may be null.
/// cudaErrorNotSupported when the server has
/// no cache (the caller then copies plainly); other errors from the server
/// with the reason in `stats->error`.
cudaError_t upload_chunks(const op_sender& send, uint64_t dst, const void* src, size_t count,
                          size_t chunk, uint64_t stream, bool async, upload_stats* stats,
                          transfer_progress* progress,
                          cache_store::chunk_key::algo algo = cache_store::chunk_key::algo::xxh3_128,
                          upload_compression* compression = nullptr);

/// Loads a module key-first: sends `op` (a ModuleLoad without image) with
/// the image's key, and the image itself only when the server answers
/// image_missing: an image larger than max_upload_batch_bytes as image
/// CacheUploads in parts, then the key-only load again; a small one (or one
/// for a server without a cache, or whose parts did not make it) in the
/// load itself. `result` receives the final answer.
cudaError_t load_module_key_first(const op_sender& send, proto::Op op, const void* image,
                                  size_t size, proto::OpResult* result);

} // namespace gleam::interpose
