#include "cache_store/tier.hpp"

namespace gleam::cache_store {

tier::~tier() = default;

caf::error tier::put_for(const chunk_key& key, const void* data, size_t size,
                         const tenant_set&) {
  return put(key, data, size);
}

caf::error tier::mark_verified(const chunk_key&) {
  return {};
}

caf::error tier::add_tenants(const chunk_key&, const tenant_set&) {
  return {};
}

std::vector<listed_chunk> tier::contents() {
  return {};
}

device_tier::~device_tier() = default;

} // namespace gleam::cache_store
