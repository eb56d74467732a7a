// The tenants' memory table (executor/memory_ledger.hpp): tenant-memory
// limits, guaranteed memory, slots of sessions in other processes.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "executor/memory_ledger.hpp"

using gleam::executor::memory_ledger;

namespace {

constexpr uint64_t mib = uint64_t{1} << 20;

std::shared_ptr<memory_ledger> make(const std::vector<memory_ledger::rule>& rules) {
  auto made = memory_ledger::create(rules);
  REQUIRE(made);
  return *made;
}

} // namespace

TEST_CASE("a tenant's sessions together stay within its tenant-memory", "[memory_ledger]") {
  auto ledger = make({{"alice", 100 * mib, 0}});
  auto s1 = ledger->join(1, "alice");
  auto s2 = ledger->join(2, "alice");
  auto other = ledger->join(3, "bob");
  REQUIRE(s1 != memory_ledger::npos);
  CHECK(ledger->reserve(s1, 60 * mib, 0).empty());
  ledger->settle(s1, 60 * mib);
  // 60 + 50 > 100, whichever of alice's sessions asks.
  auto why = ledger->reserve(s2, 50 * mib, 0);
  CHECK_THAT(why, Catch::Contains("tenant 'alice' holds 60 MiB"));
  CHECK_THAT(why, Catch::Contains("may hold 100 MiB"));
  CHECK(ledger->reserve(s2, 40 * mib, 0).empty());
  // A reservation counts until it settles: nothing is left now.
  CHECK_FALSE(ledger->reserve(s1, 1, 0).empty());
  ledger->settle(s2, 40 * mib);
  CHECK(ledger->of("alice").held == 100 * mib);
  // Another tenant is not bound by alice's limit.
  CHECK(ledger->reserve(other, 500 * mib, 0).empty());
  // A session that ends gives its share back.
  ledger->leave(s1);
  CHECK(ledger->of("alice").held == 40 * mib);
  CHECK(ledger->reserve(s2, 60 * mib, 0).empty());
  // A size past the limit on its own.
  ledger->settle(s2, 0);
  CHECK_FALSE(ledger->reserve(s2, 101 * mib, 0).empty());
}

TEST_CASE("memory guaranteed to a tenant is not taken by others while it does not use it",
          "[memory_ledger]") {
  auto ledger = make({{"bob", 0, 512 * mib}, {"alice", 0, 0}});
  CHECK(ledger->has_guarantees());
  auto alice = ledger->join(1, "alice");
  auto carol = ledger->join(2, "carol"); // no rules of her own
  auto bob = ledger->join(3, "bob");
  const uint64_t free = 1024 * mib;
  auto why = ledger->reserve(alice, 600 * mib, free);
  CHECK_THAT(why, Catch::Contains("1024 MiB free"));
  CHECK_THAT(why, Catch::Contains("'bob' 512 MiB"));
  CHECK_THAT(ledger->reserve(carol, 513 * mib, free), Catch::Contains("guaranteed-memory"));
  CHECK(ledger->reserve(carol, 512 * mib, free).empty());
  ledger->settle(carol, 512 * mib);
  // bob's own guarantee does not stand in his way.
  CHECK(ledger->reserve(bob, 500 * mib, free - 512 * mib).empty());
  ledger->settle(bob, 500 * mib);
  // Once bob uses 500 of his 512 MiB, 12 MiB stay his.
  CHECK_FALSE(ledger->reserve(alice, 5 * mib, 15 * mib).empty());
  CHECK(ledger->reserve(alice, 3 * mib, 15 * mib).empty());
  // Reservations not yet settled count as taken.
  CHECK_FALSE(ledger->reserve(carol, 1 * mib, 15 * mib).empty());
}

TEST_CASE("the memory table is one across processes; a dead process's slots are dropped",
          "[memory_ledger]") {
  auto ledger = make({{"alice", 100 * mib, 0}});
  int ready[2];
  REQUIRE(::pipe(ready) == 0);
  auto child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    // A worker: maps the table from the inherited descriptor.
    auto mine = memory_ledger::attach(::dup(ledger->fd()));
    if (!mine)
      ::_exit(3);
    auto slot = (*mine)->join(7, "alice");
    if (!(*mine)->reserve(slot, 80 * mib, 0).empty())
      ::_exit(4);
    (*mine)->settle(slot, 80 * mib);
    char c = 1;
    if (::write(ready[1], &c, 1) != 1)
      ::_exit(5);
    ::pause();
    ::_exit(0);
  }
  char c = 0;
  REQUIRE(::read(ready[0], &c, 1) == 1);
  CHECK(ledger->of("alice").held == 80 * mib);
  auto mine = ledger->join(8, "alice");
  CHECK_FALSE(ledger->reserve(mine, 30 * mib, 0).empty());
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  CHECK(ledger->forget_process(child) == 1);
  CHECK(ledger->of("alice").held == 0);
  CHECK(ledger->reserve(mine, 30 * mib, 0).empty());
  ::close(ready[0]);
  ::close(ready[1]);
}

TEST_CASE("the memory table refuses rules it cannot hold and descriptors without a table",
          "[memory_ledger]") {
  CHECK_FALSE(memory_ledger::create({{"alice", 1, 0}, {"alice", 2, 0}}));
  CHECK_FALSE(memory_ledger::create({{std::string(64, 'x'), 1, 0}}));
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  auto attached = memory_ledger::attach(fds[0]);
  CHECK_FALSE(attached);
  ::close(fds[0]);
  ::close(fds[1]);
  // A table without rules judges nothing.
  auto none = make({});
  auto slot = none->join(1, "anyone");
  CHECK(none->reserve(slot, uint64_t{1} << 50, 0).empty());
}
