#include <catch2/catch.hpp>

#include <algorithm>
#include <vector>

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

TEST_CASE("session_meter counts kernel and graph launches as the task's progress",
          "[actors]") {
  actors::session_meter m;
  m.on_open(1, "c1", "sig", "", 0);
  proto::SessionSummary summary;
  summary.set_session(1);
  m.annotate(summary);
  CHECK(summary.kernel_launches() == 0);
  // A decode loop as a CUDA graph: one kernel launch (warm-up), then one
  // graph launch per step.
  m.on_batch(launch(1), 1 * s, 1 * s, 0);
  proto::OpBatch steps;
  steps.set_session(1);
  for (int i = 0; i < 5; ++i)
    steps.add_ops()->mutable_graph_launch()->set_exec(7);
  m.on_batch(steps, 2 * s, 3 * s, 0);
  m.annotate(summary);
  CHECK(summary.kernel_launches() == 6);
  CHECK(summary.first_launch_time_ns() == 1 * s);
  proto::SessionEnded ended;
  REQUIRE(m.on_close(1, 4 * s, 0, "H200", ended));
  CHECK(ended.kernel_launches() == 6);
}

TEST_CASE("session_meter splits load and compute and measures overlaps", "[actors]") {
  actors::session_meter m;
  // A: opens at 0, uploads 1000 B until 2 s, computes 2..10 s.
  // B: opens at 1, first launch at 4, closes at 6.
  m.on_open(1, "c1", "sig-a", "", 0);
  m.on_open(2, "c2", "sig-b", "", 1 * s);
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
  CHECK(summary.kernel_launches() == 2); // the progress counter so far

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

namespace {

/// A chunk key in binary form: algorithm byte 1, then a 16-byte digest made
/// from `n` (big-endian in the last bytes, so digests order like n).
std::string key_of(uint32_t n) {
  std::string k(17, '\0');
  k[0] = 1;
  for (int i = 0; i < 4; ++i)
    k[16 - i] = static_cast<char>((n >> (8 * i)) & 0xff);
  return k;
}

proto::OpBatch fill(uint64_t session, const std::vector<uint32_t>& ns, uint64_t chunk) {
  proto::OpBatch b;
  b.set_session(session);
  auto* f = b.add_ops()->mutable_cache_fill();
  for (auto n : ns) {
    f->add_keys(key_of(n));
    f->add_sizes(chunk);
  }
  return b;
}

} // namespace

TEST_CASE("session_meter counts cached weights and samples their keys in any order",
          "[actors]") {
  actors::session_meter m;
  constexpr uint32_t chunks = 300;
  std::vector<uint32_t> up;
  for (uint32_t n = 0; n < chunks; ++n)
    up.push_back((n * 7919u) % 1000u + 1); // distinct, shuffled
  std::vector<uint32_t> down(up.rbegin(), up.rend());
  m.on_open(1, "c1", "sig", "team-a", 0);
  m.on_open(2, "c2", "sig", "team-b", 0);
  // Session 1: 300 chunks of 64 B through the cache, two of them missing
  // and uploaded, plus a plain 1000-byte copy.
  CHECK_FALSE(m.on_batch(fill(1, {up.begin(), up.begin() + 100}, 64), 0, 1, 0));
  CHECK_FALSE(m.on_batch(fill(1, {up.begin() + 100, up.end()}, 64), 1, 2, 0));
  proto::OpBatch missing;
  missing.set_session(1);
  for (int i = 0; i < 2; ++i)
    missing.add_ops()->mutable_cache_upload()->set_data(std::string(64, 'w'));
  CHECK_FALSE(m.on_batch(missing, 2, 3, 0));
  CHECK_FALSE(m.on_batch(upload(1, 1000), 3, 4, 0));
  // Session 2: the same chunks in reverse order, all cached.
  CHECK_FALSE(m.on_batch(fill(2, down, 64), 0, 1, 0));

  proto::SessionEnded a;
  REQUIRE(m.on_close(1, 5 * s, 0, "H200", a));
  CHECK(a.tenant() == "team-a");
  CHECK(a.weight_bytes() == 1000 + chunks * 64);
  CHECK(a.uploaded_bytes() == 1000 + 2 * 64);
  REQUIRE(a.chunk_keys_sample_size() == actors::session_meter::key_sample_size);
  std::vector<uint32_t> smallest = up;
  std::sort(smallest.begin(), smallest.end());
  for (size_t i = 0; i < actors::session_meter::key_sample_size; ++i)
    CHECK(a.chunk_keys_sample(static_cast<int>(i)) == key_of(smallest[i]));

  proto::SessionEnded b;
  REQUIRE(m.on_close(2, 5 * s, 0, "H200", b));
  CHECK(b.weight_bytes() == chunks * 64);
  CHECK(b.uploaded_bytes() == 0);
  REQUIRE(b.chunk_keys_sample_size() == a.chunk_keys_sample_size());
  for (int i = 0; i < b.chunk_keys_sample_size(); ++i)
    CHECK(b.chunk_keys_sample(i) == a.chunk_keys_sample(i));
}

TEST_CASE("session_meter counts a session's round trips, bytes down, cache hits and client "
          "waits",
          "[actors][metrics]") {
  actors::session_meter m;
  m.on_open(1, "c1", "sig", "", 0);
  // A batch with a device-to-host copy and a CacheFill of 4 keys, 1 missing.
  proto::OpBatch b;
  b.set_session(1);
  auto* copy = b.add_ops();
  copy->set_seq(1);
  copy->mutable_memcpy_dtoh()->set_size(300);
  auto* fill = b.add_ops();
  fill->set_seq(2);
  for (int k = 0; k < 4; ++k)
    fill->mutable_cache_fill()->add_keys(std::string(33, static_cast<char>('a' + k)));
  b.set_client_waits(3);
  b.set_client_wait_ns(7000);
  proto::BatchReply r;
  auto* data = r.add_results();
  data->set_seq(1);
  data->set_data(std::string(300, 'd'));
  auto* filled = r.add_results();
  filled->set_seq(2);
  filled->mutable_cache_filled()->add_missing(2);
  m.on_reply(b, r);
  // A resent batch (after a reconnect) carries older cumulative counts.
  proto::OpBatch older;
  older.set_session(1);
  older.set_client_waits(2);
  older.set_client_wait_ns(5000);
  m.on_reply(older, proto::BatchReply{});
  // Another session's batch counts for it only; an unknown one for none.
  proto::OpBatch stranger;
  stranger.set_session(9);
  m.on_reply(stranger, r);

  proto::SessionSummary summary;
  summary.set_session(1);
  m.annotate(summary);
  CHECK(summary.batches() == 2);
  CHECK(summary.downloaded_bytes() == 300);
  CHECK(summary.cache_hits() == 3);
  CHECK(summary.cache_misses() == 1);
  CHECK(summary.client_waits() == 3);
  CHECK(summary.client_wait_ns() == 7000);
  CHECK(summary.batch_bytes() == b.ByteSizeLong() + older.ByteSizeLong());
  CHECK(summary.reply_bytes() == r.ByteSizeLong());
}
