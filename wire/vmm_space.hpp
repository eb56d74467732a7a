#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include <cuda.h>

namespace gleam::wire {

/// One session's use of CUDA's virtual memory management API (cuMemCreate,
/// cuMemAddressReserve, cuMemMap, cuMemSetAccess, ...): its address range
/// reservations, its physical allocations by their generic allocation
/// handle, and the mappings between them, with the rules the CUDA driver
/// documents for each call and the CUresult it answers when one is broken.
/// The client keeps one to answer and refuse calls without the network,
/// the server one per session to check what the client asks before the
/// driver sees it (nothing the client names is trusted). Handles are the
/// client's values; `driver` fields hold the server driver's handle.
///
/// Each call has a const `check_*` that says whether CUDA would accept it
/// (CUDA_SUCCESS or the error) and a mutator that records it once accepted
/// (the server calls the driver in between); the mutators assume their
/// check passed. An allocation lives while the app holds a reference to
/// its handle (cuMemCreate, cuMemRetainAllocationHandle) or a mapping of
/// it exists: cuMemRelease of a mapped handle defers the free until the
/// last unmap, as CUDA does. Pure bookkeeping, no CUDA calls. Not
/// thread-safe.
class vmm_space {
public:
  /// A reserved virtual address range [base, base + size).
  struct reservation {
    uint64_t base = 0;
    /// Bytes.
    uint64_t size = 0;
  };

  /// A physical allocation of cuMemCreate.
  struct allocation {
    /// The handle the app holds (client-chosen, never 0).
    uint64_t handle = 0;
    /// Bytes.
    uint64_t size = 0;
    /// The allocation's minimum granularity in bytes (mappings align to
    /// it); 0 when not known, then not checked.
    uint64_t granularity = 0;
    /// The server driver's CUmemGenericAllocationHandle; 0 on the client.
    uint64_t driver = 0;
    /// The properties it was created with.
    CUmemAllocationProp prop{};
    /// References the app holds: cuMemCreate's and each retain's, less
    /// each release. 0: released, kept only for its mappings.
    uint32_t references = 0;
    /// Mappings of it.
    uint32_t mappings = 0;
  };

  /// [base, base + size) mapped to bytes [offset, offset + size) of the
  /// allocation of `handle`.
  struct mapping {
    uint64_t base = 0;
    /// Bytes.
    uint64_t size = 0;
    /// Bytes into the allocation.
    uint64_t offset = 0;
    uint64_t handle = 0;
    /// CUmemAccess_flags of the session's device (cuMemSetAccess); every
    /// mapping starts without access.
    unsigned long long access = CU_MEM_ACCESS_FLAGS_PROT_NONE;
  };

  // --- address reservations (cuMemAddressReserve / cuMemAddressFree) ------

  /// Records reservation [base, base + size) the driver made. False (and
  /// nothing recorded) when size is 0, the range overflows or it overlaps a
  /// reservation of this space.
  [[nodiscard]] bool reserve(uint64_t base, uint64_t size);

  /// cuMemAddressFree: CUDA_ERROR_INVALID_VALUE unless [ptr, ptr + size) is
  /// exactly one reservation, or while a mapping lies in it.
  [[nodiscard]] CUresult check_free(uint64_t ptr, uint64_t size) const;

  /// Forgets the reservation at `ptr` (check_free passed).
  void free(uint64_t ptr);

  // --- physical allocations (cuMemCreate / cuMemRelease / retain) ---------

  /// Whether `handle` can name a new allocation: CUDA_ERROR_INVALID_VALUE
  /// for 0 or a handle of a live allocation.
  [[nodiscard]] CUresult check_create(uint64_t handle) const;

  /// Records a new allocation (check_create passed, size > 0); it holds
  /// one reference.
  void create(const allocation& a);

  /// The live allocation of `handle`, or null.
  [[nodiscard]] const allocation* find(uint64_t handle) const;

  /// cuMemRelease: CUDA_ERROR_INVALID_VALUE unless the app holds a
  /// reference to `handle`.
  [[nodiscard]] CUresult check_release(uint64_t handle) const;

  /// Drops one reference (check_release passed). Returns the allocation
  /// when that freed it (no reference and no mapping left): the server
  /// releases its driver handle then.
  std::optional<allocation> release(uint64_t handle);

  /// cuMemRetainAllocationHandle(addr): the handle of the allocation mapped
  /// at `addr` (any address in a mapping), or nothing when none is.
  [[nodiscard]] std::optional<uint64_t> handle_at(uint64_t addr) const;

  /// Adds a reference to the live allocation of `handle` (mapped or
  /// referenced). CUDA_ERROR_INVALID_VALUE when there is none.
  [[nodiscard]] CUresult retain(uint64_t handle);

  // --- mappings (cuMemMap / cuMemUnmap / cuMemSetAccess) ------------------

  /// cuMemMap of [ptr, ptr + size) to bytes [offset, offset + size) of
  /// `handle`, with the driver's answers: CUDA_ERROR_INVALID_VALUE when the
  /// app holds no reference to `handle`, flags are not 0, size is 0, ptr is
  /// not a multiple of the allocation's minimum granularity, the range does
  /// not lie inside one reservation, or any of it is mapped already;
  /// CUDA_ERROR_NOT_SUPPORTED when offset is not 0 (CUDA documents that it
  /// must be) or size is not a multiple of the granularity or exceeds the
  /// allocation.
  [[nodiscard]] CUresult check_map(uint64_t ptr, uint64_t size, uint64_t offset,
                                   uint64_t handle, unsigned long long flags) const;

  /// Records the mapping (check_map passed).
  void map(uint64_t ptr, uint64_t size, uint64_t offset, uint64_t handle);

  /// cuMemUnmap, as the driver answers it: CUDA_ERROR_INVALID_VALUE when
  /// size is 0, the range does not lie inside one reservation, it cuts a
  /// mapping (every mapping it touches must lie wholly inside it), or ptr
  /// or size is not a multiple of the granularity of the allocations
  /// mapped there (or, when none is, of any live allocation). Unmapped
  /// bytes in the range are no error; a range with nothing mapped unmaps
  /// nothing and succeeds.
  [[nodiscard]] CUresult check_unmap(uint64_t ptr, uint64_t size) const;

  /// The mappings inside [ptr, ptr + size) (check_unmap or check_access
  /// passed), by address.
  [[nodiscard]] std::vector<mapping> mappings_in(uint64_t ptr, uint64_t size) const;

  /// Forgets the mapping that starts at `base`. Returns its allocation when
  /// that freed it (released and no mapping left).
  std::optional<allocation> unmap(uint64_t base);

  /// cuMemSetAccess over [ptr, ptr + size): CUDA_ERROR_INVALID_VALUE unless
  /// the range is exactly covered by whole mappings (one, or adjacent ones):
  /// a part of a mapping, or a range with unmapped bytes, is refused.
  [[nodiscard]] CUresult check_access(uint64_t ptr, uint64_t size) const;

  /// Sets the device's access flags of every mapping in the range
  /// (check_access passed).
  void set_access(uint64_t ptr, uint64_t size, unsigned long long flags);

  /// The mapping that contains `addr`, or null.
  [[nodiscard]] const mapping* mapping_at(uint64_t addr) const;

  /// Whether `addr` lies in a reservation (mapped or not).
  [[nodiscard]] bool reserved(uint64_t addr) const;

  /// Bytes from `addr` to the end of the run of adjacent read-write
  /// mappings that contains it: the most a copy from `addr` may span. 0
  /// when `addr` is not in a read-write mapping.
  [[nodiscard]] uint64_t read_write_span(uint64_t addr) const;

  // --- the whole space ----------------------------------------------------

  /// Every reservation, mapping and live allocation, by address / handle.
  [[nodiscard]] std::vector<reservation> reservations() const;
  [[nodiscard]] std::vector<mapping> mappings() const;
  [[nodiscard]] std::vector<allocation> allocations() const;

  /// Bytes of physical memory in live allocations.
  [[nodiscard]] uint64_t allocated_bytes() const noexcept {
    return allocated_bytes_;
  }

  /// True when nothing is reserved, allocated or mapped.
  [[nodiscard]] bool empty() const noexcept {
    return reservations_.empty() && allocations_.empty() && mappings_.empty();
  }

  /// Forgets everything (the caller released the driver's objects).
  void clear() noexcept;

private:
  /// CUDA_SUCCESS when [ptr, ptr + size) is exactly whole adjacent mappings.
  CUresult covered_exactly(uint64_t ptr, uint64_t size) const;
  /// The reservation containing [ptr, ptr + size), or null.
  const reservation* reservation_of(uint64_t ptr, uint64_t size) const;
  /// Drops the allocation of `handle` when nothing holds it; returns it then.
  std::optional<allocation> collect(uint64_t handle);

  std::map<uint64_t, reservation> reservations_;
  std::map<uint64_t, allocation> allocations_;
  std::map<uint64_t, mapping> mappings_;
  uint64_t allocated_bytes_ = 0;
};

} // namespace gleam::wire
