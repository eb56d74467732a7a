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
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include "actors/pb.hpp"
#include "actors/proto/control.pb.h"
#include "actors/proto/ops.pb.h"

namespace {

/// Wire bytes with map entries sorted by key: map order is otherwise
/// unspecified, so only deterministic bytes can be compared.
template <class Message>
std::string deterministic_bytes(const Message& m) {
  std::string out;
  {
    google::protobuf::io::StringOutputStream stream{&out};
    google::protobuf::io::CodedOutputStream coded{&stream};
    coded.SetSerializationDeterministic(true);
    if (!m.SerializeToCodedStream(&coded))
      std::abort();
  }
  return out;
}

template <class Message>
void round_trip(const Message& m) {
  auto bytes = deterministic_bytes(m);
  Message again;
  if (!again.ParseFromString(bytes))
    std::abort();
  if (deterministic_bytes(again) != bytes)
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
