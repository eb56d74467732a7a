// The pending window and error reconciliation of async ops, on a CPU.
#include "consistency/pending_window.hpp"

#include <catch2/catch.hpp>

#include "consistency/error.hpp"

using gleam::consistency::error_code;
using gleam::consistency::op_status;
using gleam::consistency::pending_window;

namespace {

// CUresult values used below.
constexpr int32_t invalid_value = 1;      // CUDA_ERROR_INVALID_VALUE (not sticky)
constexpr int32_t invalid_handle = 400;   // CUDA_ERROR_INVALID_HANDLE (not sticky)
constexpr int32_t illegal_address = 700;  // CUDA_ERROR_ILLEGAL_ADDRESS (sticky)

bool sticky(int32_t s) {
  return s == illegal_address;
}

std::vector<op_status> ok(uint64_t first, uint64_t last) {
  std::vector<op_status> out;
  for (auto s = first; s <= last; ++s)
    out.push_back({s, 0, {}});
  return out;
}

uint8_t code_of(const caf::error& e) {
  return e.code();
}

} // namespace

TEST_CASE("at most capacity batches are in flight", "[consistency]") {
  pending_window w{8, sticky};
  CHECK(w.capacity() == 8);
  for (uint64_t i = 0; i < 8; ++i)
    REQUIRE(w.sent(i * 4 + 1, i * 4 + 4, 0));
  CHECK_FALSE(w.has_room());
  auto full = w.sent(33, 36, 0);
  REQUIRE_FALSE(full);
  CHECK(code_of(full.error()) == static_cast<uint8_t>(error_code::window_full));
  REQUIRE(w.completed(w.oldest(), ok(1, 4)));
  CHECK(w.has_room());
  CHECK(w.in_flight() == 7);
  CHECK(w.sent(33, 36, 0));
}

TEST_CASE("a zero capacity is a window of one", "[consistency]") {
  pending_window w{0, sticky};
  CHECK(w.capacity() == 1);
}

TEST_CASE("replies are reconciled only in the order the batches were sent", "[consistency]") {
  pending_window w{4, sticky};
  auto a = w.sent(1, 2, 0);
  auto b = w.sent(3, 4, 0);
  REQUIRE(a);
  REQUIRE(b);
  auto r = w.completed(*b, ok(3, 4));
  REQUIRE_FALSE(r);
  CHECK(code_of(r.error()) == static_cast<uint8_t>(error_code::out_of_order));
  CHECK(w.in_flight() == 2);
  CHECK(w.completed(*a, ok(1, 2)));
  CHECK(w.completed(*b, ok(3, 4)));
  CHECK(w.in_flight() == 0);
}

TEST_CASE("batches must follow each other in seq order", "[consistency]") {
  pending_window w{4, sticky};
  REQUIRE(w.sent(1, 5, 0));
  auto overlap = w.sent(5, 6, 0);
  REQUIRE_FALSE(overlap);
  CHECK(code_of(overlap.error()) == static_cast<uint8_t>(error_code::malformed_reply));
  CHECK_FALSE(w.sent(9, 8, 0));
}

TEST_CASE("a result outside its batch is rejected and the batch stays in flight",
          "[consistency]") {
  pending_window w{4, sticky};
  auto a = w.sent(1, 2, 0);
  REQUIRE(a);
  auto r = w.completed(*a, {{1, 0, {}}, {7, 0, {}}});
  REQUIRE_FALSE(r);
  CHECK(code_of(r.error()) == static_cast<uint8_t>(error_code::malformed_reply));
  CHECK(w.in_flight() == 1);
}

TEST_CASE("an async error is delivered exactly once", "[consistency]") {
  pending_window w{8, sticky};
  auto a = w.sent(1, 3, 0);
  REQUIRE(a);
  REQUIRE(w.completed(*a, {{1, 0, {}}, {2, invalid_value, "bad grid"}, {3, 0, {}}}));
  CHECK(w.peek_deferred() == invalid_value);
  CHECK(w.peek_deferred() == invalid_value);
  std::string detail;
  CHECK(w.take_deferred(&detail) == invalid_value);
  CHECK(detail == "bad grid");
  CHECK(w.take_deferred() == 0);
  CHECK(w.peek_deferred() == 0);
  CHECK(w.sticky() == 0);
}

TEST_CASE("the first async error in program order is the one delivered", "[consistency]") {
  pending_window w{8, sticky};
  auto a = w.sent(1, 2, 0);
  auto b = w.sent(3, 4, 0);
  REQUIRE(a);
  REQUIRE(b);
  REQUIRE(w.completed(*a, {{1, invalid_handle, "no such stream"}, {2, 0, {}}}));
  REQUIRE(w.completed(*b, {{3, invalid_value, "bad size"}, {4, 0, {}}}));
  CHECK(w.take_deferred() == invalid_handle);
  CHECK(w.superseded() == 1);
  CHECK(w.take_deferred() == 0);
  // After delivery, a new failure is deferred again.
  auto c = w.sent(5, 5, 0);
  REQUIRE(c);
  REQUIRE(w.completed(*c, {{5, invalid_value, "bad size"}}));
  CHECK(w.take_deferred() == invalid_value);
}

TEST_CASE("the owned op's error goes to its caller, not into the deferred slot",
          "[consistency]") {
  pending_window w{8, sticky};
  // Ops 1..3 async, op 4 is the sync call's own op.
  auto a = w.sent(1, 4, 4);
  REQUIRE(a);
  auto r = w.completed(*a, {{1, 0, {}}, {2, invalid_value, "x"}, {3, 0, {}},
                            {4, invalid_handle, "no such event"}});
  REQUIRE(r);
  CHECK(r->owned_status == invalid_handle);
  CHECK(r->owned_error == "no such event");
  CHECK(r->missing == 0);
  CHECK(w.take_deferred() == invalid_value);
}

TEST_CASE("a sticky async error latches and explains the ops the server skipped",
          "[consistency]") {
  pending_window w{8, sticky};
  auto a = w.sent(1, 4, 4);
  REQUIRE(a);
  // The server stops the batch after the sticky failure of op 2.
  auto r = w.completed(*a, {{1, 0, {}}, {2, illegal_address, "illegal address"}});
  REQUIRE(r);
  CHECK(w.sticky() == illegal_address);
  CHECK(r->missing == 2);
  CHECK(r->owned_status == illegal_address);
  // Sticky errors are not "delivered once": they stay; nothing is deferred.
  CHECK(w.take_deferred() == 0);
  CHECK(w.sticky() == illegal_address);
}

TEST_CASE("ops lost without a sticky error fail as unknown", "[consistency]") {
  pending_window w{8, sticky};
  auto a = w.sent(1, 3, 3);
  REQUIRE(a);
  auto r = w.completed(*a, {{1, 0, {}}});
  REQUIRE(r);
  CHECK(r->missing == 2);
  CHECK(r->owned_status == pending_window::lost_status);
  CHECK(w.take_deferred() == pending_window::lost_status);
}

TEST_CASE("abandon forgets the batches in flight", "[consistency]") {
  pending_window w{2, sticky};
  REQUIRE(w.sent(1, 1, 0));
  REQUIRE(w.sent(2, 2, 0));
  CHECK(w.abandon() == 2);
  CHECK(w.in_flight() == 0);
  CHECK(w.oldest() == 0);
  CHECK(w.sent(3, 3, 0));
}
