// interpose/pool_table.hpp: the client's pools, current pools and pool
// allocations.
#include "interpose/pool_table.hpp"

#include <catch2/catch.hpp>

using gleam::interpose::pool_table;

TEST_CASE("pool table: default, current and destroyed pools", "[interpose][pools]") {
  pool_table t;
  CHECK_FALSE(t.active());
  CHECK(t.current(0) == 0);
  t.add(10, 0, true);
  CHECK(t.active());
  CHECK(t.default_pool(0) == 10);
  CHECK(t.default_pool(1) == 0);
  CHECK(t.current(0) == 10);
  t.add(11, 0, false);
  CHECK(t.known(11));
  CHECK_FALSE(t.is_default(11));
  CHECK(t.is_default(10));
  CHECK(t.device_of(11) == 0);
  CHECK(t.device_of(12) == -1);
  t.set_current(0, 11);
  CHECK(t.current(0) == 11);
  // Destroying the current pool makes the default current again.
  t.remove(11);
  CHECK_FALSE(t.known(11));
  CHECK(t.current(0) == 10);
}

TEST_CASE("pool table: allocations remember their pool", "[interpose][pools]") {
  pool_table t;
  t.add(10, 0, true);
  t.note_allocation(0x1000, 10);
  CHECK(t.pool_of(0x1000) == 10);
  CHECK(t.pool_of(0x2000) == 0);
  t.forget_allocation(0x1000);
  CHECK(t.pool_of(0x1000) == 0);
  t.note_allocation(0x3000, 10);
  t.clear();
  CHECK(t.pool_of(0x3000) == 0);
  CHECK_FALSE(t.active());
}
