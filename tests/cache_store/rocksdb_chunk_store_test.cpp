#include "cache_store/rocksdb_chunk_store.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <rocksdb/db.h>

#include <sys/wait.h>
#include <unistd.h>

#include "cache_store/error.hpp"
#include "tests/cache_store/test_util.hpp"
#include "tests/support/gpu_probe.hpp"

using namespace gleam::cache_store;
using gleam::cache_store::test::crash_chunk;
using gleam::cache_store::test::crash_tenant;
using gleam::cache_store::test::make_bytes;
using gleam::cache_store::test::temp_dir;

namespace {

std::unique_ptr<rocksdb_chunk_store> open_at(const std::string& path) {
  rocksdb_store_options opts;
  opts.path = path;
  auto store = rocksdb_chunk_store::open(opts);
  if (!store)
    FAIL("open failed: " << render(store.error()));
  return std::move(*store);
}

chunk_key key_of(const std::vector<uint8_t>& bytes) {
  return hash_chunk(chunk_key::algo::xxh3_128, bytes.data(), bytes.size());
}

// Runs `argv` with stdout into a pipe; returns the wait status and appends
// what the child printed to `out`.
int run_child(const std::vector<std::string>& args, std::string& out) {
  int fds[2];
  if (::pipe(fds) != 0)
    return -1;
  auto pid = ::fork();
  if (pid == 0) {
    ::dup2(fds[1], STDOUT_FILENO);
    ::close(fds[0]);
    ::close(fds[1]);
    std::vector<char*> argv;
    for (auto& a : args)
      argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    std::_Exit(127);
  }
  ::close(fds[1]);
  char buf[4096];
  for (;;) {
    auto n = ::read(fds[0], buf, sizeof(buf));
    if (n <= 0)
      break;
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return status;
}

// Like run_child, but SIGKILLs the child `delay` after it started.
int run_child_killed(const std::vector<std::string>& args,
                     std::chrono::microseconds delay, std::string& out) {
  int fds[2];
  if (::pipe(fds) != 0)
    return -1;
  auto pid = ::fork();
  if (pid == 0) {
    ::dup2(fds[1], STDOUT_FILENO);
    ::close(fds[0]);
    ::close(fds[1]);
    std::vector<char*> argv;
    for (auto& a : args)
      argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    std::_Exit(127);
  }
  ::close(fds[1]);
  std::thread killer{[pid, delay] {
    std::this_thread::sleep_for(delay);
    ::kill(pid, SIGKILL);
  }};
  char buf[4096];
  for (;;) {
    auto n = ::read(fds[0], buf, sizeof(buf));
    if (n <= 0)
      break;
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fds[0]);
  killer.join();
  int status = 0;
  ::waitpid(pid, &status, 0);
  return status;
}

} // namespace

TEST_CASE("a reopened rocksdb store keeps bytes, verified flags and LRU order",
          "[cache_store][rocksdb]") {
  temp_dir dir;
  auto path = dir.sub("db");
  auto a = make_bytes(1, 1000);
  auto b = make_bytes(2, 300000);
  auto c = make_bytes(3, 5000);
  {
    auto store = open_at(path);
    for (auto* x : {&a, &b, &c})
      REQUIRE_FALSE(store->put(key_of(*x), *x));
    REQUIRE_FALSE(store->mark_verified(key_of(b)));
    REQUIRE_FALSE(store->ref(key_of(c)));
    REQUIRE(store->get(key_of(a))); // LRU order: b c a
  }
  auto store = open_at(path);
  CHECK(store->stats().entries == 3);
  for (auto* x : {&a, &b, &c}) {
    auto got = store->get(key_of(*x));
    REQUIRE(got);
    CHECK(*got == *x);
  }
  CHECK(store->entry_info(key_of(b))->verified);
  CHECK_FALSE(store->entry_info(key_of(a))->verified);
  // Holders of the previous instance are gone with it.
  CHECK(store->entry_info(key_of(c))->refcount == 0);
}

TEST_CASE("a reopened rocksdb store keeps each chunk's tenants", "[cache_store][rocksdb][tenant]") {
  temp_dir dir;
  auto path = dir.sub("db");
  auto a = make_bytes(4, 300000); // in a blob file
  auto b = make_bytes(5, 1000);
  {
    auto store = open_at(path);
    REQUIRE_FALSE(store->put(key_of(a), a, tenant_set{"alice"}));
    REQUIRE_FALSE(store->put(key_of(b), b, tenant_set{"bob"}));
    REQUIRE_FALSE(store->put(key_of(b), b, tenant_set{"alice"})); // equal bytes: alice joins
    REQUIRE_FALSE(store->mark_verified(key_of(a)));
    REQUIRE(store->get(key_of(a))); // a recency update rewrites the record
  }
  auto store = open_at(path);
  auto info_a = store->entry_info(key_of(a));
  REQUIRE(info_a);
  CHECK(info_a->tenants == tenant_set{"alice"});
  CHECK(info_a->verified);
  CHECK(may_serve(key_of(a), *info_a, "alice"));
  CHECK_FALSE(may_serve(key_of(a), *info_a, "bob"));
  CHECK_FALSE(may_serve(key_of(a), *info_a, ""));
  CHECK(store->entry_info(key_of(b))->tenants == (tenant_set{"alice", "bob"}));
}

/// The store's database opened directly (its three column families), to
/// write what another format or a damage would have left.
class raw_store {
public:
  explicit raw_store(const std::string& path) {
    rocksdb::DBOptions db_opts;
    db_opts.create_if_missing = true;
    db_opts.create_missing_column_families = true;
    std::vector<rocksdb::ColumnFamilyDescriptor> families{
      {rocksdb::kDefaultColumnFamilyName, rocksdb::ColumnFamilyOptions{}},
      {"index", rocksdb::ColumnFamilyOptions{}},
      {"blobs", rocksdb::ColumnFamilyOptions{}}};
    REQUIRE(rocksdb::DB::Open(db_opts, path, families, &handles_, &db_).ok());
  }
  ~raw_store() {
    for (auto* h : handles_)
      static_cast<void>(db_->DestroyColumnFamilyHandle(h));
    delete db_;
  }
  raw_store(const raw_store&) = delete;
  raw_store& operator=(const raw_store&) = delete;
  rocksdb::DB* db() {
    return db_;
  }
  rocksdb::ColumnFamilyHandle* index() {
    return handles_[1];
  }
  rocksdb::ColumnFamilyHandle* blobs() {
    return handles_[2];
  }

private:
  std::vector<rocksdb::ColumnFamilyHandle*> handles_;
  rocksdb::DB* db_ = nullptr;
};

TEST_CASE("a format-1 index record opens as a chunk of the unnamed tenant",
          "[cache_store][rocksdb][tenant]") {
  temp_dir dir;
  auto path = dir.sub("db");
  auto bytes = make_bytes(6, 5000);
  auto key = key_of(bytes);
  {
    // What a store of the previous format wrote: an 18-byte record
    // (version 1, flags: verified, size, last use) and the bytes.
    raw_store raw{path};
    std::string record(18, '\0');
    record[0] = 1;
    record[1] = 1;
    for (int i = 0; i < 8; ++i) {
      record[2 + i] = static_cast<char>((bytes.size() >> (8 * i)) & 0xFF);
      record[10 + i] = static_cast<char>((uint64_t{1700000000} >> (8 * i)) & 0xFF);
    }
    auto bin = key.to_binary();
    REQUIRE(raw.db()->Put(rocksdb::WriteOptions{}, raw.index(), bin, record).ok());
    REQUIRE(raw.db()->Put(rocksdb::WriteOptions{}, raw.blobs(), bin,
                          rocksdb::Slice{reinterpret_cast<const char*>(bytes.data()),
                                         bytes.size()})
              .ok());
  }
  for (int round = 0; round < 2; ++round) {
    // Round 1 reads the record the first round rewrote in the new format.
    auto store = open_at(path);
    auto info = store->entry_info(key);
    REQUIRE(info);
    CHECK(info->size == bytes.size());
    CHECK(info->verified);
    CHECK(info->tenants == tenant_set{""});
    CHECK(may_serve(key, *info, ""));
    CHECK_FALSE(may_serve(key, *info, "alice"));
    auto got = store->get(key);
    REQUIRE(got);
    CHECK(*got == bytes);
  }
}

TEST_CASE("an index record with damaged tenants is refused at open",
          "[cache_store][rocksdb][tenant]") {
  temp_dir dir;
  auto path = dir.sub("db");
  auto bytes = make_bytes(7, 100);
  {
    auto store = open_at(path);
    REQUIRE_FALSE(store->put(key_of(bytes), bytes, tenant_set{"alice"}));
  }
  {
    raw_store raw{path};
    auto bin = key_of(bytes).to_binary();
    std::string record;
    REQUIRE(raw.db()->Get(rocksdb::ReadOptions{}, raw.index(), bin, &record).ok());
    record.pop_back(); // the tenant's name is one byte short
    REQUIRE(raw.db()->Put(rocksdb::WriteOptions{}, raw.index(), bin, record).ok());
  }
  rocksdb_store_options opts;
  opts.path = path;
  auto store = rocksdb_chunk_store::open(opts);
  REQUIRE_FALSE(store);
  CHECK(is(store.error(), error_code::corrupt_entry));
}

TEST_CASE("LRU order survives a reopen", "[cache_store][rocksdb]") {
  temp_dir dir;
  auto path = dir.sub("db");
  std::vector<std::vector<uint8_t>> chunks;
  for (uint64_t i = 0; i < 3; ++i)
    chunks.push_back(make_bytes(10 + i, 2000));
  {
    auto store = open_at(path);
    for (auto& x : chunks)
      REQUIRE_FALSE(store->put(key_of(x), x));
    REQUIRE(store->get(key_of(chunks[0]))); // order: 1 2 0
  }
  auto store = open_at(path);
  auto listed = store->list(0);
  REQUIRE(listed.size() == 3);
  CHECK(listed[0].key == key_of(chunks[1]));
  CHECK(listed[1].key == key_of(chunks[2]));
  CHECK(listed[2].key == key_of(chunks[0]));
  auto r = store->evict_to(4000);
  REQUIRE(r);
  CHECK_FALSE(store->contains(key_of(chunks[1])));
  CHECK(store->contains(key_of(chunks[0])));
}

TEST_CASE("large chunks live in blob files", "[cache_store][rocksdb]") {
  temp_dir dir;
  auto path = dir.sub("db");
  auto big = make_bytes(5, 1 << 20);
  {
    auto store = open_at(path);
    REQUIRE_FALSE(store->put(key_of(big), big));
    REQUIRE_FALSE(store->flush());
  }
  size_t blob_files = 0;
  for (auto& entry : std::filesystem::directory_iterator(path))
    if (entry.path().extension() == ".blob")
      ++blob_files;
  CHECK(blob_files >= 1);
  auto store = open_at(path);
  CHECK(*store->get(key_of(big)) == big);
}

TEST_CASE("open errors name the path", "[cache_store][rocksdb]") {
  temp_dir dir;
  SECTION("a path below a regular file") {
    auto file = dir.sub("plain_file");
    std::ofstream{file} << "not a directory";
    rocksdb_store_options opts;
    opts.path = file + "/db";
    auto store = rocksdb_chunk_store::open(opts);
    REQUIRE_FALSE(store);
    CHECK(is(store.error(), error_code::open_failed));
    CHECK(render(store.error()).find(opts.path) != std::string::npos);
  }
  SECTION("an empty path") {
    auto store = rocksdb_chunk_store::open(rocksdb_store_options{});
    REQUIRE_FALSE(store);
    CHECK(is(store.error(), error_code::open_failed));
  }
  SECTION("a database held by another instance") {
    auto path = dir.sub("db");
    auto first = open_at(path);
    rocksdb_store_options opts;
    opts.path = path;
    auto second = rocksdb_chunk_store::open(opts);
    REQUIRE_FALSE(second);
    CHECK(is(second.error(), error_code::db_locked));
    CHECK(render(second.error()).find(path) != std::string::npos);
  }
}

TEST_CASE("acknowledged puts survive kill -9, and nothing stored is torn",
          "[cache_store][rocksdb]") {
  temp_dir dir;
  auto path = dir.sub("db");
  const uint64_t n = 200;
  const uint64_t k = 50;
  std::string out;
  auto status = run_child({gleam::test::build_path("bin/cache_store_crash_writer"),
                           path, std::to_string(n), std::to_string(k)},
                          out);
  REQUIRE(WIFSIGNALED(status));
  REQUIRE(WTERMSIG(status) == SIGKILL);
  std::set<uint64_t> acked;
  std::istringstream lines{out};
  for (std::string line; std::getline(lines, line);)
    if (!line.empty() && lines.good())
      acked.insert(std::stoull(line));
  // Every put of the first loop and k of the second returned before the kill.
  REQUIRE(acked.size() >= n + k - 1);
  for (uint64_t i = 0; i < n + k - 1; ++i)
    REQUIRE(acked.count(i) == 1);
  auto store = open_at(path);
  // Every acknowledged chunk is there with its bytes and its tenant.
  for (auto i : acked) {
    auto bytes = crash_chunk(i);
    auto got = store->get(key_of(bytes));
    REQUIRE(got);
    CHECK(*got == bytes);
    CHECK(store->entry_info(key_of(bytes))->tenants == tenant_set{crash_tenant(i)});
  }
  // Every index entry's bytes re-hash to its key (no torn or dangling entry).
  auto listed = store->list(0);
  CHECK(listed.size() >= acked.size());
  for (const auto& entry : listed) {
    auto got = store->get(entry.key);
    REQUIRE(got);
    CHECK(got->size() == entry.info.size);
    CHECK(hash_chunk(entry.key.kind, got->data(), got->size()) == entry.key);
    CHECK(entry.info.tenants.size() == 1);
  }
}

TEST_CASE("100 kill -9 at random moments: the store opens and every entry "
          "re-hashes to its key",
          "[cache_store][rocksdb]") {
  temp_dir dir;
  auto path = dir.sub("db");
  std::mt19937_64 rng{20261202};
  // Up to 60 ms: some kills land while RocksDB opens or recovers, most in
  // the middle of a put. Every tenth round 60..120 ms: in the middle of puts
  // even where loading and opening are slow (a cold page cache, a busy
  // machine: all 100 rounds once ended before the first put).
  std::uniform_int_distribution<int> early_us{0, 60000};
  std::uniform_int_distribution<int> late_us{60000, 120000};
  std::set<uint64_t> acked;
  uint64_t next = 0;
  int killed = 0;
  for (int round = 0; round < 100; ++round) {
    std::string out;
    auto status = run_child_killed(
      {gleam::test::build_path("bin/cache_store_crash_writer"), path, "0", "0",
       std::to_string(next)},
      std::chrono::microseconds{round % 10 != 9 ? early_us(rng) : late_us(rng)}, out);
    // A child that finished on its own failed (it loops until killed).
    INFO("round " << round << ", wait status " << status << ", output tail: "
                  << out.substr(out.size() > 200 ? out.size() - 200 : 0));
    REQUIRE(WIFSIGNALED(status));
    REQUIRE(WTERMSIG(status) == SIGKILL);
    ++killed;
    std::istringstream lines{out};
    for (std::string line; std::getline(lines, line);)
      if (!line.empty() && lines.good())
        acked.insert(std::stoull(line));
    if (!acked.empty())
      next = std::max(next, *acked.rbegin() + 1);
    // The next round starts past anything this one may have half-written.
    next += 1;
    auto store = open_at(path);
    for (auto i : acked) {
      auto bytes = crash_chunk(i);
      auto got = store->get(key_of(bytes));
      REQUIRE(got);
      REQUIRE(*got == bytes);
      REQUIRE(store->entry_info(key_of(bytes))->tenants == tenant_set{crash_tenant(i)});
    }
    for (const auto& entry : store->list(0)) {
      auto got = store->get(entry.key);
      REQUIRE(got);
      REQUIRE(got->size() == entry.info.size);
      REQUIRE(hash_chunk(entry.key.kind, got->data(), got->size()) == entry.key);
      // Never without the tenant it was stored for.
      REQUIRE(entry.info.tenants.size() == 1);
    }
  }
  CHECK(killed == 100);
  // The kills hit a store under write, not only idle starts.
  CHECK(acked.size() > 100);
  std::printf("kill -9 rounds survived: %d, chunks acknowledged: %zu\n",
              killed, acked.size());
}

TEST_CASE("verify_reads re-hashes what it reads", "[cache_store][rocksdb]") {
  temp_dir dir;
  rocksdb_store_options opts;
  opts.path = dir.sub("db");
  opts.verify_reads = true;
  opts.sync = true;
  auto store = rocksdb_chunk_store::open(opts);
  REQUIRE(store);
  auto bytes = make_bytes(9, 20000);
  REQUIRE_FALSE((*store)->put(key_of(bytes), bytes));
  auto got = (*store)->get(key_of(bytes));
  REQUIRE(got);
  CHECK(*got == bytes);
  CHECK((*store)->path() == opts.path);
  CHECK((*store)->name() == "rocksdb");
}

TEST_CASE("verify_reads reports bytes altered on disk", "[cache_store][rocksdb]") {
  temp_dir dir;
  rocksdb_store_options opts;
  opts.path = dir.sub("db");
  opts.verify_reads = true;
  auto bytes = make_bytes(10, 20000);
  auto key = key_of(bytes);
  {
    auto store = rocksdb_chunk_store::open(opts);
    REQUIRE(store);
    REQUIRE_FALSE((*store)->put(key, bytes));
  }
  {
    // Damage the stored bytes behind the store's back.
    std::vector<rocksdb::ColumnFamilyDescriptor> families{
      {rocksdb::kDefaultColumnFamilyName, {}}, {"index", {}}, {"blobs", {}}};
    std::vector<rocksdb::ColumnFamilyHandle*> handles;
    rocksdb::DB* raw = nullptr;
    REQUIRE(rocksdb::DB::Open(rocksdb::DBOptions{}, opts.path, families,
                              &handles, &raw)
              .ok());
    auto damaged = bytes;
    damaged[19999] ^= 0x40;
    CHECK(raw->Put(rocksdb::WriteOptions{}, handles[2], key.to_binary(),
                   rocksdb::Slice{reinterpret_cast<const char*>(damaged.data()),
                                  damaged.size()})
            .ok());
    for (auto* h : handles)
      CHECK(raw->DestroyColumnFamilyHandle(h).ok());
    delete raw;
  }
  auto store = rocksdb_chunk_store::open(opts);
  REQUIRE(store);
  auto got = (*store)->get(key);
  REQUIRE_FALSE(got);
  CHECK(is(got.error(), error_code::corrupt_entry));
  CHECK(render(got.error()).find(key.to_string()) != std::string::npos);
}
