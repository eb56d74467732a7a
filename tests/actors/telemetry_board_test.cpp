// The telemetry a node sends with its heartbeats carries the weight cache's
// summary (Telemetry.cache, field 40) for placement by cache affinity.
#include "actors/telemetry_board.hpp"

#include <catch2/catch.hpp>

#include "cache_store/bloom.hpp"
#include "cache_store/hash.hpp"

namespace cs = gleam::cache_store;

TEST_CASE("telemetry carries the cache summary and its key filter", "[actors][cache]") {
  gleam::actors::telemetry_board board{1};
  CHECK_FALSE(board.telemetry().has_cache());
  const char data[] = "weights";
  auto key = cs::hash_chunk(cs::chunk_key::algo::xxh3_128, data, sizeof(data));
  board.set_cache_summary([key] {
    cs::key_bloom bloom;
    bloom.add(key);
    gleam::proto::CacheSummary s;
    s.set_chunks(1);
    s.set_bytes(sizeof(data));
    s.set_verified_chunks(1);
    s.set_key_bloom(bloom.bits());
    s.set_bloom_hashes(bloom.hashes());
    return s;
  });
  auto t = board.telemetry();
  REQUIRE(t.has_cache());
  CHECK(t.cached_chunks() == 1);
  CHECK(t.cached_bytes() == sizeof(data));
  CHECK(t.cache().verified_chunks() == 1);
  auto bloom = cs::key_bloom::from_bits(t.cache().key_bloom(), t.cache().bloom_hashes());
  CHECK(bloom.may_contain(key));
  const char other[] = "other";
  CHECK_FALSE(bloom.may_contain(cs::hash_chunk(cs::chunk_key::algo::xxh3_128, other, 5)));
}

TEST_CASE("telemetry carries the measured peer-fetch rate", "[actors][cache]") {
  gleam::actors::telemetry_board board{1};
  CHECK(board.telemetry().peer_fetch_rate() == 0); // a node without peers
  double measured = 0;
  board.set_peer_fetch_rate([&measured] { return measured; });
  CHECK(board.telemetry().peer_fetch_rate() == 0); // nothing fetched yet
  measured = 9.5e8;
  CHECK(board.telemetry().peer_fetch_rate() == 9.5e8); // read at each heartbeat
}
