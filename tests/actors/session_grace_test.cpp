#include <catch2/catch.hpp>

#include "actors/session_grace.hpp"

using namespace std::chrono_literals;
using gleam::actors::session_grace;

TEST_CASE("a session orphaned again after a resume expires a full grace period after the "
          "last drop, not the first", "[session_grace]") {
  session_grace g{30000ms};
  auto t0 = session_grace::clock::now();
  g.gone(1, t0);          // the link drops; a timer fires at t0 + 30 s
  g.back(1);              // resumed after a reconnect
  g.gone(1, t0 + 20s);    // drops again; a timer fires at t0 + 50 s
  CHECK(g.orphaned(1));
  CHECK_FALSE(g.expire(1, t0 + 30s)); // the first drop's timer: stale
  CHECK(g.orphaned(1));
  CHECK(g.expire(1, t0 + 50s));
  CHECK_FALSE(g.orphaned(1));
  CHECK_FALSE(g.expire(1, t0 + 60s)); // expired once
}

TEST_CASE("a resumed or closed session expires on no timer; an orphaned one on its own",
          "[session_grace]") {
  session_grace g{2000ms};
  auto t0 = session_grace::clock::now();
  g.gone(1, t0);
  g.gone(2, t0);
  g.back(1);
  CHECK_FALSE(g.expire(1, t0 + 2s));
  CHECK_FALSE(g.expire(2, t0 + 1999ms));
  CHECK(g.expire(2, t0 + 2s));
  CHECK_FALSE(g.expire(3, t0 + 2s)); // never orphaned
}
