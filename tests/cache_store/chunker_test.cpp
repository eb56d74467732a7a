#include "cache_store/chunker.hpp"

#include <catch2/catch.hpp>

#include "cache_store/hash.hpp"
#include "tests/cache_store/test_util.hpp"

using namespace gleam::cache_store;

TEST_CASE("copies below the threshold are not chunked", "[cache_store][chunker]") {
  auto plan = plan_chunks(999, 1000, 100);
  CHECK_FALSE(plan.chunked);
  CHECK(plan.chunks.empty());
  CHECK_FALSE(plan_chunks(0, 0, 100).chunked);
  CHECK_FALSE(plan_chunks(5000, 1000, 0).chunked);
}

TEST_CASE("chunk plans cover the copy exactly, last chunk shorter",
          "[cache_store][chunker]") {
  auto plan = plan_chunks(1000, 1000, 300);
  REQUIRE(plan.chunked);
  CHECK(plan.chunk_size == 300);
  REQUIRE(plan.chunks.size() == 4);
  CHECK(plan.chunks[0].offset == 0);
  CHECK(plan.chunks[0].size == 300);
  CHECK(plan.chunks[2].offset == 600);
  CHECK(plan.chunks[3].offset == 900);
  CHECK(plan.chunks[3].size == 100);
  auto exact = plan_chunks(900, 1, 300);
  REQUIRE(exact.chunks.size() == 3);
  CHECK(exact.chunks[2].size == 300);
  auto single = plan_chunks(50, 10, 300);
  REQUIRE(single.chunks.size() == 1);
  CHECK(single.chunks[0].size == 50);
}

TEST_CASE("chunk plans use the boundaries of hash_chunks", "[cache_store][chunker]") {
  auto data = gleam::cache_store::test::make_bytes(3, 10000);
  auto plan = plan_chunks(data.size(), 1, 4096);
  auto keys = hash_chunks(chunk_key::algo::xxh3_128, data.data(), data.size(),
                          4096, 2);
  REQUIRE(keys.size() == plan.chunks.size());
  for (size_t i = 0; i < keys.size(); ++i)
    CHECK(keys[i]
          == hash_chunk(chunk_key::algo::xxh3_128,
                        data.data() + plan.chunks[i].offset,
                        plan.chunks[i].size));
}
