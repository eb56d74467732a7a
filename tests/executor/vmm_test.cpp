// The virtual memory management ops (executor/vmm.hpp): CPU cases over the
// fake driver with host-backed VMM (tests/support/fake_vmm.hpp), where
// device addresses are host pointers and the bytes of a mapping are its
// allocation's; [gpu] cases over the real driver, whose own answers the
// executor's are compared with.
#include "executor/vmm.hpp"

#include <catch2/catch.hpp>

#include <cstring>
#include <string>

#include "executor/executor.hpp"
#include "tests/executor/fake_driver.hpp"
#include "tests/executor/real_gpu.hpp"
#include "tests/support/fake_vmm.hpp"

namespace proto = gleam::proto;
using gleam::test::fake_vmm;
using gleam::test::fake_vmm_granularity;

namespace {

constexpr uint64_t mib2 = fake_vmm_granularity;

/// The VMM ops of one session, over any client with run(fill).
template <class Client>
struct vmm_ops {
  Client& c;

  proto::OpResult granularity(int option, int device = 0, int location_type = 1) {
    return c.run([&](proto::Op& op) {
      auto* g = op.mutable_mem_get_granularity();
      g->mutable_prop()->set_type(CU_MEM_ALLOCATION_TYPE_PINNED);
      g->mutable_prop()->set_location_type(location_type);
      g->mutable_prop()->set_location_id(device);
      g->set_option(option);
    });
  }

  proto::OpResult reserve(uint64_t size) {
    return c.run([&](proto::Op& op) { op.mutable_mem_address_reserve()->set_size(size); });
  }

  int address_free(uint64_t ptr, uint64_t size) {
    return c.run([&](proto::Op& op) {
             op.mutable_mem_address_free()->set_ptr(ptr);
             op.mutable_mem_address_free()->set_size(size);
           })
      .status();
  }

  proto::OpResult create(uint64_t handle, uint64_t size, int device = 0) {
    return c.run([&](proto::Op& op) {
      auto* m = op.mutable_mem_create();
      m->set_handle(handle);
      m->set_size(size);
      m->mutable_prop()->set_type(CU_MEM_ALLOCATION_TYPE_PINNED);
      m->mutable_prop()->set_location_type(CU_MEM_LOCATION_TYPE_DEVICE);
      m->mutable_prop()->set_location_id(device);
    });
  }

  int release(uint64_t handle) {
    return c.run([&](proto::Op& op) { op.mutable_mem_release()->set_handle(handle); }).status();
  }

  int retain(uint64_t handle) {
    return c.run([&](proto::Op& op) { op.mutable_mem_retain()->set_handle(handle); }).status();
  }

  int map(uint64_t ptr, uint64_t size, uint64_t handle, uint64_t offset = 0) {
    return c.run([&](proto::Op& op) {
             auto* m = op.mutable_mem_map();
             m->set_ptr(ptr);
             m->set_size(size);
             m->set_offset(offset);
             m->set_handle(handle);
           })
      .status();
  }

  int unmap(uint64_t ptr, uint64_t size) {
    return c.run([&](proto::Op& op) {
             op.mutable_mem_unmap()->set_ptr(ptr);
             op.mutable_mem_unmap()->set_size(size);
           })
      .status();
  }

  int access(uint64_t ptr, uint64_t size, int flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
             int device = 0, int location_type = CU_MEM_LOCATION_TYPE_DEVICE) {
    return c.run([&](proto::Op& op) {
             auto* m = op.mutable_mem_set_access();
             m->set_ptr(ptr);
             m->set_size(size);
             auto* a = m->add_access();
             a->set_location_type(location_type);
             a->set_location_id(device);
             a->set_flags(flags);
           })
      .status();
  }

  int htod(uint64_t dst, const std::string& data) {
    return c.run([&](proto::Op& op) {
             op.mutable_memcpy_htod()->set_dst(dst);
             op.mutable_memcpy_htod()->set_data(data);
           })
      .status();
  }

  proto::OpResult dtoh(uint64_t src, uint64_t n) {
    return c.run([&](proto::Op& op) {
      op.mutable_memcpy_dtoh()->set_src(src);
      op.mutable_memcpy_dtoh()->set_size(n);
    });
  }

  int memset(uint64_t dst, uint32_t value, uint64_t n) {
    return c.run([&](proto::Op& op) {
             auto* m = op.mutable_memset();
             m->set_dst(dst);
             m->set_value(value);
             m->set_element_size(1);
             m->set_count(n);
           })
      .status();
  }
};

template <class Client>
vmm_ops<Client> ops_of(Client& c) {
  return vmm_ops<Client>{c};
}

std::string pattern(size_t n, unsigned seed) {
  std::string out(n, '\0');
  for (size_t i = 0; i < n; ++i)
    out[i] = static_cast<char>((i * 131 + seed) & 0xff);
  return out;
}

/// A fake GPU whose driver has host-backed VMM.
struct fake_vmm_gpu : gleam::test::fake::fake_gpu {
  fake_vmm_gpu() {
    gleam::test::install_fake_vmm(api);
  }
};

} // namespace

TEST_CASE("vmm ops over a fake driver: a mapped, accessible range is the session's memory",
          "[executor][vmm]") {
  fake_vmm_gpu g;
  gleam::test::fake::fake_client c{*g.exec};
  auto v = ops_of(c);
  auto gmin = v.granularity(CU_MEM_ALLOC_GRANULARITY_MINIMUM);
  REQUIRE(gmin.status() == CUDA_SUCCESS);
  CHECK(static_cast<uint64_t>(gmin.value()) == mib2);
  CHECK(v.granularity(CU_MEM_ALLOC_GRANULARITY_RECOMMENDED).value()
        == static_cast<int64_t>(mib2));

  auto reserved = v.reserve(8 * mib2);
  REQUIRE(reserved.status() == CUDA_SUCCESS);
  auto va = reserved.dptr();
  REQUIRE(va % mib2 == 0);
  auto created = v.create(7, 2 * mib2);
  REQUIRE(created.status() == CUDA_SUCCESS);
  CHECK(static_cast<uint64_t>(created.value()) == mib2);
  REQUIRE(v.map(va, 2 * mib2, 7) == CUDA_SUCCESS);
  REQUIRE(fake_vmm().mappings.size() == 1);

  // Mapped without access: not the session's memory yet.
  auto bytes = pattern(4096, 3);
  CHECK(v.htod(va, bytes) == CUDA_ERROR_INVALID_VALUE);
  REQUIRE(v.access(va, 2 * mib2) == CUDA_SUCCESS);
  REQUIRE(v.htod(va + 1000, bytes) == CUDA_SUCCESS);
  // The bytes are the allocation's (the fake maps its memfd at the address).
  CHECK(std::memcmp(reinterpret_cast<const char*>(va + 1000), bytes.data(), bytes.size()) == 0);
  auto back = v.dtoh(va + 1000, bytes.size());
  REQUIRE(back.status() == CUDA_SUCCESS);
  CHECK(back.data() == bytes);
  REQUIRE(v.memset(va + 2 * mib2 - 16, 0xab, 16) == CUDA_SUCCESS);
  CHECK(v.dtoh(va + 2 * mib2 - 16, 16).data() == std::string(16, '\xab'));

  // A copy past the mapped range is refused and writes nothing.
  CHECK(v.htod(va + 2 * mib2 - 8, pattern(16, 9)) == CUDA_ERROR_INVALID_VALUE);
  CHECK(v.dtoh(va + 2 * mib2 - 8, 16).status() == CUDA_ERROR_INVALID_VALUE);
  CHECK(v.dtoh(va + 2 * mib2 - 16, 16).data() == std::string(16, '\xab'));

  // A second allocation mapped next to the first: one range of addresses.
  REQUIRE(v.create(8, mib2).status() == CUDA_SUCCESS);
  REQUIRE(v.map(va + 2 * mib2, mib2, 8) == CUDA_SUCCESS);
  REQUIRE(v.release(8) == CUDA_SUCCESS); // mapped: freed at its unmap
  REQUIRE(v.access(va + 2 * mib2, mib2) == CUDA_SUCCESS);
  auto across = pattern(256, 5);
  REQUIRE(v.htod(va + 2 * mib2 - 128, across) == CUDA_SUCCESS);
  CHECK(v.dtoh(va + 2 * mib2 - 128, 256).data() == across);
  CHECK(v.htod(va + 3 * mib2 - 8, pattern(16, 1)) == CUDA_ERROR_INVALID_VALUE);
  // MemFree does not end a mapping.
  auto freed = c.run([&](proto::Op& op) { op.mutable_mem_free()->set_dptr(va); });
  CHECK(freed.status() == CUDA_ERROR_INVALID_VALUE);
  const auto* s = g.exec->find_session(c.session);
  REQUIRE(s != nullptr);
  CHECK(s->device_bytes() == 3 * mib2);

  // Unmapped: the addresses are no memory any more; the released allocation
  // is gone from the driver, the other one is not.
  REQUIRE(v.unmap(va + 2 * mib2, mib2) == CUDA_SUCCESS);
  CHECK(v.htod(va + 2 * mib2, pattern(16, 2)) == CUDA_ERROR_INVALID_VALUE);
  CHECK(v.htod(va + 2 * mib2 - 128, across) == CUDA_ERROR_INVALID_VALUE);
  CHECK(fake_vmm().allocations.size() == 1);
  CHECK(s->device_bytes() == 2 * mib2);
  REQUIRE(v.unmap(va, 2 * mib2) == CUDA_SUCCESS);
  CHECK(v.dtoh(va + 1000, 16).status() == CUDA_ERROR_INVALID_VALUE);
  REQUIRE(v.release(7) == CUDA_SUCCESS);
  REQUIRE(v.address_free(va, 8 * mib2) == CUDA_SUCCESS);
  CHECK(fake_vmm().empty());
  CHECK(s->vmm.empty());
  CHECK(s->memory.empty());
}

TEST_CASE("vmm ops over a fake driver: CUDA's refusals, before the driver",
          "[executor][vmm]") {
  fake_vmm_gpu g;
  gleam::test::fake::fake_client c{*g.exec};
  auto v = ops_of(c);
  auto va = v.reserve(8 * mib2).dptr();
  REQUIRE(va != 0);
  REQUIRE(v.create(1, 2 * mib2).status() == CUDA_SUCCESS);
  REQUIRE(v.create(2, mib2).status() == CUDA_SUCCESS);

  SECTION("allocations") {
    CHECK(v.create(1, mib2).status() == CUDA_ERROR_INVALID_VALUE); // handle in use
    CHECK(v.create(0, mib2).status() == CUDA_ERROR_INVALID_VALUE);
    // The driver's own refusal of an unaligned size comes back as it is.
    CHECK(v.create(3, 4096).status() == CUDA_ERROR_INVALID_VALUE);
    CHECK(v.create(3, mib2, 1).status() == CUDA_ERROR_INVALID_DEVICE);
    CHECK(v.granularity(0, 2).status() == CUDA_ERROR_INVALID_DEVICE);
    CHECK(v.granularity(0, 0, CU_MEM_LOCATION_TYPE_HOST).status() == CUDA_ERROR_NOT_SUPPORTED);
    CHECK(v.release(99) == CUDA_ERROR_INVALID_VALUE);
    CHECK(v.retain(99) == CUDA_ERROR_INVALID_VALUE);
    auto capacity = fake_vmm().capacity;
    fake_vmm().capacity = mib2;
    CHECK(v.create(3, 2 * mib2).status() == CUDA_ERROR_OUT_OF_MEMORY);
    fake_vmm().capacity = capacity;
    REQUIRE(v.create(3, 2 * mib2).status() == CUDA_SUCCESS);
    CHECK(fake_vmm().allocations.size() == 3);
  }
  SECTION("mappings") {
    CHECK(v.map(va, mib2, 99) == CUDA_ERROR_INVALID_VALUE);
    CHECK(v.map(va + 4096, mib2, 2) == CUDA_ERROR_INVALID_VALUE);
    CHECK(v.map(va, 4096, 2) == CUDA_ERROR_NOT_SUPPORTED);
    CHECK(v.map(va, 2 * mib2, 1, mib2) == CUDA_ERROR_NOT_SUPPORTED);
    CHECK(v.map(va + 7 * mib2, 2 * mib2, 1) == CUDA_ERROR_INVALID_VALUE);
    CHECK(v.map(va - 2 * mib2, mib2, 2) == CUDA_ERROR_INVALID_VALUE);
    REQUIRE(v.map(va, 2 * mib2, 1) == CUDA_SUCCESS);
    CHECK(v.map(va + mib2, mib2, 2) == CUDA_ERROR_INVALID_VALUE); // over a mapping
    CHECK(v.unmap(va, mib2) == CUDA_ERROR_INVALID_VALUE);         // part of one
    CHECK(v.unmap(va + 2 * mib2, mib2) == CUDA_SUCCESS); // nothing mapped: nothing to do
    CHECK(v.access(va, mib2) == CUDA_ERROR_INVALID_VALUE);
    CHECK(v.access(va + 2 * mib2, mib2) == CUDA_ERROR_INVALID_VALUE);
    CHECK(v.access(va, 2 * mib2, CU_MEM_ACCESS_FLAGS_PROT_READWRITE, 1)
          == CUDA_ERROR_INVALID_DEVICE);
    CHECK(v.access(va, 2 * mib2, CU_MEM_ACCESS_FLAGS_PROT_READWRITE, 0,
                   CU_MEM_LOCATION_TYPE_HOST)
          == CUDA_ERROR_NOT_SUPPORTED);
    CHECK(v.address_free(va, 8 * mib2) == CUDA_ERROR_INVALID_VALUE); // still mapped
    CHECK(v.address_free(va, 4 * mib2) == CUDA_ERROR_INVALID_VALUE);
    CHECK(fake_vmm().mappings.size() == 1);
  }
  SECTION("a handle or range of another session is not this one's") {
    gleam::test::fake::fake_client other{*g.exec};
    auto o = ops_of(other);
    CHECK(o.map(va, mib2, 2) == CUDA_ERROR_INVALID_VALUE);
    CHECK(o.release(1) == CUDA_ERROR_INVALID_VALUE);
    CHECK(o.retain(1) == CUDA_ERROR_INVALID_VALUE);
    CHECK(o.address_free(va, 8 * mib2) == CUDA_ERROR_INVALID_VALUE);
    REQUIRE(v.map(va, mib2, 2) == CUDA_SUCCESS);
    REQUIRE(v.access(va, mib2) == CUDA_SUCCESS);
    CHECK(o.unmap(va, mib2) == CUDA_ERROR_INVALID_VALUE);
    CHECK(o.access(va, mib2) == CUDA_ERROR_INVALID_VALUE);
    CHECK(o.htod(va, "abc") == CUDA_ERROR_INVALID_VALUE);
    // The same client handle names each session's own allocation.
    REQUIRE(o.create(2, mib2).status() == CUDA_SUCCESS);
    auto ova = o.reserve(2 * mib2).dptr();
    REQUIRE(o.map(ova, mib2, 2) == CUDA_SUCCESS);
    g.exec->close_session(other.session);
    REQUIRE(v.htod(va, "still mine") == CUDA_SUCCESS);
    CHECK(fake_vmm().allocations.size() == 2);
  }
  g.exec->close_session(c.session);
  CHECK(fake_vmm().empty());
}

TEST_CASE("vmm ops over a fake driver: release and retain follow CUDA's references",
          "[executor][vmm]") {
  fake_vmm_gpu g;
  gleam::test::fake::fake_client c{*g.exec};
  auto v = ops_of(c);
  auto va = v.reserve(4 * mib2).dptr();
  REQUIRE(v.create(5, 2 * mib2).status() == CUDA_SUCCESS);
  REQUIRE(v.map(va, 2 * mib2, 5) == CUDA_SUCCESS);
  REQUIRE(v.access(va, 2 * mib2) == CUDA_SUCCESS);
  REQUIRE(v.retain(5) == CUDA_SUCCESS);
  REQUIRE(v.release(5) == CUDA_SUCCESS);
  REQUIRE(v.release(5) == CUDA_SUCCESS);
  CHECK(v.release(5) == CUDA_ERROR_INVALID_VALUE);
  // Released but mapped: the memory lives, the driver handle too, and the
  // handle maps no more.
  REQUIRE(fake_vmm().allocations.size() == 1);
  CHECK_FALSE(fake_vmm().allocations.begin()->second.released);
  CHECK(v.map(va + 2 * mib2, mib2, 5) == CUDA_ERROR_INVALID_VALUE);
  REQUIRE(v.htod(va + 64, "kept") == CUDA_SUCCESS);
  CHECK(v.dtoh(va + 64, 4).data() == "kept");
  REQUIRE(v.unmap(va, 2 * mib2) == CUDA_SUCCESS);
  CHECK(fake_vmm().allocations.empty());
  CHECK(v.retain(5) == CUDA_ERROR_INVALID_VALUE);
  // Another create may reuse the handle value once the allocation is gone.
  CHECK(v.create(5, mib2).status() == CUDA_SUCCESS);
}

TEST_CASE("vmm ops over a fake driver: the session's end unmaps, releases and frees",
          "[executor][vmm]") {
  fake_vmm_gpu g;
  {
    gleam::test::fake::fake_client c{*g.exec};
    auto v = ops_of(c);
    auto va = v.reserve(16 * mib2).dptr();
    for (uint64_t h = 1; h <= 3; ++h) {
      REQUIRE(v.create(h, mib2).status() == CUDA_SUCCESS);
      REQUIRE(v.map(va + (h - 1) * mib2, mib2, h) == CUDA_SUCCESS);
    }
    REQUIRE(v.release(2) == CUDA_SUCCESS);
    REQUIRE(v.access(va, 3 * mib2) == CUDA_SUCCESS);
    REQUIRE(v.create(9, mib2).status() == CUDA_SUCCESS); // never mapped
    REQUIRE(v.reserve(2 * mib2).status() == CUDA_SUCCESS);
    CHECK(fake_vmm().allocations.size() == 4);
    CHECK(fake_vmm().reservations.size() == 2);
    CHECK(fake_vmm().mappings.size() == 3);
    g.exec->close_session(c.session);
  }
  CHECK(fake_vmm().empty());
}

TEST_CASE("vmm ops on the GPU: a mapped range holds bytes, and refusals match the driver's",
          "[gpu][executor][vmm]") {
  gleam::test::real_client c;
  auto v = ops_of(c);
  auto gmin = v.granularity(CU_MEM_ALLOC_GRANULARITY_MINIMUM);
  REQUIRE(gmin.status() == CUDA_SUCCESS);
  auto gran = static_cast<uint64_t>(gmin.value());
  REQUIRE(gran > 0);
  auto rec = v.granularity(CU_MEM_ALLOC_GRANULARITY_RECOMMENDED);
  REQUIRE(rec.status() == CUDA_SUCCESS);
  CHECK(static_cast<uint64_t>(rec.value()) % gran == 0);

  auto va = v.reserve(8 * gran).dptr();
  REQUIRE(va != 0);
  auto created = v.create(1, 2 * gran);
  REQUIRE(created.status() == CUDA_SUCCESS);
  CHECK(static_cast<uint64_t>(created.value()) == gran);
  REQUIRE(v.create(2, gran).status() == CUDA_SUCCESS);
  REQUIRE(v.map(va, 2 * gran, 1) == CUDA_SUCCESS);
  REQUIRE(v.release(1) == CUDA_SUCCESS); // ggml's order: released right after the map
  REQUIRE(v.access(va, 2 * gran) == CUDA_SUCCESS);
  REQUIRE(v.map(va + 2 * gran, gran, 2) == CUDA_SUCCESS);
  REQUIRE(v.access(va + 2 * gran, gran) == CUDA_SUCCESS);

  auto bytes = pattern(1 << 20, 11);
  REQUIRE(v.htod(va + 2 * gran - (1 << 19), bytes) == CUDA_SUCCESS); // across the two
  auto back = v.dtoh(va + 2 * gran - (1 << 19), bytes.size());
  REQUIRE(back.status() == CUDA_SUCCESS);
  CHECK(back.data() == bytes);
  REQUIRE(v.memset(va, 0x5a, 4096) == CUDA_SUCCESS);
  CHECK(v.dtoh(va, 4096).data() == std::string(4096, '\x5a'));
  CHECK(v.htod(va + 3 * gran - 8, pattern(16, 1)) == CUDA_ERROR_INVALID_VALUE);

  // Gleam's refusals against the driver's own answers for the same calls,
  // on a reservation of the test's own (no session of Gleam's involved).
  auto loaded = gleam::executor::driver_api::load();
  REQUIRE(loaded);
  auto& api = **loaded;
  CUcontext ctx = nullptr;
  REQUIRE(api.cuDevicePrimaryCtxRetain(&ctx, 0) == CUDA_SUCCESS);
  REQUIRE(api.cuCtxSetCurrent(ctx) == CUDA_SUCCESS);
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = 0;
  CUdeviceptr dva = 0;
  REQUIRE(api.cuMemAddressReserve(&dva, 8 * gran, 0, 0, 0) == CUDA_SUCCESS);
  CUmemGenericAllocationHandle h1 = 0, h2 = 0;
  REQUIRE(api.cuMemCreate(&h1, 2 * gran, &prop, 0) == CUDA_SUCCESS);
  REQUIRE(api.cuMemCreate(&h2, gran, &prop, 0) == CUDA_SUCCESS);
  REQUIRE(api.cuMemMap(dva, 2 * gran, 0, h1, 0) == CUDA_SUCCESS);
  REQUIRE(api.cuMemMap(dva + 2 * gran, gran, 0, h2, 0) == CUDA_SUCCESS);
  CUmemAccessDesc rw{};
  rw.location = prop.location;
  rw.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  CHECK(v.map(va + gran, gran, 2) == api.cuMemMap(dva + gran, gran, 0, h2, 0));
  CHECK(v.map(va + 4 * gran, gran / 2, 2) == api.cuMemMap(dva + 4 * gran, gran / 2, 0, h2, 0));
  CHECK(v.map(va + 4 * gran, 2 * gran, 2) == api.cuMemMap(dva + 4 * gran, 2 * gran, 0, h2, 0));
  CHECK(v.unmap(va, gran) == api.cuMemUnmap(dva, gran));
  CHECK(v.unmap(va + 5 * gran, gran) == api.cuMemUnmap(dva + 5 * gran, gran));
  CHECK(v.access(va, gran) == api.cuMemSetAccess(dva, gran, &rw, 1));
  CHECK(v.access(va + 5 * gran, gran) == api.cuMemSetAccess(dva + 5 * gran, gran, &rw, 1));
  CHECK(v.address_free(va, 4 * gran) == api.cuMemAddressFree(dva, 4 * gran));
  // One unmap over both adjacent mappings, as the driver answers it.
  auto whole = api.cuMemUnmap(dva, 3 * gran);
  auto gleam_whole = v.unmap(va, 3 * gran);
  CHECK(gleam_whole == whole);
  if (whole != CUDA_SUCCESS) {
    CHECK(api.cuMemUnmap(dva, 2 * gran) == CUDA_SUCCESS);
    CHECK(api.cuMemUnmap(dva + 2 * gran, gran) == CUDA_SUCCESS);
  }
  if (gleam_whole != CUDA_SUCCESS) {
    CHECK(v.unmap(va, 2 * gran) == CUDA_SUCCESS);
    CHECK(v.unmap(va + 2 * gran, gran) == CUDA_SUCCESS);
  }
  // Freeing a reservation that still holds a mapping (last: the driver
  // may take it).
  REQUIRE(v.map(va, gran, 2) == CUDA_SUCCESS);
  REQUIRE(api.cuMemMap(dva, gran, 0, h2, 0) == CUDA_SUCCESS);
  auto freed = api.cuMemAddressFree(dva, 8 * gran);
  CHECK(v.address_free(va, 8 * gran) == freed);
  if (freed != CUDA_SUCCESS) {
    CHECK(api.cuMemUnmap(dva, gran) == CUDA_SUCCESS);
    CHECK(api.cuMemAddressFree(dva, 8 * gran) == CUDA_SUCCESS);
  }
  CHECK(api.cuMemRelease(h1) == CUDA_SUCCESS);
  CHECK(api.cuMemRelease(h2) == CUDA_SUCCESS);
  CHECK(api.cuDevicePrimaryCtxRelease(0) == CUDA_SUCCESS);
}
