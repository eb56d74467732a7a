// wire::vmm_space: CUDA's rules of the virtual memory management API as
// pure bookkeeping, with the CUresult of each refusal.
#include "wire/vmm_space.hpp"

#include <catch2/catch.hpp>

#include <cstdint>

using gleam::wire::vmm_space;

namespace {

constexpr uint64_t mib2 = uint64_t{2} << 20;
constexpr uint64_t base = uint64_t{0x7000} << 32;

vmm_space::allocation allocation(uint64_t handle, uint64_t size) {
  vmm_space::allocation a;
  a.handle = handle;
  a.size = size;
  a.granularity = mib2;
  a.driver = handle + 1000;
  return a;
}

/// A space with one 16 MiB reservation at `base` and allocations 1 (4 MiB)
/// and 2 (2 MiB).
vmm_space sample() {
  vmm_space s;
  REQUIRE(s.reserve(base, 8 * mib2));
  REQUIRE(s.check_create(1) == CUDA_SUCCESS);
  s.create(allocation(1, 2 * mib2));
  REQUIRE(s.check_create(2) == CUDA_SUCCESS);
  s.create(allocation(2, mib2));
  return s;
}

} // namespace

TEST_CASE("vmm_space: reservations are freed whole and only when nothing is mapped",
          "[wire][vmm]") {
  auto s = sample();
  CHECK_FALSE(s.reserve(base + mib2, mib2)); // overlaps
  CHECK_FALSE(s.reserve(base, 0));
  CHECK(s.reserved(base));
  CHECK(s.reserved(base + 8 * mib2 - 1));
  CHECK_FALSE(s.reserved(base + 8 * mib2));
  CHECK(s.check_free(base, 4 * mib2) == CUDA_ERROR_INVALID_VALUE);
  CHECK(s.check_free(base + mib2, 7 * mib2) == CUDA_ERROR_INVALID_VALUE);
  REQUIRE(s.check_map(base, mib2, 0, 2, 0) == CUDA_SUCCESS);
  s.map(base, mib2, 0, 2);
  CHECK(s.check_free(base, 8 * mib2) == CUDA_ERROR_INVALID_VALUE);
  REQUIRE(s.check_unmap(base, mib2) == CUDA_SUCCESS);
  CHECK_FALSE(s.unmap(base).has_value()); // allocation 2 is still referenced
  REQUIRE(s.check_free(base, 8 * mib2) == CUDA_SUCCESS);
  s.free(base);
  CHECK_FALSE(s.reserved(base));
  CHECK(s.reservations().empty());
}

TEST_CASE("vmm_space: cuMemMap's refusals", "[wire][vmm]") {
  auto s = sample();
  CHECK(s.check_map(base, mib2, 0, 99, 0) == CUDA_ERROR_INVALID_VALUE);      // unknown handle
  CHECK(s.check_map(base, mib2, 0, 1, 1) == CUDA_ERROR_INVALID_VALUE);       // flags
  CHECK(s.check_map(base, 0, 0, 1, 0) == CUDA_ERROR_INVALID_VALUE);          // empty
  CHECK(s.check_map(base + 4096, mib2, 0, 1, 0) == CUDA_ERROR_INVALID_VALUE); // address
  // The driver's CUDA_ERROR_NOT_SUPPORTED: a size off the granularity, any
  // nonzero offset, more than the allocation.
  CHECK(s.check_map(base, 4096, 0, 1, 0) == CUDA_ERROR_NOT_SUPPORTED);       // size
  CHECK(s.check_map(base, mib2, 4096, 1, 0) == CUDA_ERROR_NOT_SUPPORTED);    // offset
  CHECK(s.check_map(base, mib2, mib2, 1, 0) == CUDA_ERROR_NOT_SUPPORTED);    // offset
  CHECK(s.check_map(base, 2 * mib2, mib2, 1, 0) == CUDA_ERROR_NOT_SUPPORTED); // past its end
  CHECK(s.check_map(base, 4 * mib2, 0, 1, 0) == CUDA_ERROR_NOT_SUPPORTED);   // past its end
  CHECK(s.check_map(base + 7 * mib2, 2 * mib2, 0, 1, 0)
        == CUDA_ERROR_INVALID_VALUE); // past the reservation
  CHECK(s.check_map(base - 2 * mib2, mib2, 0, 2, 0) == CUDA_ERROR_INVALID_VALUE); // unreserved
  REQUIRE(s.check_map(base + mib2, 2 * mib2, 0, 1, 0) == CUDA_SUCCESS);
  s.map(base + mib2, 2 * mib2, 0, 1);
  // Over the mapping, wholly or in part.
  CHECK(s.check_map(base + mib2, mib2, 0, 2, 0) == CUDA_ERROR_INVALID_VALUE);
  CHECK(s.check_map(base, 2 * mib2, 0, 1, 0) == CUDA_ERROR_INVALID_VALUE);
  CHECK(s.check_map(base + 2 * mib2, mib2, 0, 2, 0) == CUDA_ERROR_INVALID_VALUE);
  // Next to it, and a second mapping of the same allocation elsewhere.
  CHECK(s.check_map(base, mib2, 0, 2, 0) == CUDA_SUCCESS);
  CHECK(s.check_map(base + 3 * mib2, mib2, 0, 1, 0) == CUDA_SUCCESS);
  const auto* m = s.mapping_at(base + 2 * mib2 + 5);
  REQUIRE(m != nullptr);
  CHECK(m->base == base + mib2);
  CHECK(m->size == 2 * mib2);
  CHECK(m->handle == 1);
  CHECK(m->access == CU_MEM_ACCESS_FLAGS_PROT_NONE);
  CHECK(s.mapping_at(base + 3 * mib2) == nullptr);
}

TEST_CASE("vmm_space: unmap takes whole mappings and the holes between them; access "
          "exactly whole adjacent mappings",
          "[wire][vmm]") {
  auto s = sample();
  s.map(base, 2 * mib2, 0, 1);
  s.map(base + 2 * mib2, mib2, 0, 2);
  // As the driver answers: a mapping cut in two, a range off the
  // granularity or outside the reservation is refused ...
  CHECK(s.check_unmap(base, mib2) == CUDA_ERROR_INVALID_VALUE);             // part of one
  CHECK(s.check_unmap(base + mib2, 2 * mib2) == CUDA_ERROR_INVALID_VALUE);  // straddles
  CHECK(s.check_unmap(base, mib2 / 2) == CUDA_ERROR_INVALID_VALUE);         // off granularity
  CHECK(s.check_unmap(base + 6 * mib2, 4 * mib2) == CUDA_ERROR_INVALID_VALUE); // past it
  CHECK(s.check_unmap(base, 0) == CUDA_ERROR_INVALID_VALUE);
  // ... unmapped bytes are not: around whole mappings, or nothing mapped.
  CHECK(s.check_unmap(base, 4 * mib2) == CUDA_SUCCESS);
  CHECK(s.check_unmap(base + 4 * mib2, mib2) == CUDA_SUCCESS);
  CHECK(s.mappings_in(base + 4 * mib2, mib2).empty());
  CHECK(s.check_unmap(base, 3 * mib2) == CUDA_SUCCESS);
  CHECK(s.check_access(base + mib2, mib2) == CUDA_ERROR_INVALID_VALUE);
  CHECK(s.check_access(base, 4 * mib2) == CUDA_ERROR_INVALID_VALUE);
  REQUIRE(s.check_access(base, 3 * mib2) == CUDA_SUCCESS);
  // Without access, no span a copy may use.
  CHECK(s.read_write_span(base) == 0);
  s.set_access(base, 3 * mib2, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
  CHECK(s.read_write_span(base) == 3 * mib2);
  CHECK(s.read_write_span(base + 2 * mib2 + 10) == mib2 - 10);
  CHECK(s.read_write_span(base + 3 * mib2) == 0);
  s.set_access(base + 2 * mib2, mib2, CU_MEM_ACCESS_FLAGS_PROT_READ);
  CHECK(s.read_write_span(base + 10) == 2 * mib2 - 10);
  CHECK(s.read_write_span(base + 2 * mib2) == 0);
  auto in = s.mappings_in(base, 3 * mib2);
  REQUIRE(in.size() == 2);
  CHECK(in[0].base == base);
  CHECK(in[1].base == base + 2 * mib2);
}

TEST_CASE("vmm_space: a released allocation lives until its last unmap", "[wire][vmm]") {
  auto s = sample();
  CHECK(s.allocated_bytes() == 3 * mib2);
  s.map(base, 2 * mib2, 0, 1);
  s.map(base + 4 * mib2, mib2, mib2, 1);
  REQUIRE(s.check_release(1) == CUDA_SUCCESS);
  CHECK_FALSE(s.release(1).has_value()); // mapped twice: deferred
  CHECK(s.check_release(1) == CUDA_ERROR_INVALID_VALUE);
  CHECK(s.check_map(base + 2 * mib2, mib2, 0, 1, 0) == CUDA_ERROR_INVALID_VALUE);
  REQUIRE(s.find(1) != nullptr);
  CHECK(s.allocated_bytes() == 3 * mib2);
  CHECK_FALSE(s.unmap(base).has_value());
  auto gone = s.unmap(base + 4 * mib2);
  REQUIRE(gone.has_value());
  CHECK(gone->handle == 1);
  CHECK(gone->driver == 1001);
  CHECK(s.find(1) == nullptr);
  CHECK(s.allocated_bytes() == mib2);
  // Unmapped and unreferenced at once: released at the call.
  auto freed = s.release(2);
  REQUIRE(freed.has_value());
  CHECK(freed->handle == 2);
  CHECK(s.check_release(2) == CUDA_ERROR_INVALID_VALUE);
  CHECK(s.allocations().empty());
  CHECK(s.allocated_bytes() == 0);
}

TEST_CASE("vmm_space: retained handles need a release each", "[wire][vmm]") {
  auto s = sample();
  CHECK_FALSE(s.handle_at(base).has_value());
  s.map(base, 2 * mib2, 0, 1);
  auto h = s.handle_at(base + 12345);
  REQUIRE(h.has_value());
  CHECK(*h == 1);
  REQUIRE(s.retain(*h) == CUDA_SUCCESS);
  CHECK_FALSE(s.release(1).has_value());
  CHECK_FALSE(s.release(1).has_value()); // the create's reference: mapped, deferred
  CHECK(s.check_release(1) == CUDA_ERROR_INVALID_VALUE);
  // Retained again through its mapping after the last release.
  REQUIRE(s.retain(1) == CUDA_SUCCESS);
  CHECK(s.check_map(base + 2 * mib2, 2 * mib2, 0, 1, 0) == CUDA_SUCCESS);
  CHECK_FALSE(s.release(1).has_value());
  CHECK(s.unmap(base).has_value());
  CHECK(s.retain(1) == CUDA_ERROR_INVALID_VALUE);
  CHECK(s.check_create(0) == CUDA_ERROR_INVALID_VALUE);
  CHECK(s.check_create(2) == CUDA_ERROR_INVALID_VALUE);
  CHECK(s.check_create(1) == CUDA_SUCCESS);
  s.clear();
  CHECK(s.empty());
}
