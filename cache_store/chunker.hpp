#pragma once

#include <cstddef>
#include <vector>

namespace gleam::cache_store {

/// One chunk of a buffer: `size` bytes starting `offset` bytes into it.
struct chunk_span {
  /// Byte offset of the chunk in the buffer.
  size_t offset = 0;
  /// Length of the chunk in bytes; only the last chunk may be shorter than
  /// the plan's chunk size.
  size_t size = 0;
};

/// How one host-to-device copy is split into cache chunks.
struct chunk_plan {
  /// False when the copy travels whole, uncached (below the threshold).
  bool chunked = false;
  /// Nominal chunk length in bytes (0 when not chunked).
  size_t chunk_size = 0;
  /// The chunks in buffer order, covering the buffer exactly (empty when
  /// not chunked).
  std::vector<chunk_span> chunks;
};

/// Splits a copy of `total` bytes into chunks of `chunk_size` bytes (the last
/// one may be shorter). A copy of fewer than `threshold` bytes, an empty copy
/// and `chunk_size` 0 give a plan that is not chunked. The chunk boundaries
/// are the ones `hash_chunks` uses for the same `chunk_size`.
chunk_plan plan_chunks(size_t total, size_t threshold, size_t chunk_size);

} // namespace gleam::cache_store
