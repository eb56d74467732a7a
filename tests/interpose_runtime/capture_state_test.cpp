// The client's mirror of stream captures: which streams capture and CUDA's
// rule for which threads are prohibited from potentially unsafe calls.
#include "interpose/capture_state.hpp"

#include <catch2/catch.hpp>

#include <thread>

using gleam::interpose::capture_state;

namespace {

std::thread::id other_thread() {
  std::thread::id id;
  std::thread t{[&] { id = std::this_thread::get_id(); }};
  t.join();
  return id;
}

} // namespace

TEST_CASE("a capture covers its origin and the streams joined by events",
          "[interpose_runtime][capture]") {
  capture_state c;
  auto me = std::this_thread::get_id();
  CHECK(c.status(0x5000) == cudaStreamCaptureStatusNone);
  CHECK_FALSE(c.any());
  c.begin(0x5000, 0x6000, 7, cudaStreamCaptureModeGlobal, me);
  CHECK(c.status(0x5000) == cudaStreamCaptureStatusActive);
  CHECK(c.of_stream(0x5000)->id == 7);
  // Fork: an event recorded in the capture, waited on by another stream.
  c.record_event(0x7000, 0x5000);
  CHECK(c.status(0x5010) == cudaStreamCaptureStatusNone);
  c.wait_event(0x5010, 0x7000);
  CHECK(c.status(0x5010) == cudaStreamCaptureStatusActive);
  CHECK(c.of_stream(0x5010)->origin == 0x5000);
  // An event recorded outside any capture joins nothing.
  c.record_event(0x7010, 0x5020);
  c.wait_event(0x5030, 0x7010);
  CHECK(c.status(0x5030) == cudaStreamCaptureStatusNone);
  c.invalidate(0x5010);
  CHECK(c.status(0x5000) == cudaStreamCaptureStatusInvalidated);
  c.end(0x5000);
  CHECK(c.status(0x5000) == cudaStreamCaptureStatusNone);
  CHECK(c.status(0x5010) == cudaStreamCaptureStatusNone);
  CHECK_FALSE(c.any());
  // The event of an ended capture no longer joins streams to it.
  c.wait_event(0x5040, 0x7000);
  CHECK(c.status(0x5040) == cudaStreamCaptureStatusNone);
}

TEST_CASE("the capture rules bind threads as CUDA documents",
          "[interpose_runtime][capture]") {
  capture_state c;
  auto me = std::this_thread::get_id();
  auto other = other_thread();
  using m = cudaStreamCaptureMode;
  SECTION("no capture: nobody is bound") {
    CHECK_FALSE(c.prohibited(me, cudaStreamCaptureModeGlobal));
  }
  SECTION("own global capture") {
    c.begin(0x5000, 0x6000, 1, cudaStreamCaptureModeGlobal, me);
    CHECK(c.prohibited(me, cudaStreamCaptureModeGlobal));
    CHECK(c.prohibited(me, cudaStreamCaptureModeThreadLocal));
    // Exchanging the thread's own mode to relaxed does not lift the rule of
    // its own global capture (the real driver on the H200 refuses cudaMalloc
    // there: tests/programs/capture_illegal).
    CHECK(c.prohibited(me, cudaStreamCaptureModeRelaxed));
    // Another thread in global mode is bound by a global capture ...
    CHECK(c.prohibited(other, cudaStreamCaptureModeGlobal));
    // ... but not in thread-local or relaxed mode.
    CHECK_FALSE(c.prohibited(other, cudaStreamCaptureModeThreadLocal));
    CHECK_FALSE(c.prohibited(other, cudaStreamCaptureModeRelaxed));
  }
  SECTION("own thread-local capture binds only its thread") {
    c.begin(0x5000, 0x6000, 1, cudaStreamCaptureModeThreadLocal, me);
    CHECK(c.prohibited(me, cudaStreamCaptureModeGlobal));
    CHECK(c.prohibited(me, cudaStreamCaptureModeThreadLocal));
    CHECK_FALSE(c.prohibited(other, cudaStreamCaptureModeGlobal));
  }
  SECTION("a relaxed capture binds nobody") {
    c.begin(0x5000, 0x6000, 1, cudaStreamCaptureModeRelaxed, me);
    for (auto mode : {cudaStreamCaptureModeGlobal, cudaStreamCaptureModeThreadLocal,
                      cudaStreamCaptureModeRelaxed}) {
      CHECK_FALSE(c.prohibited(me, static_cast<m>(mode)));
      CHECK_FALSE(c.prohibited(other, static_cast<m>(mode)));
    }
  }
  SECTION("the captures that bind a thread are named once each, by their origin") {
    c.begin(0x5000, 0x6000, 1, cudaStreamCaptureModeGlobal, me);
    c.record_event(0x7000, 0x5000);
    c.wait_event(0x5100, 0x7000); // 0x5100 joins the capture of 0x5000
    c.begin(0x5200, 0x6001, 2, cudaStreamCaptureModeThreadLocal, other);
    c.begin(0x5300, 0x6002, 3, cudaStreamCaptureModeGlobal, other);
    c.begin(0x5400, 0x6003, 4, cudaStreamCaptureModeRelaxed, me);
    using v = std::vector<uint64_t>;
    CHECK(c.prohibiting(me, cudaStreamCaptureModeGlobal) == v{0x5000, 0x5300});
    CHECK(c.prohibiting(me, cudaStreamCaptureModeThreadLocal) == v{0x5000});
    CHECK(c.prohibiting(other, cudaStreamCaptureModeGlobal) == v{0x5000, 0x5200, 0x5300});
    CHECK(c.prohibiting(other, cudaStreamCaptureModeRelaxed) == v{0x5200, 0x5300});
  }
  SECTION("after the capture ends nobody is bound") {
    c.begin(0x5000, 0x6000, 1, cudaStreamCaptureModeGlobal, other);
    CHECK(c.prohibited(me, cudaStreamCaptureModeGlobal));
    c.end(0x5000);
    CHECK_FALSE(c.prohibited(me, cudaStreamCaptureModeGlobal));
  }
}

TEST_CASE("a capture error makes statuses worth a server query until the next capture",
          "[interpose_runtime][capture]") {
  capture_state c;
  CHECK_FALSE(c.suspect());
  c.note_capture_error();
  CHECK(c.suspect());
  c.begin(0x5000, 0x6000, 1, cudaStreamCaptureModeGlobal, std::this_thread::get_id());
  CHECK_FALSE(c.suspect());
}

TEST_CASE("internal ops scopes nest on their thread only", "[interpose_runtime][capture]") {
  using gleam::interpose::internal_ops;
  CHECK_FALSE(internal_ops::active());
  {
    internal_ops outer;
    {
      internal_ops inner;
      CHECK(internal_ops::active());
    }
    CHECK(internal_ops::active());
    bool seen_elsewhere = true;
    std::thread t{[&] { seen_elsewhere = internal_ops::active(); }};
    t.join();
    CHECK_FALSE(seen_elsewhere);
  }
  CHECK_FALSE(internal_ops::active());
}

TEST_CASE("capturing streams can be tested by a predicate", "[interpose_runtime][capture]") {
  capture_state c;
  auto blocking = [](uint64_t s) { return s == 0x5000; };
  CHECK_FALSE(c.any_stream(blocking));
  c.begin(0x5010, 0x6000, 1, cudaStreamCaptureModeGlobal, std::this_thread::get_id());
  CHECK_FALSE(c.any_stream(blocking));
  c.begin(0x5000, 0x6010, 2, cudaStreamCaptureModeGlobal, std::this_thread::get_id());
  CHECK(c.any_stream(blocking));
}
