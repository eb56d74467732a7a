#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>

namespace gleam::test {

/// The client's side of memcpy nodes' host ends in executor tests
/// (host_call_port::copy): copy id -> the client's packed bytes, read and
/// written as the client serves host_copy_atom. Not thread-safe.
struct client_bytes {
  std::map<uint64_t, std::string> bytes;

  /// Writes `to_client` at `offset` of copy `copy`, or reads `want` bytes
  /// from there into `*from_client`; false past the bytes held.
  bool serve(uint64_t copy, uint64_t offset, const std::string& to_client, uint64_t want,
             std::string* from_client) {
    auto& b = bytes[copy];
    if (!to_client.empty()) {
      b.resize(std::max<size_t>(b.size(), offset + to_client.size()));
      b.replace(offset, to_client.size(), to_client);
      return true;
    }
    if (offset + want > b.size())
      return false;
    *from_client = b.substr(offset, want);
    return true;
  }
};

} // namespace gleam::test
