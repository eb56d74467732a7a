#include "cache_store/tiered_store.hpp"

#include <catch2/catch.hpp>

#include <cstring>
#include <memory>
#include <vector>

#include "cache_store/disk_tier.hpp"
#include "cache_store/error.hpp"
#include "cache_store/host_memory_tier.hpp"
#include "cache_store/memory_chunk_store.hpp"
#include "cache_store/rocksdb_chunk_store.hpp"
#include "tests/cache_store/test_util.hpp"

using namespace gleam::cache_store;
using gleam::cache_store::test::make_bytes;
using gleam::cache_store::test::temp_dir;

namespace {

constexpr uint64_t kib = 1024;

struct chunk {
  chunk_key key;
  std::vector<uint8_t> bytes;
};

chunk make_chunk(uint64_t seed, size_t size = kib) {
  chunk result;
  result.bytes = make_bytes(seed, size);
  result.key = hash_chunk(chunk_key::algo::xxh3_128, result.bytes.data(),
                          result.bytes.size());
  return result;
}

std::unique_ptr<tiered_store> make_store(uint64_t gpu, uint64_t host,
                                         uint64_t disk) {
  std::vector<std::unique_ptr<tier>> tiers;
  if (gpu > 0)
    tiers.push_back(std::make_unique<fake_device_tier>(gpu));
  if (host > 0)
    tiers.push_back(std::make_unique<host_memory_tier>("host", host));
  if (disk > 0)
    tiers.push_back(std::make_unique<disk_tier>(
      std::make_unique<memory_chunk_store>(), disk));
  auto store = tiered_store::make(std::move(tiers));
  REQUIRE(store);
  return std::move(*store);
}

// A sink that copies the chunk into `dst` and remembers which kind of memory
// it was read from (the fake GPU tier's addresses are host memory).
struct recording_sink {
  std::vector<uint8_t> dst;
  tier_kind where = tier_kind::disk;
  tiered_store::fill_sink fn() {
    return [this](const chunk_view& src) -> caf::error {
      where = src.where;
      auto p = static_cast<const uint8_t*>(src.data);
      dst.assign(p, p + src.size);
      return {};
    };
  }
};

const std::vector<tier_kind> all_order{tier_kind::gpu, tier_kind::host,
                                       tier_kind::disk};

} // namespace

TEST_CASE("fill serves the fastest tier and promotes the chunk",
          "[cache_store][tiered]") {
  auto store = make_store(8 * kib, 8 * kib, 64 * kib);
  auto a = make_chunk(1);
  REQUIRE_FALSE(store->put(a.key, a.bytes.data(), a.bytes.size()));
  CHECK(store->entry_info(a.key)->tiers
        == (tier_bit(tier_kind::host) | tier_bit(tier_kind::disk)));
  recording_sink sink;
  auto first = store->fill(a.key, all_order, sink.fn());
  REQUIRE(first);
  CHECK(*first == tier_kind::host);
  CHECK(sink.dst == a.bytes);
  // Promoted into the GPU tier, and the sink read the GPU copy.
  CHECK(sink.where == tier_kind::gpu);
  CHECK(store->entry_info(a.key)->tiers == 0x7);
  recording_sink again;
  auto second = store->fill(a.key, all_order, again.fn());
  REQUIRE(second);
  CHECK(*second == tier_kind::gpu);
  CHECK(again.dst == a.bytes);
  // A fill restricted to slower tiers does not touch the GPU tier.
  recording_sink host_only;
  auto third = store->fill(a.key, {tier_kind::host, tier_kind::disk},
                           host_only.fn());
  REQUIRE(third);
  CHECK(*third == tier_kind::host);
  CHECK(host_only.where == tier_kind::host);
  CHECK(store->stats().hits == 3);
}

TEST_CASE("a fill with a device destination fills the GPU tier from there afterwards",
          "[cache_store][tiered]") {
  auto store = make_store(8 * kib, 8 * kib, 64 * kib);
  auto* gpu = dynamic_cast<fake_device_tier*>(store->find_tier(tier_kind::gpu));
  REQUIRE(gpu != nullptr);
  auto a = make_chunk(5);
  REQUIRE_FALSE(store->put(a.key, a.bytes.data(), a.bytes.size()));
  // The destination the sink writes to (the fake's device memory is host
  // memory); sized first so the sink's copy stays in place.
  recording_sink sink;
  sink.dst.resize(a.bytes.size());
  auto first = store->fill(a.key, all_order, sink.fn(), sink.dst.data());
  REQUIRE(first);
  CHECK(*first == tier_kind::host);
  // The sink read the host copy: nothing crossed to the GPU tier before it.
  CHECK(sink.where == tier_kind::host);
  CHECK(sink.dst == a.bytes);
  // Then the GPU tier took the chunk from the destination.
  CHECK(gpu->bytes_from_device() == a.bytes.size());
  CHECK(store->entry_info(a.key)->tiers == 0x7);
  recording_sink again;
  auto second = store->fill(a.key, all_order, again.fn(), nullptr);
  REQUIRE(second);
  CHECK(*second == tier_kind::gpu);
  CHECK(again.dst == a.bytes);
  // A failing sink leaves the GPU tier as it was.
  auto b = make_chunk(6);
  REQUIRE_FALSE(store->put(b.key, b.bytes.data(), b.bytes.size()));
  std::vector<uint8_t> dst(b.bytes.size());
  auto failed = store->fill(
    b.key, all_order,
    [](const chunk_view&) -> caf::error {
      return make_error(error_code::tier_failed, "the device write failed");
    },
    dst.data());
  CHECK_FALSE(failed);
  CHECK_FALSE(gpu->contains(b.key));
  CHECK(gpu->bytes_from_device() == a.bytes.size());
}

TEST_CASE("shed frees GPU-tier bytes and keeps the chunks in the slower tiers",
          "[cache_store][tiered]") {
  auto store = make_store(8 * kib, 8 * kib, 64 * kib);
  auto a = make_chunk(7);
  auto b = make_chunk(8);
  for (auto* c : {&a, &b}) {
    REQUIRE_FALSE(store->put(c->key, c->bytes.data(), c->bytes.size()));
    REQUIRE_FALSE(store->extend_from_device(c->key, c->bytes.data(), c->bytes.size()));
  }
  REQUIRE(store->stats().tier_bytes[static_cast<size_t>(tier_kind::gpu)] == 2 * kib);
  // A chunk the store lacks is not added.
  auto gone = make_chunk(9);
  CHECK(is(store->extend_from_device(gone.key, gone.bytes.data(), gone.bytes.size()),
           error_code::not_found));
  // One chunk's worth: the least recently used one goes.
  CHECK(store->shed(tier_kind::gpu, kib) == kib);
  CHECK(store->entry_info(a.key)->tiers == (tier_bit(tier_kind::host) | tier_bit(tier_kind::disk)));
  CHECK(store->entry_info(b.key)->tiers == 0x7);
  CHECK(store->shed(tier_kind::gpu, 64 * kib) == kib);
  CHECK(store->shed(tier_kind::gpu, kib) == 0);
  recording_sink sink;
  REQUIRE(store->fill(a.key, {tier_kind::host}, sink.fn()));
  CHECK(sink.dst == a.bytes);
}

TEST_CASE("a chunk only on disk is filled from disk and promoted to host",
          "[cache_store][tiered]") {
  auto store = make_store(0, 8 * kib, 64 * kib);
  auto a = make_chunk(2, 3000);
  REQUIRE_FALSE(store->put(a.key, a.bytes.data(), a.bytes.size(),
                           tier_bit(tier_kind::disk)));
  CHECK(store->entry_info(a.key)->tiers == tier_bit(tier_kind::disk));
  recording_sink sink;
  auto served = store->fill(a.key, all_order, sink.fn());
  REQUIRE(served);
  CHECK(*served == tier_kind::disk);
  CHECK(sink.dst == a.bytes);
  CHECK(sink.where == tier_kind::host);
  CHECK(store->entry_info(a.key)->tiers
        == (tier_bit(tier_kind::host) | tier_bit(tier_kind::disk)));
  auto got = store->get(a.key);
  REQUIRE(got);
  CHECK(*got == a.bytes);
}

TEST_CASE("each tier evicts its least recently used chunk",
          "[cache_store][tiered]") {
  auto store = make_store(0, 2 * kib, 64 * kib);
  auto a = make_chunk(11);
  auto b = make_chunk(12);
  auto c = make_chunk(13);
  REQUIRE_FALSE(store->put(a.key, a.bytes.data(), a.bytes.size()));
  REQUIRE_FALSE(store->put(b.key, b.bytes.data(), b.bytes.size()));
  recording_sink sink;
  REQUIRE(store->fill(a.key, all_order, sink.fn())); // host order: b a
  REQUIRE_FALSE(store->put(c.key, c.bytes.data(), c.bytes.size()));
  CHECK(store->tier_contents(tier_kind::host)
        == std::vector<chunk_key>{a.key, c.key});
  // b left the host tier but is still on disk.
  CHECK(store->entry_info(b.key)->tiers == tier_bit(tier_kind::disk));
  CHECK(store->tier_contents(tier_kind::disk).size() == 3);
  CHECK(store->stats().tier_bytes[static_cast<size_t>(tier_kind::host)]
        == 2 * kib);
  recording_sink from_disk;
  auto served = store->fill(b.key, all_order, from_disk.fn());
  REQUIRE(served);
  CHECK(*served == tier_kind::disk);
  CHECK(from_disk.dst == b.bytes);
}

TEST_CASE("a chunk evicted from every tier is gone from the index",
          "[cache_store][tiered]") {
  auto store = make_store(0, 2 * kib, 0);
  auto a = make_chunk(21);
  auto b = make_chunk(22);
  auto c = make_chunk(23);
  for (auto* x : {&a, &b, &c})
    REQUIRE_FALSE(store->put(x->key, x->bytes.data(), x->bytes.size()));
  CHECK_FALSE(store->contains(a.key));
  CHECK(is(store->entry_info(a.key).error(), error_code::not_found));
  CHECK(store->missing({a.key, b.key, c.key}) == std::vector<size_t>{0});
  recording_sink sink;
  auto miss = store->fill(a.key, all_order, sink.fn());
  REQUIRE_FALSE(miss);
  CHECK(is(miss.error(), error_code::not_found));
  CHECK(store->stats().entries == 2);
}

TEST_CASE("referenced chunks stay in their tiers", "[cache_store][tiered]") {
  auto store = make_store(0, 2 * kib, 0);
  auto a = make_chunk(31);
  auto b = make_chunk(32);
  auto c = make_chunk(33);
  REQUIRE_FALSE(store->put(a.key, a.bytes.data(), a.bytes.size()));
  REQUIRE_FALSE(store->ref(a.key));
  REQUIRE_FALSE(store->put(b.key, b.bytes.data(), b.bytes.size()));
  REQUIRE_FALSE(store->put(c.key, c.bytes.data(), c.bytes.size()));
  CHECK(store->contains(a.key));
  CHECK_FALSE(store->contains(b.key));
  CHECK(is(store->erase(a.key), error_code::in_use));
  REQUIRE_FALSE(store->ref(c.key));
  // Both resident chunks are referenced: a third cannot get in.
  auto d = make_chunk(34);
  CHECK(is(store->put(d.key, d.bytes.data(), d.bytes.size()),
           error_code::no_space));
  CHECK_FALSE(store->contains(d.key));
  REQUIRE_FALSE(store->unref(a.key));
  REQUIRE_FALSE(store->put(d.key, d.bytes.data(), d.bytes.size()));
  CHECK_FALSE(store->contains(a.key));
  CHECK(is(store->unref(d.key), error_code::refcount_underflow));
}

TEST_CASE("verified chunks are evicted after unverified ones",
          "[cache_store][tiered]") {
  auto store = make_store(0, 2 * kib, 0);
  auto a = make_chunk(41);
  auto b = make_chunk(42);
  auto c = make_chunk(43);
  REQUIRE_FALSE(store->put(a.key, a.bytes.data(), a.bytes.size()));
  REQUIRE_FALSE(store->mark_verified(a.key));
  REQUIRE_FALSE(store->put(b.key, b.bytes.data(), b.bytes.size()));
  REQUIRE_FALSE(store->put(c.key, c.bytes.data(), c.bytes.size()));
  CHECK(store->contains(a.key));
  CHECK_FALSE(store->contains(b.key));
  CHECK(store->entry_info(a.key)->verified);
}

TEST_CASE("the tiered store refuses mismatching bytes and bad tier sets",
          "[cache_store][tiered]") {
  auto store = make_store(4 * kib, 4 * kib, 4 * kib);
  auto a = make_chunk(51);
  auto tampered = a.bytes;
  tampered[0] ^= 1;
  CHECK(is(store->put(a.key, tampered.data(), tampered.size()),
           error_code::hash_mismatch));
  CHECK_FALSE(store->contains(a.key));
  auto big = make_chunk(52, 5 * kib);
  CHECK(is(store->put(big.key, big.bytes.data(), big.bytes.size()),
           error_code::no_space));
  CHECK_FALSE(store->contains(big.key));
  std::vector<std::unique_ptr<tier>> twice;
  twice.push_back(std::make_unique<host_memory_tier>("one", kib));
  twice.push_back(std::make_unique<host_memory_tier>("two", kib));
  auto bad = tiered_store::make(std::move(twice));
  REQUIRE_FALSE(bad);
  CHECK(is(bad.error(), error_code::invalid_argument));
}

TEST_CASE("a failing sink fails the fill and releases the pin",
          "[cache_store][tiered]") {
  auto store = make_store(0, 4 * kib, 0);
  auto a = make_chunk(61);
  REQUIRE_FALSE(store->put(a.key, a.bytes.data(), a.bytes.size()));
  auto res = store->fill(a.key, all_order, [](const chunk_view&) {
    return make_error(error_code::tier_failed, "copy failed");
  });
  REQUIRE_FALSE(res);
  CHECK(is(res.error(), error_code::tier_failed));
  CHECK(store->entry_info(a.key)->refcount == 0);
  // The sink may call back into the store: the chunk stays pinned meanwhile.
  bool pinned = false;
  auto ok = store->fill(a.key, all_order, [&](const chunk_view&) -> caf::error {
    pinned = store->entry_info(a.key)->refcount == 1;
    return {};
  });
  REQUIRE(ok);
  CHECK(pinned);
}

/// A 64 KiB host tier over a 64 KiB RocksDB disk tier at `opts.path`.
std::unique_ptr<tiered_store> host_over_rocksdb(const rocksdb_store_options& opts) {
  auto disk = rocksdb_chunk_store::open(opts);
  REQUIRE(disk);
  std::vector<std::unique_ptr<tier>> tiers;
  tiers.push_back(std::make_unique<host_memory_tier>("host", 64 * kib));
  tiers.push_back(std::make_unique<disk_tier>(std::move(*disk), 64 * kib));
  auto store = tiered_store::make(std::move(tiers));
  REQUIRE(store);
  return std::move(*store);
}

TEST_CASE("a tiered store over RocksDB keeps its disk tier across restarts",
          "[cache_store][tiered][rocksdb]") {
  temp_dir dir;
  rocksdb_store_options opts;
  opts.path = dir.sub("db");
  auto a = make_chunk(71, 10 * kib);
  auto b = make_chunk(72, 10 * kib);
  auto make = [&] { return host_over_rocksdb(opts); };
  {
    auto store = make();
    REQUIRE_FALSE(store->put(a.key, a.bytes.data(), a.bytes.size()));
    REQUIRE_FALSE(store->put(b.key, b.bytes.data(), b.bytes.size()));
    REQUIRE_FALSE(store->mark_verified(b.key));
  }
  auto store = make();
  CHECK(store->entry_info(a.key)->tiers == tier_bit(tier_kind::disk));
  CHECK(store->entry_info(b.key)->verified);
  recording_sink sink;
  auto served = store->fill(a.key, all_order, sink.fn());
  REQUIRE(served);
  CHECK(*served == tier_kind::disk);
  CHECK(sink.dst == a.bytes);
}

TEST_CASE("the host tier allocates through the injected allocator",
          "[cache_store][tiered]") {
  int64_t live_bytes = 0;
  int allocations = 0;
  bool refuse = false;
  memory_allocator alloc{
    [&](size_t size) -> void* {
      if (refuse)
        return nullptr;
      ++allocations;
      live_bytes += static_cast<int64_t>(size);
      return std::malloc(size > 0 ? size : 1);
    },
    [&](void* ptr, size_t size) {
      live_bytes -= static_cast<int64_t>(size);
      std::free(ptr);
    }};
  auto a = make_chunk(81, 1000);
  auto b = make_chunk(82, 500);
  {
    host_memory_tier host{"pinned", 4 * kib, alloc};
    CHECK(host.kind() == tier_kind::host);
    REQUIRE_FALSE(host.put(a.key, a.bytes.data(), a.bytes.size()));
    REQUIRE_FALSE(host.put(b.key, b.bytes.data(), b.bytes.size()));
    CHECK(allocations == 2);
    CHECK(live_bytes == 1500);
    CHECK(host.used() == 1500);
    auto view = host.view(a.key);
    REQUIRE(view);
    CHECK(view->where == tier_kind::host);
    CHECK(std::memcmp(view->data, a.bytes.data(), a.bytes.size()) == 0);
    std::vector<uint8_t> out(1000);
    auto n = host.read(a.key, out.data(), out.size());
    REQUIRE(n);
    CHECK(out == a.bytes);
    REQUIRE_FALSE(host.erase(b.key));
    CHECK(live_bytes == 1000);
    CHECK(is(host.erase(b.key), error_code::not_found));
    refuse = true;
    CHECK(is(host.put(b.key, b.bytes.data(), b.bytes.size()),
             error_code::no_space));
    auto too_big = make_chunk(83, 4 * kib);
    CHECK(is(host.put(too_big.key, too_big.bytes.data(), too_big.bytes.size()),
             error_code::no_space));
  }
  // The tier returned every buffer when it went away.
  CHECK(live_bytes == 0);
}

TEST_CASE("tiers report their kind and the disk tier has no view",
          "[cache_store][tiered]") {
  fake_device_tier gpu{kib};
  CHECK(gpu.kind() == tier_kind::gpu);
  auto a = make_chunk(91, 100);
  REQUIRE_FALSE(gpu.put(a.key, a.bytes.data(), a.bytes.size()));
  CHECK(gpu.view(a.key)->where == tier_kind::gpu);
  disk_tier disk{std::make_unique<memory_chunk_store>(), kib};
  CHECK(disk.kind() == tier_kind::disk);
  REQUIRE_FALSE(disk.put(a.key, a.bytes.data(), a.bytes.size()));
  CHECK(is(disk.view(a.key).error(), error_code::invalid_argument));
  CHECK(disk.contents().size() == 1);
  CHECK(to_string(tier_kind::gpu) == "gpu");
  CHECK(to_string(tier_kind::host) == "host");
  CHECK(to_string(tier_kind::disk) == "disk");
}

TEST_CASE("extend adds tiers to a held chunk and never brings back a dropped one",
          "[cache_store][tiered]") {
  auto store = make_store(0, 8 * kib, 64 * kib);
  auto a = make_chunk(41);
  REQUIRE_FALSE(store->put(a.key, a.bytes.data(), a.bytes.size(), tier_bit(tier_kind::host)));
  REQUIRE_FALSE(store->mark_verified(a.key));
  REQUIRE_FALSE(store->extend(a.key, a.bytes.data(), a.bytes.size(), tier_bit(tier_kind::disk)));
  auto info = store->entry_info(a.key);
  REQUIRE(info);
  CHECK(info->tiers == (tier_bit(tier_kind::host) | tier_bit(tier_kind::disk)));
  CHECK(info->verified);
  // Wrong bytes are refused like put refuses them.
  auto b = make_chunk(42);
  REQUIRE_FALSE(store->put(b.key, b.bytes.data(), b.bytes.size(), tier_bit(tier_kind::host)));
  CHECK(is(store->extend(b.key, a.bytes.data(), a.bytes.size(), tier_bit(tier_kind::disk)),
           error_code::hash_mismatch));
  // Dropped, then extended late: still gone.
  REQUIRE_FALSE(store->erase(b.key));
  CHECK(is(store->extend(b.key, b.bytes.data(), b.bytes.size(), tier_bit(tier_kind::disk)),
           error_code::not_found));
  CHECK_FALSE(store->contains(b.key));
}

TEST_CASE("an XXH3 chunk fills only for its tenants; equal bytes join, other bytes do not",
          "[cache_store][tiered][tenant]") {
  auto store = make_store(0, 16 * kib, 64 * kib);
  auto a = make_chunk(81);
  REQUIRE_FALSE(store->put(a.key, a.bytes.data(), a.bytes.size(),
                           tier_bit(tier_kind::host) | tier_bit(tier_kind::disk), "alice"));
  CHECK(store->may_serve(a.key, "alice"));
  CHECK_FALSE(store->may_serve(a.key, "bob"));
  recording_sink sink;
  CHECK(store->fill(a.key, all_order, sink.fn(), nullptr, "alice"));
  CHECK(sink.dst == a.bytes);
  recording_sink refused;
  auto miss = store->fill(a.key, all_order, refused.fn(), nullptr, "bob");
  REQUIRE_FALSE(miss);
  CHECK(is(miss.error(), error_code::not_found));
  CHECK(refused.dst.empty());
  // Other bytes under alice's key (as if they collided with it): refused,
  // bob gains nothing and alice's bytes stay.
  auto other = make_bytes(82, a.bytes.size());
  CHECK(is(store->put(a.key, other.data(), other.size(), tier_bit(tier_kind::host), "bob"),
           error_code::collision));
  CHECK_FALSE(store->may_serve(a.key, "bob"));
  CHECK(*store->get(a.key) == a.bytes);
  // Bob uploads the same bytes: he joins, in every tier.
  REQUIRE_FALSE(store->put(a.key, a.bytes.data(), a.bytes.size(), tier_bit(tier_kind::host),
                           "bob"));
  CHECK(store->entry_info(a.key)->tenants == (tenant_set{"alice", "bob"}));
  auto* disk = dynamic_cast<disk_tier*>(store->find_tier(tier_kind::disk));
  REQUIRE(disk != nullptr);
  CHECK(disk->store().entry_info(a.key)->tenants == (tenant_set{"alice", "bob"}));
  recording_sink joined;
  CHECK(store->fill(a.key, all_order, joined.fn(), nullptr, "bob"));
  CHECK(joined.dst == a.bytes);
  // A SHA-256 chunk fills for anyone.
  auto s = make_bytes(83, kib);
  auto skey = hash_chunk(chunk_key::algo::sha256, s.data(), s.size());
  REQUIRE_FALSE(store->put(skey, s.data(), s.size(), tier_bit(tier_kind::host), "alice"));
  recording_sink shared;
  CHECK(store->fill(skey, all_order, shared.fn(), nullptr, "bob"));
  CHECK(shared.dst == s);
}

TEST_CASE("after a restart, tenant A's XXH3 chunk serves A and not B",
          "[cache_store][tiered][rocksdb][tenant]") {
  temp_dir dir;
  rocksdb_store_options opts;
  opts.path = dir.sub("db");
  auto a = make_chunk(91, 10 * kib);
  auto b = make_chunk(92, 10 * kib);
  auto make = [&] { return host_over_rocksdb(opts); };
  {
    auto store = make();
    // a: host first, disk later (as the background writer does).
    REQUIRE_FALSE(store->put(a.key, a.bytes.data(), a.bytes.size(), tier_bit(tier_kind::host),
                             "alice"));
    REQUIRE_FALSE(store->put(a.key, a.bytes.data(), a.bytes.size(), tier_bit(tier_kind::host),
                             "carol"));
    REQUIRE_FALSE(store->extend(a.key, a.bytes.data(), a.bytes.size(),
                                tier_bit(tier_kind::disk)));
    REQUIRE_FALSE(store->put(b.key, b.bytes.data(), b.bytes.size(),
                             tier_bit(tier_kind::host) | tier_bit(tier_kind::disk), "bob"));
  }
  auto store = make();
  CHECK(store->may_serve(a.key, "alice"));
  CHECK(store->may_serve(a.key, "carol"));
  CHECK_FALSE(store->may_serve(a.key, "bob"));
  CHECK_FALSE(store->may_serve(a.key, ""));
  CHECK(store->may_serve(b.key, "bob"));
  CHECK_FALSE(store->may_serve(b.key, "alice"));
  recording_sink sink;
  CHECK(store->fill(a.key, all_order, sink.fn(), nullptr, "alice"));
  CHECK(sink.dst == a.bytes);
  recording_sink refused;
  CHECK_FALSE(store->fill(a.key, all_order, refused.fn(), nullptr, "bob"));
  CHECK(refused.dst.empty());
}
