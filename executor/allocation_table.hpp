#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

namespace gleam::executor {

/// What a registered device range is.
enum class range_kind : uint8_t {
  /// Memory from cuMemAlloc / cuMemAllocPitch; the session may free it.
  allocation,
  /// A __device__ / __constant__ variable of a loaded module; readable and
  /// writable by copies, never freed by MemFree (ModuleUnload drops it).
  module_variable,
  /// An allocation the client carved from one of the session's slabs
  /// (session::slabs): MemFree drops it without a driver call.
  carved,
  /// Graph memory (an allocation node, or cudaMallocAsync captured): its
  /// address is fixed by the graph; a free node or MemFree ends it. The
  /// driver may hand the address out again once no graph holds it.
  graph_allocation,
  /// A mapping of the virtual memory API (cuMemMap) the session made
  /// readable and writable (cuMemSetAccess); unmapping ends it, never
  /// MemFree. Adjacent mappings form one range for contains().
  vmm_mapping,
};

/// One registered device range [base, base + size).
struct range_entry {
  /// First device address of the range.
  uint64_t base = 0;
  /// Length in bytes; never 0.
  uint64_t size = 0;
  /// Where the range came from.
  range_kind kind = range_kind::allocation;
  /// For module variables: the client handle of the owning module; 0 else.
  uint64_t module = 0;
};

/// The device address ranges one session owns, for validating every copy,
/// memset and free before it reaches the driver. Pure bookkeeping: it never
/// talks to CUDA. Entries never overlap. Not thread-safe: one thread at a time.
class allocation_table {
public:
  /// Registers [base, base + size). Returns false (and changes nothing) when
  /// size is 0, base + size overflows, or the range overlaps an entry.
  [[nodiscard]] bool insert(range_entry entry);

  /// Removes the entry starting exactly at `base`; returns it, or nothing
  /// when no entry starts there.
  std::optional<range_entry> erase(uint64_t base);

  /// The entry starting exactly at `base`, if any.
  [[nodiscard]] std::optional<range_entry> find_base(uint64_t base) const;

  /// The entry that contains address `ptr`, if any.
  [[nodiscard]] std::optional<range_entry> find(uint64_t ptr) const;

  /// True only when [ptr, ptr + len) lies inside one single entry. A length
  /// of 0 is valid when `ptr` lies inside an entry (or is its one-past-end
  /// address). A range that spans two adjacent entries is not valid (but
  /// for adjacent vmm_mapping entries, one range of virtual addresses as
  /// on the device), and neither is one whose end overflows 64 bits.
  [[nodiscard]] bool contains(uint64_t ptr, uint64_t len) const;

  /// True when some entry overlaps [base, base + size).
  [[nodiscard]] bool overlaps(uint64_t base, uint64_t size) const;

  /// Removes every module variable of client module `module`; returns how
  /// many entries went.
  size_t erase_module(uint64_t module);

  /// Every entry, by ascending base address.
  [[nodiscard]] std::vector<range_entry> entries() const;

  /// Bytes in entries of kind `allocation` (not `carved`: their memory is
  /// a slab's).
  [[nodiscard]] uint64_t allocated_bytes() const noexcept {
    return allocated_bytes_;
  }

  /// Bytes in every entry, whatever its kind.
  [[nodiscard]] uint64_t total_bytes() const noexcept {
    return total_bytes_;
  }

  /// Number of entries.
  [[nodiscard]] size_t size() const noexcept {
    return by_base_.size();
  }

  /// True when nothing is registered.
  [[nodiscard]] bool empty() const noexcept {
    return by_base_.empty();
  }

  /// Forgets every entry (the caller frees the memory).
  void clear() noexcept;

private:
  std::map<uint64_t, range_entry> by_base_;
  uint64_t allocated_bytes_ = 0;
  uint64_t total_bytes_ = 0;
};

} // namespace gleam::executor
