#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

namespace gleam::interpose {

/// Device memory the client carves its cudaMalloc's from, so that an
/// allocation costs no round trip (DESIGN.md: handles from batches created
/// ahead). The server allocates slabs (MemAlloc.slab, one round trip each)
/// and registers every carved allocation when its queued MemAlloc.at
/// arrives; it frees a carved allocation after the device is idle, as
/// cuMemFree would, so a later carve of the same bytes is safe.
///
/// Slabs grow geometrically from `first_slab` to `max_slab`, so a small app
/// holds little and a model load asks a few dozen times for 16 GB. Requests
/// larger than `max_slab / 4` are not carved (they go to the server as they
/// are: one round trip is small next to filling them). An empty slab goes
/// back to the server, except the newest one, which stays for the next
/// allocation.
///
/// Pure bookkeeping, no I/O; not thread-safe (the caller holds its lock).
class slab_pool {
public:
  /// Alignment of carved allocations: 512 bytes (what cudaMalloc gives at
  /// least), 2 MiB for allocations of 2 MiB or more (the GPU's large page).
  static constexpr uint64_t small_align = 512;
  static constexpr uint64_t large_align = uint64_t{2} << 20;

  /// A pool whose slabs reach `max_slab` bytes (0: the pool carves nothing).
  explicit slab_pool(uint64_t max_slab, uint64_t first_slab = uint64_t{64} << 20);

  /// Whether a request of `size` bytes is carved at all.
  [[nodiscard]] bool carves(uint64_t size) const noexcept;

  /// An address for `size` bytes (> 0) from a slab with room, or nothing.
  [[nodiscard]] std::optional<uint64_t> carve(uint64_t size);

  /// Size of the slab to ask the server for so that `size` fits (a carved
  /// size: call only when `carves(size)`).
  [[nodiscard]] uint64_t next_slab_size(uint64_t size) const noexcept;

  /// Adds a slab the server allocated at `base`.
  void add_slab(uint64_t base, uint64_t size);

  /// Whether `addr` is an allocation carved here.
  [[nodiscard]] bool owns(uint64_t addr) const;

  /// Returns carved allocation `addr` to its slab. False when `addr` is not
  /// one. When that left a slab other than the newest empty, the pool
  /// forgets it and `*empty_slab` names it (free it on the server); else 0.
  bool release(uint64_t addr, uint64_t* empty_slab);

  /// Forgets the newest slab if it is empty and returns its base (0 when
  /// none): memory for an allocation the server could not fit otherwise.
  uint64_t take_empty();

  /// Bytes of the slabs that no carved allocation uses (cudaMemGetInfo
  /// counts them free: the app can still allocate them).
  [[nodiscard]] uint64_t unused_bytes() const noexcept;

  /// Bytes of all slabs.
  [[nodiscard]] uint64_t slab_bytes() const noexcept;

  /// Number of slabs held.
  [[nodiscard]] size_t slab_count() const noexcept {
    return slabs_.size();
  }

  /// Forgets everything (the server's session is gone: fork, device reset).
  void clear() noexcept;

private:
  struct slab {
    uint64_t size = 0;
    /// offset -> length of each free range; ranges never touch.
    std::map<uint64_t, uint64_t> free;
    uint64_t used = 0;
    /// Order of creation (the newest stays when it empties).
    uint64_t serial = 0;
  };
  struct carved {
    uint64_t slab = 0;
    uint64_t offset = 0;
    uint64_t size = 0;
  };

  static uint64_t round_up(uint64_t n, uint64_t to) noexcept {
    return (n + to - 1) / to * to;
  }

  uint64_t max_slab_;
  uint64_t first_slab_;
  uint64_t created_ = 0;
  uint64_t newest_ = 0;
  std::map<uint64_t, slab> slabs_;
  std::map<uint64_t, carved> carved_;
};

} // namespace gleam::interpose
