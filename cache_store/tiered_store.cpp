#include "cache_store/tiered_store.hpp"

#include <algorithm>
#include <cstring>

#include "cache_store/chunk_store.hpp"
#include "cache_store/error.hpp"

namespace gleam::cache_store {

namespace {

constexpr std::array<tier_kind, tier_count> all_tiers{
  tier_kind::gpu, tier_kind::host, tier_kind::disk};

bool holds(const chunk_info& info, tier_kind t) {
  return (info.tiers & tier_bit(t)) != 0;
}

} // namespace

caf::expected<std::unique_ptr<tiered_store>>
tiered_store::make(std::vector<std::unique_ptr<tier>> tiers) {
  std::unique_ptr<tiered_store> result{new tiered_store};
  for (auto& t : tiers) {
    if (!t)
      return make_error(error_code::invalid_argument,
                        "a tiered store was given a null tier; pass only "
                        "configured tiers");
    auto i = idx(t->kind());
    if (result->tiers_[i])
      return make_error(error_code::invalid_argument,
                        "a tiered store was given two "
                          + to_string(t->kind()) + " tiers (" + t->name()
                          + " and " + result->tiers_[i]->name()
                          + "); configure at most one per kind");
    result->tiers_[i] = std::move(t);
  }
  std::lock_guard<std::mutex> guard{result->mtx_};
  for (auto t : all_tiers) {
    auto& tp = result->tiers_[idx(t)];
    if (!tp)
      continue;
    for (const auto& item : tp->contents()) {
      auto& e = result->index_[item.key];
      if (e.info.tiers == 0) {
        e.info = item.info;
        e.info.tiers = 0;
        e.info.refcount = 0;
      }
      e.info.verified = e.info.verified || item.info.verified;
      e.info.tenants.insert(item.info.tenants.begin(), item.info.tenants.end());
      e.info.tiers |= tier_bit(t);
      e.pos[idx(t)] = result->lru_[idx(t)].insert(result->lru_[idx(t)].end(),
                                                  item.key);
    }
    if (auto err = result->make_room(t, 0, nullptr))
      return err;
  }
  return result;
}

tiered_store::~tiered_store() = default;

caf::error tiered_store::add_tier(std::unique_ptr<tier> t) {
  if (!t)
    return make_error(error_code::invalid_argument, "add_tier was given no tier");
  std::lock_guard<std::mutex> guard{mtx_};
  auto k = t->kind();
  if (tiers_[idx(k)])
    return make_error(error_code::invalid_argument,
                      "the store already has a " + to_string(k) + " tier ("
                        + tiers_[idx(k)]->name() + "); add at most one per kind");
  tiers_[idx(k)] = std::move(t);
  for (const auto& item : tiers_[idx(k)]->contents()) {
    auto& e = index_[item.key];
    if (e.info.tiers == 0) {
      e.info = item.info;
      e.info.tiers = 0;
      e.info.refcount = 0;
    }
    e.info.tenants.insert(item.info.tenants.begin(), item.info.tenants.end());
    e.info.tiers |= tier_bit(k);
    e.pos[idx(k)] = lru_[idx(k)].insert(lru_[idx(k)].end(), item.key);
  }
  return make_room(k, 0, nullptr);
}

tier* tiered_store::find_tier(tier_kind x) {
  return tiers_[idx(x)].get();
}

caf::error tiered_store::not_found(const chunk_key& key) const {
  return make_error(error_code::not_found,
                    "no tier of the cache holds chunk " + key.to_string()
                      + "; send its bytes first");
}

void tiered_store::touch(entry& e) {
  e.info.last_use_ns = now_ns();
  for (auto t : all_tiers)
    if (holds(e.info, t))
      lru_[idx(t)].splice(lru_[idx(t)].end(), lru_[idx(t)], e.pos[idx(t)]);
}

caf::error tiered_store::drop_from_tier(const chunk_key& key, tier_kind t) {
  auto i = index_.find(key);
  if (i == index_.end() || !holds(i->second.info, t))
    return {};
  auto err = tiers_[idx(t)]->erase(key);
  if (err && !is(err, error_code::not_found))
    return err;
  lru_[idx(t)].erase(i->second.pos[idx(t)]);
  i->second.info.tiers &= static_cast<uint8_t>(~tier_bit(t));
  if (i->second.info.tiers == 0)
    index_.erase(i);
  return {};
}

caf::error tiered_store::make_room(tier_kind t, uint64_t need,
                                   const chunk_key* keep) {
  auto& tp = *tiers_[idx(t)];
  auto& order = lru_[idx(t)];
  while (tp.used() + need > tp.capacity()) {
    const chunk_key* victim = nullptr;
    for (bool verified_pass : {false, true}) {
      for (const auto& key : order) {
        if (keep != nullptr && key == *keep)
          continue;
        const auto& info = index_.at(key).info;
        if (info.refcount == 0 && info.verified == verified_pass) {
          victim = &key;
          break;
        }
      }
      if (victim != nullptr)
        break;
    }
    if (victim == nullptr)
      return make_error(error_code::no_space,
                        "tier " + tp.name() + " cannot free "
                          + std::to_string(need) + " bytes: "
                          + std::to_string(tp.used()) + " of "
                          + std::to_string(tp.capacity())
                          + " bytes are held by referenced chunks; "
                            "raise its capacity or release references");
    auto victim_key = *victim;
    if (auto err = drop_from_tier(victim_key, t))
      return err;
  }
  return {};
}

caf::error tiered_store::add_to_tier(const chunk_key& key, entry& e,
                                     tier_kind t, const void* data,
                                     size_t size, bool device_src) {
  if (holds(e.info, t))
    return {};
  auto& tp = *tiers_[idx(t)];
  if (size > tp.capacity())
    return make_error(error_code::no_space,
                      "chunk " + key.to_string() + " of " + std::to_string(size)
                        + " bytes exceeds the capacity of tier " + tp.name()
                        + " (" + std::to_string(tp.capacity()) + " bytes)");
  if (auto err = make_room(t, size, &key))
    return err;
  auto* device = device_src ? dynamic_cast<device_tier*>(&tp) : nullptr;
  if (device_src && device == nullptr)
    return make_error(error_code::invalid_argument,
                      "tier " + tp.name() + " cannot take chunk " + key.to_string()
                        + " from device memory");
  if (auto err = device != nullptr ? device->put_from_device(key, data, size)
                                   : tp.put_for(key, data, size, e.info.tenants))
    return err;
  e.pos[idx(t)] = lru_[idx(t)].insert(lru_[idx(t)].end(), key);
  e.info.tiers |= tier_bit(t);
  if (e.info.verified)
    return tp.mark_verified(key);
  return {};
}

caf::error tiered_store::add_to_tiers(const chunk_key& key, entry& e, uint8_t tiers,
                                      const void* data, size_t size) {
  caf::error last;
  for (auto t : all_tiers) {
    if ((tiers & tier_bit(t)) == 0 || !tiers_[idx(t)])
      continue;
    if (auto err = add_to_tier(key, e, t, data, size))
      last = std::move(err);
  }
  return last;
}

bool tiered_store::contains(const chunk_key& key) {
  std::lock_guard<std::mutex> guard{mtx_};
  return index_.count(key) > 0;
}

std::vector<size_t> tiered_store::missing(const std::vector<chunk_key>& keys) {
  std::vector<size_t> result;
  std::lock_guard<std::mutex> guard{mtx_};
  for (size_t i = 0; i < keys.size(); ++i) {
    auto j = index_.find(keys[i]);
    if (j == index_.end()) {
      ++misses_;
      result.push_back(i);
    } else {
      ++hits_;
      touch(j->second);
    }
  }
  return result;
}

caf::error tiered_store::put(const chunk_key& key, const void* data,
                             size_t size, uint8_t tiers, const std::string& tenant) {
  // Bytes for a held XXH3 chunk are compared with the held ones instead
  // (join): equal bytes need no hash, other bytes are refused either way.
  bool hashed = false;
  if (key.kind != chunk_key::algo::xxh3_128 || !contains(key)) {
    if (auto err = verify_content(key, data, size))
      return err;
    hashed = true;
  }
  std::lock_guard<std::mutex> guard{mtx_};
  auto [i, added] = index_.try_emplace(key);
  auto& e = i->second;
  if (added) {
    // Dropped since the look above: hashed now (rare).
    if (!hashed)
      if (auto err = verify_content(key, data, size)) {
        index_.erase(i);
        return err;
      }
    e.info.size = size;
    e.info.tenants = tenant_set{tenant};
  } else if (auto err = join(key, e, data, size, tenant)) {
    return err;
  }
  auto last = add_to_tiers(key, e, tiers, data, size);
  if (e.info.tiers == 0) {
    index_.erase(key);
    if (last)
      return last;
    return make_error(error_code::no_space,
                      "no configured tier was requested for chunk "
                        + key.to_string() + "; request at least one of "
                          "the configured tiers");
  }
  touch(e);
  return {};
}

caf::error tiered_store::join(const chunk_key& key, entry& e, const void* data, size_t size,
                              const std::string& tenant) {
  // Under an XXH3 key, only equal bytes: they may go on to other tiers
  // (the caller's GPU-tier copy of them, too), and their tenant joins.
  if (key.kind == chunk_key::algo::xxh3_128) {
    std::vector<uint8_t> held;
    if (auto err = read_locked(key, e, held))
      return err;
    if (held.size() != size || (size > 0 && std::memcmp(held.data(), data, size) != 0))
      return collision_error(key);
  }
  if (e.info.tenants.count(tenant) != 0)
    return {};
  tenant_set joining{tenant};
  for (auto t : all_tiers)
    if (holds(e.info, t))
      if (auto err = tiers_[idx(t)]->add_tenants(key, joining))
        return err;
  e.info.tenants.insert(tenant);
  return {};
}

caf::error tiered_store::read_locked(const chunk_key& key, const entry& e,
                                     std::vector<uint8_t>& out) {
  out.resize(e.info.size);
  caf::error last = not_found(key);
  for (auto t : {tier_kind::host, tier_kind::disk, tier_kind::gpu}) {
    if (!tiers_[idx(t)] || !holds(e.info, t))
      continue;
    auto n = tiers_[idx(t)]->read(key, out.data(), out.size());
    if (n)
      return {};
    last = std::move(n.error());
  }
  return last;
}

bool tiered_store::may_serve(const chunk_key& key, const std::string& tenant) {
  std::lock_guard<std::mutex> guard{mtx_};
  auto i = index_.find(key);
  return i != index_.end() && cache_store::may_serve(key, i->second.info, tenant);
}

caf::error tiered_store::extend(const chunk_key& key, const void* data, size_t size,
                                uint8_t tiers) {
  if (auto err = verify_content(key, data, size))
    return err;
  std::lock_guard<std::mutex> guard{mtx_};
  auto i = index_.find(key);
  if (i == index_.end())
    return not_found(key);
  auto& e = i->second;
  return add_to_tiers(key, e, tiers, data, size);
}

caf::error tiered_store::extend_from_device(const chunk_key& key, const void* device_src,
                                            size_t size) {
  std::lock_guard<std::mutex> guard{mtx_};
  auto i = index_.find(key);
  if (i == index_.end())
    return not_found(key);
  if (!tiers_[idx(tier_kind::gpu)])
    return make_error(error_code::invalid_argument,
                      "no GPU tier for chunk " + key.to_string());
  return add_to_tier(key, i->second, tier_kind::gpu, device_src, size, true);
}

uint64_t tiered_store::shed(tier_kind x, uint64_t bytes) {
  std::lock_guard<std::mutex> guard{mtx_};
  auto* t = tiers_[idx(x)].get();
  if (t == nullptr || bytes == 0)
    return 0;
  auto before = t->used();
  auto free_now = t->capacity() > before ? t->capacity() - before : 0;
  auto need = std::min<uint64_t>(t->capacity(), free_now + std::min(bytes, before));
  static_cast<void>(make_room(x, need, nullptr));
  return before - t->used();
}

caf::expected<tier_kind> tiered_store::fill(const chunk_key& key,
                                            const std::vector<tier_kind>& order,
                                            const fill_sink& sink,
                                            const void* device_dst,
                                            const std::string& tenant) {
  std::vector<uint8_t> staging;
  chunk_view src;
  tier_kind served = tier_kind::disk;
  bool promote_later = false;
  {
    std::lock_guard<std::mutex> guard{mtx_};
    auto i = index_.find(key);
    size_t pos = order.size();
    // A chunk that may not serve `tenant` is a miss for it.
    if (i != index_.end() && cache_store::may_serve(key, i->second.info, tenant))
      for (size_t k = 0; k < order.size(); ++k)
        if (tiers_[idx(order[k])] && holds(i->second.info, order[k])) {
          pos = k;
          break;
        }
    if (pos == order.size()) {
      ++misses_;
      return not_found(key);
    }
    ++hits_;
    auto& e = i->second;
    touch(e);
    served = order[pos];
    auto& from = *tiers_[idx(served)];
    // The GPU tier is filled from the destination after the sink.
    for (size_t k = 0; k < pos && device_dst != nullptr; ++k)
      if (order[k] == tier_kind::gpu
          && dynamic_cast<device_tier*>(tiers_[idx(tier_kind::gpu)].get()) != nullptr)
        promote_later = true;
    // Host bytes for promotions and for tiers without addressable memory.
    auto view = from.view(key);
    if (!view || (view->where == tier_kind::gpu && pos > 0)) {
      staging.resize(e.info.size);
      auto n = from.read(key, staging.data(), staging.size());
      if (!n)
        return std::move(n.error());
    }
    const void* host_bytes = staging.empty() && view ? view->data
                                                     : staging.data();
    for (size_t k = 0; k < pos; ++k) {
      auto t = order[k];
      if (!tiers_[idx(t)] || (t == tier_kind::gpu && promote_later))
        continue;
      // Promotion is best effort: a full faster tier leaves the chunk where
      // it is.
      auto err = add_to_tier(key, e, t, host_bytes, e.info.size);
      if (err && !is(err, error_code::no_space))
        return err;
    }
    src = chunk_view{tier_kind::host, staging.data(), staging.size()};
    if (view)
      src = *view;
    for (size_t k = 0; k < pos; ++k) {
      auto t = order[k];
      if (tiers_[idx(t)] && holds(e.info, t))
        if (auto v = tiers_[idx(t)]->view(key)) {
          src = *v;
          break;
        }
    }
    // Pin while the sink copies without the lock.
    ++e.info.refcount;
  }
  auto err = sink(src);
  {
    std::lock_guard<std::mutex> guard{mtx_};
    auto i = index_.find(key);
    if (i != index_.end() && i->second.info.refcount > 0)
      --i->second.info.refcount;
    // Best effort, as above: a full GPU tier leaves the chunk where it is.
    if (!err && promote_later && i != index_.end())
      static_cast<void>(add_to_tier(key, i->second, tier_kind::gpu, device_dst,
                                    i->second.info.size, true));
  }
  if (err)
    return err;
  return served;
}

caf::expected<std::vector<uint8_t>> tiered_store::get(const chunk_key& key) {
  std::lock_guard<std::mutex> guard{mtx_};
  auto i = index_.find(key);
  if (i == index_.end()) {
    ++misses_;
    return not_found(key);
  }
  ++hits_;
  touch(i->second);
  std::vector<uint8_t> result;
  if (auto err = read_locked(key, i->second, result))
    return err;
  return result;
}

caf::error tiered_store::erase(const chunk_key& key) {
  std::lock_guard<std::mutex> guard{mtx_};
  auto i = index_.find(key);
  if (i == index_.end())
    return not_found(key);
  if (i->second.info.refcount > 0)
    return make_error(error_code::in_use,
                      "chunk " + key.to_string() + " has "
                        + std::to_string(i->second.info.refcount)
                        + " holders; unref it before erasing");
  for (auto t : all_tiers)
    if (auto err = drop_from_tier(key, t))
      return err;
  return {};
}

caf::error tiered_store::mark_verified(const chunk_key& key) {
  std::lock_guard<std::mutex> guard{mtx_};
  auto i = index_.find(key);
  if (i == index_.end())
    return not_found(key);
  for (auto t : all_tiers)
    if (holds(i->second.info, t))
      if (auto err = tiers_[idx(t)]->mark_verified(key))
        return err;
  i->second.info.verified = true;
  return {};
}

caf::error tiered_store::ref(const chunk_key& key) {
  std::lock_guard<std::mutex> guard{mtx_};
  auto i = index_.find(key);
  if (i == index_.end())
    return not_found(key);
  ++i->second.info.refcount;
  touch(i->second);
  return {};
}

caf::error tiered_store::unref(const chunk_key& key) {
  std::lock_guard<std::mutex> guard{mtx_};
  auto i = index_.find(key);
  if (i == index_.end())
    return not_found(key);
  if (i->second.info.refcount == 0)
    return make_error(error_code::refcount_underflow,
                      "unref of chunk " + key.to_string()
                        + " which has no holders; pair every unref with a ref");
  --i->second.info.refcount;
  return {};
}

caf::expected<chunk_info> tiered_store::entry_info(const chunk_key& key) {
  std::lock_guard<std::mutex> guard{mtx_};
  auto i = index_.find(key);
  if (i == index_.end())
    return not_found(key);
  return i->second.info;
}

std::vector<chunk_key> tiered_store::tier_contents(tier_kind x) {
  std::lock_guard<std::mutex> guard{mtx_};
  const auto& order = lru_[idx(x)];
  return {order.begin(), order.end()};
}

store_stats tiered_store::stats() {
  std::lock_guard<std::mutex> guard{mtx_};
  store_stats result;
  result.entries = index_.size();
  for (const auto& [key, e] : index_)
    result.bytes += e.info.size;
  for (auto t : all_tiers)
    if (tiers_[idx(t)])
      result.tier_bytes[idx(t)] = tiers_[idx(t)]->used();
  result.hits = hits_;
  result.misses = misses_;
  return result;
}

} // namespace gleam::cache_store
