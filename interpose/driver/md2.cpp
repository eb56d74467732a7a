// MD2 as RFC 1319 defines it: a 48-byte state, a 16-byte checksum, 18
// rounds of the pi-derived substitution per 16-byte block.
#include "interpose/driver/md2.hpp"

#include <cstdint>
#include <string>

namespace gleam::interpose::driver {
namespace {

// RFC 1319's permutation of 0..255 built from the digits of pi.
constexpr unsigned char pi_subst[256] = {
  41,  46,  67,  201, 162, 216, 124, 1,   61,  54,  84,  161, 236, 240, 6,   19,
  98,  167, 5,   243, 192, 199, 115, 140, 152, 147, 43,  217, 188, 76,  130, 202,
  30,  155, 87,  60,  253, 212, 224, 22,  103, 66,  111, 24,  138, 23,  229, 18,
  190, 78,  196, 214, 218, 158, 222, 73,  160, 251, 245, 142, 187, 47,  238, 122,
  169, 104, 121, 145, 21,  178, 7,   63,  148, 194, 16,  137, 11,  34,  95,  33,
  128, 127, 93,  154, 90,  144, 50,  39,  53,  62,  204, 231, 191, 247, 151, 3,
  255, 25,  48,  179, 72,  165, 181, 209, 215, 94,  146, 42,  172, 86,  170, 198,
  79,  184, 56,  210, 150, 164, 125, 182, 118, 252, 107, 226, 156, 116, 4,   241,
  69,  157, 112, 89,  100, 113, 135, 32,  134, 91,  207, 101, 230, 45,  168, 2,
  27,  96,  37,  173, 174, 176, 185, 246, 28,  70,  97,  105, 52,  64,  126, 15,
  85,  71,  163, 35,  221, 81,  175, 58,  195, 92,  249, 206, 186, 197, 234, 38,
  44,  83,  13,  110, 133, 40,  132, 9,   211, 223, 205, 244, 65,  129, 77,  82,
  106, 220, 55,  200, 108, 193, 171, 250, 36,  225, 123, 8,   12,  189, 177, 74,
  120, 136, 149, 139, 227, 99,  232, 109, 233, 203, 213, 254, 59,  0,   29,  57,
  242, 239, 183, 14,  102, 88,  208, 228, 166, 119, 114, 248, 235, 117, 75,  10,
  49,  68,  80,  180, 143, 237, 31,  26,  219, 153, 141, 51,  159, 17,  131, 20,
};

struct md2_state {
  unsigned char x[48] = {};
  unsigned char checksum[16] = {};
  unsigned char last = 0; // L of RFC 1319 3.2
  unsigned char block[16] = {};
  size_t filled = 0;

  /// One 16-byte block into the state; `sum` also updates the checksum
  /// (every block but the appended checksum itself).
  void compress(const unsigned char* b, bool sum) {
    if (sum)
      for (int j = 0; j < 16; ++j) {
        checksum[j] ^= pi_subst[b[j] ^ last];
        last = checksum[j];
      }
    for (int j = 0; j < 16; ++j) {
      x[16 + j] = b[j];
      x[32 + j] = static_cast<unsigned char>(x[16 + j] ^ x[j]);
    }
    unsigned t = 0;
    for (unsigned round = 0; round < 18; ++round) {
      for (auto& k : x) {
        k ^= pi_subst[t];
        t = k;
      }
      t = (t + round) & 0xFF;
    }
  }

  void update(std::string_view data) {
    for (char c : data) {
      block[filled++] = static_cast<unsigned char>(c);
      if (filled == 16) {
        compress(block, true);
        filled = 0;
      }
    }
  }

  md2_digest finish() {
    auto pad = static_cast<unsigned char>(16 - filled);
    while (filled < 16)
      block[filled++] = pad;
    compress(block, true);
    unsigned char sum[16];
    for (int j = 0; j < 16; ++j)
      sum[j] = checksum[j];
    compress(sum, false);
    md2_digest out;
    for (int j = 0; j < 16; ++j)
      out[j] = x[j];
    return out;
  }
};

} // namespace

md2_digest md2(std::string_view data) {
  md2_state s;
  s.update(data);
  return s.finish();
}

md2_digest hmac_md2(const unsigned char (&key)[16], std::string_view message) {
  std::string inner(16, '\0'), outer(16, '\0');
  for (int i = 0; i < 16; ++i) {
    inner[i] = static_cast<char>(key[i] ^ 0x36);
    outer[i] = static_cast<char>(key[i] ^ 0x5C);
  }
  auto inner_digest = md2(inner + std::string(message));
  outer.append(reinterpret_cast<const char*>(inner_digest.data()), inner_digest.size());
  return md2(outer);
}

} // namespace gleam::interpose::driver
