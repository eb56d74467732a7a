#include "executor/allocation_table.hpp"

#include <catch2/catch.hpp>

#include <limits>

using gleam::executor::allocation_table;
using gleam::executor::range_entry;
using gleam::executor::range_kind;

namespace {

constexpr uint64_t max_u64 = std::numeric_limits<uint64_t>::max();

range_entry alloc(uint64_t base, uint64_t size) {
  return range_entry{base, size, range_kind::allocation, 0};
}

range_entry variable(uint64_t base, uint64_t size, uint64_t module) {
  return range_entry{base, size, range_kind::module_variable, module};
}

} // namespace

TEST_CASE("allocation_table accepts exactly the ranges inside one entry",
          "[executor][allocation_table]") {
  allocation_table t;
  REQUIRE(t.insert(alloc(0x1000, 0x100)));
  CHECK(t.contains(0x1000, 0x100));
  CHECK(t.contains(0x1000, 1));
  CHECK(t.contains(0x10ff, 1));
  CHECK(t.contains(0x1080, 0x80));
  CHECK_FALSE(t.contains(0x1080, 0x81));
  CHECK_FALSE(t.contains(0x1000, 0x101));
  CHECK_FALSE(t.contains(0x0fff, 1));
  CHECK_FALSE(t.contains(0x0fff, 2));
  CHECK_FALSE(t.contains(0x1100, 1));
  CHECK_FALSE(t.contains(0, 1));
}

TEST_CASE("allocation_table: length 0 is valid inside or at the end of an entry",
          "[executor][allocation_table]") {
  allocation_table t;
  REQUIRE(t.insert(alloc(0x1000, 0x100)));
  CHECK(t.contains(0x1000, 0));
  CHECK(t.contains(0x10ff, 0));
  CHECK(t.contains(0x1100, 0));
  CHECK_FALSE(t.contains(0x1101, 0));
  CHECK_FALSE(t.contains(0x0fff, 0));
  allocation_table empty;
  CHECK_FALSE(empty.contains(0x1000, 0));
}

TEST_CASE("allocation_table: one past the end is outside",
          "[executor][allocation_table]") {
  allocation_table t;
  REQUIRE(t.insert(alloc(0x2000, 16)));
  CHECK(t.contains(0x200f, 1));
  CHECK_FALSE(t.contains(0x2010, 1));
  CHECK_FALSE(t.find(0x2010).has_value());
  REQUIRE(t.find(0x200f).has_value());
  CHECK(t.find(0x200f)->base == 0x2000);
}

TEST_CASE("allocation_table: ptr + len overflowing 64 bits is refused",
          "[executor][allocation_table]") {
  allocation_table t;
  // The entry ends at the last representable address, max_u64 exclusive.
  REQUIRE(t.insert(alloc(max_u64 - 0x100, 0x100)));
  CHECK(t.contains(max_u64 - 0x100, 0x100));
  CHECK(t.contains(max_u64 - 1, 1));
  CHECK_FALSE(t.contains(max_u64 - 1, 2));
  CHECK_FALSE(t.contains(max_u64, 1));
  CHECK_FALSE(t.contains(max_u64 - 0x100, max_u64));
  CHECK_FALSE(t.contains(max_u64 - 1, max_u64));
  CHECK_FALSE(t.contains(0x10, max_u64));
  // An entry whose own end overflows cannot be inserted.
  CHECK_FALSE(t.insert(alloc(max_u64 - 0xf, 0x20)));
  CHECK_FALSE(t.insert(alloc(0x10, max_u64)));
}

TEST_CASE("allocation_table: a range spanning two adjacent entries is not valid",
          "[executor][allocation_table]") {
  allocation_table t;
  REQUIRE(t.insert(alloc(0x1000, 0x100)));
  REQUIRE(t.insert(alloc(0x1100, 0x100)));
  CHECK(t.contains(0x1000, 0x100));
  CHECK(t.contains(0x1100, 0x100));
  CHECK_FALSE(t.contains(0x10ff, 2));
  CHECK_FALSE(t.contains(0x1000, 0x200));
  CHECK(t.contains(0x1100, 0));
  CHECK(t.find(0x1100)->base == 0x1100);
  CHECK(t.find(0x10ff)->base == 0x1000);
}

TEST_CASE("allocation_table refuses empty and overlapping entries",
          "[executor][allocation_table]") {
  allocation_table t;
  CHECK_FALSE(t.insert(alloc(0x1000, 0)));
  REQUIRE(t.insert(alloc(0x1000, 0x100)));
  CHECK_FALSE(t.insert(alloc(0x1000, 0x100)));
  CHECK_FALSE(t.insert(alloc(0x10ff, 1)));
  CHECK_FALSE(t.insert(alloc(0x0f00, 0x101)));
  CHECK_FALSE(t.insert(alloc(0x0f00, 0x1000)));
  CHECK(t.insert(alloc(0x0f00, 0x100)));
  CHECK(t.insert(alloc(0x1100, 0x10)));
  CHECK(t.size() == 3);
  CHECK(t.total_bytes() == 0x210);
}

TEST_CASE("allocation_table erase and byte totals",
          "[executor][allocation_table]") {
  allocation_table t;
  REQUIRE(t.insert(alloc(0x1000, 0x100)));
  REQUIRE(t.insert(alloc(0x3000, 0x40)));
  REQUIRE(t.insert(variable(0x5000, 0x10, 7)));
  CHECK(t.allocated_bytes() == 0x140);
  CHECK(t.total_bytes() == 0x150);
  SECTION("erase needs the exact base") {
    CHECK_FALSE(t.erase(0x1001).has_value());
    auto e = t.erase(0x1000);
    REQUIRE(e.has_value());
    CHECK(e->size == 0x100);
    CHECK(e->kind == range_kind::allocation);
    CHECK_FALSE(t.contains(0x1000, 1));
    CHECK(t.allocated_bytes() == 0x40);
    CHECK(t.total_bytes() == 0x50);
    CHECK_FALSE(t.erase(0x1000).has_value());
  }
  SECTION("erase_module drops only that module's variables") {
    REQUIRE(t.insert(variable(0x6000, 0x20, 8)));
    CHECK(t.erase_module(7) == 1);
    CHECK_FALSE(t.contains(0x5000, 1));
    CHECK(t.contains(0x6000, 0x20));
    CHECK(t.allocated_bytes() == 0x140);
    CHECK(t.total_bytes() == 0x160);
    CHECK(t.erase_module(7) == 0);
  }
  SECTION("find_base tells allocations from variables") {
    REQUIRE(t.find_base(0x5000).has_value());
    CHECK(t.find_base(0x5000)->kind == range_kind::module_variable);
    CHECK(t.find_base(0x5000)->module == 7);
    CHECK_FALSE(t.find_base(0x5001).has_value());
  }
  SECTION("clear forgets everything") {
    t.clear();
    CHECK(t.empty());
    CHECK(t.total_bytes() == 0);
    CHECK(t.allocated_bytes() == 0);
    CHECK_FALSE(t.contains(0x3000, 1));
  }
  SECTION("entries are sorted by base") {
    auto es = t.entries();
    REQUIRE(es.size() == 3);
    CHECK(es[0].base == 0x1000);
    CHECK(es[1].base == 0x3000);
    CHECK(es[2].base == 0x5000);
  }
}

TEST_CASE("allocation_table joins adjacent virtual memory mappings and nothing else",
          "[executor][allocation_table][vmm]") {
  auto mapping = [](uint64_t base, uint64_t size) {
    return range_entry{base, size, range_kind::vmm_mapping, 0};
  };
  allocation_table t;
  REQUIRE(t.insert(mapping(0x10000, 0x1000)));
  REQUIRE(t.insert(mapping(0x11000, 0x1000)));
  REQUIRE(t.insert(mapping(0x12000, 0x1000)));
  // A gap, then one more mapping: not reachable across the gap.
  REQUIRE(t.insert(mapping(0x14000, 0x1000)));
  CHECK(t.contains(0x10800, 0x1000));
  CHECK(t.contains(0x10000, 0x3000));
  CHECK(t.contains(0x11fff, 0x1001));
  CHECK_FALSE(t.contains(0x10000, 0x3001));
  CHECK_FALSE(t.contains(0x12800, 0x2000));
  CHECK(t.contains(0x14000, 0x1000));
  CHECK_FALSE(t.contains(0x13000, 1));
  CHECK_FALSE(t.contains(0x11000, max_u64));
  // Allocations side by side stay apart, and so does a mapping next to one.
  REQUIRE(t.insert(alloc(0x20000, 0x1000)));
  REQUIRE(t.insert(alloc(0x21000, 0x1000)));
  REQUIRE(t.insert(mapping(0x22000, 0x1000)));
  CHECK_FALSE(t.contains(0x20800, 0x1000));
  CHECK_FALSE(t.contains(0x21800, 0x1000));
  REQUIRE(t.erase(0x11000));
  CHECK_FALSE(t.contains(0x10000, 0x2000));
  CHECK(t.contains(0x12000, 0x1000));
}
