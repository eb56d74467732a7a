#pragma once

// MD2 (RFC 1319) and HMAC-MD2 (RFC 2104 over MD2's 16-byte blocks): the
// digest NVIDIA's runtime uses to check the driver it loaded (see
// export_tables.cpp). Not for any security purpose of Gleam's own.

#include <array>
#include <string_view>

namespace gleam::interpose::driver {

using md2_digest = std::array<unsigned char, 16>;

/// MD2 of `data`.
md2_digest md2(std::string_view data);

/// HMAC-MD2 of `message` under a 16-byte `key`.
md2_digest hmac_md2(const unsigned char (&key)[16], std::string_view message);

} // namespace gleam::interpose::driver
