// Host mirrors (interpose/mirror.hpp) of registered app memory, without a
// server: which uploads a mirror asks for as the app writes in and next to
// it. Linked with libgleam_interpose.so, as the interposer libraries are.
//
// One test case: Catch2 puts its own SIGSEGV handler back after each test
// case, over the one the first mirror installs.
#include <catch2/catch.hpp>

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "interpose/mirror.hpp"

namespace {

using namespace gleam;
using interpose::mirror_next_upload;

/// The uploads the mirrors ask for now (empty when none).
std::vector<proto::Op> uploads() {
  std::vector<proto::Op> ops;
  if (!mirror_next_upload(ops))
    REQUIRE(ops.empty());
  return ops;
}

} // namespace

TEST_CASE("a registered page opened by a write next to the mirror's bytes uploads nothing",
          "[interpose][mirror]") {
  const auto page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  // Two pages of app memory; registered: [base + 64, base + 64 + page), so
  // each page also holds bytes that stay the app's (an allocator's data).
  void* mem = ::mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                     -1, 0);
  REQUIRE(mem != MAP_FAILED);
  auto* base = static_cast<volatile char*>(mem);
  auto* host = base + 64;
  const size_t size = page;
  const uint64_t device = 0x7f0000010000;
  REQUIRE(interpose::mirror_register(reinterpret_cast<uintptr_t>(host), device, size,
                                     cudaHostRegisterMapped)
          == cudaSuccess);

  // Registered: the mirror's bytes go up whole, once.
  auto ops = uploads();
  REQUIRE(ops.size() == 1);
  CHECK(ops[0].memcpy_htod().dst() == device);
  CHECK(ops[0].memcpy_htod().data().size() == size);
  CHECK(uploads().empty());

  // Writes next to the mirror's bytes open both pages and change nothing
  // the device holds: nothing to send, round after round. (Sending such a
  // page, a round trip each in synchronous mode whose own allocations wrote
  // next to the mirror again, never ended.)
  for (int round = 0; round < 3; ++round) {
    base[round] = static_cast<char>(round + 1);
    base[64 + size + static_cast<size_t>(round)] = static_cast<char>(round + 1);
    CHECK(uploads().empty());
  }

  // A write to the mirror's bytes still goes up: the page's mirrored bytes
  // whole while the device holds what the host last sent.
  host[10] = 7;
  base[1] = 9;
  ops = uploads();
  REQUIRE(ops.size() == 1);
  CHECK(ops[0].memcpy_htod().dst() == device);
  REQUIRE(ops[0].memcpy_htod().data().size() == page - 64);
  CHECK(ops[0].memcpy_htod().data()[10] == 7);
  CHECK(uploads().empty());

  // Once the device may have written (a launch queued), only the bytes the
  // host changed go up; a write next to them still sends nothing.
  proto::Op launch;
  launch.mutable_launch_kernel();
  interpose::mirror_note_op(launch);
  base[2] = 5;
  CHECK(uploads().empty());
  host[size - 1] = 3;
  base[64 + size] = 4;
  ops = uploads();
  REQUIRE(ops.size() == 1);
  CHECK(ops[0].memcpy_htod().dst() == device + size - 1);
  CHECK(ops[0].memcpy_htod().data() == std::string(1, '\3'));
  CHECK(uploads().empty());

  // Writing back the bytes the device holds sends nothing either.
  host[10] = 7;
  CHECK(uploads().empty());

  REQUIRE(interpose::mirror_remove(reinterpret_cast<uintptr_t>(host)).has_value());
  static_cast<void>(interpose::mirror_clear());
  base[0] = 0; // the app's memory again, unprotected
  ::munmap(mem, 2 * page);
}
