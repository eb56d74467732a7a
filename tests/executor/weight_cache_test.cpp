// The weight cache end to end on a CPU: the client's hash-first upload
// protocol (interpose/upload_protocol.hpp) talking to an executor whose
// driver simulates a GPU in host memory, with the node's weight_cache
// behind it. Covers: only misses travel, hash mismatches are refused with
// nothing written, the weight rule at MemFree / session end, chunks with a
// common 1024-bit prefix, key-first fatbins, persistence across a reopen.
#include "executor/weight_cache.hpp"

#include <catch2/catch.hpp>

#include "tests/executor/fake_device_driver.hpp"

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "cache_store/bloom.hpp"
#include "cache_store/error.hpp"
#include "executor/cache_ops.hpp"
#include "executor/executor.hpp"
#include "interpose/progress.hpp"
#include "interpose/upload_compression.hpp"
#include "interpose/upload_protocol.hpp"
#include "tests/executor/module_images.hpp"
#include "wire/byte_codec.hpp"

namespace proto = gleam::proto;
namespace cs = gleam::cache_store;
using gleam::executor::driver_api;
using gleam::executor::executor;
using gleam::executor::weight_cache;
using gleam::executor::weight_cache_options;

namespace {

void* host(CUdeviceptr p) {
  return reinterpret_cast<void*>(static_cast<uintptr_t>(p));
}

/// Images the fake cuModuleLoadData saw (NUL-terminated test images).
std::vector<std::string>& loaded_images() {
  static std::vector<std::string> x;
  return x;
}

/// Device-to-device copies the fake driver ran.
int& dtod_copies() {
  static int n = 0;
  return n;
}

/// Host-to-device copies the fake driver ran.
int& htod_copies() {
  static int n = 0;
  return n;
}

/// When non-zero: device bytes the fake driver still has room for (every
/// cuMemAlloc takes from it, cuMemFree gives back); 0: unlimited.
uint64_t& device_room() {
  static uint64_t n = 0;
  return n;
}

std::map<CUdeviceptr, size_t>& device_sizes() {
  static std::map<CUdeviceptr, size_t> m;
  return m;
}

/// Live pinned buffers of the fake driver.
int& pinned_buffers() {
  static int n = 0;
  return n;
}

void install_fake_driver(driver_api& api) {
  // The fake device of the executor's tests, with this file's memory
  // accounting, copy counters, pinned buffers and module images.
  gleam::test::install_fake_device(api);
  api.cuMemHostAlloc = [](void** p, size_t n, unsigned) {
    *p = std::malloc(n);
    ++pinned_buffers();
    return CUDA_SUCCESS;
  };
  api.cuMemFreeHost = [](void* p) {
    std::free(p);
    --pinned_buffers();
    return CUDA_SUCCESS;
  };
  api.cuDeviceGetAttribute = [](int* v, CUdevice_attribute, CUdevice) {
    *v = 1;
    return CUDA_SUCCESS;
  };
  api.cuMemGetInfo = [](size_t* free, size_t* total) {
    *free = size_t{70} << 30;
    *total = size_t{80} << 30;
    return CUDA_SUCCESS;
  };
  api.cuMemAlloc = [](CUdeviceptr* p, size_t n) {
    if (device_room() != 0) {
      if (n > device_room())
        return CUDA_ERROR_OUT_OF_MEMORY;
      device_room() -= n;
    }
    *p = reinterpret_cast<CUdeviceptr>(std::calloc(1, n));
    device_sizes()[*p] = n;
    return CUDA_SUCCESS;
  };
  api.cuMemFree = [](CUdeviceptr p) {
    auto i = device_sizes().find(p);
    if (i != device_sizes().end()) {
      if (device_room() != 0)
        device_room() += i->second;
      device_sizes().erase(i);
    }
    std::free(host(p));
    return CUDA_SUCCESS;
  };
  api.cuMemcpyHtoD = [](CUdeviceptr dst, const void* src, size_t n) {
    ++htod_copies();
    std::memcpy(host(dst), src, n);
    return CUDA_SUCCESS;
  };
  api.cuMemcpyHtoDAsync = [](CUdeviceptr dst, const void* src, size_t n, CUstream) {
    ++htod_copies();
    std::memcpy(host(dst), src, n);
    return CUDA_SUCCESS;
  };
  api.cuMemcpyDtoH = [](void* dst, CUdeviceptr src, size_t n) {
    std::memcpy(dst, host(src), n);
    return CUDA_SUCCESS;
  };
  api.cuMemcpyDtoHAsync = [](void* dst, CUdeviceptr src, size_t n, CUstream) {
    std::memcpy(dst, host(src), n);
    return CUDA_SUCCESS;
  };
  api.cuMemcpyDtoDAsync = [](CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream) {
    ++dtod_copies();
    std::memmove(host(dst), host(src), n);
    return CUDA_SUCCESS;
  };
  api.cuStreamSynchronize = [](CUstream) { return CUDA_SUCCESS; };
  api.cuStreamDestroy = [](CUstream) { return CUDA_SUCCESS; };
  api.cuStreamCreateWithPriority = [](CUstream* s, unsigned, int) {
    *s = reinterpret_cast<CUstream>(uintptr_t{0x5000});
    return CUDA_SUCCESS;
  };
  api.cuModuleLoadData = [](CUmodule* m, const void* image) {
    loaded_images().emplace_back(static_cast<const char*>(image));
    *m = reinterpret_cast<CUmodule>(uintptr_t{0x7000 + loaded_images().size()});
    return CUDA_SUCCESS;
  };
  api.cuModuleUnload = [](CUmodule) { return CUDA_SUCCESS; };
  api.cuModuleGetFunction = [](CUfunction*, CUmodule, const char*) {
    return CUDA_ERROR_NOT_FOUND;
  };
}

/// A scratch directory, removed at the end.
struct scratch_dir {
  std::filesystem::path path;
  scratch_dir() {
    std::random_device rd;
    path = std::filesystem::temp_directory_path()
           / ("gleam-weight-cache-" + std::to_string(rd()) + std::to_string(rd()));
    std::filesystem::create_directories(path);
  }
  ~scratch_dir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

/// `n` bytes of bf16 weights from a narrow normal distribution (what model
/// weights look like: the exponent bytes vary little), from `seed`.
std::string bf16_weights(uint64_t seed, size_t n) {
  std::string out(n, '\0');
  std::mt19937_64 gen{seed};
  std::normal_distribution<float> dist{0.0f, 0.02f};
  for (size_t i = 0; i + 1 < n; i += 2) {
    float v = dist(gen);
    uint32_t bits = 0;
    std::memcpy(&bits, &v, sizeof(bits));
    out[i] = static_cast<char>((bits >> 16) & 0xff);
    out[i + 1] = static_cast<char>(bits >> 24);
  }
  return out;
}

std::string pattern(uint64_t seed, size_t n) {
  std::string out(n, '\0');
  std::mt19937_64 rng{seed};
  for (size_t i = 0; i < n; i += 8) {
    auto x = rng();
    std::memcpy(&out[i], &x, std::min<size_t>(8, n - i));
  }
  return out;
}

/// One fake GPU with a weight cache; sessions talk to it through the
/// client's upload protocol, counting what travels.
struct fixture {
  driver_api api;
  std::unique_ptr<executor> exec;
  std::shared_ptr<weight_cache> cache;

  explicit fixture(const std::string& dir = "", uint64_t host_capacity = uint64_t{256} << 20) {
    install_fake_driver(api);
    auto ex = executor::make(api, 0);
    REQUIRE(ex);
    exec = std::move(*ex);
    weight_cache_options opts;
    opts.dir = dir;
    opts.host_capacity = host_capacity;
    auto c = weight_cache::open(opts);
    REQUIRE(c);
    cache = *c;
    exec->set_cache(cache);
  }
};

struct client {
  executor& ex;
  uint64_t session = 0;
  std::string secret;
  uint64_t seq = 0;
  /// Bytes of chunk data and fatbin images this client sent.
  uint64_t payload_bytes = 0;
  size_t batches = 0;

  explicit client(executor& e, const std::string& tenant = {}) : ex(e) {
    proto::OpenSession req;
    req.set_client_id("cpu:1");
    auto opened = ex.open_session(req, tenant);
    REQUIRE(opened);
    session = opened->session();
    secret = opened->secret();
  }

  ~client() {
    ex.close_session(session);
  }

  gleam::interpose::op_sender sender() {
    return [this](std::vector<proto::Op>& ops, std::vector<proto::OpResult>* results) {
      proto::OpBatch batch;
      batch.set_session(session);
      batch.set_session_secret(secret);
      for (auto& op : ops) {
        op.set_seq(++seq);
        if (op.has_cache_upload())
          payload_bytes += op.cache_upload().data().size();
        if (op.has_module_load())
          payload_bytes += op.module_load().image().size();
        *batch.add_ops() = std::move(op);
      }
      ops.clear();
      ++batches;
      auto reply = ex.execute(batch);
      cudaError_t first = cudaSuccess;
      for (const auto& r : reply.results())
        if (r.status() != 0 && first == cudaSuccess)
          first = r.status() == CUDA_ERROR_NOT_SUPPORTED ? cudaErrorNotSupported
                                                         : cudaErrorInvalidValue;
      if (results != nullptr)
        results->assign(reply.results().begin(), reply.results().end());
      return first;
    };
  }

  proto::OpResult run(proto::Op op) {
    std::vector<proto::Op> ops{std::move(op)};
    std::vector<proto::OpResult> results;
    static_cast<void>(sender()(ops, &results));
    REQUIRE(results.size() == 1);
    return results.front();
  }

  uint64_t alloc(uint64_t n) {
    proto::Op op;
    op.mutable_mem_alloc()->set_size(n);
    auto r = run(op);
    REQUIRE(r.status() == CUDA_SUCCESS);
    return r.dptr();
  }

  int free(uint64_t p) {
    proto::Op op;
    op.mutable_mem_free()->set_dptr(p);
    return run(op).status();
  }

  cudaError_t upload(uint64_t dst, const std::string& data, size_t chunk,
                     gleam::interpose::upload_stats* st,
                     cs::chunk_key::algo algo = cs::chunk_key::algo::xxh3_128,
                     gleam::interpose::upload_compression* compression = nullptr) {
    return gleam::interpose::upload_chunks(sender(), dst, data.data(), data.size(), chunk, 0,
                                           false, st, nullptr, algo, compression);
  }

  std::string device_bytes(uint64_t p, size_t n) {
    return std::string(static_cast<const char*>(host(p)), n);
  }
};

constexpr size_t mib = size_t{1} << 20;

/// Bytes a session of `tenant` sends to upload `weights` (in 1 MiB chunks
/// keyed by `algo`); checks that the device then holds them.
uint64_t bytes_sent_by(fixture& f, const std::string& weights, const std::string& tenant,
                       cs::chunk_key::algo algo = cs::chunk_key::algo::xxh3_128) {
  client c{*f.exec, tenant};
  auto p = c.alloc(weights.size());
  gleam::interpose::upload_stats st;
  REQUIRE(c.upload(p, weights, mib, &st, algo) == cudaSuccess);
  CHECK(c.device_bytes(p, weights.size()) == weights);
  return st.sent_bytes;
}

} // namespace

TEST_CASE("a second upload of the same weights sends only keys", "[weight_cache]") {
  fixture f;
  auto weights = pattern(1, 10 * mib + 12345); // 11 chunks of 1 MiB, the last one short
  uint64_t first_sent = 0;
  {
    client a{*f.exec};
    auto p = a.alloc(weights.size());
    auto before = a.batches;
    gleam::interpose::upload_stats st;
    REQUIRE(a.upload(p, weights, mib, &st) == cudaSuccess);
    // The keys, then the misses in batches of at most one message's payload
    // (1 MiB): one chunk each.
    CHECK(a.batches - before == 1 + 11);
    CHECK(st.chunks == 11);
    CHECK(st.sent_chunks == 11);
    CHECK(st.sent_bytes == weights.size());
    CHECK(st.key_messages == 1);
    CHECK(a.device_bytes(p, weights.size()) == weights);
    first_sent = a.payload_bytes;
    CHECK(a.free(p) == CUDA_SUCCESS); // verified unchanged: weights now
  }
  auto stats = f.cache->stats();
  CHECK(stats.verified_chunks() == 11);
  CHECK(stats.received_bytes() == weights.size());
  client b{*f.exec};
  auto q = b.alloc(weights.size());
  auto batches_before = b.batches;
  gleam::interpose::upload_stats st;
  REQUIRE(b.upload(q, weights, mib, &st) == cudaSuccess);
  CHECK(st.sent_chunks == 0);
  CHECK(st.cached_bytes == weights.size());
  CHECK(b.payload_bytes == 0);
  CHECK(b.batches - batches_before == 1); // the keys, in one message
  CHECK(first_sent == weights.size());
  CHECK(b.device_bytes(q, weights.size()) == weights);
  CHECK(f.cache->stats().filled_bytes() == weights.size());
}

TEST_CASE("only the chunks the server lacks travel", "[weight_cache]") {
  fixture f;
  auto weights = pattern(2, 8 * mib);
  client a{*f.exec};
  auto p = a.alloc(weights.size());
  // Half of the chunks are known already.
  REQUIRE(a.upload(p, weights.substr(0, 4 * mib), mib, nullptr) == cudaSuccess);
  auto q = a.alloc(weights.size());
  gleam::interpose::upload_stats st;
  REQUIRE(a.upload(q, weights, mib, &st) == cudaSuccess);
  CHECK(st.sent_chunks == 4);
  CHECK(st.sent_bytes == 4 * mib);
  CHECK(st.cached_bytes == 4 * mib);
  CHECK(a.device_bytes(q, weights.size()) == weights);
}

TEST_CASE("a chunk larger than one message travels in parts and is checked whole",
          "[weight_cache]") {
  fixture f;
  // Chunks of 4 MiB: the first travels as four parts of 1 MiB, the short
  // second one (5 bytes) whole.
  auto weights = pattern(11, 4 * mib + 5);
  client a{*f.exec};
  auto p = a.alloc(weights.size());
  auto before = a.batches;
  gleam::interpose::upload_stats st;
  REQUIRE(a.upload(p, weights, 4 * mib, &st) == cudaSuccess);
  CHECK(a.batches - before == 1 + 4 + 1); // keys, four parts, the short chunk
  CHECK(st.sent_chunks == 2);
  CHECK(st.sent_bytes == weights.size());
  CHECK(a.device_bytes(p, weights.size()) == weights);
  CHECK(f.cache->stats().entries() == 2);
  CHECK(f.cache->stats().received_bytes() == weights.size());
  // Cached whole: the next upload of the same bytes sends only keys.
  auto q = a.alloc(weights.size());
  gleam::interpose::upload_stats again;
  REQUIRE(a.upload(q, weights, 4 * mib, &again) == cudaSuccess);
  CHECK(again.sent_bytes == 0);
  CHECK(a.device_bytes(q, weights.size()) == weights);
}

TEST_CASE("chunk parts out of order, not fitting or not matching their key are refused",
          "[weight_cache]") {
  fixture f;
  client a{*f.exec};
  auto p = a.alloc(2 * mib);
  auto before = a.device_bytes(p, 2 * mib);
  auto good = pattern(12, 2 * mib);
  auto key = cs::hash_chunk(cs::chunk_key::algo::xxh3_128, good.data(), good.size()).to_binary();
  auto part = [&](uint64_t offset, const std::string& data, const std::string& k,
                  uint64_t chunk_size = 2 * mib) {
    proto::Op op;
    auto* u = op.mutable_cache_upload();
    u->set_dst(p);
    u->set_key(k);
    u->set_data(data);
    u->set_offset(offset);
    u->set_chunk_size(chunk_size);
    return a.run(op);
  };
  auto first = good.substr(0, mib);
  auto second = good.substr(mib);
  // The second part without the first.
  auto r = part(mib, second, key);
  CHECK(r.status() == CUDA_ERROR_INVALID_VALUE);
  CHECK_THAT(r.error(), Catch::Contains("without the parts before it"));
  // A first part, then a second naming another key: refused, and the first
  // is dropped (its second part alone is refused again).
  CHECK(part(0, first, key).status() == CUDA_SUCCESS);
  auto other = cs::hash_chunk(cs::chunk_key::algo::xxh3_128, "x", 1).to_binary();
  CHECK(part(mib, second, other).status() == CUDA_ERROR_INVALID_VALUE);
  CHECK(part(mib, second, key).status() == CUDA_ERROR_INVALID_VALUE);
  // A part reaching past its chunk, and a chunk above 16 MiB.
  r = part(mib + 1, second, key);
  CHECK(r.status() == CUDA_ERROR_INVALID_VALUE);
  CHECK_THAT(r.error(), Catch::Contains("does not fit a chunk"));
  CHECK(part(0, first, key, (uint64_t{16} << 20) + 1).status() == CUDA_ERROR_INVALID_VALUE);
  // A chunk past the end of the allocation.
  CHECK(part(0, first, key, 3 * mib).status() == CUDA_ERROR_INVALID_VALUE);
  // Whole parts whose bytes do not hash to the key: refused at the last one.
  auto bad = second;
  bad[99] ^= 1;
  CHECK(part(0, first, key).status() == CUDA_SUCCESS);
  r = part(mib, bad, key);
  CHECK(r.status() == CUDA_ERROR_INVALID_VALUE);
  CHECK_THAT(r.error(), Catch::Contains("hashes to") && Catch::Contains("nothing was written"));
  CHECK(a.device_bytes(p, 2 * mib) == before);
  CHECK(f.cache->stats().entries() == 0);
  // In order and matching: written and cached.
  CHECK(part(0, first, key).status() == CUDA_SUCCESS);
  CHECK(a.device_bytes(p, 2 * mib) == before); // nothing before the last part
  CHECK(part(mib, second, key).status() == CUDA_SUCCESS);
  CHECK(a.device_bytes(p, 2 * mib) == good);
  CHECK(f.cache->stats().entries() == 1);
}

TEST_CASE("misses travel packed where compression says so; the server unpacks and checks "
          "them whole",
          "[weight_cache][compression]") {
  fixture f;
  // bf16-like weights (a narrow normal distribution): a 4 MiB chunk in four
  // parts and a short one.
  auto weights = bf16_weights(21, 4 * mib + 4096);
  client a{*f.exec};
  auto p = a.alloc(weights.size());
  gleam::interpose::upload_compression always{gleam::interpose::upload_compression::mode::always};
  gleam::interpose::upload_stats st;
  auto before = a.payload_bytes;
  REQUIRE(a.upload(p, weights, 4 * mib, &st, cs::chunk_key::algo::xxh3_128, &always)
          == cudaSuccess);
  CHECK(st.sent_bytes == weights.size());
  INFO("packed to " << st.wire_bytes << " of " << st.sent_bytes << " bytes");
  CHECK(st.wire_bytes < st.sent_bytes * 85 / 100);
  CHECK(a.payload_bytes - before < weights.size() * 85 / 100);
  CHECK(always.measured().width == 2);
  CHECK(a.device_bytes(p, weights.size()) == weights);
  CHECK(f.cache->stats().entries() == 2);
  CHECK(f.cache->stats().received_bytes() == weights.size());
  // Cached under the raw bytes' keys: the next upload sends only keys.
  auto q = a.alloc(weights.size());
  gleam::interpose::upload_stats again;
  REQUIRE(a.upload(q, weights, 4 * mib, &again, cs::chunk_key::algo::xxh3_128, &always)
          == cudaSuccess);
  CHECK(again.sent_bytes == 0);
  CHECK(a.device_bytes(q, weights.size()) == weights);
  // Off: the bytes travel as they are.
  gleam::interpose::upload_compression never{gleam::interpose::upload_compression::mode::never};
  auto other = bf16_weights(22, mib);
  auto r = a.alloc(other.size());
  gleam::interpose::upload_stats plain;
  REQUIRE(a.upload(r, other, mib, &plain, cs::chunk_key::algo::xxh3_128, &never) == cudaSuccess);
  CHECK(plain.wire_bytes == plain.sent_bytes);
  CHECK(a.device_bytes(r, other.size()) == other);
}

TEST_CASE("packed parts that do not unpack to what they declare are refused; nothing is "
          "written",
          "[weight_cache][compression]") {
  fixture f;
  client a{*f.exec};
  auto p = a.alloc(mib);
  auto before = a.device_bytes(p, mib);
  auto good = bf16_weights(23, mib);
  auto key = cs::hash_chunk(cs::chunk_key::algo::xxh3_128, good.data(), good.size()).to_binary();
  auto send = [&](const std::string& data, uint64_t raw_size, uint32_t codec = 1) {
    proto::Op op;
    auto* u = op.mutable_cache_upload();
    u->set_dst(p);
    u->set_key(key);
    u->set_data(data);
    u->set_codec(codec);
    u->set_raw_size(raw_size);
    return a.run(op);
  };
  auto packed = gleam::wire::pack_grouped(good, 2);
  REQUIRE(packed.size() < good.size());
  // Another size than the frame's, garbage, an unknown codec, more than a
  // chunk.
  for (auto r : {send(packed, mib - 1), send(packed, mib + 1), send("\x02garbage", mib),
                 send(packed, mib, 7), send(packed, (uint64_t{16} << 20) + 1)}) {
    CHECK(r.status() == CUDA_ERROR_INVALID_VALUE);
    CHECK_THAT(r.error(), Catch::Contains("CacheUpload"));
  }
  // Packed bytes of other content under this key: the key check refuses them.
  auto wrong = good;
  wrong[7] ^= 1;
  auto r = send(gleam::wire::pack_grouped(wrong, 2), mib);
  CHECK(r.status() == CUDA_ERROR_INVALID_VALUE);
  CHECK_THAT(r.error(), Catch::Contains("hashes to"));
  CHECK(a.device_bytes(p, mib) == before);
  CHECK(f.cache->stats().entries() == 0);
  // The real thing: written and cached.
  CHECK(send(packed, mib).status() == CUDA_SUCCESS);
  CHECK(a.device_bytes(p, mib) == good);
  CHECK(f.cache->stats().entries() == 1);
}

TEST_CASE("compression packs where the client packs faster than the link carries and the "
          "bytes shrink",
          "[weight_cache][compression]") {
  using gleam::interpose::upload_compression;
  auto weights = bf16_weights(24, mib);
  SECTION("a slow link: packed, a link faster than packing: as they are") {
    upload_compression c;
    CHECK(c.would_pack()); // nothing measured: it tries
    CHECK_FALSE(c.pack(weights).empty());
    auto m = c.measured();
    REQUIRE(m.pack_rate > 0);
    CHECK(m.ratio < 0.85);
    c.observe_link(static_cast<uint64_t>(m.pack_rate / 100), 1.0); // Wi-Fi-like
    CHECK(c.would_pack());
    CHECK_FALSE(c.pack(weights).empty());
    for (int i = 0; i < 20; ++i) // loopback-like: far faster than packing
      c.observe_link(static_cast<uint64_t>(c.measured().pack_rate * 100), 1.0);
    CHECK_FALSE(c.would_pack());
    CHECK(c.pack(weights).empty());
  }
  SECTION("bytes that do not shrink travel as they are, with a try now and then") {
    upload_compression c;
    std::string noise(mib, '\0');
    uint64_t x = 88172645463325252ull;
    for (auto& ch : noise) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      ch = static_cast<char>(x);
    }
    CHECK(c.pack(noise).empty()); // tried: it does not shrink
    CHECK(c.measured().ratio > 0.95);
    int packed_tries = 0;
    for (uint64_t i = 0; i < upload_compression::retry_every; ++i)
      packed_tries += c.would_pack() ? 1 : 0, static_cast<void>(c.pack(noise));
    CHECK(packed_tries == 0);
    CHECK(c.would_pack()); // the next part tries again
  }
  SECTION("on and off") {
    upload_compression on{upload_compression::mode::always};
    upload_compression off{upload_compression::mode::never};
    on.observe_link(uint64_t{1} << 40, 1.0);
    CHECK_FALSE(on.pack(weights).empty());
    CHECK(off.pack(weights).empty());
    CHECK(upload_compression::parse("on") == upload_compression::mode::always);
    CHECK(upload_compression::parse("off") == upload_compression::mode::never);
    CHECK(upload_compression::parse("auto") == upload_compression::mode::automatic);
  }
}

TEST_CASE("a session has at most max_chunks_in_parts chunks arriving in parts",
          "[weight_cache]") {
  fixture f;
  client a{*f.exec};
  auto n = gleam::executor::max_chunks_in_parts;
  auto p = a.alloc((n + 1) * 2 * mib);
  auto first = pattern(13, mib);
  auto key = cs::hash_chunk(cs::chunk_key::algo::xxh3_128, "k", 1).to_binary();
  for (size_t i = 0; i <= n; ++i) {
    proto::Op op;
    auto* u = op.mutable_cache_upload();
    u->set_dst(p + i * 2 * mib);
    u->set_key(key);
    u->set_data(first);
    u->set_chunk_size(2 * mib);
    auto r = a.run(op);
    CAPTURE(i);
    if (i < n) {
      CHECK(r.status() == CUDA_SUCCESS);
    } else {
      CHECK(r.status() == CUDA_ERROR_INVALID_VALUE);
      CHECK_THAT(r.error(), Catch::Contains("already arriving in parts"));
    }
  }
}

TEST_CASE("an upload whose bytes do not match its key is refused", "[weight_cache]") {
  fixture f;
  client a{*f.exec};
  auto p = a.alloc(mib);
  auto before = a.device_bytes(p, mib);
  auto good = pattern(3, mib);
  auto bad = good;
  bad[777] ^= 1;
  proto::Op op;
  auto* u = op.mutable_cache_upload();
  u->set_dst(p);
  u->set_key(cs::hash_chunk(cs::chunk_key::algo::xxh3_128, good.data(), good.size()).to_binary());
  u->set_data(bad);
  auto r = a.run(op);
  CHECK(r.status() == CUDA_ERROR_INVALID_VALUE);
  CHECK_THAT(r.error(), Catch::Contains("hashes to") && Catch::Contains("nothing was written"));
  CHECK(a.device_bytes(p, mib) == before);
  auto stats = f.cache->stats();
  CHECK(stats.entries() == 0);
  CHECK(stats.rejected_chunks() == 1);
  CHECK(stats.received_bytes() == 0);
}

TEST_CASE("the weight rule: only chunks unchanged on the GPU become weights", "[weight_cache]") {
  fixture f;
  auto kept = pattern(4, mib);
  auto scratch = pattern(5, mib);
  auto kept_key = cs::hash_chunk(cs::chunk_key::algo::xxh3_128, kept.data(), kept.size());
  auto scratch_key = cs::hash_chunk(cs::chunk_key::algo::xxh3_128, scratch.data(), mib);
  {
    client a{*f.exec};
    auto p = a.alloc(mib);
    auto q = a.alloc(mib);
    REQUIRE(a.upload(p, kept, mib, nullptr) == cudaSuccess);
    REQUIRE(a.upload(q, scratch, mib, nullptr) == cudaSuccess);
    // Until MemFree or session end the chunks are cached but not weights.
    CHECK(f.cache->store().contains(kept_key));
    CHECK_FALSE(f.cache->is_verified(kept_key));
    // A kernel overwrites q (a scratch buffer, not weights).
    std::memset(host(q), 0x5a, 4096);
    CHECK(a.free(q) == CUDA_SUCCESS);
    CHECK_FALSE(f.cache->store().contains(scratch_key));
    CHECK(f.cache->stats().dropped_chunks() == 1);
    // p stays allocated: verified at session end.
  }
  CHECK(f.cache->is_verified(kept_key));
  CHECK(f.cache->stats().verified_chunks() == 1);
}

TEST_CASE("chunks sharing their first 1024 bits are two entries", "[weight_cache]") {
  fixture f;
  auto a_bytes = pattern(6, mib);
  auto b_bytes = a_bytes;
  for (size_t i = 128; i < b_bytes.size(); ++i) // identical first 128 bytes
    b_bytes[i] = static_cast<char>(~b_bytes[i]);
  client c{*f.exec};
  auto p = c.alloc(mib);
  auto q = c.alloc(mib);
  REQUIRE(c.upload(p, a_bytes, mib, nullptr) == cudaSuccess);
  gleam::interpose::upload_stats st;
  REQUIRE(c.upload(q, b_bytes, mib, &st) == cudaSuccess);
  CHECK(st.sent_chunks == 1); // not mistaken for a hit
  CHECK(f.cache->stats().entries() == 2);
  // Each key restores its own bytes into fresh buffers.
  auto p2 = c.alloc(mib);
  auto q2 = c.alloc(mib);
  gleam::interpose::upload_stats sa, sb;
  REQUIRE(c.upload(p2, a_bytes, mib, &sa) == cudaSuccess);
  REQUIRE(c.upload(q2, b_bytes, mib, &sb) == cudaSuccess);
  CHECK(sa.sent_chunks + sb.sent_chunks == 0);
  CHECK(c.device_bytes(p2, mib) == a_bytes);
  CHECK(c.device_bytes(q2, mib) == b_bytes);
}

/// Loads the C-string `image` (with its NUL: the fake driver loads a C
/// string) key-first as module 42 in a session of `c`; checks it loaded.
void load_image(client& c, const std::string& image) {
  proto::Op op;
  op.mutable_module_load()->set_module(42);
  proto::OpResult r;
  auto err = gleam::interpose::load_module_key_first(c.sender(), op, image.c_str(),
                                                     image.size() + 1, &r);
  CHECK(err == cudaSuccess);
  CHECK(r.status() == CUDA_SUCCESS);
}

TEST_CASE("fatbins travel once: the key first, the image only on a miss, a large one in parts",
          "[weight_cache]") {
  // A small image rides in the load; one larger than a message in parts of
  // at most 1 MiB (four of them here) between two key-only loads.
  auto [size, first_batches] = GENERATE(std::pair<size_t, size_t>{5018, 2},
                                        std::pair<size_t, size_t>{3 * mib + mib / 2, 6});
  std::string image(size, 'y');
  for (size_t i = 0; i < image.size(); i += 4099)
    image[i] = static_cast<char>('a' + i % 26);
  fixture f;
  loaded_images().clear();
  {
    client a{*f.exec};
    load_image(a, image);
    CHECK(a.batches == first_batches);
    CHECK(a.payload_bytes == image.size() + 1);
  }
  client b{*f.exec};
  load_image(b, image);
  CHECK(b.batches == 1);
  CHECK(b.payload_bytes == 0);
  REQUIRE(loaded_images().size() == 2);
  CHECK(loaded_images()[0] == image);
  CHECK(loaded_images()[1] == image);
}

TEST_CASE("a server without a cache gets a large image in the load", "[weight_cache]") {
  std::string image(2 * mib, 'z');
  fixture f;
  f.exec->set_cache(nullptr);
  loaded_images().clear();
  client a{*f.exec};
  load_image(a, image);
  CHECK(a.batches == 2); // the key, then the load with the image
  CHECK(a.payload_bytes == image.size() + 1);
  REQUIRE(loaded_images().size() == 1);
  CHECK(loaded_images()[0] == image);
}

TEST_CASE("image parts out of order or not matching their key are refused and store nothing",
          "[weight_cache]") {
  fixture f;
  client c{*f.exec};
  auto image = pattern(21, 2 * mib);
  auto key = cs::hash_chunk(cs::chunk_key::algo::xxh3_128, image.data(), image.size());
  auto part = [&](uint64_t off, const std::string& bytes) {
    proto::Op op;
    auto* u = op.mutable_cache_upload();
    u->set_image(true);
    u->set_key(key.to_binary());
    u->set_offset(off);
    u->set_chunk_size(image.size());
    u->set_data(bytes.substr(off, mib));
    return c.run(op);
  };
  auto late = part(mib, image);
  CHECK(late.status() == CUDA_ERROR_INVALID_VALUE);
  CHECK_THAT(late.error(), Catch::Contains("an image") && Catch::Contains("in order"));
  auto forged = image;
  forged[mib + 5] ^= 1;
  CHECK(part(0, forged).status() == CUDA_SUCCESS);
  CHECK(part(mib, forged).status() == CUDA_ERROR_INVALID_IMAGE);
  CHECK(f.cache->stats().entries() == 0);
  // The true image's parts store it.
  CHECK(part(0, image).status() == CUDA_SUCCESS);
  CHECK(part(mib, image).status() == CUDA_SUCCESS);
  auto stored = f.cache->image(key);
  REQUIRE(stored);
  CHECK(*stored == image);
}

TEST_CASE("verified weights survive a restart of the store", "[weight_cache]") {
  scratch_dir dir;
  auto weights = pattern(8, 3 * mib);
  {
    fixture f{dir.path.string()};
    client a{*f.exec};
    auto p = a.alloc(weights.size());
    REQUIRE(a.upload(p, weights, mib, nullptr) == cudaSuccess);
    CHECK(a.free(p) == CUDA_SUCCESS);
    f.cache->wait_persisted();
    CHECK(f.cache->stats().disk_bytes() == weights.size());
  }
  fixture g{dir.path.string()};
  CHECK(g.cache->stats().entries() == 3);
  CHECK(bytes_sent_by(g, weights, "") == 0);
}

TEST_CASE("uploads reach the disk off the server's thread; the free only marks them weights",
          "[weight_cache]") {
  scratch_dir dir;
  fixture f{dir.path.string()};
  auto kept = pattern(9, mib);
  auto scratch = pattern(10, mib);
  auto kept_key = cs::hash_chunk(cs::chunk_key::algo::xxh3_128, kept.data(), mib);
  auto scratch_key = cs::hash_chunk(cs::chunk_key::algo::xxh3_128, scratch.data(), mib);
  client a{*f.exec};
  auto p = a.alloc(mib);
  auto q = a.alloc(mib);
  REQUIRE(a.upload(p, kept, mib, nullptr) == cudaSuccess);
  REQUIRE(a.upload(q, scratch, mib, nullptr) == cudaSuccess);
  // Both on disk by the background writer (the upload waited for none of
  // it), neither a weight yet.
  f.cache->wait_persisted();
  auto s = f.cache->stats();
  CHECK(s.host_bytes() == 2 * mib);
  CHECK(s.disk_bytes() == 2 * mib);
  CHECK_FALSE(f.cache->is_verified(kept_key));
  std::memset(host(q), 0x5a, 4096);
  CHECK(a.free(p) == CUDA_SUCCESS);
  CHECK(a.free(q) == CUDA_SUCCESS);
  CHECK(f.cache->is_verified(kept_key));
  // The overwritten chunk left the disk with the other tiers.
  CHECK_FALSE(f.cache->store().contains(scratch_key));
  f.cache->wait_persisted();
  s = f.cache->stats();
  CHECK(s.disk_bytes() == mib);
  CHECK(s.host_bytes() == mib);
}

TEST_CASE("a miss is served by a peer shard before the client", "[weight_cache]") {
  fixture f;
  auto weights = pattern(10, 2 * mib);
  auto peer_store = std::make_shared<std::map<cs::chunk_key, std::vector<uint8_t>>>();
  for (size_t off = 0; off < weights.size(); off += mib) {
    auto k = cs::hash_chunk(cs::chunk_key::algo::xxh3_128, weights.data() + off, mib);
    (*peer_store)[k].assign(weights.begin() + static_cast<long>(off),
                            weights.begin() + static_cast<long>(off + mib));
  }
  f.cache->set_peer_fetch(
    [peer_store](const cs::chunk_key& k) -> caf::expected<std::vector<uint8_t>> {
      auto i = peer_store->find(k);
      if (i == peer_store->end())
        return cs::make_error(cs::error_code::not_found, "no peer has it");
      return i->second;
    });
  client a{*f.exec};
  auto p = a.alloc(weights.size());
  gleam::interpose::upload_stats st;
  REQUIRE(a.upload(p, weights, mib, &st) == cudaSuccess);
  CHECK(st.sent_bytes == 0);
  CHECK(f.cache->stats().peer_bytes() == weights.size());
  CHECK(a.device_bytes(p, weights.size()) == weights);
}

TEST_CASE("cache ops list and evict entries", "[weight_cache]") {
  fixture f;
  client a{*f.exec};
  auto p = a.alloc(2 * mib);
  REQUIRE(a.upload(p, pattern(11, 2 * mib), mib, nullptr) == cudaSuccess);
  proto::Op ls;
  ls.mutable_cache_list();
  auto listing = a.run(ls).cache_listing();
  REQUIRE(listing.entries_size() == 2);
  CHECK(listing.entries(0).size() == mib);
  proto::Op ev;
  ev.mutable_cache_evict()->add_keys(listing.entries(0).key());
  auto evicted = a.run(ev);
  CHECK(evicted.status() == CUDA_SUCCESS);
  CHECK(evicted.cache_evicted().entries() == 1);
  CHECK(f.cache->stats().entries() == 1);
  proto::Op bad;
  bad.mutable_cache_evict()->add_keys("xxh3:nothex");
  CHECK(a.run(bad).status() == CUDA_ERROR_INVALID_VALUE);
  proto::Op all;
  all.mutable_cache_evict()->set_all(true);
  CHECK(a.run(all).cache_evicted().entries() == 1);
  proto::Op st;
  st.mutable_cache_stats();
  CHECK(a.run(st).cache_stats().entries() == 0);
}

TEST_CASE("the telemetry summary's Bloom filter holds the cached keys", "[weight_cache]") {
  fixture f;
  client a{*f.exec};
  auto weights = pattern(12, 4 * mib);
  auto p = a.alloc(weights.size());
  REQUIRE(a.upload(p, weights, mib, nullptr) == cudaSuccess);
  auto s = f.cache->summary();
  CHECK(s.chunks() == 4);
  CHECK(s.bytes() == 4 * mib);
  auto bloom = cs::key_bloom::from_bits(s.key_bloom(), s.bloom_hashes());
  for (size_t off = 0; off < weights.size(); off += mib)
    CHECK(bloom.may_contain(cs::hash_chunk(cs::chunk_key::algo::xxh3_128, weights.data() + off, mib)));
  int false_positives = 0;
  for (int i = 0; i < 1000; ++i) {
    auto x = pattern(1000 + i, 64);
    false_positives += bloom.may_contain(cs::hash_chunk(cs::chunk_key::algo::xxh3_128, x.data(), 64));
  }
  CHECK(false_positives < 5);
}

TEST_CASE("the progress bar shows sent, cached, rate and ETA", "[weight_cache]") {
  auto text = gleam::interpose::transfer_progress::render(100 * mib, 10 * mib, 40 * mib, 2.0);
  CHECK_THAT(text, Catch::Contains(" 50%") && Catch::Contains("sent 10.0 MiB")
                     && Catch::Contains("cached 40.0 MiB") && Catch::Contains("25.0 MiB/s")
                     && Catch::Contains("ETA 2s"));
  // Not a terminal: nothing is drawn.
  std::FILE* sink = std::tmpfile();
  {
    gleam::interpose::transfer_progress quiet{100, false, sink};
    quiet.advance(50, 50);
    CHECK_FALSE(quiet.drawn());
  }
  CHECK(std::ftell(sink) == 0);
  std::fclose(sink);
}

TEST_CASE("with a GPU tier a hit is a device-to-device copy", "[weight_cache]") {
  fixture f;
  REQUIRE_FALSE(f.cache->attach_device_tier(f.exec->make_device_tier(8 * mib)));
  auto weights = pattern(13, 2 * mib);
  {
    // The upload's chunks join the GPU tier from their destination, device
    // to device: nothing crosses PCIe twice.
    htod_copies() = 0;
    dtod_copies() = 0;
    client a{*f.exec};
    auto p = a.alloc(weights.size());
    REQUIRE(a.upload(p, weights, mib, nullptr) == cudaSuccess);
    CHECK(htod_copies() == 2);
    CHECK(dtod_copies() == 2);
    CHECK(f.cache->stats().gpu_bytes() == 2 * mib);
  }
  // The next load of the same weights is device to device only.
  htod_copies() = 0;
  dtod_copies() = 0;
  client b{*f.exec};
  auto q = b.alloc(weights.size());
  gleam::interpose::upload_stats st;
  REQUIRE(b.upload(q, weights, mib, &st) == cudaSuccess);
  CHECK(st.sent_bytes == 0);
  CHECK(htod_copies() == 0);
  CHECK(dtod_copies() == 2);
  CHECK(b.device_bytes(q, weights.size()) == weights);
  // A second tier of the same kind is refused.
  CHECK(f.cache->attach_device_tier(f.exec->make_device_tier(mib)));
}

TEST_CASE("the GPU tier gives way to an app allocation that does not fit", "[weight_cache]") {
  fixture f;
  REQUIRE_FALSE(f.cache->attach_device_tier(f.exec->make_device_tier(8 * mib)));
  auto weights = pattern(17, 4 * mib);
  {
    client a{*f.exec};
    auto p = a.alloc(weights.size());
    REQUIRE(a.upload(p, weights, mib, nullptr) == cudaSuccess);
  }
  REQUIRE(f.cache->stats().gpu_bytes() == 4 * mib);
  // A device with room for 70 MiB more, the tier's 4 MiB counted as used.
  device_room() = 70 * mib;
  client b{*f.exec};
  // cudaMemGetInfo counts the tier's bytes as free: the app may have them.
  proto::Op info;
  info.mutable_mem_get_info();
  CHECK(b.run(info).mem_info().free() == (size_t{70} << 30) + 4 * mib);
  proto::Op big;
  big.mutable_mem_alloc()->set_size(72 * mib);
  auto r = b.run(big);
  CHECK(r.status() == CUDA_SUCCESS);
  CHECK(f.cache->stats().gpu_bytes() < 4 * mib);
  // The weights are still cached (host tier): a load sends no byte.
  device_room() = 0;
  CHECK(bytes_sent_by(f, weights, "") == 0);
}

TEST_CASE("the host tier pins its buffers once the driver is given", "[weight_cache]") {
  pinned_buffers() = 0;
  {
    fixture f;
    auto api = std::shared_ptr<driver_api>(&f.api, [](driver_api*) {});
    f.cache->use_pinned_memory(api);
    {
      client a{*f.exec};
      auto p = a.alloc(2 * mib);
      REQUIRE(a.upload(p, pattern(14, 2 * mib), mib, nullptr) == cudaSuccess);
      CHECK(pinned_buffers() == 2);
      proto::Op all;
      all.mutable_cache_evict()->set_all(true);
      CHECK(a.run(all).cache_evicted().entries() == 2);
      CHECK(pinned_buffers() == 0);
      REQUIRE(a.upload(p, pattern(15, mib), mib, nullptr) == cudaSuccess);
      CHECK(pinned_buffers() == 1);
    }
    f.exec.reset();
    f.cache.reset();
  }
  CHECK(pinned_buffers() == 0);
}

TEST_CASE("a cache closed for the process's exit leaves its pinned buffers and keeps its "
          "uploads", "[weight_cache]") {
  scratch_dir dir;
  auto weights = pattern(16, 3 * mib);
  pinned_buffers() = 0;
  {
    fixture f{dir.path.string()};
    auto api = std::shared_ptr<driver_api>(&f.api, [](driver_api*) {});
    f.cache->use_pinned_memory(api);
    client a{*f.exec};
    auto p = a.alloc(weights.size());
    REQUIRE(a.upload(p, weights, mib, nullptr) == cudaSuccess);
    REQUIRE(pinned_buffers() == 3);
    f.exec.reset();
    f.cache->wait_persisted();
    f.cache->leave_memory_at_exit();
    f.cache.reset();
  }
  // Not one cuMemFreeHost: the OS takes the pinned pages back at exit.
  CHECK(pinned_buffers() == 3);
  fixture g{dir.path.string()};
  CHECK(g.cache->stats().entries() == 3);
  CHECK(g.cache->stats().disk_bytes() == weights.size());
  CHECK(bytes_sent_by(g, weights, "") == 0);
}

TEST_CASE("a CacheFill outside the session's memory or with oversized chunks is refused",
          "[weight_cache]") {
  fixture f;
  client a{*f.exec};
  auto p = a.alloc(mib);
  auto key = cs::hash_chunk(cs::chunk_key::algo::xxh3_128, "x", 1).to_binary();
  proto::Op past_end;
  past_end.mutable_cache_fill()->set_dst(p);
  past_end.mutable_cache_fill()->add_keys(key);
  past_end.mutable_cache_fill()->add_sizes(2 * mib);
  CHECK(a.run(past_end).status() == CUDA_ERROR_INVALID_VALUE);
  proto::Op huge;
  huge.mutable_cache_fill()->set_dst(p);
  for (int i = 0; i < 2; ++i) {
    huge.mutable_cache_fill()->add_keys(key);
    huge.mutable_cache_fill()->add_sizes(uint64_t{1} << 63); // sums to 0 when wrapped
  }
  auto r = a.run(huge);
  CHECK(r.status() == CUDA_ERROR_INVALID_VALUE);
  CHECK_THAT(r.error(), Catch::Contains("at most"));
  proto::Op uneven;
  uneven.mutable_cache_fill()->set_dst(p);
  uneven.mutable_cache_fill()->add_keys(key);
  CHECK(a.run(uneven).status() == CUDA_ERROR_INVALID_VALUE);
}

TEST_CASE("an XXH3 chunk serves only the tenants that uploaded its bytes", "[weight_cache][tenant]") {
  fixture f;
  auto weights = pattern(21, 2 * mib);
  auto sent_by = [&](const std::string& tenant) { return bytes_sent_by(f, weights, tenant); };
  CHECK(sent_by("alice") == weights.size());
  CHECK(sent_by("alice") == 0);
  // Bob's keys find alice's chunks, but bob must show he has the bytes.
  CHECK(sent_by("bob") == weights.size());
  CHECK(sent_by("bob") == 0);
  // The unnamed tenant is a tenant like the others.
  CHECK(sent_by("") == weights.size());
  CHECK(sent_by("") == 0);
}

TEST_CASE("SHA-256 chunks are shared by every tenant", "[weight_cache][tenant]") {
  fixture f;
  auto weights = pattern(22, 2 * mib);
  auto sent_by = [&](const std::string& tenant) {
    return bytes_sent_by(f, weights, tenant, cs::chunk_key::algo::sha256);
  };
  CHECK(sent_by("alice") == weights.size());
  CHECK(sent_by("bob") == 0);
}

TEST_CASE("other bytes under a stored XXH3 key are not cached for their uploader",
          "[weight_cache][tenant]") {
  fixture f;
  auto weights = pattern(23, mib);
  auto key = cs::hash_chunk(cs::chunk_key::algo::xxh3_128, weights.data(), mib);
  {
    client a{*f.exec, "alice"};
    auto p = a.alloc(mib);
    REQUIRE(a.upload(p, weights, mib, nullptr) == cudaSuccess);
  }
  // As if mallory had found bytes that collide with alice's key (the
  // upload's own hash check passed).
  auto planted = pattern(24, mib);
  auto rejected = f.cache->stats().rejected_chunks();
  f.cache->accept_upload(key, planted.data(), planted.size(), "mallory");
  CHECK(f.cache->stats().rejected_chunks() == rejected + 1);
  CHECK_FALSE(f.cache->may_serve(key, "mallory"));
  CHECK(f.cache->may_serve(key, "alice"));
  // Alice still gets her bytes.
  client a{*f.exec, "alice"};
  auto q = a.alloc(mib);
  gleam::interpose::upload_stats st;
  REQUIRE(a.upload(q, weights, mib, &st) == cudaSuccess);
  CHECK(st.sent_bytes == 0);
  CHECK(a.device_bytes(q, mib) == weights);
}

TEST_CASE("a session resumes only for its own tenant", "[weight_cache][tenant]") {
  fixture f;
  proto::OpenSession req;
  auto opened = f.exec->open_session(req, "alice");
  REQUIRE(opened);
  proto::OpenSession resume;
  resume.set_resume_session(opened->session());
  resume.set_resume_secret(opened->secret());
  CHECK_FALSE(f.exec->open_session(resume, "bob"));
  CHECK_FALSE(f.exec->open_session(resume, ""));
  CHECK(f.exec->open_session(resume, "alice"));
  f.exec->close_session(opened->session());
}

TEST_CASE("a tenant's XXH3 chunks still serve it, and only it, after a restart",
          "[weight_cache][tenant]") {
  scratch_dir dir;
  auto weights = pattern(25, 3 * mib);
  {
    fixture f{dir.path.string()};
    CHECK(bytes_sent_by(f, weights, "alice") == weights.size());
    f.cache->wait_persisted();
  }
  fixture g{dir.path.string()};
  auto key = cs::hash_chunk(cs::chunk_key::algo::xxh3_128, weights.data(), mib);
  CHECK(g.cache->may_serve(key, "alice"));
  CHECK_FALSE(g.cache->may_serve(key, "bob"));
  // Alice's weights do not cross the network again; bob's do, once.
  CHECK(bytes_sent_by(g, weights, "alice") == 0);
  CHECK(bytes_sent_by(g, weights, "bob") == weights.size());
  CHECK(bytes_sent_by(g, weights, "bob") == 0);
  CHECK(bytes_sent_by(g, weights, "") == weights.size());
}

TEST_CASE("the telemetry summary says per tenant which XXH3 chunks may serve it",
          "[weight_cache][tenant]") {
  fixture f;
  auto alices = pattern(26, 2 * mib);
  auto shared = pattern(27, 2 * mib);
  CHECK(bytes_sent_by(f, alices, "alice") == alices.size());
  CHECK(bytes_sent_by(f, shared, "bob", cs::chunk_key::algo::sha256) == shared.size());
  auto s = f.cache->summary();
  CHECK(s.chunks() == 4);
  REQUIRE(s.tenants_size() == 1);
  CHECK(s.tenants(0).tenant() == "alice");
  CHECK(s.tenants(0).chunks() == 2);
  CHECK(s.tenants(0).bytes() == 2 * mib);
  for (size_t off = 0; off < alices.size(); off += mib) {
    auto x = cs::hash_chunk(cs::chunk_key::algo::xxh3_128, alices.data() + off, mib);
    CHECK(gleam::executor::summary_may_serve(s, x, "alice"));
    CHECK_FALSE(gleam::executor::summary_may_serve(s, x, "bob"));
    auto y = cs::hash_chunk(cs::chunk_key::algo::sha256, shared.data() + off, mib);
    CHECK(gleam::executor::summary_may_serve(s, y, "alice"));
    CHECK(gleam::executor::summary_may_serve(s, y, "bob"));
  }
}

namespace {

/// A CacheGet of `key` by the session of `c`.
proto::OpResult cache_get(client& c, const cs::chunk_key& key) {
  proto::Op op;
  op.mutable_cache_get()->set_key(key.to_binary());
  return c.run(op);
}

/// The keys (text form) a CacheList by the session of `c` names, and its
/// total.
std::pair<std::set<std::string>, uint64_t> cache_list(client& c) {
  proto::Op op;
  op.mutable_cache_list();
  auto listing = c.run(op).cache_listing();
  std::set<std::string> keys;
  for (const auto& e : listing.entries())
    keys.insert(e.key());
  return {keys, listing.total()};
}

/// `text` with the text form of `from` written as that of `to`.
std::string with_key(std::string text, const cs::chunk_key& from, const cs::chunk_key& to) {
  auto at = text.find(from.to_string());
  if (at != std::string::npos)
    text.replace(at, from.to_string().size(), to.to_string());
  return text;
}

} // namespace

TEST_CASE("a tenant cannot CacheGet or list another tenant's chunk; its own and shared chunks "
          "still work",
          "[weight_cache][tenant][security]") {
  fixture f;
  auto alices = pattern(31, mib);
  auto shared = pattern(32, mib);
  CHECK(bytes_sent_by(f, alices, "alice") == mib);
  CHECK(bytes_sent_by(f, shared, "alice", cs::chunk_key::algo::sha256) == mib);
  auto alice_key = cs::hash_chunk(cs::chunk_key::algo::xxh3_128, alices.data(), mib);
  auto shared_key = cs::hash_chunk(cs::chunk_key::algo::sha256, shared.data(), mib);
  auto nobodys = pattern(33, mib);
  auto absent_key = cs::hash_chunk(cs::chunk_key::algo::xxh3_128, nobodys.data(), mib);

  client alice{*f.exec, "alice"};
  client bob{*f.exec, "bob"};
  client unnamed{*f.exec, ""};

  // Bob asks for alice's chunk by its key: a miss, worded as one for a key
  // nobody has, and no byte of it.
  auto stolen = cache_get(bob, alice_key);
  CHECK(stolen.status() == CUDA_ERROR_NOT_FOUND);
  CHECK(stolen.data().empty());
  auto absent = cache_get(bob, absent_key);
  CHECK(absent.status() == CUDA_ERROR_NOT_FOUND);
  CHECK(with_key(stolen.error(), alice_key, absent_key) == absent.error());
  // A session of the unnamed tenant (no tenant token) sees no named
  // tenant's chunk either.
  CHECK(cache_get(unnamed, alice_key).status() == CUDA_ERROR_NOT_FOUND);
  // Nor does a request without any session (a peer's fetch, the console).
  proto::Op get;
  get.set_seq(1);
  get.mutable_cache_get()->set_key(alice_key.to_binary());
  proto::OpResult shard;
  gleam::executor::cache_ops::run_without_device(*f.cache, get, shard);
  CHECK(shard.status() == CUDA_ERROR_NOT_FOUND);
  CHECK(shard.data().empty());

  // Listings name only what the tenant may use.
  auto [bobs_view, bobs_total] = cache_list(bob);
  CHECK(bobs_view == std::set<std::string>{shared_key.to_string()});
  CHECK(bobs_total == 1);
  CHECK(cache_list(unnamed).first == std::set<std::string>{shared_key.to_string()});
  proto::Op ls;
  ls.set_seq(1);
  ls.mutable_cache_list();
  proto::OpResult listed;
  gleam::executor::cache_ops::run_without_device(*f.cache, ls, listed);
  REQUIRE(listed.cache_listing().entries_size() == 1);
  CHECK(listed.cache_listing().entries(0).key() == shared_key.to_string());
  CHECK(listed.cache_listing().total() == 1);
  // An admin (a shard request that proved the node's admin token) sees
  // every tenant's entries.
  gleam::executor::cache_reader admin;
  admin.every_tenant = true;
  proto::OpResult everything;
  gleam::executor::cache_ops::run_without_device(*f.cache, ls, everything, admin);
  CHECK(everything.cache_listing().total() == 2);
  proto::OpResult admin_read;
  gleam::executor::cache_ops::run_without_device(*f.cache, get, admin_read, admin);
  CHECK(admin_read.data() == alices);

  // What each may use still works: alice her own and the shared chunk,
  // bob and the unnamed tenant the shared one.
  auto own = cache_get(alice, alice_key);
  CHECK(own.status() == CUDA_SUCCESS);
  CHECK(own.data() == alices);
  CHECK(cache_get(alice, shared_key).data() == shared);
  CHECK(cache_get(bob, shared_key).data() == shared);
  CHECK(cache_get(unnamed, shared_key).data() == shared);
  proto::OpResult shared_by_shard;
  get.mutable_cache_get()->set_key(shared_key.to_binary());
  gleam::executor::cache_ops::run_without_device(*f.cache, get, shared_by_shard);
  CHECK(shared_by_shard.data() == shared);
  auto [alices_view, alices_total] = cache_list(alice);
  CHECK(alices_view == std::set<std::string>{alice_key.to_string(), shared_key.to_string()});
  CHECK(alices_total == 2);

  // Once bob shows he has the bytes (uploads them), they are his too.
  CHECK(bytes_sent_by(f, alices, "bob") == mib);
  CHECK(cache_get(bob, alice_key).data() == alices);
}

TEST_CASE("a tenant's cached module image does not load by key for another tenant",
          "[weight_cache][tenant][security]") {
  fixture f;
  std::string image(5018, 'q');
  loaded_images().clear();
  {
    client alice{*f.exec, "alice"};
    load_image(alice, image);
    CHECK(alice.payload_bytes == image.size() + 1);
  }
  // Bob's key-first load finds nothing under alice's key: his bytes travel.
  client bob{*f.exec, "bob"};
  load_image(bob, image);
  CHECK(bob.payload_bytes == image.size() + 1);
  REQUIRE(loaded_images().size() == 2);
}

TEST_CASE("a refused module image is refused again by key, and the driver never sees it",
          "[weight_cache][validation][security]") {
  fixture f;
  loaded_images().clear();
  auto bad = gleam::test::elf_with_section_table_past_end();
  auto key = cs::hash_chunk(cs::chunk_key::algo::xxh3_128, bad.data(), bad.size());
  client c{*f.exec};
  auto load = [&](uint64_t module, bool inline_image) {
    proto::Op op;
    auto* m = op.mutable_module_load();
    m->set_module(module);
    m->set_image_key(key.to_binary());
    if (inline_image)
      m->set_image(bad);
    return c.run(op);
  };
  auto by_key = [&](uint64_t module) {
    auto r = load(module, false);
    CHECK(r.status() != CUDA_SUCCESS);
    CHECK_FALSE(r.has_module());
  };

  SECTION("the image in the load, then the key alone") {
    auto first = load(1, true);
    CHECK(first.status() == CUDA_ERROR_INVALID_IMAGE);
    CHECK_THAT(first.error(), Catch::Contains("section headers"));
    CHECK_FALSE(f.cache->image(key)); // not stored
    by_key(2);
    by_key(3);
  }
  SECTION("the image as a CacheUpload, then the key alone") {
    proto::Op up;
    auto* u = up.mutable_cache_upload();
    u->set_image(true);
    u->set_key(key.to_binary());
    u->set_data(bad);
    auto stored = c.run(up);
    CHECK(stored.status() == CUDA_ERROR_INVALID_IMAGE);
    CHECK_THAT(stored.error(), Catch::Contains("is not stored"));
    CHECK_FALSE(f.cache->image(key));
    by_key(2);
  }
  SECTION("the image already in the store (as an older server kept it), loaded by key") {
    f.cache->put_image(key, bad);
    REQUIRE(f.cache->image(key));
    auto r = load(2, false);
    CHECK(r.status() == CUDA_ERROR_INVALID_IMAGE);
    CHECK_THAT(r.error(), Catch::Contains("image by key") && Catch::Contains("section headers"));
    auto again = load(3, false);
    CHECK(again.status() == CUDA_ERROR_INVALID_IMAGE);
  }
  SECTION("through the client's key-first protocol, twice") {
    for (uint64_t module : {7, 8}) {
      proto::Op op;
      op.mutable_module_load()->set_module(module);
      proto::OpResult r;
      auto err = gleam::interpose::load_module_key_first(c.sender(), op, bad.data(), bad.size(),
                                                         &r);
      CHECK(err != cudaSuccess);
      CHECK(r.status() == CUDA_ERROR_INVALID_IMAGE);
    }
  }
  CHECK(loaded_images().empty());
  // The session keeps serving: a good image loads.
  std::string good = ".version 8.0\n.target sm_90\n";
  load_image(c, good);
  REQUIRE(loaded_images().size() == 1);
  CHECK(loaded_images()[0] == good);
}

TEST_CASE("a cold load cut short resumes: the next upload sends only the chunks that had not "
          "arrived",
          "[weight_cache]") {
  fixture f;
  auto weights = pattern(31, 8 * mib);
  // The chunks a first client got across before it died: whole chunks
  // reached the cache, a chunk cut inside its parts did not.
  auto arrived = [&](bool session_over) {
    auto a = std::make_unique<client>(*f.exec);
    auto p = a->alloc(weights.size());
    REQUIRE(a->upload(p, weights.substr(0, 5 * mib), mib, nullptr) == cudaSuccess);
    proto::Op half;
    auto* u = half.mutable_cache_upload();
    auto sixth = weights.substr(5 * mib, mib);
    u->set_dst(p + 5 * mib);
    u->set_key(cs::hash_chunk(cs::chunk_key::algo::xxh3_128, sixth.data(), sixth.size())
                 .to_binary());
    u->set_data(sixth.substr(0, mib / 2));
    u->set_chunk_size(mib);
    REQUIRE(a->run(half).status() == CUDA_SUCCESS);
    if (session_over)
      a.reset(); // its session ended (the client's grace ran out)
    client b{*f.exec};
    auto q = b.alloc(weights.size());
    gleam::interpose::upload_stats st;
    REQUIRE(b.upload(q, weights, mib, &st) == cudaSuccess);
    CHECK(b.device_bytes(q, weights.size()) == weights);
    return st.sent_bytes;
  };
  SECTION("after the first session ended") {
    CHECK(arrived(true) == 3 * mib);
  }
  SECTION("while the first session still waits for its client") {
    CHECK(arrived(false) == 3 * mib);
  }
}
