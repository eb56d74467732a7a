#include "cache_store/chunker.hpp"

#include <algorithm>

namespace gleam::cache_store {

chunk_plan plan_chunks(size_t total, size_t threshold, size_t chunk_size) {
  chunk_plan result;
  if (total == 0 || chunk_size == 0 || total < threshold)
    return result;
  result.chunked = true;
  result.chunk_size = chunk_size;
  result.chunks.reserve((total + chunk_size - 1) / chunk_size);
  for (size_t offset = 0; offset < total; offset += chunk_size)
    result.chunks.push_back({offset, std::min(chunk_size, total - offset)});
  return result;
}

} // namespace gleam::cache_store
