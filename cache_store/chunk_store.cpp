#include "cache_store/chunk_store.hpp"

#include <algorithm>

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

bool adds_tenants(const chunk_info& info, const tenant_set& tenants) {
  return !std::includes(info.tenants.begin(), info.tenants.end(), tenants.begin(),
                        tenants.end());
}

caf::error collision_error(const chunk_key& key) {
  return make_error(error_code::collision,
                    "the bytes offered as " + key.to_string()
                      + " hash to that key but differ from the bytes stored under it (an "
                        "XXH3 collision); they were not stored and serve nobody. Use "
                        "SHA-256 keys (GLEAM_CACHE_HASH=sha256) for these bytes");
}

} // namespace gleam::cache_store
