#include "executor/cache_ops.hpp"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "cache_store/error.hpp"
#include "executor/module_image.hpp"
#include "executor/op_result.hpp"
#include "executor/op_table.hpp"
#include "executor/session_streams.hpp"
#include "wire/byte_codec.hpp"

namespace gleam::executor {

namespace cs = cache_store;

void cache_ops::fail(CUresult rc, std::string detail) {
  fail_op(r_, rc, std::move(detail));
}

bool cache_ops::need_cache() {
  if (cache_ != nullptr)
    return true;
  fail(CUDA_ERROR_NOT_SUPPORTED,
       !s_.no_cache_reason.empty()
         ? s_.no_cache_reason
         : "this gpu_server has no weight cache; configure the node's [cache] section or "
           "set GLEAM_CACHE=off on the client");
  return false;
}

bool cache_ops::write(uint64_t dst, const void* src, size_t size, bool device_src,
                      CUstream stream, const char* what) {
  auto d = static_cast<CUdeviceptr>(dst);
  CUresult rc = device_src
                  ? api_.cuMemcpyDtoDAsync(d, reinterpret_cast<CUdeviceptr>(src), size, stream)
                  : api_.cuMemcpyHtoDAsync(d, src, size, stream);
  // The source is the store's memory: it must not be read after we return.
  if (rc == CUDA_SUCCESS)
    rc = api_.cuStreamSynchronize(stream);
  if (rc == CUDA_SUCCESS)
    return true;
  fail(rc, fmt::format("{}: writing {} bytes to {:#x} failed: {}", what, size, dst,
                       api_.describe(rc)));
  return false;
}

void cache_ops::fill(const proto::CacheFill& op, CUstream stream) {
  if (!need_cache())
    return;
  if (op.keys_size() != op.sizes_size()) {
    fail(CUDA_ERROR_INVALID_VALUE,
         fmt::format("CacheFill has {} keys but {} sizes; send one size per key",
                     op.keys_size(), op.sizes_size()));
    return;
  }
  auto* out = r_.mutable_cache_filled();
  uint64_t offset = 0;
  for (int i = 0; i < op.keys_size(); ++i) {
    auto size = op.sizes(i);
    auto dst = op.dst() + offset;
    offset += size;
    auto key = cs::chunk_key::from_binary(op.keys(i));
    if (!key) {
      fail(CUDA_ERROR_INVALID_VALUE,
           fmt::format("CacheFill key {} is not a chunk key: {}", i, cs::render(key.error())));
      return;
    }
    bool wrote = false;
    bool from_peer = false;
    auto found = cache_->fill(
      *key,
      [&](const cs::chunk_view& v) -> caf::error {
        if (v.size != size)
          return cs::make_error(cs::error_code::invalid_argument,
                                fmt::format("chunk {} holds {} bytes, the copy wants {}",
                                            key->to_string(), v.size, size));
        wrote = write(dst, v.data, size, v.where == cs::tier_kind::gpu, stream, "CacheFill");
        return {};
      },
      &from_peer, s_.tenant, reinterpret_cast<const void*>(static_cast<uintptr_t>(dst)));
    if (wrote) {
      cache_->add_filled(size);
      out->set_filled_bytes(out->filled_bytes() + size);
      if (from_peer)
        out->set_peer_bytes(out->peer_bytes() + size);
      if (!cache_->is_verified(*key))
        s_.placed[dst] = placed_chunk{*key, size};
      continue;
    }
    if (r_.status() != 0)
      return; // the device write failed
    out->add_missing(static_cast<uint32_t>(i));
  }
}

bool cache_ops::collect_part(const proto::CacheUpload& op, std::string_view part,
                             std::string& whole) {
  auto& chunks = s_.chunks_in_parts;
  auto size = op.chunk_size();
  // An image has no device address: its parts fill the slot at 0, where no
  // device chunk can be.
  auto slot = op.image() ? uint64_t{0} : op.dst();
  auto limit = op.image() ? max_image_bytes : max_cache_chunk_bytes;
  const char* what = op.image() ? "an image" : "a chunk";
  auto at = chunks.find(slot);
  auto refuse = [&](std::string why) {
    if (at != chunks.end())
      chunks.erase(at);
    fail(CUDA_ERROR_INVALID_VALUE, std::move(why));
    return false;
  };
  if (size > limit || op.offset() > size || part.size() > size - op.offset())
    return refuse(fmt::format("CacheUpload part of {} bytes at offset {} does not fit {} of "
                              "{} bytes ({} is at most {} bytes)",
                              part.size(), op.offset(), what, size, what, limit));
  if (op.offset() == 0) { // a chunk's first part (re)starts it
    if (at == chunks.end() && chunks.size() >= max_chunks_in_parts)
      return refuse(fmt::format("CacheUpload: {} chunks of this session are already arriving in "
                                "parts; send a chunk's parts before the next chunk's",
                                chunks.size()));
    auto& c = chunks[slot];
    c.key = op.key();
    c.size = size;
    c.bytes.clear();
    c.bytes.reserve(size);
    at = chunks.find(slot);
  } else if (at == chunks.end() || at->second.key != op.key() || at->second.size != size
             || at->second.bytes.size() != op.offset()) {
    return refuse(fmt::format("CacheUpload part at offset {} of {} comes without the parts "
                              "before it; its parts travel in order from 0",
                              op.offset(), op.image() ? std::string{"an image"}
                                                      : fmt::format("the chunk at {:#x}", op.dst())));
  }
  at->second.bytes.append(part);
  if (at->second.bytes.size() < size)
    return false;
  whole = std::move(at->second.bytes);
  chunks.erase(at);
  return true;
}

bool cache_ops::unpack(const proto::CacheUpload& op, std::string& out) {
  // A part unpacks to no more than a chunk: an image's parts are smaller
  // still, and a frame that claims more never gets the memory.
  if (op.codec() != static_cast<uint32_t>(wire::byte_codec::grouped_zstd)
      || op.raw_size() > max_cache_chunk_bytes) {
    fail(CUDA_ERROR_INVALID_VALUE,
         fmt::format("CacheUpload of codec {} unpacking to {} bytes: the codecs are 0 (as it "
                     "is) and 1 (byte-grouped zstd) of at most {} bytes",
                     op.codec(), op.raw_size(), max_cache_chunk_bytes));
    return false;
  }
  auto raw = wire::unpack_grouped(op.data(), op.raw_size());
  if (!raw) {
    fail(CUDA_ERROR_INVALID_VALUE,
         fmt::format("CacheUpload: {} bytes of byte-grouped zstd do not unpack to the {} bytes "
                     "it declares",
                     op.data().size(), op.raw_size()));
    return false;
  }
  out = std::move(*raw);
  return true;
}

bool cache_ops::receive(const proto::CacheUpload& op, std::string& assembled,
                        std::string_view& data, cs::chunk_key& key) {
  if (!need_cache())
    return false;
  std::string unpacked;
  data = op.data();
  if (op.codec() != static_cast<uint32_t>(wire::byte_codec::none)) {
    if (!unpack(op, unpacked))
      return false;
    data = unpacked;
  }
  if (op.chunk_size() != 0) {
    if (!collect_part(op, data, assembled))
      return false; // more parts to come, or refused
    data = assembled;
  } else if (!unpacked.empty()) {
    assembled = std::move(unpacked);
    data = assembled;
  }
  const char* what = op.image() ? "an image" : "a chunk";
  auto limit = op.image() ? max_image_bytes : max_cache_chunk_bytes;
  if (data.size() > limit || (op.image() && data.empty())) {
    fail(CUDA_ERROR_INVALID_VALUE,
         fmt::format("CacheUpload carries {} of {} bytes; {} has {} to {} bytes", what,
                     data.size(), what, op.image() ? 1 : 0, limit));
    return false;
  }
  auto parsed = cs::chunk_key::from_binary(op.key());
  if (!parsed) {
    fail(CUDA_ERROR_INVALID_VALUE,
         fmt::format("CacheUpload key is not a chunk key: {}", cs::render(parsed.error())));
    return false;
  }
  key = *parsed;
  if (auto err = cache_->check(key, data.data(), data.size())) {
    fail(op.image() ? CUDA_ERROR_INVALID_IMAGE : CUDA_ERROR_INVALID_VALUE, cs::render(err));
    return false;
  }
  return true;
}

bool cache_ops::storable_image(const cs::chunk_key& key, std::string_view image) {
  // An image the driver would be refused never enters the store, so no
  // load by key can bring it back.
  auto refused = check_module_image(image);
  if (!refused)
    return true;
  fail(refused->rc, fmt::format("module image {} ({} bytes) is not stored: {}", key.to_string(),
                                image.size(), refused->detail));
  return false;
}

void cache_ops::upload_image(const proto::CacheUpload& op) {
  std::string assembled;
  std::string_view data;
  cs::chunk_key key;
  if (receive(op, assembled, data, key) && storable_image(key, data))
    cache_->put_image(key, data, s_.tenant);
}

void cache_ops::upload(const proto::CacheUpload& op, CUstream stream) {
  std::string assembled;
  std::string_view data;
  cs::chunk_key key;
  if (!receive(op, assembled, data, key) || data.empty())
    return;
  if (!write(op.dst(), data.data(), data.size(), false, stream, "CacheUpload"))
    return;
  cache_->accept_upload(key, data.data(), data.size(), s_.tenant,
                        reinterpret_cast<const void*>(static_cast<uintptr_t>(op.dst())));
  s_.placed[op.dst()] = placed_chunk{key, data.size()};
}

void cache_ops::get(const proto::CacheGet& op) {
  if (!need_cache())
    return;
  auto key = cs::chunk_key::from_binary(op.key());
  if (!key) {
    fail(CUDA_ERROR_INVALID_VALUE,
         fmt::format("CacheGet key is not a chunk key: {}", cs::render(key.error())));
    return;
  }
  auto bytes = cache_->read(*key, reader_);
  if (!bytes) {
    fail(CUDA_ERROR_NOT_FOUND, "CacheGet: " + cs::render(bytes.error()));
    return;
  }
  r_.set_data(reinterpret_cast<const char*>(bytes->data()), bytes->size());
}

void cache_ops::run_without_device(weight_cache& cache, const proto::Op& op,
                                   proto::OpResult& r, const cache_reader& reader) {
  using k = proto::Op::KindCase;
  // No device is touched below: a default session and no driver calls.
  static driver_api no_driver;
  session none;
  none.tenant = reader.tenant;
  cache_ops ops{no_driver, none, &cache, r};
  ops.reader_ = reader;
  switch (op.kind_case()) {
    case k::kCacheGet:
      return ops.get(op.cache_get());
    case k::kCacheStats:
      return ops.stats();
    case k::kCacheList:
      return ops.list(op.cache_list());
    case k::kCacheEvict:
      return ops.evict(op.cache_evict());
    default:
      break;
  }
  ops.fail(CUDA_ERROR_NOT_SUPPORTED,
           fmt::format("op seq {} needs a GPU: send it to a gpu_server, not a cache shard",
                       op.seq()));
}

void cache_ops::stats() {
  if (need_cache())
    *r_.mutable_cache_stats() = cache_->stats();
}

void cache_ops::list(const proto::CacheList& op) {
  if (need_cache())
    *r_.mutable_cache_listing() = cache_->list(op.limit(), reader_);
}

void cache_ops::evict(const proto::CacheEvict& op) {
  if (!need_cache())
    return;
  std::vector<std::string> keys(op.keys().begin(), op.keys().end());
  auto out = cache_->evict(keys, op.all());
  if (!out) {
    fail(CUDA_ERROR_INVALID_VALUE, cs::render(out.error()));
    return;
  }
  *r_.mutable_cache_evicted() = std::move(*out);
}

bool cache_ops::module_image(const proto::ModuleLoad& op, std::string& image) {
  if (op.image_key().empty() || cache_ == nullptr) {
    if (op.image().empty() && !op.image_key().empty()) {
      fail(CUDA_ERROR_NOT_SUPPORTED, "this server has no cache: send the image");
      r_.set_image_missing(true);
      return false;
    }
    image = op.image();
    return true;
  }
  auto key = cs::chunk_key::from_binary(op.image_key());
  if (!key) {
    fail(CUDA_ERROR_INVALID_VALUE,
         fmt::format("ModuleLoad image_key is not a chunk key: {}", cs::render(key.error())));
    return false;
  }
  if (!op.image().empty()) {
    if (auto err = cache_->check(*key, op.image().data(), op.image().size())) {
      fail(CUDA_ERROR_INVALID_IMAGE, cs::render(err));
      return false;
    }
    if (!storable_image(*key, op.image()))
      return false;
    cache_->put_image(*key, op.image(), s_.tenant);
    image = op.image();
    return true;
  }
  auto cached = cache_->image(*key, s_.tenant);
  if (!cached) {
    fail(CUDA_ERROR_NOT_FOUND,
         fmt::format("image {} is not cached on this server: send the image", key->to_string()));
    r_.set_image_missing(true);
    return false;
  }
  image = std::move(*cached);
  return true;
}

void cache_ops::verify_placed(driver_api& api, session& s, weight_cache* cache, uint64_t base,
                              uint64_t size) {
  auto lo = s.placed.lower_bound(base);
  auto hi = s.placed.lower_bound(base + size);
  if (lo == hi)
    return;
  // The session's work first (never another session's), and the read-back
  // on the session's own legacy stand-in.
  CUstream stream = nullptr;
  if (cache != nullptr && sync_session(api, s) == CUDA_SUCCESS
      && stream_for_work(api, s, stream_handle::legacy_default, &stream) == CUDA_SUCCESS) {
    // Read back over PCIe on this server, never over the network, into
    // pinned staging (twice the rate of pageable memory) when it can be had.
    size_t largest = 0;
    for (auto i = lo; i != hi; ++i)
      largest = std::max<size_t>(largest, i->second.size);
    void* pinned = nullptr;
    if (api.cuMemHostAlloc(&pinned, std::max<size_t>(largest, 1), 0) != CUDA_SUCCESS)
      pinned = nullptr;
    std::vector<uint8_t> pageable(pinned == nullptr ? largest : 0);
    auto* buf = pinned != nullptr ? static_cast<uint8_t*>(pinned) : pageable.data();
    for (auto i = lo; i != hi; ++i) {
      const auto& c = i->second;
      if (cache->is_verified(c.key))
        continue;
      if (api.cuMemcpyDtoHAsync(buf, static_cast<CUdeviceptr>(i->first), c.size, stream)
            == CUDA_SUCCESS
          && api.cuStreamSynchronize(stream) == CUDA_SUCCESS)
        static_cast<void>(cache->verify(c.key, buf, c.size, s.tenant));
    }
    if (pinned != nullptr)
      static_cast<void>(api.cuMemFreeHost(pinned));
  }
  s.placed.erase(lo, hi);
}

// --- registration (executor/op_table.hpp) -----------------------------------

namespace {

// CacheFill and CacheUpload write device memory: their range and stream are
// checked here, before cache_ops sees them.

void cache_fill(op_context& cx, const proto::CacheFill& op) {
  uint64_t total = 0;
  for (auto n : op.sizes()) {
    if (n > max_cache_chunk_bytes) {
      cx.fail(CUDA_ERROR_INVALID_VALUE,
              fmt::format("CacheFill names a chunk of {} bytes; chunks are at most {} bytes",
                          n, max_cache_chunk_bytes));
      return;
    }
    total += n;
  }
  CUstream stream = nullptr;
  if (cx.check_range(op.dst(), total, "CacheFill") && cx.lookup_stream(op.stream(), stream))
    cache_ops{cx.api, cx.s, cx.cache, cx.r}.fill(op, stream);
}

void cache_upload(op_context& cx, const proto::CacheUpload& op) {
  if (op.image())
    return cache_ops{cx.api, cx.s, cx.cache, cx.r}.upload_image(op);
  CUstream stream = nullptr;
  // A part is checked against its whole chunk.
  auto span = op.chunk_size() != 0 ? op.chunk_size() : op.data().size();
  if (cx.check_range(op.dst(), span, "CacheUpload") && cx.lookup_stream(op.stream(), stream))
    cache_ops{cx.api, cx.s, cx.cache, cx.r}.upload(op, stream);
}

void cache_stats(op_context& cx, const proto::CacheStats&) {
  cache_ops{cx.api, cx.s, cx.cache, cx.r}.stats();
}

void cache_list(op_context& cx, const proto::CacheList& op) {
  cache_ops{cx.api, cx.s, cx.cache, cx.r}.list(op);
}

void cache_evict(op_context& cx, const proto::CacheEvict& op) {
  cache_ops{cx.api, cx.s, cx.cache, cx.r}.evict(op);
}

void cache_get(op_context& cx, const proto::CacheGet& op) {
  cache_ops{cx.api, cx.s, cx.cache, cx.r}.get(op);
}

using k = proto::Op::KindCase;

constexpr op_route cache_routes[] = {
  {k::kCacheFill, with_message<&proto::Op::cache_fill, cache_fill>},
  {k::kCacheUpload, with_message<&proto::Op::cache_upload, cache_upload>},
  {k::kCacheStats, with_message<&proto::Op::cache_stats, cache_stats>},
  {k::kCacheList, with_message<&proto::Op::cache_list, cache_list>},
  {k::kCacheEvict, with_message<&proto::Op::cache_evict, cache_evict>},
  {k::kCacheGet, with_message<&proto::Op::cache_get, cache_get>},
};

} // namespace

const op_family cache_family = make_family(cache_routes);

} // namespace gleam::executor
