#pragma once

#include <cstdint>
#include <map>

namespace gleam::interpose {

/// The client's bookkeeping of stream-ordered memory pools: the handles it
/// handed out (client-chosen, mapped by the server to pools of the
/// session), each device's default and current pool, and which allocation
/// came from which pool. Pure bookkeeping, no network. Not thread-safe: the
/// registry's mutex guards it.
class pool_table {
public:
  /// Records pool `pool` of device `device`; `is_default` marks the one
  /// cudaDeviceGetDefaultMemPool hands out (which becomes current when no
  /// other pool is).
  void add(uint64_t pool, int device, bool is_default);

  /// The default pool of `device`, or 0 while it was never asked for.
  [[nodiscard]] uint64_t default_pool(int device) const;

  /// Whether `pool` is a pool of this table (not destroyed).
  [[nodiscard]] bool known(uint64_t pool) const;

  /// Whether `pool` is a device's default pool.
  [[nodiscard]] bool is_default(uint64_t pool) const;

  /// The device of `pool`, or -1 when unknown.
  [[nodiscard]] int device_of(uint64_t pool) const;

  /// Forgets `pool`; a device whose current pool it was falls back to its
  /// default pool, as CUDA does when a current pool is destroyed.
  void remove(uint64_t pool);

  /// The current pool of `device` (cudaDeviceSetMemPool's, else the
  /// default), or 0 when neither exists yet.
  [[nodiscard]] uint64_t current(int device) const;

  /// Makes `pool` the current pool of `device`.
  void set_current(int device, uint64_t pool);

  /// Whether the app holds a pool handle: from then on cudaMallocAsync
  /// allocates from the current pool, so that pool attributes, trims and
  /// usage statistics mean what they mean locally.
  [[nodiscard]] bool active() const noexcept {
    return !pools_.empty();
  }

  /// Allocation at `dptr` came from `pool`.
  void note_allocation(uint64_t dptr, uint64_t pool);

  /// The pool of the allocation at `dptr`, or 0 when it came from none.
  [[nodiscard]] uint64_t pool_of(uint64_t dptr) const;

  /// Forgets the allocation at `dptr` (freed).
  void forget_allocation(uint64_t dptr);

  /// Forgets everything (device reset, a child after fork).
  void clear() noexcept;

private:
  struct pool_info {
    int device = 0;
    bool is_default = false;
  };
  std::map<uint64_t, pool_info> pools_;
  /// Device -> pool set by cudaDeviceSetMemPool.
  std::map<int, uint64_t> current_;
  /// Allocation base -> pool.
  std::map<uint64_t, uint64_t> allocations_;
};

} // namespace gleam::interpose
