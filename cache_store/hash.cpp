#include "cache_store/hash.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <thread>

#include <xxhash.h>
#if defined(__x86_64__)
// Runtime selection of the widest vector unit (SSE2, AVX2, AVX-512).
#  include <xxh_x86dispatch.h>
#  define GLEAM_CACHE_STORE_XXH3_128 XXH3_128bits_dispatch
#else
#  define GLEAM_CACHE_STORE_XXH3_128 XXH3_128bits
#endif

#include <openssl/evp.h>

#include "cache_store/error.hpp"

namespace gleam::cache_store {

namespace {

constexpr char hex_digits[] = "0123456789abcdef";

int hex_value(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

bool valid_algo(uint8_t x) {
  return x == static_cast<uint8_t>(chunk_key::algo::xxh3_128)
         || x == static_cast<uint8_t>(chunk_key::algo::sha256);
}

// Below this many bytes per extra thread, starting a thread costs more than
// it saves.
constexpr size_t min_bytes_per_thread = 4u << 20;

} // namespace

std::string to_string(chunk_key::algo x) {
  return x == chunk_key::algo::sha256 ? "sha256" : "xxh3";
}

std::string chunk_key::to_string() const {
  std::string result = cache_store::to_string(kind);
  result += ':';
  for (size_t i = 0; i < size; ++i) {
    result += hex_digits[bytes[i] >> 4];
    result += hex_digits[bytes[i] & 0x0F];
  }
  return result;
}

caf::expected<chunk_key> chunk_key::from_string(std::string_view text) {
  auto fail = [&] {
    return make_error(error_code::bad_key_string,
                      "cannot parse chunk key \"" + std::string{text}
                        + "\": expected xxh3:<32 hex digits> or "
                          "sha256:<64 hex digits>");
  };
  auto colon = text.find(':');
  if (colon == std::string_view::npos)
    return fail();
  auto name = text.substr(0, colon);
  auto digits = text.substr(colon + 1);
  chunk_key result;
  if (name == "xxh3")
    result.kind = algo::xxh3_128;
  else if (name == "sha256")
    result.kind = algo::sha256;
  else
    return fail();
  result.size = digest_size(result.kind);
  if (digits.size() != 2u * result.size)
    return fail();
  for (size_t i = 0; i < result.size; ++i) {
    auto hi = hex_value(digits[2 * i]);
    auto lo = hex_value(digits[2 * i + 1]);
    if (hi < 0 || lo < 0)
      return fail();
    result.bytes[i] = static_cast<uint8_t>((hi << 4) | lo);
  }
  return result;
}

std::string chunk_key::to_binary() const {
  std::string result;
  result.reserve(1u + size);
  result += static_cast<char>(kind);
  result.append(reinterpret_cast<const char*>(bytes.data()), size);
  return result;
}

caf::expected<chunk_key> chunk_key::from_binary(std::string_view data) {
  if (data.empty() || !valid_algo(static_cast<uint8_t>(data[0])))
    return make_error(error_code::corrupt_entry,
                      "stored chunk key of " + std::to_string(data.size())
                        + " bytes has an unknown algorithm byte; "
                          "the database is damaged, clear the cache");
  chunk_key result;
  result.kind = static_cast<algo>(data[0]);
  result.size = digest_size(result.kind);
  if (data.size() != 1u + result.size)
    return make_error(error_code::corrupt_entry,
                      "stored chunk key has " + std::to_string(data.size())
                        + " bytes, expected "
                        + std::to_string(1u + result.size)
                        + "; the database is damaged, clear the cache");
  std::memcpy(result.bytes.data(), data.data() + 1, result.size);
  return result;
}

bool operator==(const chunk_key& x, const chunk_key& y) {
  return x.kind == y.kind && x.size == y.size && x.bytes == y.bytes;
}

bool operator!=(const chunk_key& x, const chunk_key& y) {
  return !(x == y);
}

bool operator<(const chunk_key& x, const chunk_key& y) {
  if (x.kind != y.kind)
    return x.kind < y.kind;
  return x.bytes < y.bytes;
}

std::string to_string(const chunk_key& x) {
  return x.to_string();
}

chunk_key hash_chunk(chunk_key::algo kind, const void* data, size_t size) {
  static const uint8_t empty = 0;
  if (data == nullptr)
    data = &empty;
  chunk_key result;
  result.kind = kind;
  result.size = chunk_key::digest_size(kind);
  if (kind == chunk_key::algo::sha256) {
    unsigned int len = 0;
    // EVP_Digest only fails on allocation failure inside OpenSSL; SHA-256
    // is always available in the default provider.
    EVP_Digest(data, size, result.bytes.data(), &len, EVP_sha256(), nullptr);
  } else {
    XXH128_canonical_t canonical;
    XXH128_canonicalFromHash(&canonical, GLEAM_CACHE_STORE_XXH3_128(data, size));
    std::memcpy(result.bytes.data(), canonical.digest, 16);
  }
  return result;
}

std::vector<chunk_key> hash_chunks(chunk_key::algo kind, const void* data,
                                   size_t size, size_t chunk_size,
                                   unsigned threads) {
  std::vector<chunk_key> result;
  if (size == 0)
    return result;
  if (chunk_size == 0 || chunk_size > size)
    chunk_size = size;
  auto count = (size + chunk_size - 1) / chunk_size;
  result.resize(count);
  auto base = static_cast<const uint8_t*>(data);
  if (threads == 0)
    threads = std::max(1u, std::thread::hardware_concurrency());
  size_t useful = std::max<size_t>(1, size / min_bytes_per_thread);
  auto workers = static_cast<unsigned>(
    std::min<size_t>({threads, count, useful}));
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (auto i = next.fetch_add(1); i < count; i = next.fetch_add(1)) {
      auto offset = i * chunk_size;
      auto len = std::min(chunk_size, size - offset);
      result[i] = hash_chunk(kind, base + offset, len);
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(workers > 0 ? workers - 1 : 0);
  for (unsigned i = 1; i < workers; ++i)
    pool.emplace_back(work);
  work();
  for (auto& t : pool)
    t.join();
  return result;
}

} // namespace gleam::cache_store
