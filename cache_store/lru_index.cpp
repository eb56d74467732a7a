#include "cache_store/lru_index.hpp"

#include <algorithm>

namespace gleam::cache_store {

chunk_info* lru_index::find(const chunk_key& key) {
  auto i = map_.find(key);
  return i == map_.end() ? nullptr : &i->second.info;
}

const chunk_info* lru_index::find(const chunk_key& key) const {
  auto i = map_.find(key);
  return i == map_.end() ? nullptr : &i->second.info;
}

void lru_index::upsert(const chunk_key& key, const chunk_info& info) {
  auto i = map_.find(key);
  if (i == map_.end()) {
    auto pos = order_.insert(order_.end(), key);
    map_.emplace(key, slot{info, pos});
    bytes_ += info.size;
    return;
  }
  bytes_ -= i->second.info.size;
  bytes_ += info.size;
  i->second.info = info;
  order_.splice(order_.end(), order_, i->second.pos);
}

void lru_index::load(std::vector<listed_chunk> entries) {
  clear();
  std::stable_sort(entries.begin(), entries.end(),
                   [](const listed_chunk& x, const listed_chunk& y) {
                     return x.info.last_use_ns < y.info.last_use_ns;
                   });
  for (auto& entry : entries)
    upsert(entry.key, entry.info);
}

void lru_index::touch(const chunk_key& key, uint64_t now) {
  auto i = map_.find(key);
  if (i == map_.end())
    return;
  i->second.info.last_use_ns = std::max(i->second.info.last_use_ns, now);
  order_.splice(order_.end(), order_, i->second.pos);
}

bool lru_index::erase(const chunk_key& key) {
  auto i = map_.find(key);
  if (i == map_.end())
    return false;
  bytes_ -= i->second.info.size;
  order_.erase(i->second.pos);
  map_.erase(i);
  return true;
}

void lru_index::clear() {
  map_.clear();
  order_.clear();
  bytes_ = 0;
}

std::vector<chunk_key> lru_index::victims(uint64_t capacity) const {
  std::vector<chunk_key> result;
  auto remaining = bytes_;
  for (bool verified_pass : {false, true}) {
    for (const auto& key : order_) {
      if (remaining <= capacity)
        return result;
      const auto& info = map_.at(key).info;
      if (info.refcount > 0 || info.verified != verified_pass)
        continue;
      result.push_back(key);
      remaining -= info.size;
    }
  }
  return result;
}

std::vector<listed_chunk> lru_index::list(size_t limit) const {
  std::vector<listed_chunk> result;
  auto n = limit == 0 ? map_.size() : std::min(limit, map_.size());
  result.reserve(n);
  for (const auto& key : order_) {
    if (result.size() == n)
      break;
    result.push_back({key, map_.at(key).info});
  }
  return result;
}

} // namespace gleam::cache_store
