#include "interpose/upload_protocol.hpp"

#include <algorithm>
#include <chrono>

#include <cuda.h>

#include "cache_store/hash.hpp"
#include "interpose/progress.hpp"
#include "wire/byte_codec.hpp"

namespace gleam::interpose {

namespace cs = cache_store;

cudaError_t upload_chunks(const op_sender& send, uint64_t dst, const void* src, size_t count,
                          size_t chunk, uint64_t stream, bool async, upload_stats* stats,
                          transfer_progress* progress, cs::chunk_key::algo algo,
                          upload_compression* compression) {
  upload_stats local;
  auto& st = stats != nullptr ? *stats : local;
  if (count == 0)
    return cudaSuccess;
  if (chunk == 0)
    chunk = count;
  auto t0 = std::chrono::steady_clock::now();
  auto keys = cs::hash_chunks(algo, src, count, chunk, 0);
  st.hash_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  st.chunks += keys.size();
  auto size_of = [&](size_t i) { return std::min(chunk, count - i * chunk); };
  const auto* bytes = static_cast<const char*>(src);
  std::vector<proto::Op> ops;
  std::vector<proto::OpResult> results;
  for (size_t first = 0; first < keys.size(); first += max_keys_per_fill) {
    auto last = std::min(keys.size(), first + max_keys_per_fill);
    proto::Op op;
    auto* fill = op.mutable_cache_fill();
    fill->set_dst(dst + first * chunk);
    fill->set_stream(stream);
    fill->set_async(async);
    for (size_t i = first; i < last; ++i) {
      fill->add_keys(keys[i].to_binary());
      fill->add_sizes(size_of(i));
    }
    ops.clear();
    ops.push_back(std::move(op));
    ++st.key_messages;
    auto k0 = std::chrono::steady_clock::now();
    auto err = send(ops, &results);
    st.key_seconds +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - k0).count();
    if (err != cudaSuccess) {
      if (!results.empty())
        st.error = results.front().error();
      return err;
    }
    if (results.empty())
      return cudaErrorUnknown;
    const auto& filled = results.front().cache_filled();
    std::vector<bool> missing(last - first, false);
    for (auto m : filled.missing())
      if (m < missing.size())
        missing[m] = true;
    uint64_t cached = 0;
    for (size_t i = 0; i < missing.size(); ++i)
      if (!missing[i])
        cached += size_of(first + i);
    st.cached_bytes += cached;
    if (progress != nullptr)
      progress->advance(0, cached);
    // The misses travel in batches of at most max_upload_batch_bytes.
    ops.clear();
    uint64_t batch_bytes = 0;
    uint64_t batch_wire_bytes = 0;
    uint64_t batch_chunks = 0;
    auto flush = [&]() -> cudaError_t {
      if (ops.empty())
        return cudaSuccess;
      auto s0 = std::chrono::steady_clock::now();
      auto e = send(ops, &results);
      if (compression != nullptr)
        compression->observe_link(
          batch_wire_bytes,
          std::chrono::duration<double>(std::chrono::steady_clock::now() - s0).count());
      if (e != cudaSuccess) {
        for (const auto& r : results)
          if (r.status() != 0)
            st.error = r.error();
        return e;
      }
      st.sent_chunks += batch_chunks;
      st.sent_bytes += batch_bytes;
      st.wire_bytes += batch_wire_bytes;
      if (progress != nullptr)
        progress->advance(batch_bytes, 0);
      ops.clear();
      batch_bytes = 0;
      batch_wire_bytes = 0;
      batch_chunks = 0;
      return cudaSuccess;
    };
    for (size_t i = 0; i < missing.size(); ++i) {
      if (!missing[i])
        continue;
      auto idx = first + i;
      auto n = size_of(idx);
      // A chunk larger than a message travels in parts, in order.
      bool parts = n > max_upload_batch_bytes;
      for (uint64_t off = 0; off < n; off += max_upload_batch_bytes) {
        auto len = std::min<uint64_t>(max_upload_batch_bytes, n - off);
        if (batch_bytes + len > max_upload_batch_bytes)
          if (auto e = flush(); e != cudaSuccess)
            return e;
        proto::Op up;
        auto* u = up.mutable_cache_upload();
        u->set_dst(dst + idx * chunk);
        u->set_key(keys[idx].to_binary());
        std::string_view raw{bytes + idx * chunk + off, len};
        auto packed = compression != nullptr ? compression->pack(raw) : std::string{};
        if (packed.empty()) {
          u->set_data(raw.data(), raw.size());
        } else {
          u->set_codec(static_cast<uint32_t>(wire::byte_codec::grouped_zstd));
          u->set_raw_size(len);
          u->set_data(std::move(packed));
        }
        batch_wire_bytes += u->data().size();
        u->set_stream(stream);
        u->set_async(async);
        if (parts) {
          u->set_offset(off);
          u->set_chunk_size(n);
        }
        ops.push_back(std::move(up));
        batch_bytes += len;
        if (off + len == n)
          ++batch_chunks;
      }
    }
    if (auto e = flush(); e != cudaSuccess)
      return e;
  }
  return cudaSuccess;
}

namespace {

/// Sends `image` as CacheUploads with `image` set, in parts of at most
/// max_upload_batch_bytes, one part a batch (pipelined where the sender
/// queues uploads).
cudaError_t upload_image_parts(const op_sender& send, const std::string& key, const void* image,
                               size_t size) {
  const auto* bytes = static_cast<const char*>(image);
  std::vector<proto::Op> ops;
  for (uint64_t off = 0; off < size; off += max_upload_batch_bytes) {
    auto len = std::min<uint64_t>(max_upload_batch_bytes, size - off);
    proto::Op up;
    auto* u = up.mutable_cache_upload();
    u->set_image(true);
    u->set_key(key);
    u->set_data(bytes + off, len);
    u->set_offset(off);
    u->set_chunk_size(size);
    ops.clear();
    ops.push_back(std::move(up));
    if (auto err = send(ops, nullptr); err != cudaSuccess)
      return err;
  }
  return cudaSuccess;
}

} // namespace

cudaError_t load_module_key_first(const op_sender& send, proto::Op op, const void* image,
                                  size_t size, proto::OpResult* result) {
  auto key = cs::hash_chunk(cs::chunk_key::algo::xxh3_128, image, size).to_binary();
  op.mutable_module_load()->set_image_key(key);
  op.mutable_module_load()->clear_image();
  auto with_image = op;
  std::vector<proto::Op> ops;
  ops.push_back(op);
  std::vector<proto::OpResult> results;
  auto err = send(ops, &results);
  auto missing = [&] { return !results.empty() && results.front().image_missing(); };
  // A server with a cache takes a large image in parts (no message longer
  // than the rest), then loads it by key.
  if (missing() && size > max_upload_batch_bytes
      && results.front().status() == CUDA_ERROR_NOT_FOUND) {
    err = upload_image_parts(send, key, image, size);
    if (err == cudaSuccess) {
      ops.clear();
      ops.push_back(op);
      err = send(ops, &results);
    }
  }
  // A small image, or a server without a cache: the image in the load.
  if (missing()) {
    with_image.mutable_module_load()->set_image(static_cast<const char*>(image), size);
    ops.clear();
    ops.push_back(std::move(with_image));
    err = send(ops, &results);
  }
  if (result != nullptr && !results.empty())
    *result = results.front();
  return err;
}

} // namespace gleam::interpose
