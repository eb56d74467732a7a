#include "cache_store/chunk_info.hpp"

#include <chrono>

namespace gleam::cache_store {

std::string to_string(tier_kind x) {
  switch (x) {
    case tier_kind::gpu: return "gpu";
    case tier_kind::host: return "host";
    case tier_kind::disk: return "disk";
  }
  return "tier(" + std::to_string(static_cast<int>(x)) + ")";
}

bool may_serve(const chunk_key& key, const chunk_info& info, const std::string& tenant) {
  return key.kind != chunk_key::algo::xxh3_128 || info.tenants.count(tenant) != 0;
}

uint64_t now_ns() {
  using namespace std::chrono;
  return static_cast<uint64_t>(
    duration_cast<nanoseconds>(system_clock::now().time_since_epoch()).count());
}

} // namespace gleam::cache_store
