// One fixture, run against every chunk_store implementation.
#include "cache_store/chunk_store.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "cache_store/error.hpp"
#include "cache_store/memory_chunk_store.hpp"
#include "cache_store/rocksdb_chunk_store.hpp"
#include "tests/cache_store/test_util.hpp"

using namespace gleam::cache_store;
using gleam::cache_store::test::make_bytes;
using gleam::cache_store::test::temp_dir;

namespace {

struct memory_impl {
  static constexpr uint8_t tiers = tier_bit(tier_kind::host);
  std::unique_ptr<chunk_store> make() {
    return std::make_unique<memory_chunk_store>();
  }
};

struct rocksdb_impl {
  static constexpr uint8_t tiers = tier_bit(tier_kind::disk);
  temp_dir dir;
  std::unique_ptr<chunk_store> make() {
    rocksdb_store_options opts;
    opts.path = dir.sub("db");
    auto store = rocksdb_chunk_store::open(opts);
    REQUIRE(store);
    return std::move(*store);
  }
};

struct chunk {
  chunk_key key;
  std::vector<uint8_t> bytes;
};

chunk make_chunk(uint64_t seed, size_t size,
                 chunk_key::algo kind = chunk_key::algo::xxh3_128) {
  chunk result;
  result.bytes = make_bytes(seed, size);
  result.key = hash_chunk(kind, result.bytes.data(), result.bytes.size());
  return result;
}

} // namespace

TEMPLATE_TEST_CASE("chunk stores return the bytes they were given",
                   "[cache_store][chunk_store]", memory_impl, rocksdb_impl) {
  TestType impl;
  auto store = impl.make();
  auto small = make_chunk(1, 100);
  auto large = make_chunk(2, 256 * 1024, chunk_key::algo::sha256);
  auto empty = make_chunk(3, 0);
  for (auto* c : {&small, &large, &empty})
    REQUIRE_FALSE(store->put(c->key, c->bytes));
  for (auto* c : {&small, &large, &empty}) {
    CHECK(store->contains(c->key));
    auto got = store->get(c->key);
    REQUIRE(got);
    CHECK(*got == c->bytes);
    std::vector<uint8_t> buf(c->bytes.size() + 10, 0xEE);
    auto n = store->get_into(c->key, buf.data(), buf.size());
    REQUIRE(n);
    CHECK(*n == c->bytes.size());
    CHECK(std::vector<uint8_t>(buf.begin(), buf.begin() + *n) == c->bytes);
  }
  std::vector<uint8_t> tiny(10);
  auto too_small = store->get_into(large.key, tiny.data(), tiny.size());
  REQUIRE_FALSE(too_small);
  CHECK(is(too_small.error(), error_code::buffer_too_small));
  auto info = store->entry_info(large.key);
  REQUIRE(info);
  CHECK(info->size == large.bytes.size());
  CHECK(info->tiers == TestType::tiers);
  CHECK(info->last_use_ns > 0);
  CHECK_FALSE(info->verified);
  CHECK(info->refcount == 0);
  // Storing an existing key again keeps one entry.
  REQUIRE_FALSE(store->put(small.key, small.bytes));
  auto st = store->stats();
  CHECK(st.entries == 3);
  CHECK(st.bytes == 100 + 256 * 1024);
  CHECK(st.tier_bytes[TestType::tiers == tier_bit(tier_kind::host) ? 1 : 2]
        == st.bytes);
}

TEMPLATE_TEST_CASE("missing() names exactly the absent keys",
                   "[cache_store][chunk_store]", memory_impl, rocksdb_impl) {
  TestType impl;
  auto store = impl.make();
  std::vector<chunk> chunks;
  for (uint64_t i = 0; i < 6; ++i)
    chunks.push_back(make_chunk(10 + i, 500 + i));
  for (size_t i : {0u, 2u, 3u})
    REQUIRE_FALSE(store->put(chunks[i].key, chunks[i].bytes));
  std::vector<chunk_key> keys;
  for (auto& c : chunks)
    keys.push_back(c.key);
  CHECK(store->missing(keys) == std::vector<size_t>{1, 4, 5});
  CHECK(store->missing({}).empty());
  auto st = store->stats();
  CHECK(st.hits == 3);
  CHECK(st.misses == 3);
  CHECK_FALSE(store->get(chunks[1].key));
  CHECK(store->stats().misses == 4);
}

TEMPLATE_TEST_CASE("a chunk whose bytes do not match its key is refused",
                   "[cache_store][chunk_store]", memory_impl, rocksdb_impl) {
  TestType impl;
  auto store = impl.make();
  auto c = make_chunk(5, 4096);
  auto tampered = c.bytes;
  tampered[4095] ^= 0x80;
  auto err = store->put(c.key, tampered);
  REQUIRE(err);
  CHECK(is(err, error_code::hash_mismatch));
  CHECK(render(err).find(c.key.to_string()) != std::string::npos);
  CHECK_FALSE(store->contains(c.key));
  CHECK(store->stats().entries == 0);
  auto got = store->get(c.key);
  REQUIRE_FALSE(got);
  CHECK(is(got.error(), error_code::not_found));
  // The same key with an algorithm other than the one that made it.
  auto as_sha = c.key;
  as_sha.kind = chunk_key::algo::sha256;
  as_sha.size = 32;
  CHECK(is(store->put(as_sha, c.bytes), error_code::hash_mismatch));
  CHECK(store->stats().entries == 0);
}

TEMPLATE_TEST_CASE("chunks sharing their first 1024 bits are two entries",
                   "[cache_store][chunk_store]", memory_impl, rocksdb_impl) {
  TestType impl;
  auto store = impl.make();
  auto a = make_bytes(77, 8192);
  auto b = a;
  b[1000] ^= 0xFF;
  b[8000] ^= 0x01;
  REQUIRE(std::equal(a.begin(), a.begin() + 128, b.begin()));
  auto ka = hash_chunk(chunk_key::algo::xxh3_128, a.data(), a.size());
  auto kb = hash_chunk(chunk_key::algo::xxh3_128, b.data(), b.size());
  REQUIRE(ka != kb);
  REQUIRE_FALSE(store->put(ka, a));
  CHECK(store->missing({ka, kb}) == std::vector<size_t>{1});
  REQUIRE_FALSE(store->put(kb, b));
  CHECK(store->stats().entries == 2);
  CHECK(*store->get(ka) == a);
  CHECK(*store->get(kb) == b);
}

TEMPLATE_TEST_CASE("eviction removes least recently used entries first",
                   "[cache_store][chunk_store]", memory_impl, rocksdb_impl) {
  TestType impl;
  auto store = impl.make();
  auto a = make_chunk(21, 1000);
  auto b = make_chunk(22, 1000);
  auto c = make_chunk(23, 1000);
  auto d = make_chunk(24, 1000);
  for (auto* x : {&a, &b, &c, &d})
    REQUIRE_FALSE(store->put(x->key, x->bytes));
  REQUIRE(store->get(a.key)); // order now: b c d a
  REQUIRE(store->missing({c.key}).empty()); // order now: b d a c
  auto listed = store->list(0);
  REQUIRE(listed.size() == 4);
  CHECK(listed[0].key == b.key);
  CHECK(listed[1].key == d.key);
  CHECK(listed[2].key == a.key);
  CHECK(listed[3].key == c.key);
  CHECK(store->list(2).size() == 2);
  auto r1 = store->evict_to(3000);
  REQUIRE(r1);
  CHECK(r1->entries == 1);
  CHECK(r1->bytes == 1000);
  CHECK(r1->remaining_bytes == 3000);
  CHECK_FALSE(store->contains(b.key));
  auto r2 = store->evict_to(1500);
  REQUIRE(r2);
  CHECK(r2->entries == 2);
  CHECK_FALSE(store->contains(d.key));
  CHECK_FALSE(store->contains(a.key));
  CHECK(store->contains(c.key));
  CHECK(*store->get(c.key) == c.bytes);
}

TEMPLATE_TEST_CASE("verified entries are evicted after unverified ones",
                   "[cache_store][chunk_store]", memory_impl, rocksdb_impl) {
  TestType impl;
  auto store = impl.make();
  auto a = make_chunk(31, 1000);
  auto b = make_chunk(32, 1000);
  auto c = make_chunk(33, 1000);
  for (auto* x : {&a, &b, &c})
    REQUIRE_FALSE(store->put(x->key, x->bytes));
  REQUIRE_FALSE(store->mark_verified(a.key));
  CHECK(store->entry_info(a.key)->verified);
  CHECK_FALSE(store->entry_info(b.key)->verified);
  REQUIRE(store->evict_to(1000));
  CHECK(store->contains(a.key));
  CHECK_FALSE(store->contains(b.key));
  CHECK_FALSE(store->contains(c.key));
  REQUIRE(store->evict_to(0));
  CHECK_FALSE(store->contains(a.key));
}

TEMPLATE_TEST_CASE("referenced entries are never evicted or erased",
                   "[cache_store][chunk_store]", memory_impl, rocksdb_impl) {
  TestType impl;
  auto store = impl.make();
  auto a = make_chunk(41, 1000);
  auto b = make_chunk(42, 2000);
  for (auto* x : {&a, &b})
    REQUIRE_FALSE(store->put(x->key, x->bytes));
  REQUIRE_FALSE(store->ref(a.key));
  REQUIRE_FALSE(store->ref(a.key));
  CHECK(store->entry_info(a.key)->refcount == 2);
  auto r = store->evict_to(0);
  REQUIRE(r);
  CHECK(r->entries == 1);
  CHECK(r->remaining_bytes == 1000);
  CHECK(store->contains(a.key));
  CHECK(is(store->erase(a.key), error_code::in_use));
  REQUIRE_FALSE(store->unref(a.key));
  REQUIRE_FALSE(store->unref(a.key));
  CHECK(is(store->unref(a.key), error_code::refcount_underflow));
  REQUIRE_FALSE(store->erase(a.key));
  CHECK_FALSE(store->contains(a.key));
  CHECK(is(store->erase(a.key), error_code::not_found));
  CHECK(is(store->ref(a.key), error_code::not_found));
  CHECK(is(store->mark_verified(a.key), error_code::not_found));
  CHECK(is(store->entry_info(a.key).error(), error_code::not_found));
}

TEMPLATE_TEST_CASE("clear() removes every entry", "[cache_store][chunk_store]",
                   memory_impl, rocksdb_impl) {
  TestType impl;
  auto store = impl.make();
  for (uint64_t i = 0; i < 5; ++i) {
    auto c = make_chunk(50 + i, 300);
    REQUIRE_FALSE(store->put(c.key, c.bytes));
  }
  auto first = store->list(1).at(0).key;
  REQUIRE_FALSE(store->ref(first));
  REQUIRE_FALSE(store->clear());
  CHECK(store->stats().entries == 0);
  CHECK(store->stats().bytes == 0);
  CHECK(store->list(0).empty());
  CHECK_FALSE(store->contains(first));
  auto c = make_chunk(60, 300);
  REQUIRE_FALSE(store->put(c.key, c.bytes));
  CHECK(*store->get(c.key) == c.bytes);
}

TEMPLATE_TEST_CASE("concurrent puts and gets see whole chunks",
                   "[cache_store][chunk_store]", memory_impl, rocksdb_impl) {
  TestType impl;
  auto store = impl.make();
  std::vector<chunk> chunks;
  for (uint64_t i = 0; i < 40; ++i)
    chunks.push_back(make_chunk(100 + i, 2000 + 97 * i));
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (size_t n = 0; n < chunks.size(); ++n) {
        const auto& c = chunks[(n + 10 * t) % chunks.size()];
        if (store->put(c.key, c.bytes))
          ++failures;
        auto got = store->get(c.key);
        if (!got || *got != c.bytes)
          ++failures;
      }
    });
  for (auto& t : threads)
    t.join();
  CHECK(failures.load() == 0);
  CHECK(store->stats().entries == chunks.size());
  CHECK(store->missing({chunks.front().key, chunks.back().key}).empty());
}

TEMPLATE_TEST_CASE("a chunk records the tenants that stored its bytes",
                   "[cache_store][chunk_store][tenant]", memory_impl, rocksdb_impl) {
  TestType impl;
  auto store = impl.make();
  auto a = make_chunk(40, 3000);
  REQUIRE_FALSE(store->put(a.key, a.bytes.data(), a.bytes.size(), tenant_set{"alice"}));
  CHECK(store->entry_info(a.key)->tenants == tenant_set{"alice"});
  CHECK(may_serve(a.key, *store->entry_info(a.key), "alice"));
  CHECK_FALSE(may_serve(a.key, *store->entry_info(a.key), "bob"));
  // Equal bytes from another tenant: it joins.
  REQUIRE_FALSE(store->put(a.key, a.bytes.data(), a.bytes.size(), tenant_set{"bob"}));
  CHECK(store->entry_info(a.key)->tenants == (tenant_set{"alice", "bob"}));
  REQUIRE_FALSE(store->add_tenants(a.key, tenant_set{"carol"}));
  CHECK(store->entry_info(a.key)->tenants == (tenant_set{"alice", "bob", "carol"}));
  CHECK(is(store->add_tenants(make_chunk(41, 10).key, tenant_set{"x"}), error_code::not_found));
  // Without tenants: the unnamed one.
  auto b = make_chunk(42, 100);
  REQUIRE_FALSE(store->put(b.key, b.bytes));
  CHECK(store->entry_info(b.key)->tenants == tenant_set{""});
  // A SHA-256 chunk serves every tenant whoever stored it.
  auto c = make_chunk(43, 100, chunk_key::algo::sha256);
  REQUIRE_FALSE(store->put(c.key, c.bytes, tenant_set{"alice"}));
  CHECK(may_serve(c.key, *store->entry_info(c.key), "bob"));
  CHECK(may_serve(c.key, *store->entry_info(c.key), ""));
}
