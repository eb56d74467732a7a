#include "cache_store/hash.hpp"

#include <catch2/catch.hpp>

#include <set>
#include <string>
#include <vector>

#include "cache_store/error.hpp"
#include "tests/cache_store/test_util.hpp"

using namespace gleam::cache_store;
using gleam::cache_store::test::make_bytes;

namespace {

constexpr auto xxh = chunk_key::algo::xxh3_128;
constexpr auto sha = chunk_key::algo::sha256;

} // namespace

TEST_CASE("hash_chunk matches the reference digests", "[cache_store][hash]") {
  CHECK(hash_chunk(sha, "abc", 3).to_string()
        == "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(hash_chunk(xxh, nullptr, 0).to_string()
        == "xxh3:99aa06d3014798d86001c324468d497f");
  CHECK(hash_chunk(xxh, "abc", 3).to_string()
        == "xxh3:06b05ab6733a618578af5f94892f3950");
  CHECK(hash_chunk(xxh, "abc", 3).size == 16);
  CHECK(hash_chunk(sha, "abc", 3).size == 32);
}

TEST_CASE("keys round-trip through text and binary forms", "[cache_store][hash]") {
  auto bytes = make_bytes(1, 5000);
  for (auto kind : {xxh, sha}) {
    auto key = hash_chunk(kind, bytes.data(), bytes.size());
    auto parsed = chunk_key::from_string(key.to_string());
    REQUIRE(parsed);
    CHECK(*parsed == key);
    auto upper = key.to_string();
    for (auto& c : upper)
      if (c >= 'a' && c <= 'f')
        c = static_cast<char>(c - 'a' + 'A');
    upper.replace(0, upper.find(':'), to_string(kind));
    auto parsed_upper = chunk_key::from_string(upper);
    REQUIRE(parsed_upper);
    CHECK(*parsed_upper == key);
    auto bin = key.to_binary();
    CHECK(bin.size() == 1u + key.size);
    auto from_bin = chunk_key::from_binary(bin);
    REQUIRE(from_bin);
    CHECK(*from_bin == key);
  }
}

TEST_CASE("malformed key strings are rejected with bad_key_string",
          "[cache_store][hash]") {
  for (std::string text :
       {"", "xxh3", "xxh3:", "md5:00112233445566778899aabbccddeeff",
        "xxh3:00112233445566778899aabbccddee",   // 15 bytes
        "xxh3:00112233445566778899aabbccddeeff00", // 17 bytes
        "xxh3:00112233445566778899aabbccddeegg",
        "sha256:00112233445566778899aabbccddeeff"}) {
    auto parsed = chunk_key::from_string(text);
    REQUIRE_FALSE(parsed);
    CHECK(is(parsed.error(), error_code::bad_key_string));
    CHECK(render(parsed.error()).find(text) != std::string::npos);
  }
  CHECK_FALSE(chunk_key::from_binary(""));
  CHECK_FALSE(chunk_key::from_binary(std::string(17, '\x07')));
  CHECK(is(chunk_key::from_binary(std::string(5, '\x01')).error(),
           error_code::corrupt_entry));
}

TEST_CASE("SHA-256 keys never equal XXH3 keys for the same content",
          "[cache_store][hash]") {
  for (size_t size : {0u, 1u, 16u, 1000u, 70000u}) {
    auto bytes = make_bytes(size, size);
    auto a = hash_chunk(xxh, bytes.data(), bytes.size());
    auto b = hash_chunk(sha, bytes.data(), bytes.size());
    CHECK(a != b);
    CHECK(a.to_binary() != b.to_binary());
    // Even a SHA-256 key whose digest bytes were forced to the XXH3 digest
    // differs, because the algorithm is part of the key.
    auto forged = a;
    forged.kind = sha;
    CHECK(forged != a);
    CHECK(forged.to_binary() != a.to_binary());
  }
}

TEST_CASE("chunks sharing their first 1024 bits get different keys",
          "[cache_store][hash]") {
  auto a = make_bytes(7, 4096);
  auto b = a;
  b[4000] ^= 0x01;
  for (auto kind : {xxh, sha})
    CHECK(hash_chunk(kind, a.data(), a.size())
          != hash_chunk(kind, b.data(), b.size()));
}

TEST_CASE("hash_chunks multi-threaded equals single-threaded and hash_chunk",
          "[cache_store][hash]") {
  // 40 MiB + a tail: enough for several threads to take part.
  auto data = make_bytes(42, (40u << 20) + 12345);
  const size_t chunk = 1u << 20;
  for (auto kind : {xxh, sha}) {
    auto one = hash_chunks(kind, data.data(), data.size(), chunk, 1);
    auto many = hash_chunks(kind, data.data(), data.size(), chunk, 4);
    auto all = hash_chunks(kind, data.data(), data.size(), chunk, 0);
    REQUIRE(one.size() == 41);
    CHECK(one == many);
    CHECK(one == all);
    for (size_t i = 0; i < one.size(); ++i) {
      auto len = std::min(chunk, data.size() - i * chunk);
      CHECK(one[i] == hash_chunk(kind, data.data() + i * chunk, len));
    }
    std::set<chunk_key> distinct(one.begin(), one.end());
    CHECK(distinct.size() == one.size());
  }
  CHECK(hash_chunks(xxh, data.data(), 0, chunk, 2).empty());
  auto whole = hash_chunks(xxh, data.data(), 100, 0, 2);
  REQUIRE(whole.size() == 1);
  CHECK(whole[0] == hash_chunk(xxh, data.data(), 100));
}
