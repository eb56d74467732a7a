#include <catch2/catch.hpp>

#include <caf/all.hpp>

#include "actors/pb.hpp"
#include "actors/proto/ops.pb.h"
#include "actors/type_registry.hpp"

using gleam::actors::pb;

TEST_CASE("protobuf messages cross CAF serialization byte for byte", "[actors]") {
  caf::actor_system_config cfg;
  gleam::actors::add_message_types(cfg);
  caf::actor_system sys{cfg};
  gleam::proto::OpBatch batch;
  batch.set_session(42);
  auto* op = batch.add_ops();
  op->set_seq(7);
  std::string payload(1 << 20, '\0');
  for (size_t i = 0; i < payload.size(); ++i)
    payload[i] = static_cast<char>((i * 2654435761u) >> 13);
  op->mutable_memcpy_htod()->set_dst(0x7f0000001000);
  op->mutable_memcpy_htod()->set_data(payload);
  pb<gleam::proto::OpBatch> in{batch};
  std::vector<char> buf;
  caf::binary_serializer sink{sys, buf};
  REQUIRE_FALSE(sink(in));
  pb<gleam::proto::OpBatch> out;
  caf::binary_deserializer source{sys, buf};
  REQUIRE_FALSE(source(out));
  CHECK(out->session() == 42);
  REQUIRE(out->ops_size() == 1);
  CHECK(out->ops(0).seq() == 7);
  CHECK(out->ops(0).memcpy_htod().dst() == 0x7f0000001000);
  CHECK(out->ops(0).memcpy_htod().data() == payload);
}

TEST_CASE("malformed protobuf bytes fail deserialization instead of delivering garbage",
          "[actors]") {
  caf::actor_system_config cfg;
  gleam::actors::add_message_types(cfg);
  caf::actor_system sys{cfg};
  // A CAF-serialized string holding bytes that are not a valid OpBatch: a
  // field header announcing a length-delimited field far longer than the data.
  std::string garbage = "\x12\xff\xff\xff\x0f\x01";
  std::vector<char> buf;
  caf::binary_serializer sink{sys, buf};
  REQUIRE_FALSE(sink(garbage));
  pb<gleam::proto::OpBatch> out;
  caf::binary_deserializer source{sys, buf};
  auto err = source(out);
  CHECK(err);
}
