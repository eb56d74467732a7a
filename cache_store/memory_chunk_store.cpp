#include "cache_store/memory_chunk_store.hpp"

#include <cstring>

#include "cache_store/error.hpp"

namespace gleam::cache_store {

namespace {

caf::error not_found(const chunk_key& key) {
  return make_error(error_code::not_found,
                    "no chunk " + key.to_string()
                      + " in the memory store; send its bytes first");
}

} // namespace

memory_chunk_store::memory_chunk_store() = default;

memory_chunk_store::~memory_chunk_store() = default;

std::string memory_chunk_store::name() const {
  return "memory";
}

bool memory_chunk_store::contains(const chunk_key& key) {
  std::lock_guard<std::mutex> guard{mtx_};
  return index_.find(key) != nullptr;
}

std::vector<size_t> memory_chunk_store::missing(const std::vector<chunk_key>& keys) {
  std::vector<size_t> result;
  std::lock_guard<std::mutex> guard{mtx_};
  auto now = now_ns();
  for (size_t i = 0; i < keys.size(); ++i) {
    if (index_.find(keys[i]) == nullptr) {
      ++misses_;
      result.push_back(i);
    } else {
      ++hits_;
      index_.touch(keys[i], now);
    }
  }
  return result;
}

caf::error memory_chunk_store::put(const chunk_key& key, const void* data, size_t size,
                                   const tenant_set& tenants) {
  if (auto err = verify_content(key, data, size))
    return err;
  auto bytes = std::make_shared<std::vector<uint8_t>>(size);
  if (size > 0)
    std::memcpy(bytes->data(), data, size);
  std::lock_guard<std::mutex> guard{mtx_};
  auto now = now_ns();
  if (auto* info = index_.find(key)) {
    if (adds_tenants(*info, tenants)) {
      if (key.kind == chunk_key::algo::xxh3_128 && *blobs_.at(key) != *bytes)
        return collision_error(key);
      info->tenants.insert(tenants.begin(), tenants.end());
    }
    index_.touch(key, now);
    return {};
  }
  chunk_info info;
  info.size = size;
  info.tiers = tier_bit(tier_kind::host);
  info.last_use_ns = now;
  info.tenants = tenants;
  index_.upsert(key, info);
  blobs_[key] = std::move(bytes);
  return {};
}

caf::error memory_chunk_store::add_tenants(const chunk_key& key, const tenant_set& tenants) {
  std::lock_guard<std::mutex> guard{mtx_};
  auto info = index_.find(key);
  if (info == nullptr)
    return not_found(key);
  info->tenants.insert(tenants.begin(), tenants.end());
  return {};
}

caf::expected<memory_chunk_store::buffer>
memory_chunk_store::lookup(const chunk_key& key) {
  std::lock_guard<std::mutex> guard{mtx_};
  auto i = blobs_.find(key);
  if (i == blobs_.end()) {
    ++misses_;
    return not_found(key);
  }
  ++hits_;
  index_.touch(key, now_ns());
  return i->second;
}

caf::expected<std::vector<uint8_t>> memory_chunk_store::get(const chunk_key& key) {
  auto buf = lookup(key);
  if (!buf)
    return std::move(buf.error());
  return **buf;
}

caf::expected<size_t> memory_chunk_store::get_into(const chunk_key& key,
                                                   void* dst, size_t capacity) {
  auto buf = lookup(key);
  if (!buf)
    return std::move(buf.error());
  const auto& bytes = **buf;
  if (bytes.size() > capacity)
    return make_error(error_code::buffer_too_small,
                      "chunk " + key.to_string() + " has "
                        + std::to_string(bytes.size())
                        + " bytes but the buffer holds only "
                        + std::to_string(capacity)
                        + "; pass a buffer of at least the chunk's size");
  if (!bytes.empty())
    std::memcpy(dst, bytes.data(), bytes.size());
  return bytes.size();
}

caf::error memory_chunk_store::erase(const chunk_key& key) {
  std::lock_guard<std::mutex> guard{mtx_};
  auto info = index_.find(key);
  if (info == nullptr)
    return not_found(key);
  if (info->refcount > 0)
    return make_error(error_code::in_use,
                      "chunk " + key.to_string() + " has "
                        + std::to_string(info->refcount)
                        + " holders; unref it before erasing");
  index_.erase(key);
  blobs_.erase(key);
  return {};
}

caf::expected<chunk_info> memory_chunk_store::entry_info(const chunk_key& key) {
  std::lock_guard<std::mutex> guard{mtx_};
  auto info = index_.find(key);
  if (info == nullptr)
    return not_found(key);
  return *info;
}

caf::error memory_chunk_store::mark_verified(const chunk_key& key) {
  std::lock_guard<std::mutex> guard{mtx_};
  auto info = index_.find(key);
  if (info == nullptr)
    return not_found(key);
  info->verified = true;
  return {};
}

caf::error memory_chunk_store::ref(const chunk_key& key) {
  std::lock_guard<std::mutex> guard{mtx_};
  auto info = index_.find(key);
  if (info == nullptr)
    return not_found(key);
  ++info->refcount;
  index_.touch(key, now_ns());
  return {};
}

caf::error memory_chunk_store::unref(const chunk_key& key) {
  std::lock_guard<std::mutex> guard{mtx_};
  auto info = index_.find(key);
  if (info == nullptr)
    return not_found(key);
  if (info->refcount == 0)
    return make_error(error_code::refcount_underflow,
                      "unref of chunk " + key.to_string()
                        + " which has no holders; pair every unref with a ref");
  --info->refcount;
  return {};
}

std::vector<listed_chunk> memory_chunk_store::list(size_t limit) {
  std::lock_guard<std::mutex> guard{mtx_};
  return index_.list(limit);
}

store_stats memory_chunk_store::stats() {
  std::lock_guard<std::mutex> guard{mtx_};
  store_stats result;
  result.entries = index_.size();
  result.bytes = index_.bytes();
  result.tier_bytes[static_cast<size_t>(tier_kind::host)] = index_.bytes();
  result.hits = hits_;
  result.misses = misses_;
  return result;
}

caf::expected<evict_result> memory_chunk_store::evict_to(uint64_t capacity) {
  std::lock_guard<std::mutex> guard{mtx_};
  evict_result result;
  for (const auto& key : index_.victims(capacity)) {
    result.entries += 1;
    result.bytes += index_.find(key)->size;
    index_.erase(key);
    blobs_.erase(key);
  }
  result.remaining_bytes = index_.bytes();
  return result;
}

caf::error memory_chunk_store::clear() {
  std::lock_guard<std::mutex> guard{mtx_};
  index_.clear();
  blobs_.clear();
  return {};
}

} // namespace gleam::cache_store
