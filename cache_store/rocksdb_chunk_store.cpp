#include "cache_store/rocksdb_chunk_store.hpp"

#include <cstring>

#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <rocksdb/slice.h>
#include <rocksdb/write_batch.h>

#include "cache_store/error.hpp"

namespace gleam::cache_store {

namespace {

constexpr const char* index_cf_name = "index";
constexpr const char* blobs_cf_name = "blobs";

// Metadata record, format 2: version (2), flags (bit 0: verified), size
// (u64 LE), last use in ns (u64 LE), the number of tenants (u32 LE), then
// each tenant as its length (u32 LE) and its bytes, in ascending order.
// Format 1 (written before tenants were recorded) is the same without the
// tenants: 18 bytes, read as a chunk of the unnamed tenant "".
constexpr uint8_t meta_version_1 = 1;
constexpr uint8_t meta_version = 2;
constexpr size_t meta_fixed_size = 18;
constexpr uint8_t flag_verified = 1;
/// No tenant name is longer (they come from a config file).
constexpr uint32_t max_tenant_name = 4096;

void put_u64(char* out, uint64_t x) {
  for (int i = 0; i < 8; ++i)
    out[i] = static_cast<char>((x >> (8 * i)) & 0xFF);
}

uint64_t get_u64(const char* in) {
  uint64_t x = 0;
  for (int i = 7; i >= 0; --i)
    x = (x << 8) | static_cast<uint8_t>(in[i]);
  return x;
}

void append_u32(std::string& out, uint32_t x) {
  for (int i = 0; i < 4; ++i)
    out.push_back(static_cast<char>((x >> (8 * i)) & 0xFF));
}

uint32_t get_u32(const char* in) {
  uint32_t x = 0;
  for (int i = 3; i >= 0; --i)
    x = (x << 8) | static_cast<uint8_t>(in[i]);
  return x;
}

std::string encode_meta(const chunk_info& info) {
  std::string out(meta_fixed_size, '\0');
  out[0] = static_cast<char>(meta_version);
  out[1] = static_cast<char>(info.verified ? flag_verified : 0);
  put_u64(&out[2], info.size);
  put_u64(&out[10], info.last_use_ns);
  append_u32(out, static_cast<uint32_t>(info.tenants.size()));
  for (const auto& t : info.tenants) {
    append_u32(out, static_cast<uint32_t>(t.size()));
    out += t;
  }
  return out;
}

bool decode_meta(const rocksdb::Slice& in, chunk_info& info) {
  if (in.size() < meta_fixed_size)
    return false;
  auto version = static_cast<uint8_t>(in[0]);
  if (version != meta_version_1 && version != meta_version)
    return false;
  info.verified = (static_cast<uint8_t>(in[1]) & flag_verified) != 0;
  info.size = get_u64(in.data() + 2);
  info.last_use_ns = get_u64(in.data() + 10);
  info.tiers = tier_bit(tier_kind::disk);
  info.refcount = 0;
  info.tenants.clear();
  if (version == meta_version_1) {
    info.tenants.insert(std::string{});
    return in.size() == meta_fixed_size;
  }
  size_t pos = meta_fixed_size;
  auto left = [&] { return in.size() - pos; };
  if (left() < 4)
    return false;
  auto count = get_u32(in.data() + pos);
  pos += 4;
  for (uint32_t i = 0; i < count; ++i) {
    if (left() < 4)
      return false;
    auto len = get_u32(in.data() + pos);
    pos += 4;
    if (len > max_tenant_name || left() < len)
      return false;
    info.tenants.emplace(in.data() + pos, len);
    pos += len;
  }
  return left() == 0;
}

caf::error io_error(const std::string& what, const std::string& path,
                    const rocksdb::Status& st) {
  return make_error(error_code::io_error,
                    what + " in the chunk store at " + path
                      + " failed: " + st.ToString()
                      + "; check the disk (space, permissions)");
}

caf::error not_found(const chunk_key& key, const std::string& path) {
  return make_error(error_code::not_found,
                    "no chunk " + key.to_string() + " in the chunk store at "
                      + path + "; send its bytes first");
}

} // namespace

rocksdb_chunk_store::rocksdb_chunk_store(rocksdb_store_options opts)
  : opts_(std::move(opts)) {
  // nop
}

caf::expected<std::unique_ptr<rocksdb_chunk_store>>
rocksdb_chunk_store::open(const rocksdb_store_options& opts) {
  if (opts.path.empty())
    return make_error(error_code::open_failed,
                      "cannot open a chunk store at an empty path; "
                      "configure the cache directory");
  rocksdb::DBOptions db_opts;
  db_opts.create_if_missing = true;
  db_opts.create_missing_column_families = true;
  // Index and blob column families flush together, so that recency
  // updates written without WAL never outlive the bytes they describe.
  db_opts.atomic_flush = true;
  db_opts.max_background_jobs = 2;
  rocksdb::ColumnFamilyOptions index_opts;
  rocksdb::ColumnFamilyOptions blob_opts;
  blob_opts.write_buffer_size = opts.write_buffer_size;
  blob_opts.enable_blob_files = true;
  blob_opts.min_blob_size = opts.min_blob_size;
  blob_opts.blob_file_size = opts.blob_file_size;
  blob_opts.enable_blob_garbage_collection = true;
  // Model weights do not compress; spend no CPU trying.
  blob_opts.blob_compression_type = rocksdb::kNoCompression;
  blob_opts.compression = rocksdb::kNoCompression;
  std::vector<rocksdb::ColumnFamilyDescriptor> families{
    {rocksdb::kDefaultColumnFamilyName, rocksdb::ColumnFamilyOptions{}},
    {index_cf_name, index_opts},
    {blobs_cf_name, blob_opts},
  };
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* raw = nullptr;
  auto st = rocksdb::DB::Open(db_opts, opts.path, families, &handles, &raw);
  if (!st.ok()) {
    auto text = st.ToString();
    if (st.IsIOError() && text.find("lock") != std::string::npos)
      return make_error(error_code::db_locked,
                        "the chunk store at " + opts.path
                          + " is in use by another process or instance ("
                          + text + "); stop it or configure another path");
    return make_error(error_code::open_failed,
                      "cannot open the chunk store at " + opts.path + " ("
                        + text + "); check that the parent directory exists "
                          "and is writable");
  }
  std::unique_ptr<rocksdb_chunk_store> result{new rocksdb_chunk_store(opts)};
  result->db_.reset(raw);
  result->default_cf_ = handles[0];
  result->index_cf_ = handles[1];
  result->blobs_cf_ = handles[2];
  if (auto err = result->load_index())
    return err;
  return result;
}

rocksdb_chunk_store::~rocksdb_chunk_store() {
  if (!db_)
    return;
  for (auto* handle : {index_cf_, blobs_cf_, default_cf_})
    if (handle != nullptr)
      db_->DestroyColumnFamilyHandle(handle).PermitUncheckedError();
  // Close only reports errors of background work; the WAL holds every
  // acknowledged write, so there is nothing left to do about them here.
  db_->Close().PermitUncheckedError();
  db_.reset();
}

caf::error rocksdb_chunk_store::load_index() {
  std::vector<listed_chunk> entries;
  std::unique_ptr<rocksdb::Iterator> it{
    db_->NewIterator(rocksdb::ReadOptions{}, index_cf_)};
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    auto key = chunk_key::from_binary(
      std::string_view{it->key().data(), it->key().size()});
    if (!key)
      return make_error(error_code::corrupt_entry,
                        "the chunk store at " + opts_.path + ": "
                          + render(key.error()));
    listed_chunk entry;
    entry.key = *key;
    if (!decode_meta(it->value(), entry.info))
      return make_error(error_code::corrupt_entry,
                        "the chunk store at " + opts_.path
                          + " has unreadable metadata for "
                          + key->to_string()
                          + "; delete the directory to start an empty cache");
    entries.push_back(entry);
  }
  if (!it->status().ok())
    return io_error("reading the index", opts_.path, it->status());
  std::lock_guard<std::mutex> guard{mtx_};
  index_.load(std::move(entries));
  return {};
}

caf::error rocksdb_chunk_store::flush() {
  rocksdb::FlushOptions fopts;
  fopts.wait = true;
  auto st = db_->Flush(fopts, {index_cf_, blobs_cf_});
  if (!st.ok())
    return io_error("flushing", opts_.path, st);
  return {};
}

std::string rocksdb_chunk_store::name() const {
  return "rocksdb";
}

void rocksdb_chunk_store::persist_touch(const std::vector<chunk_key>& keys) {
  if (keys.empty())
    return;
  rocksdb::WriteBatch batch;
  for (const auto& key : keys)
    if (auto info = index_.find(key))
      batch.Put(index_cf_, key.to_binary(), encode_meta(*info))
        .PermitUncheckedError();
  rocksdb::WriteOptions wopts;
  wopts.disableWAL = true;
  // A lost recency update only ages the entry; see the class comment.
  db_->Write(wopts, &batch).PermitUncheckedError();
}

bool rocksdb_chunk_store::contains(const chunk_key& key) {
  std::lock_guard<std::mutex> guard{mtx_};
  return index_.find(key) != nullptr;
}

std::vector<size_t> rocksdb_chunk_store::missing(const std::vector<chunk_key>& keys) {
  std::vector<size_t> result;
  std::vector<chunk_key> hits;
  std::lock_guard<std::mutex> guard{mtx_};
  auto now = now_ns();
  for (size_t i = 0; i < keys.size(); ++i) {
    if (index_.find(keys[i]) == nullptr) {
      ++misses_;
      result.push_back(i);
    } else {
      ++hits_;
      index_.touch(keys[i], now);
      hits.push_back(keys[i]);
    }
  }
  persist_touch(hits);
  return result;
}

caf::error rocksdb_chunk_store::put(const chunk_key& key, const void* data, size_t size,
                                    const tenant_set& tenants) {
  if (auto err = verify_content(key, data, size))
    return err;
  std::lock_guard<std::mutex> writer{write_mtx_};
  bool join = false;
  {
    std::lock_guard<std::mutex> guard{mtx_};
    if (auto* info = index_.find(key)) {
      index_.touch(key, now_ns());
      join = adds_tenants(*info, tenants);
      if (!join) {
        persist_touch({key});
        return {};
      }
    }
  }
  if (join) {
    // New tenants of a stored chunk: under an XXH3 key only with equal bytes.
    if (key.kind == chunk_key::algo::xxh3_128) {
      rocksdb::PinnableSlice held;
      auto st = db_->Get(rocksdb::ReadOptions{}, blobs_cf_, key.to_binary(), &held);
      if (!st.ok())
        return io_error("reading chunk " + key.to_string(), opts_.path, st);
      if (held.size() != size || (size > 0 && std::memcmp(held.data(), data, size) != 0))
        return collision_error(key);
    }
    return add_tenants_locked(key, tenants);
  }
  // The write holds only write_mtx_, so that lookups need not wait for the
  // disk; the entry becomes visible in the index once it is durable. Its
  // tenants are part of the index record, written in the same batch as
  // the bytes.
  chunk_info info;
  info.size = size;
  info.tiers = tier_bit(tier_kind::disk);
  info.last_use_ns = now_ns();
  info.tenants = tenants;
  auto bin = key.to_binary();
  rocksdb::WriteBatch batch;
  auto st = batch.Put(index_cf_, bin, encode_meta(info));
  if (st.ok())
    st = batch.Put(blobs_cf_, bin,
                   rocksdb::Slice{static_cast<const char*>(data), size});
  rocksdb::WriteOptions wopts;
  wopts.sync = opts_.sync;
  if (st.ok())
    st = db_->Write(wopts, &batch);
  if (!st.ok())
    return io_error("storing chunk " + key.to_string() + " ("
                      + std::to_string(size) + " bytes)",
                    opts_.path, st);
  std::lock_guard<std::mutex> guard{mtx_};
  index_.upsert(key, info);
  return {};
}

caf::error rocksdb_chunk_store::add_tenants(const chunk_key& key, const tenant_set& tenants) {
  std::lock_guard<std::mutex> writer{write_mtx_};
  return add_tenants_locked(key, tenants);
}

caf::error rocksdb_chunk_store::add_tenants_locked(const chunk_key& key,
                                                   const tenant_set& tenants) {
  std::lock_guard<std::mutex> guard{mtx_};
  auto info = index_.find(key);
  if (info == nullptr)
    return not_found(key, opts_.path);
  if (!adds_tenants(*info, tenants))
    return {};
  auto updated = *info;
  updated.tenants.insert(tenants.begin(), tenants.end());
  // With the WAL (unlike recency): a tenant the store answered for is
  // never forgotten by a crash. The bytes are already stored under `key`.
  rocksdb::WriteOptions wopts;
  wopts.sync = opts_.sync;
  auto st = db_->Put(wopts, index_cf_, key.to_binary(), encode_meta(updated));
  if (!st.ok())
    return io_error("recording the tenants of chunk " + key.to_string(), opts_.path, st);
  info->tenants = std::move(updated.tenants);
  return {};
}

template <class F>
caf::error rocksdb_chunk_store::read_blob(const chunk_key& key, F fn) {
  {
    std::lock_guard<std::mutex> guard{mtx_};
    if (index_.find(key) == nullptr) {
      ++misses_;
      return not_found(key, opts_.path);
    }
    ++hits_;
    index_.touch(key, now_ns());
    persist_touch({key});
  }
  rocksdb::PinnableSlice value;
  auto st = db_->Get(rocksdb::ReadOptions{}, blobs_cf_, key.to_binary(), &value);
  if (st.IsNotFound())
    return not_found(key, opts_.path);
  if (!st.ok())
    return io_error("reading chunk " + key.to_string(), opts_.path, st);
  if (opts_.verify_reads) {
    if (auto err = verify_content(key, value.data(), value.size()))
      return make_error(error_code::corrupt_entry,
                        "the chunk store at " + opts_.path + " holds bytes for "
                          + key.to_string()
                          + " that no longer match the key; erase it and "
                            "fetch the chunk again");
  }
  return fn(value.data(), value.size());
}

caf::expected<std::vector<uint8_t>> rocksdb_chunk_store::get(const chunk_key& key) {
  std::vector<uint8_t> result;
  auto err = read_blob(key, [&](const char* data, size_t size) -> caf::error {
    result.assign(data, data + size);
    return {};
  });
  if (err)
    return err;
  return result;
}

caf::expected<size_t> rocksdb_chunk_store::get_into(const chunk_key& key,
                                                    void* dst, size_t capacity) {
  size_t result = 0;
  auto err = read_blob(key, [&](const char* data, size_t size) -> caf::error {
    if (size > capacity)
      return make_error(error_code::buffer_too_small,
                        "chunk " + key.to_string() + " has "
                          + std::to_string(size)
                          + " bytes but the buffer holds only "
                          + std::to_string(capacity)
                          + "; pass a buffer of at least the chunk's size");
    if (size > 0)
      std::memcpy(dst, data, size);
    result = size;
    return {};
  });
  if (err)
    return err;
  return result;
}

caf::error rocksdb_chunk_store::erase(const chunk_key& key) {
  std::lock_guard<std::mutex> writer{write_mtx_};
  std::lock_guard<std::mutex> guard{mtx_};
  auto info = index_.find(key);
  if (info == nullptr)
    return not_found(key, opts_.path);
  if (info->refcount > 0)
    return make_error(error_code::in_use,
                      "chunk " + key.to_string() + " has "
                        + std::to_string(info->refcount)
                        + " holders; unref it before erasing");
  auto bin = key.to_binary();
  rocksdb::WriteBatch batch;
  auto st = batch.Delete(index_cf_, bin);
  if (st.ok())
    st = batch.Delete(blobs_cf_, bin);
  rocksdb::WriteOptions wopts;
  wopts.sync = opts_.sync;
  if (st.ok())
    st = db_->Write(wopts, &batch);
  if (!st.ok())
    return io_error("erasing chunk " + key.to_string(), opts_.path, st);
  index_.erase(key);
  return {};
}

caf::expected<chunk_info> rocksdb_chunk_store::entry_info(const chunk_key& key) {
  std::lock_guard<std::mutex> guard{mtx_};
  auto info = index_.find(key);
  if (info == nullptr)
    return not_found(key, opts_.path);
  return *info;
}

caf::error rocksdb_chunk_store::mark_verified(const chunk_key& key) {
  std::lock_guard<std::mutex> writer{write_mtx_};
  std::lock_guard<std::mutex> guard{mtx_};
  auto info = index_.find(key);
  if (info == nullptr)
    return not_found(key, opts_.path);
  if (info->verified)
    return {};
  auto updated = *info;
  updated.verified = true;
  rocksdb::WriteOptions wopts;
  wopts.sync = opts_.sync;
  auto st = db_->Put(wopts, index_cf_, key.to_binary(), encode_meta(updated));
  if (!st.ok())
    return io_error("marking chunk " + key.to_string() + " verified",
                    opts_.path, st);
  info->verified = true;
  return {};
}

caf::error rocksdb_chunk_store::ref(const chunk_key& key) {
  std::lock_guard<std::mutex> guard{mtx_};
  auto info = index_.find(key);
  if (info == nullptr)
    return not_found(key, opts_.path);
  ++info->refcount;
  index_.touch(key, now_ns());
  return {};
}

caf::error rocksdb_chunk_store::unref(const chunk_key& key) {
  std::lock_guard<std::mutex> guard{mtx_};
  auto info = index_.find(key);
  if (info == nullptr)
    return not_found(key, opts_.path);
  if (info->refcount == 0)
    return make_error(error_code::refcount_underflow,
                      "unref of chunk " + key.to_string()
                        + " which has no holders; pair every unref with a ref");
  --info->refcount;
  return {};
}

std::vector<listed_chunk> rocksdb_chunk_store::list(size_t limit) {
  std::lock_guard<std::mutex> guard{mtx_};
  return index_.list(limit);
}

store_stats rocksdb_chunk_store::stats() {
  std::lock_guard<std::mutex> guard{mtx_};
  store_stats result;
  result.entries = index_.size();
  result.bytes = index_.bytes();
  result.tier_bytes[static_cast<size_t>(tier_kind::disk)] = index_.bytes();
  result.hits = hits_;
  result.misses = misses_;
  return result;
}

caf::expected<evict_result> rocksdb_chunk_store::evict_to(uint64_t capacity) {
  std::lock_guard<std::mutex> writer{write_mtx_};
  std::lock_guard<std::mutex> guard{mtx_};
  evict_result result;
  auto victims = index_.victims(capacity);
  if (!victims.empty()) {
    rocksdb::WriteBatch batch;
    rocksdb::Status st;
    for (const auto& key : victims) {
      auto bin = key.to_binary();
      if (st.ok())
        st = batch.Delete(index_cf_, bin);
      if (st.ok())
        st = batch.Delete(blobs_cf_, bin);
    }
    rocksdb::WriteOptions wopts;
    wopts.sync = opts_.sync;
    if (st.ok())
      st = db_->Write(wopts, &batch);
    if (!st.ok())
      return io_error("evicting " + std::to_string(victims.size())
                        + " chunks",
                      opts_.path, st);
    for (const auto& key : victims) {
      result.entries += 1;
      result.bytes += index_.find(key)->size;
      index_.erase(key);
    }
  }
  result.remaining_bytes = index_.bytes();
  return result;
}

caf::error rocksdb_chunk_store::clear() {
  std::lock_guard<std::mutex> writer{write_mtx_};
  std::lock_guard<std::mutex> guard{mtx_};
  rocksdb::WriteBatch batch;
  rocksdb::Status st;
  for (const auto& entry : index_.list(0)) {
    auto bin = entry.key.to_binary();
    if (st.ok())
      st = batch.Delete(index_cf_, bin);
    if (st.ok())
      st = batch.Delete(blobs_cf_, bin);
  }
  rocksdb::WriteOptions wopts;
  wopts.sync = opts_.sync;
  if (st.ok())
    st = db_->Write(wopts, &batch);
  if (!st.ok())
    return io_error("clearing the store", opts_.path, st);
  index_.clear();
  return {};
}

} // namespace gleam::cache_store
