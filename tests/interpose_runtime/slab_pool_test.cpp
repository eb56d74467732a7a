#include "interpose/slab_pool.hpp"

#include <catch2/catch.hpp>

#include <cstdint>
#include <map>
#include <random>

using gleam::interpose::slab_pool;

namespace {

constexpr uint64_t mib = uint64_t{1} << 20;

} // namespace

TEST_CASE("slab_pool carves aligned, disjoint allocations and grows its slabs",
          "[interpose_runtime][slab]") {
  slab_pool pool{1024 * mib, 64 * mib};
  CHECK_FALSE(pool.carve(100).has_value()); // no slab yet
  CHECK(pool.next_slab_size(100) == 64 * mib);
  pool.add_slab(0x10000000, 64 * mib);
  auto a = pool.carve(100);
  auto b = pool.carve(3 * mib);
  auto c = pool.carve(1000);
  REQUIRE(a);
  REQUIRE(b);
  REQUIRE(c);
  CHECK(*a % slab_pool::small_align == 0);
  CHECK(*b % slab_pool::large_align == 0);
  CHECK(*c % slab_pool::small_align == 0);
  // Disjoint: the small one after `a` fills the gap before the aligned one.
  CHECK(*c >= *a + 512);
  CHECK((*c + 1000 <= *b || *c >= *b + 3 * mib));
  CHECK(pool.unused_bytes() == 64 * mib - 512 - 3 * mib - 1024);
  // The next slab doubles, up to the maximum; a request larger than a
  // quarter of it is not carved.
  CHECK(pool.next_slab_size(mib) == 128 * mib);
  CHECK(pool.carves(256 * mib));
  CHECK_FALSE(pool.carves(256 * mib + 1));
  CHECK_FALSE(pool.carves(0));
  CHECK_FALSE(pool.carve(61 * mib).has_value());
  pool.add_slab(0x20000000, 128 * mib);
  auto d = pool.carve(61 * mib);
  REQUIRE(d);
  CHECK(*d >= 0x20000000);
  CHECK(*d + 61 * mib <= 0x20000000 + 128 * mib);
  for (int i = 0; i < 10; ++i)
    pool.add_slab(0x100000000ull * (i + 1), mib);
  CHECK(pool.next_slab_size(mib) == 1024 * mib);
}

TEST_CASE("slab_pool returns empty slabs except the newest, and merges free ranges",
          "[interpose_runtime][slab]") {
  slab_pool pool{1024 * mib, 64 * mib};
  pool.add_slab(0x10000000, 64 * mib);
  auto a = pool.carve(40 * mib);
  REQUIRE(a);
  pool.add_slab(0x20000000, 64 * mib);
  auto b = pool.carve(40 * mib);
  REQUIRE(b);
  CHECK(*b >= 0x20000000);
  uint64_t empty = 1;
  CHECK_FALSE(pool.release(*a + 512, &empty));
  CHECK(empty == 0);
  // The older slab empties: it goes back.
  CHECK(pool.release(*a, &empty));
  CHECK(empty == 0x10000000);
  CHECK(pool.slab_count() == 1);
  CHECK_FALSE(pool.owns(*a));
  // The newest stays when it empties, whole again after the merge.
  CHECK(pool.release(*b, &empty));
  CHECK(empty == 0);
  CHECK(pool.slab_count() == 1);
  CHECK(pool.unused_bytes() == 64 * mib);
  auto whole = pool.carve(16 * mib);
  REQUIRE(whole);
  CHECK(*whole == 0x20000000);
  CHECK(pool.release(*whole, &empty));
  // take_empty gives the newest back when the server needs the memory.
  CHECK(pool.take_empty() == 0x20000000);
  CHECK(pool.slab_count() == 0);
  CHECK(pool.take_empty() == 0);
}

TEST_CASE("slab_pool never hands out overlapping memory under random use",
          "[interpose_runtime][slab]") {
  slab_pool pool{256 * mib, 16 * mib};
  std::mt19937_64 rng{7};
  std::map<uint64_t, uint64_t> live; // addr -> size
  uint64_t next_base = 0x100000000ull;
  for (int step = 0; step < 20000; ++step) {
    if (live.empty() || rng() % 3 != 0) {
      uint64_t size = 1 + rng() % (rng() % 4 == 0 ? 8 * mib : 64 * 1024);
      auto addr = pool.carve(size);
      if (!addr) {
        auto slab = pool.next_slab_size(size);
        pool.add_slab(next_base, slab);
        next_base += slab + 64 * mib;
        addr = pool.carve(size);
      }
      REQUIRE(addr);
      auto after = live.lower_bound(*addr);
      if (after != live.end())
        REQUIRE(*addr + size <= after->first);
      if (after != live.begin())
        REQUIRE(std::prev(after)->first + std::prev(after)->second <= *addr);
      live.emplace(*addr, size);
    } else {
      auto it = live.begin();
      std::advance(it, static_cast<long>(rng() % live.size()));
      uint64_t empty = 0;
      REQUIRE(pool.release(it->first, &empty));
      live.erase(it);
    }
  }
  for (auto& kv : live) {
    uint64_t empty = 0;
    REQUIRE(pool.release(kv.first, &empty));
  }
  // Everything back: one (the newest) slab left, whole.
  CHECK(pool.slab_count() == 1);
  CHECK(pool.unused_bytes() == pool.slab_bytes());
}

TEST_CASE("slab_pool with no slab size carves nothing", "[interpose_runtime][slab]") {
  slab_pool pool{0};
  CHECK_FALSE(pool.carves(1));
  CHECK_FALSE(pool.carve(1).has_value());
}
