#include <catch2/catch.hpp>

#include "actors/session_meter.hpp"

using namespace gleam;

namespace {

constexpr uint64_t s = 1'000'000'000ull;

proto::OpBatch upload(uint64_t session, size_t bytes) {
  proto::OpBatch b;
  b.set_session(session);
  b.add_ops()->mutable_memcpy_htod()->set_data(std::string(bytes, 'x'));
  return b;
}

proto::OpBatch launch(uint64_t session) {
  proto::OpBatch b;
  b.set_session(session);
  b.add_ops()->mutable_launch_kernel()->set_function("k");
  return b;
}

} // namespace

TEST_CASE("session_meter splits load and compute and measures overlaps", "[actors]") {
  actors::session_meter m;
  // A: opens at 0, uploads 1000 B until 2 s, computes 2..10 s.
  // B: opens at 1, first launch at 4, closes at 6.
  m.on_open(1, "c1", "sig-a", 0);
  m.on_open(2, "c2", "sig-b", 1 * s);
  CHECK_FALSE(m.on_batch(upload(1, 1000), 1 * s, 2 * s, 4096));
  CHECK(m.on_batch(launch(1), 2 * s, 2 * s + 10, 4096));
  CHECK_FALSE(m.on_batch(launch(1), 3 * s, 3 * s + 10, 8192)); // not the first launch
  CHECK(m.on_batch(launch(2), 4 * s, 4 * s, 100));
  proto::SessionSummary summary;
  summary.set_session(1);
  m.annotate(summary);
  CHECK(summary.task_signature() == "sig-a");
  CHECK(summary.first_launch_time_ns() == 2 * s);
  CHECK(summary.uploaded_bytes() == 1000);

  proto::SessionEnded b;
  REQUIRE(m.on_close(2, 6 * s, 0, "H200", b));
  CHECK(b.task_signature() == "sig-b");
  CHECK(b.duration_ns() == 5 * s);
  CHECK(b.load_ns() == 3 * s);
  REQUIRE(b.co_runners_size() == 1);
  CHECK(b.co_runners(0).task_signature() == "sig-a");
  CHECK(b.co_runners(0).load_overlap_ns() == 1 * s);    // A loading 1..2 while B loads 1..4
  CHECK(b.co_runners(0).compute_overlap_ns() == 2 * s); // both compute 4..6

  proto::SessionEnded a;
  REQUIRE(m.on_close(1, 10 * s, 0, "H200", a));
  CHECK(a.duration_ns() == 10 * s);
  CHECK(a.load_ns() == 2 * s);
  CHECK(a.uploaded_bytes() == 1000);
  CHECK(a.peak_allocated_bytes() == 8192);
  CHECK(a.kernel_launches() == 2);
  CHECK(a.busy_ns() == 1 * s + 20);
  CHECK(a.gpu_name() == "H200");
  // B ended before A: its overlap is still counted from the history.
  REQUIRE(a.co_runners_size() == 1);
  CHECK(a.co_runners(0).task_signature() == "sig-b");
  CHECK(a.co_runners(0).load_overlap_ns() == 1 * s);
  CHECK(a.co_runners(0).compute_overlap_ns() == 2 * s);
  CHECK_FALSE(m.on_close(1, 11 * s, 0, "H200", a)); // already closed
}
