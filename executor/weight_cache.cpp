#include "executor/weight_cache.hpp"

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <thread>
#include <utility>
#include <filesystem>
#include <cstdlib>
#include <map>
#include <set>
#include <unordered_set>

#include <fmt/format.h>

#include "cache_store/bloom.hpp"
#include "cache_store/disk_tier.hpp"
#include "cache_store/error.hpp"
#include "cache_store/rocksdb_chunk_store.hpp"
#include "executor/driver_api.hpp"

namespace gleam::executor {

namespace cs = cache_store;

namespace {

constexpr uint8_t host_bit = cs::tier_bit(cs::tier_kind::host);
constexpr uint8_t disk_bit = cs::tier_bit(cs::tier_kind::disk);

} // namespace

/// The host tier's allocator: pinned memory once a driver is given, malloc
/// before that and whenever pinning fails. Thread-safe.
struct weight_cache::pinning {
  std::mutex mtx;
  std::shared_ptr<driver_api> api;
  std::unordered_set<void*> pinned;
  bool at_exit = false; // leave_memory_at_exit

  void* allocate(size_t size) {
    std::lock_guard<std::mutex> guard{mtx};
    if (api) {
      void* p = nullptr;
      if (api->cuMemHostAlloc(&p, size == 0 ? 1 : size, CU_MEMHOSTALLOC_PORTABLE)
            == CUDA_SUCCESS
          && p != nullptr) {
        pinned.insert(p);
        return p;
      }
    }
    return std::malloc(size == 0 ? 1 : size);
  }

  void deallocate(void* p) {
    std::lock_guard<std::mutex> guard{mtx};
    if (at_exit)
      return;
    if (pinned.erase(p) > 0) {
      static_cast<void>(api->cuMemFreeHost(p)); // fails only after the context is gone
      return;
    }
    std::free(p);
  }
};

/// The background disk writer: keys of accepted uploads, written to the
/// disk tier one by one, off the GPU server's thread.
struct weight_cache::persister {
  std::mutex mtx;
  std::condition_variable work;
  std::condition_variable idle;
  std::deque<cs::chunk_key> keys;
  bool busy = false;
  bool stop = false;
  std::thread worker;

  void push(const cs::chunk_key& key) {
    {
      std::lock_guard<std::mutex> guard{mtx};
      keys.push_back(key);
    }
    work.notify_one();
  }

  /// Runs `write` for every key pushed, until stopped with nothing left.
  void run(const std::function<void(const cs::chunk_key&)>& write) {
    std::unique_lock<std::mutex> lock{mtx};
    for (;;) {
      work.wait(lock, [&] { return stop || !keys.empty(); });
      if (keys.empty())
        return;
      auto key = keys.front();
      keys.pop_front();
      busy = true;
      lock.unlock();
      write(key);
      lock.lock();
      busy = false;
      if (keys.empty())
        idle.notify_all();
    }
  }

  void wait_idle() {
    std::unique_lock<std::mutex> lock{mtx};
    idle.wait(lock, [&] { return keys.empty() && !busy; });
  }
};

weight_cache::~weight_cache() {
  if (!persist_)
    return;
  {
    std::lock_guard<std::mutex> guard{persist_->mtx};
    persist_->stop = true;
  }
  persist_->work.notify_one();
  persist_->worker.join();
}

void weight_cache::persist(const cs::chunk_key& key) {
  auto info = store_->entry_info(key);
  if (!info || (info->tiers & disk_bit) != 0)
    return;
  auto bytes = store_->get(key);
  if (!bytes)
    return; // evicted meanwhile: not cached, nothing to keep
  // Dropped meanwhile (a kernel overwrote it): extend refuses, nothing comes back.
  static_cast<void>(store_->extend(key, bytes->data(), bytes->size(), disk_bit));
}

void weight_cache::wait_persisted() {
  if (persist_)
    persist_->wait_idle();
}

void weight_cache::leave_memory_at_exit() {
  std::lock_guard<std::mutex> guard{pinning_->mtx};
  pinning_->at_exit = true;
}

void weight_cache::use_pinned_memory(std::shared_ptr<driver_api> api) {
  std::lock_guard<std::mutex> guard{pinning_->mtx};
  pinning_->api = std::move(api);
}

caf::expected<std::shared_ptr<weight_cache>> weight_cache::open(const weight_cache_options& opts) {
  auto pin = std::make_shared<pinning>();
  cs::memory_allocator alloc{[pin](size_t n) { return pin->allocate(n); },
                             [pin](void* p, size_t) { pin->deallocate(p); }};
  std::vector<std::unique_ptr<cs::tier>> tiers;
  if (opts.host_capacity > 0)
    tiers.push_back(std::make_unique<cs::host_memory_tier>("host", opts.host_capacity, alloc));
  if (!opts.dir.empty() && opts.disk_capacity > 0) {
    std::error_code ec;
    std::filesystem::create_directories(opts.dir, ec);
    if (ec)
      return cs::make_error(cs::error_code::open_failed,
                            fmt::format("cannot create the cache directory '{}': {}; set "
                                        "[cache] dir to a writable directory",
                                        opts.dir, ec.message()));
    cs::rocksdb_store_options ro;
    ro.path = (std::filesystem::path{opts.dir} / "chunks").string();
    auto db = cs::rocksdb_chunk_store::open(ro);
    if (!db)
      return std::move(db.error());
    tiers.push_back(std::make_unique<cs::disk_tier>(std::move(*db), opts.disk_capacity));
  }
  if (tiers.empty())
    tiers.push_back(std::make_unique<cs::host_memory_tier>("host", uint64_t{1} << 30, alloc));
  auto store = cs::tiered_store::make(std::move(tiers));
  if (!store)
    return std::move(store.error());
  std::shared_ptr<weight_cache> self{new weight_cache};
  self->opts_ = opts;
  self->pinning_ = std::move(pin);
  self->store_ = std::move(*store);
  if (self->store_->find_tier(cs::tier_kind::host) != nullptr
      && self->store_->find_tier(cs::tier_kind::disk) != nullptr) {
    self->persist_ = std::make_unique<persister>();
    auto* raw = self.get();
    self->persist_->worker = std::thread{[raw] {
      raw->persist_->run([raw](const cs::chunk_key& key) { raw->persist(key); });
    }};
  }
  return self;
}

caf::error weight_cache::check(const cs::chunk_key& key, const void* data, size_t size) {
  auto actual = cs::hash_chunk(key.kind, data, size);
  if (actual == key)
    return {};
  ++rejected_;
  return cs::make_error(cs::error_code::hash_mismatch,
                        fmt::format("the uploaded chunk of {} bytes hashes to {}, not to its "
                                    "key {}; nothing was written. The client's memory changed "
                                    "during the upload, or the link corrupts data",
                                    size, actual.to_string(), key.to_string()));
}

void weight_cache::count_refusal(const caf::error& err) {
  if (cs::is(err, cs::error_code::collision))
    ++rejected_;
}

uint64_t weight_cache::gpu_bytes() {
  return store_->stats().tier_bytes[static_cast<size_t>(cs::tier_kind::gpu)];
}

void weight_cache::accept_upload(const cs::chunk_key& key, const void* data, size_t size,
                                 const std::string& tenant, const void* device_dst) {
  received_bytes_ += size;
  // Best effort: a full GPU tier leaves the chunk in the slower tiers.
  auto on_device = [&] {
    if (device_dst != nullptr && store_->find_tier(cs::tier_kind::gpu) != nullptr)
      static_cast<void>(store_->extend_from_device(key, device_dst, size));
  };
  // A full store only means the chunk is not cached; the copy itself
  // succeeded. Other bytes under a key another tenant stored (a collision)
  // are not cached for `tenant`.
  if (!persist_) {
    auto where = store_->find_tier(cs::tier_kind::host) != nullptr ? host_bit : disk_bit;
    auto err = store_->put(key, data, size, where, tenant);
    count_refusal(err);
    if (!cs::is(err, cs::error_code::collision))
      on_device();
    return;
  }
  // Into the host tier now; onto the disk by the background writer while
  // the link brings the next chunks. The verification at cudaFree or
  // session end then only marks the entry, instead of writing a whole model
  // to disk in one go while the GPU server waits (16 GiB: tens of seconds),
  // and the GPU server never waits for the disk during the upload either.
  auto err = store_->put(key, data, size, host_bit, tenant);
  count_refusal(err);
  if (!err)
    persist_->push(key);
  if (!cs::is(err, cs::error_code::collision))
    on_device();
}

weight_cache::verify_outcome weight_cache::verify(const cs::chunk_key& key,
                                                  const void* device_bytes, size_t size,
                                                  const std::string& tenant) {
  if (is_verified(key))
    return verify_outcome::already_verified;
  if (cs::hash_chunk(key.kind, device_bytes, size) != key) {
    ++dropped_;
    // Dropped (with its tenants) unless someone holds it; a verified copy
    // would have returned above.
    static_cast<void>(store_->erase(key));
    return verify_outcome::dropped;
  }
  // The device bytes are the chunk: it is a weight. Still stored from the
  // upload, it is marked (the background writer's disk copy is marked as it
  // lands); gone from the store, it is stored again from the device bytes.
  auto info = store_->entry_info(key);
  if (!info) {
    static_cast<void>(store_->put(key, device_bytes, size, host_bit | disk_bit, tenant));
  } else if (persist_ && (info->tiers & disk_bit) == 0) {
    persist_->push(key);
  } else if (!persist_ && (info->tiers & disk_bit) == 0) {
    static_cast<void>(store_->extend(key, device_bytes, size, host_bit | disk_bit));
  }
  if (!store_->mark_verified(key))
    ++verified_;
  return verify_outcome::verified;
}

bool weight_cache::is_verified(const cs::chunk_key& key) {
  auto info = store_->entry_info(key);
  return info && info->verified;
}

caf::expected<cs::tier_kind> weight_cache::fill(const cs::chunk_key& key,
                                                const cs::tiered_store::fill_sink& sink,
                                                bool* from_peer, const std::string& tenant,
                                                const void* device_dst) {
  if (from_peer != nullptr)
    *from_peer = false;
  static const std::vector<cs::tier_kind> order{cs::tier_kind::gpu, cs::tier_kind::host,
                                                cs::tier_kind::disk};
  // Another tenant's XXH3 chunk is a miss (the store's rule): the client
  // proves it has the bytes by uploading them, no peer is asked.
  auto found = store_->fill(key, order, sink, device_dst, tenant);
  if (found || !cs::is(found.error(), cs::error_code::not_found) || store_->contains(key))
    return found;
  peer_fetch peer;
  {
    std::lock_guard<std::mutex> guard{peer_mtx_};
    peer = peer_;
  }
  // A peer's chunk under an XXH3 key has no known uploader here: only the
  // unnamed tenant takes it.
  if (!peer || (key.kind == cs::chunk_key::algo::xxh3_128 && !tenant.empty()))
    return found;
  auto bytes = peer(key);
  if (!bytes)
    return std::move(bytes.error());
  if (auto err = check(key, bytes->data(), bytes->size()))
    return err;
  peer_bytes_ += bytes->size();
  if (from_peer != nullptr)
    *from_peer = true;
  // Chunks a shard serves were verified weights where they came from.
  if (!store_->put(key, bytes->data(), bytes->size(), host_bit | disk_bit, tenant))
    static_cast<void>(store_->mark_verified(key));
  cs::chunk_view view{cs::tier_kind::host, bytes->data(), bytes->size()};
  if (auto err = sink(view))
    return err;
  return cs::tier_kind::disk;
}

caf::expected<std::vector<uint8_t>> weight_cache::read(const cs::chunk_key& key,
                                                       const cache_reader& reader) {
  auto bytes = store_->get(key);
  // Checked after the read: the bytes read are ones the tenant may use
  // whenever the entry serves it now (a tenant joins only with equal bytes).
  // A miss and another tenant's entry get the same answer.
  if (!bytes || (!reader.every_tenant && !may_serve(key, reader.tenant)))
    return cs::make_error(cs::error_code::not_found,
                          key.to_string() + " is not in this node's cache for this tenant");
  return bytes;
}

caf::expected<std::string> weight_cache::image(const cs::chunk_key& key,
                                               const std::string& tenant) {
  auto bytes = read(key, cache_reader{tenant});
  if (!bytes)
    return std::move(bytes.error());
  return std::string(reinterpret_cast<const char*>(bytes->data()), bytes->size());
}

void weight_cache::put_image(const cs::chunk_key& key, std::string_view image,
                             const std::string& tenant) {
  auto err = store_->put(key, image.data(), image.size(), host_bit | disk_bit, tenant);
  count_refusal(err);
  if (!err)
    static_cast<void>(store_->mark_verified(key));
}

void weight_cache::set_peer_fetch(peer_fetch f) {
  std::lock_guard<std::mutex> guard{peer_mtx_};
  peer_ = std::move(f);
}

namespace {
std::vector<cs::listed_chunk> all_entries(cs::tiered_store& store);
} // namespace

proto::CacheStatsReply weight_cache::stats() {
  auto s = store_->stats();
  proto::CacheStatsReply out;
  out.set_entries(s.entries);
  out.set_bytes(s.bytes);
  out.set_gpu_bytes(s.tier_bytes[0]);
  out.set_host_bytes(s.tier_bytes[1]);
  out.set_disk_bytes(s.tier_bytes[2]);
  out.set_hits(s.hits);
  out.set_misses(s.misses);
  out.set_received_bytes(received_bytes_);
  out.set_filled_bytes(filled_bytes_);
  out.set_rejected_chunks(rejected_);
  out.set_verified_chunks(verified_);
  out.set_dropped_chunks(dropped_);
  out.set_peer_bytes(peer_bytes_);
  if (auto* t = store_->find_tier(cs::tier_kind::host))
    out.set_host_capacity(t->capacity());
  if (auto* t = store_->find_tier(cs::tier_kind::disk))
    out.set_disk_capacity(t->capacity());
  if (auto* t = store_->find_tier(cs::tier_kind::gpu))
    out.set_gpu_capacity(t->capacity());
  out.set_dir(opts_.dir);
  uint64_t verified = 0;
  for (const auto& e : all_entries(*store_))
    verified += e.info.verified ? 1 : 0;
  out.set_verified_entries(verified);
  return out;
}

namespace {

/// Every key of the store, most recently used first (by the tiers' orders).
std::vector<cs::listed_chunk> all_entries(cs::tiered_store& store) {
  std::set<cs::chunk_key> seen;
  std::vector<cs::listed_chunk> out;
  for (auto t : {cs::tier_kind::gpu, cs::tier_kind::host, cs::tier_kind::disk})
    for (const auto& key : store.tier_contents(t))
      if (seen.insert(key).second)
        if (auto info = store.entry_info(key))
          out.push_back(cs::listed_chunk{key, *info});
  std::sort(out.begin(), out.end(), [](const auto& x, const auto& y) {
    return x.info.last_use_ns > y.info.last_use_ns;
  });
  return out;
}

} // namespace

proto::CacheListing weight_cache::list(uint32_t limit, const cache_reader& reader) {
  if (limit == 0)
    limit = 1000;
  auto entries = all_entries(*store_);
  // Only what may serve the reader's tenant: another tenant's XXH3 keys are
  // not even named (nor counted in total).
  if (!reader.every_tenant)
    entries.erase(std::remove_if(entries.begin(), entries.end(),
                                 [&](const cs::listed_chunk& e) {
                                   return !cs::may_serve(e.key, e.info, reader.tenant);
                                 }),
                  entries.end());
  proto::CacheListing out;
  out.set_total(entries.size());
  for (const auto& e : entries) {
    if (static_cast<uint32_t>(out.entries_size()) >= limit)
      break;
    auto* x = out.add_entries();
    x->set_key(e.key.to_string());
    x->set_size(e.info.size);
    x->set_tiers(e.info.tiers);
    x->set_verified(e.info.verified);
    x->set_last_use_ns(e.info.last_use_ns);
    x->set_refcount(e.info.refcount);
  }
  return out;
}

caf::expected<proto::CacheEvicted> weight_cache::evict(const std::vector<std::string>& keys,
                                                       bool all) {
  std::vector<cs::chunk_key> targets;
  if (all) {
    for (const auto& e : all_entries(*store_))
      targets.push_back(e.key);
  } else {
    for (const auto& text : keys) {
      auto key = cs::chunk_key::from_string(text);
      if (!key)
        return std::move(key.error());
      if (store_->contains(*key))
        targets.push_back(*key);
    }
  }
  proto::CacheEvicted out;
  for (const auto& key : targets) {
    auto info = store_->entry_info(key);
    auto err = store_->erase(key);
    if (err && cs::is(err, cs::error_code::in_use)) {
      out.add_in_use(key.to_string());
      continue;
    }
    if (!err && info) {
      out.set_entries(out.entries() + 1);
      out.set_bytes(out.bytes() + info->size);
    }
  }
  return out;
}

proto::CacheSummary weight_cache::summary() {
  cs::key_bloom bloom;
  proto::CacheSummary out;
  // Per tenant: the XXH3 chunks that may serve it.
  std::map<std::string, std::vector<const cs::listed_chunk*>> per_tenant;
  auto entries = all_entries(*store_);
  for (const auto& e : entries) {
    bloom.add(e.key);
    out.set_chunks(out.chunks() + 1);
    out.set_bytes(out.bytes() + e.info.size);
    if (e.info.verified) {
      out.set_verified_chunks(out.verified_chunks() + 1);
      out.set_verified_bytes(out.verified_bytes() + e.info.size);
    }
    if (e.key.kind == cs::chunk_key::algo::xxh3_128)
      for (const auto& t : e.info.tenants)
        per_tenant[t].push_back(&e);
  }
  out.set_key_bloom(bloom.bits());
  out.set_bloom_hashes(bloom.hashes());
  for (const auto& [tenant, chunks] : per_tenant) {
    auto tb = cs::key_bloom::sized_for(chunks.size());
    auto* x = out.add_tenants();
    x->set_tenant(tenant);
    for (const auto* e : chunks) {
      tb.add(e->key);
      x->set_chunks(x->chunks() + 1);
      x->set_bytes(x->bytes() + e->info.size);
    }
    x->set_key_bloom(tb.bits());
    x->set_bloom_hashes(tb.hashes());
  }
  return out;
}

bool summary_may_serve(const proto::CacheSummary& summary, const cs::chunk_key& key,
                       const std::string& tenant) {
  if (key.kind != cs::chunk_key::algo::xxh3_128)
    return cs::key_bloom::may_contain(summary.key_bloom(), summary.bloom_hashes(), key);
  for (const auto& t : summary.tenants())
    if (t.tenant() == tenant)
      return cs::key_bloom::may_contain(t.key_bloom(), t.bloom_hashes(), key);
  return false;
}

} // namespace gleam::executor
