// The server's log of unconfirmed batch replies, replayed after a reconnect.
#include "consistency/replay_log.hpp"

#include <catch2/catch.hpp>

#include <string>

using gleam::consistency::replay_log;

TEST_CASE("a replayed batch finds the reply it had, until the client confirms it",
          "[consistency][replay]") {
  replay_log<std::string> log{4};
  log.record(3, "reply of ops 1-3");
  log.record(7, "reply of ops 4-7");
  REQUIRE(log.find(7) != nullptr);
  CHECK(*log.find(7) == "reply of ops 4-7");
  CHECK(*log.find(3) == "reply of ops 1-3");
  CHECK(log.find(5) == nullptr); // no batch ended there
  // The client holds the replies through op 3.
  log.confirmed_through(3);
  CHECK(log.find(3) == nullptr);
  CHECK(*log.find(7) == "reply of ops 4-7");
  CHECK(log.size() == 1);
}

TEST_CASE("answering a replay records nothing new; the oldest reply goes past capacity",
          "[consistency][replay]") {
  replay_log<std::string> log{2};
  log.record(2, "a");
  log.record(2, "a replayed");
  CHECK(*log.find(2) == "a");
  log.record(4, "b");
  log.record(6, "c");
  CHECK(log.size() == 2);
  CHECK(log.find(2) == nullptr);
  CHECK(*log.find(4) == "b");
  CHECK(*log.find(6) == "c");
}
