// Fuzz target: decoding of cross-node messages. Every protobuf message
// reaches an actor through the pb<T> inspect adapter (actors/pb.hpp) inside a
// CAF binary stream. Input byte 0 picks the message type; the rest is fed
// (a) to CAF's binary deserializer as a serialized pb<T>, and (b) to
// protobuf directly. Property: malformed input fails cleanly, and whatever
// parses re-serializes to bytes that parse to an equal message.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include <caf/binary_deserializer.hpp>
#include <caf/binary_serializer.hpp>

#include "actors/pb.hpp"
#include "actors/proto/control.pb.h"
#include "actors/proto/ops.pb.h"

namespace {

template <class Message>
void round_trip(const Message& m) {
  std::string bytes;
  if (!m.SerializeToString(&bytes))
    std::abort();
  Message again;
  if (!again.ParseFromString(bytes))
    std::abort();
  std::string bytes2;
  if (!again.SerializeToString(&bytes2) || bytes2 != bytes)
    std::abort();
}

template <class Message>
void decode(const uint8_t* data, size_t size) {
  // Through CAF, as an actor receives it.
  std::vector<char> buf(reinterpret_cast<const char*>(data),
                        reinterpret_cast<const char*>(data) + size);
  gleam::actors::pb<Message> x;
  caf::binary_deserializer source{nullptr, buf};
  if (!source(x))
    round_trip(x.value);
  // Directly, as the wire bytes inside.
  Message m;
  if (m.ParseFromArray(data, static_cast<int>(size)))
    round_trip(m);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace p = gleam::proto;
  if (size == 0)
    return 0;
  auto which = data[0] % 8;
  ++data;
  --size;
  switch (which) {
    case 0: decode<p::OpBatch>(data, size); break;
    case 1: decode<p::BatchReply>(data, size); break;
    case 2: decode<p::OpenSession>(data, size); break;
    case 3: decode<p::SessionOpened>(data, size); break;
    case 4: decode<p::Op>(data, size); break;
    case 5: decode<p::OpResult>(data, size); break;
    case 6: decode<p::PlacementRequest>(data, size); break;
    default: decode<p::PlacementReply>(data, size); break;
  }
  return 0;
}
