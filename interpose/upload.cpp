#include "interpose/upload.hpp"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>

#include "actors/log.hpp"
#include "config/client_config.hpp"
#include "interpose/message_size.hpp"
#include "interpose/progress.hpp"
#include "interpose/runtime.hpp"
#include "interpose/upload_protocol.hpp"

namespace gleam::interpose {

namespace {

struct cache_settings {
  bool on = false;
  size_t threshold = std::numeric_limits<size_t>::max();
  size_t chunk = size_t{16} << 20;
  cache_store::chunk_key::algo algo = cache_store::chunk_key::algo::xxh3_128;
  upload_compression::mode compress = upload_compression::mode::automatic;
};

const cache_settings& settings() {
  static const cache_settings s = [] {
    cache_settings out;
    auto cfg = config::load_client_config();
    if (cfg) {
      out.on = cfg->cache;
      out.threshold = static_cast<size_t>(std::max<uint64_t>(cfg->cache_threshold, 1));
      out.chunk = static_cast<size_t>(cfg->cache_chunk);
      if (cfg->cache_sha256)
        out.algo = cache_store::chunk_key::algo::sha256;
      out.compress = upload_compression::parse(cfg->compress);
    }
    return out;
  }();
  return s;
}

/// What the process's cached uploads learned about packing their misses:
/// shared, so that each large copy starts from the rates the last ones
/// measured.
upload_compression& compression() {
  static auto* c = new upload_compression{settings().compress}; // outlives exit
  return *c;
}

/// Cleared when the server answered that it has no cache.
std::atomic<bool> server_has_cache{true};

/// Bytes of large host-to-device copies that travelled / that the server
/// filled from its cache, for GLEAM_CACHE_REPORT=1.
std::atomic<uint64_t> total_sent{0};
/// Of total_sent, the bytes on the wire (packed where compression ran).
std::atomic<uint64_t> total_wire{0};
std::atomic<uint64_t> total_cached{0};
/// Microseconds spent hashing, and waiting for the answers to keys.
std::atomic<uint64_t> total_hash_us{0};
std::atomic<uint64_t> total_key_wait_us{0};

void print_report() {
  std::printf("result gleam_sent_bytes %llu\nresult gleam_wire_bytes %llu\n"
              "result gleam_cached_bytes %llu\n"
              "result gleam_hash_s %.6f\nresult gleam_key_wait_s %.6f\n",
              static_cast<unsigned long long>(total_sent.load()),
              static_cast<unsigned long long>(total_wire.load()),
              static_cast<unsigned long long>(total_cached.load()),
              static_cast<double>(total_hash_us.load()) / 1e6,
              static_cast<double>(total_key_wait_us.load()) / 1e6);
  std::fflush(stdout);
}

/// GLEAM_CACHE_REPORT=1: print the totals to stdout at exit, as
/// `result gleam_sent_bytes N` lines that gleam-bench reads.
void arm_report() {
  static std::once_flag once;
  std::call_once(once, [] {
    const char* v = std::getenv("GLEAM_CACHE_REPORT");
    if (v != nullptr && std::strcmp(v, "1") == 0)
      std::atexit(print_report);
  });
}

/// Sends the protocol's ops. Chunk uploads (each holding its own copy of the
/// bytes) are error-code-only: with async forwarding on they are queued and
/// travel pipelined under the window, so a large miss streams at the link
/// rate instead of waiting a round trip per chunk; their errors come at the
/// next synchronization (cached_upload waits for them for a synchronous
/// copy). Key messages and everything else wait for their answer.
cudaError_t send(std::vector<proto::Op>& ops, std::vector<proto::OpResult>* results) {
  bool uploads = async_enabled() && !ops.empty();
  for (const auto& op : ops)
    uploads = uploads && op.kind_case() == proto::Op::kCacheUpload;
  if (!uploads)
    return run_ops(ops, results);
  if (results != nullptr)
    results->clear();
  for (auto& op : ops)
    if (auto err = submit(std::move(op)); err != cudaSuccess)
      return err;
  ops.clear();
  return cudaSuccess;
}

cudaError_t plain_upload(uint64_t dst, const void* src, size_t count, uint64_t stream,
                         bool async) {
  // Bulk messages of bounded size, pipelined (DESIGN.md: bounded bulk).
  constexpr size_t max_chunk = max_message_payload;
  transfer_progress progress{count};
  auto chunks = (count + max_chunk - 1) / max_chunk;
  auto make = [&](size_t i) {
    auto off = i * max_chunk;
    auto n = std::min(max_chunk, count - off);
    proto::Op op;
    auto* m = op.mutable_memcpy_htod();
    m->set_dst(dst + off);
    m->set_data(static_cast<const char*>(src) + off, n);
    m->set_stream(stream);
    m->set_async(async);
    total_sent += n;
    progress.advance(n, 0);
    return op;
  };
  if (async && async_enabled()) {
    for (size_t i = 0; i < chunks; ++i)
      if (auto err = submit(make(i)); err != cudaSuccess)
        return err;
    return cudaSuccess;
  }
  return run_pipelined(chunks, make, {});
}

} // namespace

size_t cached_upload_threshold() noexcept {
  try {
    const auto& s = settings();
    // With the cache off, large copies still come here (plainly, counted).
    return s.threshold;
  } catch (...) {
    return std::numeric_limits<size_t>::max();
  }
}

cudaError_t cached_upload(void* dst, const void* src, size_t count, cudaStream_t stream,
                          bool async) {
  auto d = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(dst));
  auto s = wire_stream(stream);
  arm_report();
  if (!settings().on || !server_has_cache.load())
    return plain_upload(d, src, count, s, async);
  upload_stats st;
  transfer_progress progress{count};
  auto err = upload_chunks(send, d, src, count, settings().chunk, s, async, &st, &progress,
                           settings().algo, &compression());
  // A synchronous copy returns once its queued chunk uploads are done.
  if (err == cudaSuccess && !async && async_enabled())
    err = flush();
  if (err == cudaErrorNotSupported && st.sent_chunks == 0 && st.cached_bytes == 0) {
    server_has_cache.store(false);
    actors::log(actors::log_level::warning,
                "the server has no weight cache ({}); copies travel uncached", st.error);
    return plain_upload(d, src, count, s, async);
  }
  total_sent += st.sent_bytes;
  total_wire += st.wire_bytes;
  total_cached += st.cached_bytes;
  total_hash_us += static_cast<uint64_t>(st.hash_seconds * 1e6);
  total_key_wait_us += static_cast<uint64_t>(st.key_seconds * 1e6);
  if (err != cudaSuccess && !st.error.empty())
    std::fprintf(stderr, "gleam: a cached upload of %zu bytes to %p failed: %s\n", count, dst,
                 st.error.c_str());
  actors::log(actors::log_level::debug,
              "cached upload of {} bytes: {} chunks, {} sent ({} bytes, {} on the wire), {} "
              "bytes cached, hashing {:.3f}s",
              count, st.chunks, st.sent_chunks, st.sent_bytes, st.wire_bytes, st.cached_bytes,
              st.hash_seconds);
  return err;
}

cudaError_t load_module_cached(proto::Op op, const void* image, size_t size,
                               proto::OpResult* result) {
  if (!settings().on || !server_has_cache.load()) {
    op.mutable_module_load()->set_image(static_cast<const char*>(image), size);
    return run_op(std::move(op), result);
  }
  return load_module_key_first(send, std::move(op), image, size, result);
}

} // namespace gleam::interpose
