#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>

namespace gleam::interpose {

/// Decides, part by part, whether a cached upload's misses travel packed
/// (wire/byte_codec.hpp's byte-grouped zstd), from what it measured: how
/// fast the bytes leave for the network (the link, as the sender's window
/// lets them go), how fast the client packs, and how much packing saves.
///
/// The app's thread packs the next part while the network thread sends the
/// ones before it, so packing wins when the client packs faster than the
/// link carries and the packed bytes are fewer: then the link stays busy
/// with fewer bytes. On a link faster than packing (loopback, 10 GbE) it
/// stops after the first parts; on data that does not shrink (quantized or
/// random bytes) it stops and tries again every `retry_every` parts.
/// Thread-safe.
class upload_compression {
public:
  enum class mode { automatic, always, never };

  /// Parts sent as they are between two tries on data that did not shrink.
  static constexpr uint64_t retry_every = 32;

  explicit upload_compression(mode m = mode::automatic) : mode_(m) {
  }

  /// The packed bytes of `raw` when they should travel packed, else empty
  /// (send `raw` as it is).
  [[nodiscard]] std::string pack(std::string_view raw);

  /// `bytes` (as they travel) left for the network in `seconds`.
  void observe_link(uint64_t bytes, double seconds);

  /// What was measured, for reports and tests: bytes/s of the link and of
  /// packing (0: not yet), packed/raw (0: not yet), the element width used.
  struct measures {
    double link_rate = 0;
    double pack_rate = 0;
    double ratio = 0;
    unsigned width = 0;
  };
  [[nodiscard]] measures measured() const;

  /// Whether the next part would be packed now (pack's decision, without
  /// packing).
  [[nodiscard]] bool would_pack() const;

  /// Parses "auto" / "on" / "off"; automatic for anything else.
  static mode parse(std::string_view text);

private:
  bool decide() const;

  mode mode_;
  mutable std::mutex mutex_;
  double link_rate_ = 0;
  double pack_rate_ = 0;
  double ratio_ = 0;
  unsigned width_ = 0;
  uint64_t since_try_ = 0;
};

} // namespace gleam::interpose
