#pragma once

#include <cstddef>

namespace gleam::interpose {

/// The most bulk payload one message to the server carries: a chunk of a
/// plain copy either way, a part of a cached upload's chunk, the queued ops'
/// payload at which a batch leaves. CAF (middleman.connection-timeout, 2 s
/// on both sides) takes a peer for lost when no whole message came from it
/// for that long, however much of a large one is on its way: 16 MiB
/// messages lost the connection on every link below about 70 Mbit/s, 1 MiB
/// ones keep it down to about 4 Mbit/s. Throughput is not the price: the
/// window keeps 8 batches in flight (8 MiB, far above a LAN's
/// bandwidth-delay product).
constexpr size_t max_message_payload = size_t{1} << 20;

} // namespace gleam::interpose
