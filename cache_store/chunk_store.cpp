#include "cache_store/chunk_store.hpp"

#include "cache_store/error.hpp"

namespace gleam::cache_store {

chunk_store::~chunk_store() = default;

caf::error verify_content(const chunk_key& key, const void* data, size_t size) {
  auto actual = hash_chunk(key.kind, data, size);
  if (actual == key)
    return {};
  return make_error(error_code::hash_mismatch,
                    "chunk offered as " + key.to_string() + " ("
                      + std::to_string(size) + " bytes) hashes to "
                      + actual.to_string()
                      + "; nothing was stored, resend the chunk's bytes");
}

} // namespace gleam::cache_store
