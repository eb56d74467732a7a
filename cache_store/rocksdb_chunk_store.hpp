#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cache_store/chunk_store.hpp"
#include "cache_store/lru_index.hpp"

namespace rocksdb {
class ColumnFamilyHandle;
class DB;
} // namespace rocksdb

namespace gleam::cache_store {

/// Settings of a rocksdb_chunk_store.
struct rocksdb_store_options {
  /// Directory of the database; created when missing (its parent must exist).
  std::string path;
  /// When true, every put, erase, mark_verified, add_tenants, evict_to and
  /// clear fsyncs the write-ahead log before returning: the entry also
  /// survives power loss. When false (the default), the WAL record reaches the operating
  /// system before the call returns: the entry survives a crash or kill -9
  /// of the server, and a power loss can only lose the most recent writes,
  /// never leave an index entry without its bytes.
  bool sync = false;
  /// Chunks of at least this many bytes live in blob files (BlobDB).
  uint64_t min_blob_size = 4096;
  /// Target size of one blob file, in bytes.
  uint64_t blob_file_size = 256ull << 20;
  /// Size of one memtable, in bytes (per column family).
  uint64_t write_buffer_size = 64ull << 20;
  /// When true, `get` and `get_into` re-hash what they read and answer
  /// `error_code::corrupt_entry` for bytes that no longer match their key.
  bool verify_reads = false;
};

/// A persistent chunk_store in RocksDB.
///
/// Layout: column family "index" maps the binary key (chunk_key::to_binary)
/// to the chunk's metadata record (format version 2: flags, size, last use,
/// and the chunk's tenants; format 1 records, without tenants, still open
/// and belong to the unnamed tenant ""); column family "blobs" maps the same
/// key to the chunk's bytes, with BlobDB (`enable_blob_files`) so large
/// values live in blob files and do not churn through compactions. Index
/// entry (tenants included) and bytes are written in one WriteBatch, so an
/// index entry never points to missing bytes or names a tenant its bytes
/// were not stored for; a tenant joining a stored chunk rewrites only the
/// index record, through the WAL.
///
/// Threading: thread-safe. An internal mutex guards the in-memory mirror of
/// the index (loaded at open; it answers `contains`, `missing`, `list`,
/// `stats` without I/O). A second mutex serializes the writers (put, erase,
/// mark_verified, add_tenants, evict_to, clear); chunk bytes are written and read
/// without the index mutex, so lookups never wait for a large put.
///
/// Ordering: calls of one thread take effect in call order; a put that
/// returned is seen by every later call of any thread.
///
/// Durability: the WAL is always on; see `rocksdb_store_options::sync`.
/// Recency updates (last use of a read) are written without WAL: a crash
/// may forget them, which only makes the LRU order after a restart slightly
/// older. Reference counts are not persisted (see chunk_info::refcount).
///
/// Teardown: the destructor closes the database; unflushed memtables are
/// recovered from the WAL at the next open. Only one instance (in any
/// process) may open a path at a time; a second open fails with
/// `error_code::db_locked`.
class rocksdb_chunk_store final : public chunk_store {
public:
  /// Opens (or creates) the store at `opts.path`. Errors name the path:
  /// `error_code::db_locked` when another instance holds it,
  /// `error_code::open_failed` for anything else, `error_code::corrupt_entry`
  /// for an index entry that cannot be parsed.
  [[nodiscard]] static caf::expected<std::unique_ptr<rocksdb_chunk_store>>
  open(const rocksdb_store_options& opts);

  /// Closes the database (see the class comment, teardown).
  ~rocksdb_chunk_store() override;

  rocksdb_chunk_store(const rocksdb_chunk_store&) = delete;
  rocksdb_chunk_store& operator=(const rocksdb_chunk_store&) = delete;

  /// Directory of the database.
  const std::string& path() const {
    return opts_.path;
  }

  /// Writes the memtables to SST and blob files, so that the next open
  /// replays no WAL. Optional: acknowledged writes are durable without it.
  [[nodiscard]] caf::error flush();

  // -- chunk_store interface (documented there) -------------------------------

  std::string name() const override;
  bool contains(const chunk_key& key) override;
  std::vector<size_t> missing(const std::vector<chunk_key>& keys) override;
  using chunk_store::put;
  [[nodiscard]] caf::error put(const chunk_key& key, const void* data, size_t size,
                               const tenant_set& tenants) override;
  [[nodiscard]] caf::expected<std::vector<uint8_t>>
  get(const chunk_key& key) override;
  [[nodiscard]] caf::expected<size_t>
  get_into(const chunk_key& key, void* dst, size_t capacity) override;
  [[nodiscard]] caf::error erase(const chunk_key& key) override;
  [[nodiscard]] caf::expected<chunk_info>
  entry_info(const chunk_key& key) override;
  [[nodiscard]] caf::error mark_verified(const chunk_key& key) override;
  [[nodiscard]] caf::error add_tenants(const chunk_key& key,
                                       const tenant_set& tenants) override;
  [[nodiscard]] caf::error ref(const chunk_key& key) override;
  [[nodiscard]] caf::error unref(const chunk_key& key) override;
  std::vector<listed_chunk> list(size_t limit) override;
  store_stats stats() override;
  [[nodiscard]] caf::expected<evict_result> evict_to(uint64_t capacity) override;
  [[nodiscard]] caf::error clear() override;

private:
  explicit rocksdb_chunk_store(rocksdb_store_options opts);

  [[nodiscard]] caf::error load_index();

  /// Reads the bytes of `key` after accounting a hit or a miss; `fn` gets
  /// a pointer and a length. Requires that mtx_ is not held.
  template <class F>
  caf::error read_blob(const chunk_key& key, F fn);

  /// add_tenants with write_mtx_ held (takes mtx_).
  [[nodiscard]] caf::error add_tenants_locked(const chunk_key& key, const tenant_set& tenants);

  /// Writes the recency of `keys` without WAL. Requires mtx_.
  void persist_touch(const std::vector<chunk_key>& keys);

  rocksdb_store_options opts_;
  /// Serializes writers; taken before mtx_.
  std::mutex write_mtx_;
  /// Guards index_ and the counters.
  std::mutex mtx_;
  lru_index index_;
  uint64_t hits_ = 0;
  uint64_t misses_ = 0;
  std::unique_ptr<rocksdb::DB> db_;
  rocksdb::ColumnFamilyHandle* index_cf_ = nullptr;
  rocksdb::ColumnFamilyHandle* blobs_cf_ = nullptr;
  rocksdb::ColumnFamilyHandle* default_cf_ = nullptr;
};

} // namespace gleam::cache_store
