// fake_gpu_server PORT STATS_FILE [--policy sharing|stealing] [--threads N]
//                 [--token T]     (OpenSession checked like gpu_server checks it)
//                 [--scheduler-tenants NAME:TOKEN,...] (a real scheduler with those
//                                 tenants on this node, this fake GPU registered with it)
//                 [--workers N]   (middleman.workers, default 0 like gleamd)
//                 [--op-us U]     (every memset busies the server U us, like a kernel)
//                 [--scheduled 1] (the GPU actor on the scheduler, not detached)
//                 [--cache 1]     (a weight cache that never holds a chunk: every
//                                 CacheFill key is missing, CacheUploads are
//                                 written, packed ones unpacked; without it
//                                 cache ops fail with
//                                 CUDA_ERROR_NOT_SUPPORTED as on a node
//                                 without a cache)
//
// A GPU-less stand-in for gleamd: publishes a node actor on PORT whose GPU
// server executes the op stream on host memory, so the interposer's
// transport, batching and error reconciliation can be tested and measured
// without a GPU. Device memory lives in host buffers (allocations above
// 64 MiB discard their bytes and read back as zeros); plain and 2D copies
// (Memcpy2D, row by row) move those bytes; memsets write elements of 1, 2
// or 4 bytes. Failure injection:
// a memset with value 0xEE fails with CUDA_ERROR_INVALID_VALUE, one with
// 0xDD with the sticky CUDA_ERROR_ILLEGAL_ADDRESS (every later op of the
// session fails with it, and the batch stops, as on a real GPU); a memset on
// the legacy stream while a stream captures fails with
// CUDA_ERROR_STREAM_CAPTURE_IMPLICIT.
// cuBLAS: handle ops succeed; a gemm whose A, B or C (or, batched, pointer
// array) address is outside the fake's memory fails with
// CUBLAS_STATUS_INVALID_VALUE (as gleamd's range check does), and a plain
// SGEMM is computed on the host bytes. A cuBLASLt heuristic query gets one
// result whose workspaceSize is 1000 + the requested count. The cuBLASLt
// algo-level API: ids 5, 9, 13; an algo holds its id in data[0] and a tile
// in data[1] (capability queries answer the id, config ones the tile, as
// 4 bytes); id 99 is not supported; a check's result gets workspaceSize
// 100 * id. A matrix transform computes C = alpha * A + beta * B over the
// rows x cols floats of C's layout (orders ignored; operands outside the
// fake's memory refused). The heuristics cache capacity is kept. Generated
// cuBLAS calls (LibraryCall) run through the executor's generated code over
// a fake cuBLAS computing Saxpy, Sdot and Sgemv, generated cuRAND calls over
// a fake cuRAND with computed values (fake_library_calls.hpp).
// Graph memory (MemAllocAsync, allocation nodes) is allocated when made and
// freed at its free node; graphs hold host and memcpy nodes only (other nodes
// do nothing on host memory): a
// GraphLaunch runs its exec's host and memcpy nodes in the order they were
// added (a memcpy node's host end through host_copy_atom),
// each through the real host-call router (actors/host_call_router.hpp),
// before the launch's batch goes on; host functions captured
// (StreamHostFunc) are nodes of the capture's graph.
// The device reports every CUdevice_attribute as 100000 + its number (but
// 1024 threads per block, warp 32, 4 multiprocessors). A ModuleLoad finds
// every function it names (no parameters, but "kp" takes a pointer and an
// int: a launch adds 1 to each of that many bytes at the pointer); each
// LaunchKernel is written to
// STATS_FILE as "launch FUNCTION [cooperative] ID:FIELDS..." (describe_launch).
// Memory pools keep the attributes set on them, UsedMemCurrent counts their
// live allocations, an allocation from an unknown pool fails.
// Virtual memory management ops run through the executor's own handler
// (executor/vmm.hpp) over a host-backed driver (tests/support/fake_vmm.hpp):
// a reservation is address space of this process, an allocation a memfd,
// a mapping that memfd at the reserved address, so copies, memsets and
// "kp" launches into a read-write mapping land in its allocation; at the
// session's end the handler releases everything and STATS_FILE gets, for a
// session that made such an op, "vmm-left RESERVATIONS ALLOCATIONS
// MAPPINGS" (what the fake driver still holds).
// A batch whose first op is a MemAlloc of 4242 bytes is never answered (as
// if the GPU hung): the lost-server test SIGKILLs the server meanwhile.
// With GLEAM_TLS_CERT, GLEAM_TLS_KEY and GLEAM_TLS_CA set it listens with
// TLS. Prints "listening PORT" once published.
// When a session closes, one line per batch goes to STATS_FILE:
// "batch OPS" (ops in the batch), then "batches N ops M".
// Stops on SIGINT/SIGTERM.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <chrono>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <cublasLt.h>
#include <cuda.h>

#include <caf/all.hpp>
#include <caf/io/all.hpp>

#include "actors/error.hpp"
#include "actors/gpu_server.hpp"
#include "actors/host_call_router.hpp"
#include "actors/interfaces.hpp"
#include "actors/network.hpp"
#include "actors/scheduler.hpp"
#include "actors/type_registry.hpp"
#include "consistency/replay_log.hpp"
#include "executor/session_secret.hpp"
#include "executor/vmm.hpp"
#include "tests/interpose_runtime/fake_library_calls.hpp"
#include "tests/support/fake_vmm.hpp"
#include "tools/common/shutdown.hpp"
#include "wire/byte_codec.hpp"
#include "wire/protocol.hpp"

using namespace gleam;

namespace {

constexpr int32_t invalid_value = 1;
constexpr int32_t illegal_address = 700;
constexpr size_t max_backed = size_t{64} << 20;
constexpr int32_t not_supported = 801; // CUDA_ERROR_NOT_SUPPORTED

/// --cache: whether the fake has an (always cold) weight cache.
bool cold_cache = false;

// What SessionOpened reports (--protocol, --driver): a server of another
// release or on an older driver.
uint32_t reported_protocol = gleam::wire::protocol_version;
int32_t reported_driver = 13000;

struct fake_state {
  std::string stats_path;
  /// cublasLtHeuristicsCacheSetCapacity's last value (the vendor's default).
  uint64_t heuristics_capacity = 8192;
  uint64_t next_dptr = 0x7f0000000000;
  /// base -> (size, bytes; empty bytes when not backed)
  std::map<uint64_t, std::pair<uint64_t, std::string>> memory;
  /// Allocations the client carved from slabs (MemAlloc.at).
  std::set<uint64_t> carved;
  int32_t sticky = 0;
  /// Busy time of each memset, emulating GPU work (--op-us).
  std::chrono::microseconds op_time{0};
  std::vector<int> batch_sizes;
  /// Streams between StreamBeginCapture and StreamEndCapture -> the graph.
  std::map<uint64_t, uint64_t> capturing;
  /// A host node (callback != 0) or a memcpy node of a graph; captured ones
  /// have node 0.
  struct fake_node {
    uint64_t first = 0;  // node handle
    uint64_t second = 0; // host callback; 0 for a copy
    proto::MemcpyNodeParams copy;
  };
  /// Graph or exec -> its host and memcpy nodes in order.
  using host_nodes = std::vector<fake_node>;
  std::map<uint64_t, host_nodes> graphs;
  std::map<uint64_t, host_nodes> execs;
  std::shared_ptr<actors::host_call_router> router;
  /// Launches in order: "function id:fields ..." (written to STATS_FILE).
  std::vector<std::string> launches;
  /// Memory pools: handle -> attribute -> value; the allocations made from
  /// each (base -> (pool, size)), so UsedMemCurrent says what is in use.
  std::map<uint64_t, std::map<int32_t, uint64_t>> pools;
  std::map<uint64_t, std::pair<uint64_t, uint64_t>> pool_allocations;
  /// Replay after a reconnect, as gleamd's executor does it: ops at or below
  /// executed_through are skipped, a batch run before is answered again.
  uint64_t executed_through = 0;
  int resumes = 0;
  /// The secrets of the sessions open (SessionOpened.secret): batches,
  /// resumes and closes without one are refused, as gleamd refuses them.
  /// The fake's clients all share its one session state (id 1), each with
  /// a secret of its own; a close ends its secret.
  std::vector<std::string> secrets;
  gleam::consistency::replay_log<proto::BatchReply> replies;
  /// Virtual memory: the executor's tables of the one session, over the
  /// host-backed fake driver.
  executor::driver_api vmm_api;
  executor::session vmm;
  /// Whether the session made a virtual memory op (its stats say then what
  /// the fake driver still holds at its end).
  bool vmm_used = false;
  static inline const char* name = "gleam.fake_gpu_server";
};

/// The backing bytes at [p, p + n), or null when not backed / out of range.
char* at(fake_state& st, uint64_t p, uint64_t n, bool* known) {
  *known = false;
  // Read-write mappings of the virtual memory ops are this process's memory.
  if (st.vmm.memory.contains(p, n)) {
    *known = true;
    return reinterpret_cast<char*>(static_cast<uintptr_t>(p));
  }
  auto i = st.memory.upper_bound(p);
  if (i == st.memory.begin())
    return nullptr;
  --i;
  if (p < i->first || p + n > i->first + i->second.first)
    return nullptr;
  *known = true;
  if (i->second.second.empty())
    return nullptr;
  return &i->second.second[p - i->first];
}

/// Writes `data` at `dst` (a host-to-device copy, a cache upload's part):
/// invalid_value when `dst` is outside every allocation.
void write(fake_state& st, uint64_t dst, const std::string& data, proto::OpResult& r) {
  bool known = false;
  auto* p = at(st, dst, data.size(), &known);
  if (!known)
    r.set_status(invalid_value);
  else if (p != nullptr)
    std::memcpy(p, data.data(), data.size());
}

/// A BlasGemm: address checks, and a plain SGEMM computed on host memory.
void gemm(fake_state& st, const proto::BlasGemm& g, proto::OpResult& r) {
  bool known = false;
  for (uint64_t p : {g.a(), g.b(), g.c()}) {
    at(st, p, 1, &known);
    if (!known) {
      r.set_status(invalid_value);
      r.set_blas_status(7); // CUBLAS_STATUS_INVALID_VALUE
      r.set_error("gemm: an address is outside the fake server's memory");
      return;
    }
  }
  if (g.api() != proto::BlasGemm::SGEMM || g.form() != proto::BlasGemm::PLAIN)
    return;
  auto m = g.m(), n = g.n(), k = g.k();
  bool ta = g.transa() != 0, tb = g.transb() != 0;
  auto span = [](int64_t rows, int64_t cols, int64_t ld) {
    return rows == 0 || cols == 0 ? 0 : static_cast<uint64_t>((cols - 1) * ld + rows) * 4;
  };
  bool k1 = false, k2 = false, k3 = false;
  auto* A = reinterpret_cast<float*>(at(st, g.a(), span(ta ? k : m, ta ? m : k, g.lda()), &k1));
  auto* B = reinterpret_cast<float*>(at(st, g.b(), span(tb ? n : k, tb ? k : n, g.ldb()), &k2));
  auto* C = reinterpret_cast<float*>(at(st, g.c(), span(m, n, g.ldc()), &k3));
  if (!k1 || !k2 || !k3 || g.alpha().size() != 4 || g.beta().size() != 4) {
    r.set_status(invalid_value);
    r.set_blas_status(7);
    r.set_error("gemm: a matrix runs past its allocation");
    return;
  }
  if (A == nullptr || B == nullptr || C == nullptr)
    return;
  float alpha = 0, beta = 0;
  std::memcpy(&alpha, g.alpha().data(), 4);
  std::memcpy(&beta, g.beta().data(), 4);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float sum = 0;
      for (int64_t p = 0; p < k; ++p)
        sum += (ta ? A[p + i * g.lda()] : A[i + p * g.lda()])
               * (tb ? B[j + p * g.ldb()] : B[p + j * g.ldb()]);
      auto& c = C[i + j * g.ldc()];
      c = alpha * sum + beta * c;
    }
}

/// A Memcpy2D: `height` rows of `width` bytes at the device side's pitch,
/// the host side densely packed. Every row must lie in the fake's memory
/// (invalid_value, nothing copied, as gleamd's range check refuses it).
void copy_2d(fake_state& st, const proto::Memcpy2D& m, proto::OpResult& r) {
  auto width = m.width(), height = m.height();
  // The rows of a device side at `base` with `pitch`; null when any row is
  // outside the fake's memory, a row of nulls when it is not backed.
  auto rows_at = [&](uint64_t base, uint64_t pitch, std::vector<char*>* out) {
    for (uint64_t row = 0; row < height; ++row) {
      bool known = false;
      out->push_back(at(st, base + row * pitch, width, &known));
      if (!known)
        return false;
    }
    return true;
  };
  std::vector<char*> dst, src;
  bool ok = true;
  switch (m.kind()) {
    case proto::Memcpy2D::HTOD:
      ok = m.data().size() == width * height && rows_at(m.dst(), m.dst_pitch(), &dst);
      break;
    case proto::Memcpy2D::DTOH:
      ok = rows_at(m.src(), m.src_pitch(), &src);
      break;
    case proto::Memcpy2D::DTOD:
      ok = rows_at(m.dst(), m.dst_pitch(), &dst) && rows_at(m.src(), m.src_pitch(), &src);
      break;
    default:
      ok = false;
  }
  if (!ok) {
    r.set_status(invalid_value);
    r.set_error("memcpy 2d: a row is outside the fake server's memory");
    return;
  }
  if (m.kind() == proto::Memcpy2D::DTOH) {
    std::string out(width * height, '\0');
    for (uint64_t row = 0; row < height; ++row)
      if (src[row] != nullptr)
        std::memcpy(&out[row * width], src[row], width);
    r.set_data(std::move(out));
    return;
  }
  for (uint64_t row = 0; row < height; ++row) {
    const char* from = m.kind() == proto::Memcpy2D::HTOD ? &m.data()[row * width] : src[row];
    if (dst[row] != nullptr && from != nullptr)
      std::memmove(dst[row], from, width);
  }
}

/// A fresh host-backed allocation of `size` bytes; its address in `r`.
void allocate(fake_state& st, uint64_t size, proto::OpResult& r) {
  auto p = st.next_dptr;
  st.next_dptr += (size + 4095) / 4096 * 4096 + 4096;
  st.memory[p] = {size, size <= max_backed ? std::string(size, '\0') : std::string{}};
  r.set_dptr(p);
}

/// The address of packed row `row` of a device end (`rows` rows a slice
/// of `height`).
uint64_t row_address(uint64_t base, uint64_t pitch, uint64_t rows, uint64_t height,
                     uint64_t row) {
  return base + (row / height) * rows * pitch + (row % height) * pitch;
}

/// Whether every device row of a memcpy node lies in the fake's memory.
bool copy_known(fake_state& st, const proto::MemcpyNodeParams& c) {
  auto height = std::max<uint64_t>(c.height(), 1);
  auto total = height * std::max<uint64_t>(c.depth(), 1);
  for (uint64_t row = 0; row < total; ++row) {
    bool known = false;
    if (c.host_copy() == 0 || !c.to_device())
      if (at(st, row_address(c.src(), c.src_pitch(), c.src_height(), height, row), c.width(),
             &known) == nullptr && !known)
        return false;
    if (c.host_copy() == 0 || c.to_device())
      if (at(st, row_address(c.dst(), c.dst_pitch(), c.dst_height(), height, row), c.width(),
             &known) == nullptr && !known)
        return false;
  }
  return true;
}

/// Runs a memcpy node on the fake's memory; a host end through the real
/// host-call router (host_copy_atom to the client), packed.
void run_copy(fake_state& st, const proto::MemcpyNodeParams& c) {
  auto height = std::max<uint64_t>(c.height(), 1);
  auto total = height * std::max<uint64_t>(c.depth(), 1);
  auto row_of = [&](bool dst, uint64_t row) {
    bool known = false;
    return dst ? at(st, row_address(c.dst(), c.dst_pitch(), c.dst_height(), height, row),
                    c.width(), &known)
               : at(st, row_address(c.src(), c.src_pitch(), c.src_height(), height, row),
                    c.width(), &known);
  };
  std::string packed;
  if (c.host_copy() != 0 && c.to_device()) {
    if (!st.router->copy(1, c.host_copy(), 0, {}, c.width() * total, &packed))
      return;
  } else {
    for (uint64_t row = 0; row < total; ++row) {
      auto* src = row_of(false, row);
      packed += src != nullptr ? std::string(src, c.width()) : std::string(c.width(), '\0');
    }
  }
  if (c.host_copy() != 0 && !c.to_device()) {
    static_cast<void>(st.router->copy(1, c.host_copy(), 0, packed, 0, nullptr));
    return;
  }
  for (uint64_t row = 0; row < total; ++row)
    if (auto* dst = row_of(true, row))
      std::memcpy(dst, packed.data() + row * c.width(), c.width());
}

/// One launch as a line: the function, then each attribute as
/// id:x,y,z,value,event,flags,trigger,base_ptr,num_bytes,domain_default.
std::string describe_launch(const proto::LaunchKernel& l) {
  std::string out = l.function();
  if (l.cooperative())
    out += " cooperative";
  for (const auto& a : l.attributes()) {
    char buf[256];
    std::snprintf(buf, sizeof(buf), " %d:%u,%u,%u,%lld,%llu,%d,%d,%llu,%llu,%u", a.id(), a.x(),
                  a.y(), a.z(), static_cast<long long>(a.value()),
                  static_cast<unsigned long long>(a.event()), a.flags(),
                  a.trigger_at_block_start(), static_cast<unsigned long long>(a.base_ptr()),
                  static_cast<unsigned long long>(a.num_bytes()), a.domain_default());
    out += buf;
  }
  return out;
}

/// The stream-ordered memory pool ops, on host memory: attributes are kept
/// as set, UsedMemCurrent counts the pool's allocations.
void run_pool(fake_state& st, const proto::Op& op, proto::OpResult& r) {
  auto unknown = [&](uint64_t pool) {
    if (st.pools.count(pool) != 0)
      return false;
    r.set_status(invalid_value);
    r.set_error("unknown memory pool");
    return true;
  };
  switch (op.kind_case()) {
    case proto::Op::kMemPoolCreate: {
      const auto& c = op.mem_pool_create();
      if (st.pools.count(c.pool()) != 0 || (!c.session_default() && c.alloc_type() != 1)) {
        r.set_status(invalid_value);
        return;
      }
      st.pools[c.pool()];
      return;
    }
    case proto::Op::kMemPoolDestroy:
      if (!unknown(op.mem_pool_destroy().pool()))
        st.pools.erase(op.mem_pool_destroy().pool());
      return;
    case proto::Op::kMemPoolSetAttribute: {
      const auto& a = op.mem_pool_set_attribute();
      if (unknown(a.pool()))
        return;
      if (a.attribute() == CU_MEMPOOL_ATTR_USED_MEM_CURRENT
          || a.attribute() == CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT) {
        r.set_status(invalid_value);
        return;
      }
      st.pools[a.pool()][a.attribute()] = a.value();
      return;
    }
    case proto::Op::kMemPoolGetAttribute: {
      const auto& a = op.mem_pool_get_attribute();
      if (unknown(a.pool()))
        return;
      uint64_t value = st.pools[a.pool()][a.attribute()];
      if (a.attribute() == CU_MEMPOOL_ATTR_USED_MEM_CURRENT) {
        value = 0;
        for (const auto& kv : st.pool_allocations)
          if (kv.second.first == a.pool())
            value += kv.second.second;
      }
      r.set_value(static_cast<int64_t>(value));
      return;
    }
    case proto::Op::kMemPoolTrimTo:
      if (!unknown(op.mem_pool_trim_to().pool()))
        st.pools[op.mem_pool_trim_to().pool()][-1] = op.mem_pool_trim_to().min_bytes_to_keep();
      return;
    case proto::Op::kMemPoolSetAccess:
      unknown(op.mem_pool_set_access().pool());
      return;
    case proto::Op::kMemPoolGetAccess:
      if (!unknown(op.mem_pool_get_access().pool()))
        r.set_value(CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
      return;
    default:
      return;
  }
}

void run(fake_state& st, const proto::Op& op, proto::OpResult& r) {
  bool known = false;
  switch (op.kind_case()) {
    case proto::Op::kMemAlloc: {
      auto size = op.mem_alloc().size();
      if (auto at_addr = op.mem_alloc().at(); at_addr != 0) {
        // Carved by the client from a slab: it must lie inside one.
        bool inside = false;
        at(st, at_addr, size, &inside);
        if (!inside || !st.carved.insert(at_addr).second)
          r.set_status(invalid_value);
        r.set_dptr(at_addr);
        return;
      }
      allocate(st, size, r);
      return;
    }
    // Graph memory: allocated when the node is made, freed at its free node.
    case proto::Op::kMemAllocAsync: {
      const auto& a = op.mem_alloc_async();
      if (a.pool() != 0 && st.pools.count(a.pool()) == 0) {
        r.set_status(invalid_value);
        r.set_error("MemAllocAsync from an unknown pool");
        return;
      }
      allocate(st, a.size(), r);
      if (a.pool() != 0)
        st.pool_allocations[r.dptr()] = {a.pool(), a.size()};
      return;
    }
    case proto::Op::kMemPoolCreate:
    case proto::Op::kMemPoolDestroy:
    case proto::Op::kMemPoolSetAttribute:
    case proto::Op::kMemPoolGetAttribute:
    case proto::Op::kMemPoolTrimTo:
    case proto::Op::kMemPoolSetAccess:
    case proto::Op::kMemPoolGetAccess:
      return run_pool(st, op, r);
    case proto::Op::kMemGetGranularity:
    case proto::Op::kMemAddressReserve:
    case proto::Op::kMemAddressFree:
    case proto::Op::kMemCreate:
    case proto::Op::kMemRelease:
    case proto::Op::kMemRetain:
    case proto::Op::kMemMap:
    case proto::Op::kMemUnmap:
    case proto::Op::kMemSetAccess:
      st.vmm_used = true;
      return executor::run_vmm(st.vmm_api, st.vmm, 0, nullptr, op, r);
    // Modules: every function asked for is found, without parameters.
    case proto::Op::kModuleLoad: {
      auto* m = r.mutable_module();
      for (const auto& name : op.module_load().functions()) {
        auto* f = m->add_functions();
        f->set_name(name);
        f->set_found(true);
        // "kp": a pointer and an int.
        if (name == "kp")
          for (auto [offset, size] : {std::pair<uint32_t, uint32_t>{0, 8}, {8, 4}}) {
            auto* p = f->add_params();
            p->set_offset(offset);
            p->set_size(size);
          }
      }
      return;
    }
    case proto::Op::kLaunchKernel: {
      const auto& l = op.launch_kernel();
      st.launches.push_back(describe_launch(l));
      // "kp" adds 1 to each of its int's bytes at its pointer (when the
      // fake backs them), so that tests see a kernel's writes.
      if (l.function() == "kp" && l.params().size() >= 12) {
        uint64_t p = 0;
        int32_t n = 0;
        std::memcpy(&p, l.params().data(), 8);
        std::memcpy(&n, l.params().data() + 8, 4);
        if (auto* bytes = n > 0 ? at(st, p, static_cast<uint64_t>(n), &known) : nullptr)
          for (int32_t i = 0; i < n; ++i)
            ++bytes[i];
      }
      return;
    }
    case proto::Op::kGraphAddMemAllocNode:
      allocate(st, op.graph_add_mem_alloc_node().size(), r);
      return;
    case proto::Op::kMemFreeAsync:
      st.pool_allocations.erase(op.mem_free_async().dptr());
      if (st.memory.erase(op.mem_free_async().dptr()) == 0)
        r.set_status(invalid_value);
      return;
    case proto::Op::kGraphAddMemFreeNode:
      if (st.memory.erase(op.graph_add_mem_free_node().dptr()) == 0)
        r.set_status(invalid_value);
      return;
    case proto::Op::kMemFree:
      st.pool_allocations.erase(op.mem_free().dptr());
      if (st.carved.erase(op.mem_free().dptr()) == 0 && st.memory.erase(op.mem_free().dptr()) == 0)
        r.set_status(invalid_value);
      return;
    case proto::Op::kStreamBeginCapture:
      st.capturing[op.stream_begin_capture().stream()] = op.stream_begin_capture().graph();
      st.graphs[op.stream_begin_capture().graph()];
      return;
    case proto::Op::kStreamEndCapture:
      st.capturing.erase(op.stream_end_capture().stream());
      return;
    case proto::Op::kGraphCreate:
      st.graphs[op.graph_create().graph()];
      return;
    case proto::Op::kGraphAddHostNode:
      st.graphs[op.graph_add_host_node().graph()].push_back(
        {op.graph_add_host_node().node(), op.graph_add_host_node().callback(), {}});
      return;
    case proto::Op::kGraphHostNodeSetParams:
      for (auto& g : st.graphs)
        for (auto& n : g.second)
          if (n.first == op.graph_host_node_set_params().node())
            n.second = op.graph_host_node_set_params().callback();
      return;
    case proto::Op::kStreamHostFunc: {
      auto c = st.capturing.find(op.stream_host_func().stream());
      if (c == st.capturing.end()) {
        r.set_status(invalid_value);
        return;
      }
      st.graphs[c->second].push_back({0, op.stream_host_func().callback(), {}});
      return;
    }
    case proto::Op::kGraphInstantiate:
      st.execs[op.graph_instantiate().exec()] = st.graphs[op.graph_instantiate().graph()];
      return;
    case proto::Op::kGraphExecHostNodeSetParams:
      for (auto& n : st.execs[op.graph_exec_host_node_set_params().exec()])
        if (n.first == op.graph_exec_host_node_set_params().node())
          n.second = op.graph_exec_host_node_set_params().callback();
      return;
    case proto::Op::kGraphLaunch:
      for (const auto& n : st.execs[op.graph_launch().exec()]) {
        if (n.second != 0)
          st.router->call(1, n.second);
        else
          run_copy(st, n.copy);
      }
      return;
    case proto::Op::kGraphAddMemcpyNode: {
      const auto& a = op.graph_add_memcpy_node();
      if (!copy_known(st, a.copy())) {
        r.set_status(invalid_value);
        r.set_error("memcpy node outside the fake's memory");
        return;
      }
      st.graphs[a.graph()].push_back({a.node(), 0, a.copy()});
      return;
    }
    case proto::Op::kGraphMemcpyNodeSetParams:
    case proto::Op::kGraphExecMemcpyNodeSetParams: {
      bool exec = op.has_graph_exec_memcpy_node_set_params();
      const auto& c = exec ? op.graph_exec_memcpy_node_set_params().copy()
                           : op.graph_memcpy_node_set_params().copy();
      auto node = exec ? op.graph_exec_memcpy_node_set_params().node()
                       : op.graph_memcpy_node_set_params().node();
      if (!copy_known(st, c)) {
        r.set_status(invalid_value);
        return;
      }
      auto& graphs = exec ? st.execs : st.graphs;
      for (auto& g : graphs) {
        if (exec && g.first != op.graph_exec_memcpy_node_set_params().exec())
          continue;
        for (auto& n : g.second)
          if (n.first == node && n.second == 0)
            n.copy = c;
      }
      return;
    }
    case proto::Op::kStreamHostCopy: {
      auto c = st.capturing.find(op.stream_host_copy().stream());
      if (c == st.capturing.end() || !copy_known(st, op.stream_host_copy().copy())) {
        r.set_status(invalid_value);
        return;
      }
      st.graphs[c->second].push_back({0, 0, op.stream_host_copy().copy()});
      return;
    }
    case proto::Op::kGraphDestroy:
      st.graphs.erase(op.graph_destroy().graph());
      return;
    case proto::Op::kGraphExecDestroy:
      st.execs.erase(op.graph_exec_destroy().exec());
      return;
    case proto::Op::kMemset: {
      const auto& m = op.memset();
      // The probe's streams are blocking: the legacy stream depends on a
      // capturing one, as the driver's CUDA_ERROR_STREAM_CAPTURE_IMPLICIT says.
      if (m.stream() <= 1 && !st.capturing.empty()) {
        r.set_status(CUDA_ERROR_STREAM_CAPTURE_IMPLICIT);
        r.set_error("operation on the legacy stream while a blocking stream captures");
        return;
      }
      if (m.value() == 0xEE) {
        r.set_status(invalid_value);
        r.set_error("injected failure (memset value 0xEE)");
        return;
      }
      if (m.value() == 0xDD) {
        r.set_status(illegal_address);
        r.set_error("injected sticky failure (memset value 0xDD)");
        return;
      }
      if (st.op_time.count() > 0) {
        auto until = std::chrono::steady_clock::now() + st.op_time;
        while (std::chrono::steady_clock::now() < until) {
        }
      }
      // Elements of 1, 2 or 4 bytes (cuMemsetD8 / D16 / D32), little-endian.
      auto element = std::max<uint64_t>(m.element_size(), 1);
      auto bytes = m.count() * element;
      auto rows = std::max<uint64_t>(m.height(), 1);
      for (uint64_t row = 0; row < rows; ++row) {
        auto* p = at(st, m.dst() + row * m.pitch(), bytes, &known);
        if (!known) {
          r.set_status(invalid_value);
          return;
        }
        if (p != nullptr && element == 1)
          std::memset(p, static_cast<int>(m.value()), bytes);
        else if (p != nullptr)
          for (uint64_t i = 0; i < bytes; ++i)
            p[i] = static_cast<char>((m.value() >> (8 * (i % element))) & 0xffu);
      }
      return;
    }
    case proto::Op::kMemcpyHtod:
      return write(st, op.memcpy_htod().dst(), op.memcpy_htod().data(), r);
    case proto::Op::kMemcpyDtoh: {
      const auto& m = op.memcpy_dtoh();
      auto* p = at(st, m.src(), m.size(), &known);
      if (!known)
        r.set_status(invalid_value);
      else if (p != nullptr)
        r.set_data(p, m.size());
      else
        r.set_data(std::string(m.size(), '\0'));
      return;
    }
    case proto::Op::kMemcpyDtod: {
      const auto& m = op.memcpy_dtod();
      bool k2 = false;
      auto* d = at(st, m.dst(), m.size(), &known);
      auto* s = at(st, m.src(), m.size(), &k2);
      if (!known || !k2)
        r.set_status(invalid_value);
      else if (d != nullptr && s != nullptr)
        std::memmove(d, s, m.size());
      return;
    }
    case proto::Op::kMemcpy2D:
      return copy_2d(st, op.memcpy_2d(), r);
    case proto::Op::kCacheFill:
    case proto::Op::kCacheUpload:
    case proto::Op::kCacheStats:
      if (!cold_cache) {
        r.set_status(not_supported);
        r.set_error("the fake server has no weight cache");
        return;
      }
      if (op.has_cache_fill()) {
        auto* out = r.mutable_cache_filled();
        for (int i = 0; i < op.cache_fill().keys_size(); ++i)
          out->add_missing(static_cast<uint32_t>(i));
      } else if (op.has_cache_upload() && !op.cache_upload().image()) {
        const auto& u = op.cache_upload();
        if (u.codec() == 0) {
          write(st, u.dst() + u.offset(), u.data(), r);
        } else if (auto raw = wire::unpack_grouped(u.data(), u.raw_size());
                   raw && u.codec() == 1 && u.raw_size() <= (uint64_t{16} << 20)) {
          write(st, u.dst() + u.offset(), *raw, r);
        } else {
          r.set_status(invalid_value);
          r.set_error("packed CacheUpload does not unpack to its raw_size");
        }
      }
      return;
    case proto::Op::kBlasGemm:
      return gemm(st, op.blas_gemm(), r);
    case proto::Op::kLibraryCall:
      return test::fake_library_call(
        [&st](uint64_t p, uint64_t n, bool* known) { return at(st, p, n, known); },
        op.library_call(), r);
    case proto::Op::kLibraryOutputRead:
      return test::fake_library_output_read(op.library_output_read(), r);
    case proto::Op::kBlasLtHeuristic: {
      cublasLtMatmulHeuristicResult_t h{};
      h.workspaceSize = 1000 + static_cast<size_t>(op.blas_lt_heuristic().requested());
      h.state = CUBLAS_STATUS_SUCCESS;
      r.mutable_blas_heuristics()->add_results(reinterpret_cast<const char*>(&h), sizeof(h));
      return;
    }
    case proto::Op::kBlasLtAlgoGetIds: {
      const auto& q = op.blas_lt_algo_get_ids();
      int n = std::min(q.requested(), 3);
      for (int i = 0; i < n; ++i)
        r.mutable_blas_lt_answer()->add_ids(5 + 4 * i);
      r.mutable_blas_lt_answer()->set_size_written(static_cast<uint64_t>(n));
      return;
    }
    case proto::Op::kBlasLtAlgoInit: {
      const auto& q = op.blas_lt_algo_init();
      if (q.algo_id() == 99) {
        r.set_status(not_supported);
        r.set_blas_status(CUBLAS_STATUS_NOT_SUPPORTED);
        return;
      }
      cublasLtMatmulAlgo_t algo{};
      algo.data[0] = static_cast<uint64_t>(q.algo_id());
      r.mutable_blas_lt_answer()->set_algo(reinterpret_cast<const char*>(&algo), sizeof(algo));
      return;
    }
    case proto::Op::kBlasLtAlgoAttribute: {
      const auto& q = op.blas_lt_algo_attribute();
      cublasLtMatmulAlgo_t algo{};
      std::memcpy(&algo, q.algo().data(), std::min(q.algo().size(), sizeof(algo)));
      auto* out = r.mutable_blas_lt_answer();
      if (q.kind() == proto::BlasLtAlgoAttribute::CONFIG_SET) {
        uint32_t tile = 0;
        std::memcpy(&tile, q.value().data(), std::min<size_t>(q.value().size(), sizeof(tile)));
        algo.data[1] = tile;
        out->set_algo(reinterpret_cast<const char*>(&algo), sizeof(algo));
        return;
      }
      auto value = static_cast<uint32_t>(
        q.kind() == proto::BlasLtAlgoAttribute::CAP_GET ? algo.data[0] : algo.data[1]);
      if (q.size() == 0 && q.size_written_null()) {
        r.clear_blas_lt_answer();
        r.set_status(invalid_value);
        r.set_blas_status(CUBLAS_STATUS_INVALID_VALUE);
        return;
      }
      out->set_size_written(sizeof(value));
      if (q.size() != 0)
        out->set_buf(reinterpret_cast<const char*>(&value), sizeof(value));
      return;
    }
    case proto::Op::kBlasLtAlgoCheck: {
      const auto& q = op.blas_lt_algo_check();
      cublasLtMatmulAlgo_t algo{};
      std::memcpy(&algo, q.algo().data(), std::min(q.algo().size(), sizeof(algo)));
      cublasLtMatmulHeuristicResult_t result{};
      std::memcpy(&result, q.result().data(), std::min(q.result().size(), sizeof(result)));
      result.workspaceSize = 100 * algo.data[0];
      r.mutable_blas_lt_answer()->set_result(reinterpret_cast<const char*>(&result),
                                             sizeof(result));
      return;
    }
    case proto::Op::kBlasLtTransform: {
      const auto& t = op.blas_lt_transform();
      auto n = t.c_layout().rows() * t.c_layout().cols();
      float alpha = 0, beta = 0;
      std::memcpy(&alpha, t.alpha().data(), std::min<size_t>(t.alpha().size(), 4));
      std::memcpy(&beta, t.beta().data(), std::min<size_t>(t.beta().size(), 4));
      bool ka = true, kb = true, kc = false;
      auto* A = t.a() != 0 ? reinterpret_cast<float*>(at(st, t.a(), n * 4, &ka)) : nullptr;
      auto* B = t.b() != 0 ? reinterpret_cast<float*>(at(st, t.b(), n * 4, &kb)) : nullptr;
      auto* C = reinterpret_cast<float*>(at(st, t.c(), n * 4, &kc));
      if (!ka || !kb || !kc) {
        r.set_status(invalid_value);
        r.set_blas_status(CUBLAS_STATUS_INVALID_VALUE);
        return;
      }
      if (C != nullptr)
        for (uint64_t i = 0; i < n; ++i)
          C[i] = (A != nullptr ? alpha * A[i] : 0.0f) + (B != nullptr ? beta * B[i] : 0.0f);
      return;
    }
    case proto::Op::kBlasLtHeuristicsCache:
      if (op.blas_lt_heuristics_cache().set())
        st.heuristics_capacity = op.blas_lt_heuristics_cache().capacity();
      else
        r.mutable_blas_lt_answer()->set_capacity(st.heuristics_capacity);
      return;
    case proto::Op::kMemGetInfo:
      r.mutable_mem_info()->set_free(uint64_t{1} << 34);
      r.mutable_mem_info()->set_total(uint64_t{1} << 34);
      return;
    default:
      // Streams, events, synchronization: nothing to do on host memory.
      return;
  }
}

proto::BatchReply execute(fake_state& st, const proto::OpBatch& batch) {
  proto::BatchReply reply;
  reply.set_session(batch.session());
  st.replies.confirmed_through(batch.replied_through());
  auto last_seq = batch.ops_size() > 0 ? batch.ops(batch.ops_size() - 1).seq() : uint64_t{0};
  if (last_seq != 0)
    if (const auto* earlier = st.replies.find(last_seq))
      return *earlier;
  st.batch_sizes.push_back(batch.ops_size());
  for (const auto& op : batch.ops()) {
    if (op.seq() <= st.executed_through)
      continue;
    st.executed_through = op.seq();
    auto* r = reply.add_results();
    r->set_seq(op.seq());
    if (st.sticky != 0) {
      r->set_status(st.sticky);
      r->set_error("the context is unusable after an earlier sticky error");
      break;
    }
    run(st, op, *r);
    reply.set_executed_through(op.seq());
    if (r->status() == illegal_address) {
      st.sticky = illegal_address;
      break;
    }
  }
  if (last_seq != 0)
    st.replies.record(last_seq, reply);
  return reply;
}

void write_stats(const fake_state& st) {
  FILE* f = std::fopen(st.stats_path.c_str(), "w");
  if (f == nullptr)
    return;
  long ops = 0;
  for (int n : st.batch_sizes) {
    std::fprintf(f, "batch %d\n", n);
    ops += n;
  }
  std::fprintf(f, "batches %zu ops %ld\n", st.batch_sizes.size(), ops);
  for (const auto& l : st.launches)
    std::fprintf(f, "launch %s\n", l.c_str());
  if (st.resumes > 0)
    std::fprintf(f, "resumes %d\n", st.resumes);
  if (st.vmm_used) {
    const auto& left = test::fake_vmm();
    std::fprintf(f, "vmm-left %zu %zu %zu\n", left.reservations.size(),
                 left.allocations.size(), left.mappings.size());
  }
  std::fclose(f);
}

/// Whether a message naming session `id` with `secret` names the fake's
/// session; otherwise logs the refusal of `what` and says why in `error`
/// (the text does not say whether the id exists, as gleamd's does not).
bool proves(const fake_state& st, uint64_t id, const std::string& secret, const char* what,
            caf::error& error) {
  bool match = false;
  for (const auto& s : st.secrets)
    match |= executor::session_secret_matches(s, secret);
  if (id == 1 && match)
    return true;
  std::fprintf(stderr, "fake_gpu_server: refused %s for session %llu: %s\n", what,
               static_cast<unsigned long long>(id),
               secret.empty() ? "no session secret" : "the session's secret does not match");
  error = actors::make_error(actors::error_code::session_unknown,
                             "no session " + std::to_string(id)
                               + " with the secret presented is open on the fake GPU server: "
                                 "it was closed, or the session's secret does not match");
  return false;
}

actors::gpu_server_actor::behavior_type
fake_gpu(actors::gpu_server_actor::stateful_pointer<fake_state> self, std::string stats,
         std::chrono::microseconds op_time, std::string token,
         std::shared_ptr<actors::host_call_router> router) {
  self->state.stats_path = std::move(stats);
  self->state.router = std::move(router);
  test::install_fake_vmm(self->state.vmm_api);
  self->state.op_time = op_time;
  return {
    [=](actors::open_atom, const actors::pb<proto::OpenSession>& req)
      -> caf::result<actors::pb<proto::SessionOpened>> {
      if (auto refused = actors::check_auth_token(token, req.value))
        return refused;
      // One session at a time; a resume continues it, with its secret.
      if (req->resume_session() == 0) {
        auto secret = executor::make_session_secret();
        if (!secret)
          return std::move(secret.error());
        self->state.secrets.push_back(*secret);
        static_cast<void>(executor::release_vmm(self->state.vmm_api, self->state.vmm));
        self->state.executed_through = 0;
        self->state.replies = gleam::consistency::replay_log<proto::BatchReply>{};
      } else {
        caf::error refused;
        if (!proves(self->state, req->resume_session(), req->resume_secret(), "a resume",
                    refused))
          return refused;
        ++self->state.resumes;
      }
      const auto& secret = req->resume_session() == 0 ? self->state.secrets.back()
                                                      : req->resume_secret();
      self->state.router->attach(1, caf::actor_cast<caf::actor>(self->current_sender()),
                                 secret);
      proto::SessionOpened out;
      out.set_session(1);
      out.set_secret(secret);
      out.set_driver_version(reported_driver);
      out.set_protocol_version(reported_protocol);
      auto* d = out.add_devices();
      d->set_ordinal(0);
      d->set_name("Gleam fake GPU (host memory)");
      d->set_total_memory(uint64_t{1} << 34);
      // Every attribute reads 100000 + its number, except
      // CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, _WARP_SIZE, _MULTIPROCESSOR_COUNT.
      for (int a = 1; a < CU_DEVICE_ATTRIBUTE_MAX; ++a)
        (*d->mutable_attributes())[a] = 100000 + a;
      (*d->mutable_attributes())[1] = 1024;
      (*d->mutable_attributes())[10] = 32;
      (*d->mutable_attributes())[16] = 4;
      return actors::pb<proto::SessionOpened>{std::move(out)};
    },
    [=](const actors::pb<proto::OpBatch>& batch) -> caf::result<actors::pb<proto::BatchReply>> {
      caf::error refused;
      if (!proves(self->state, batch->session(), batch->session_secret(), "an op batch",
                  refused))
        return refused;
      if (batch->ops_size() > 0 && batch->ops(0).has_mem_alloc()
          && batch->ops(0).mem_alloc().size() == 4242)
        return self->make_response_promise<actors::pb<proto::BatchReply>>(); // never delivered
      return actors::pb<proto::BatchReply>{execute(self->state, batch.value)};
    },
    [=](actors::close_atom, const actors::pb<proto::CloseSession>& req) -> caf::result<bool> {
      caf::error refused;
      if (!proves(self->state, req->session(), req->secret(), "a close", refused))
        return refused;
      auto& secrets = self->state.secrets;
      secrets.erase(std::remove(secrets.begin(), secrets.end(), req->secret()), secrets.end());
      static_cast<void>(executor::release_vmm(self->state.vmm_api, self->state.vmm));
      write_stats(self->state);
      self->state.vmm_used = false;
      self->state.batch_sizes.clear();
      self->state.launches.clear();
      self->state.pools.clear();
      self->state.pool_allocations.clear();
      return true;
    },
    [=](actors::status_atom) { return actors::pb<proto::NodeStatus>{}; },
    // Drain states come from a node's heartbeats; the fake node sends none
    // (a drain at its scheduler stops placements only).
    [=](actors::drain_atom, const actors::pb<proto::DrainState>&) {},
    // The fake keeps no session table to end one from the server's side.
    [=](actors::kill_atom, uint64_t) { return false; },
    [=](actors::tick_atom, uint64_t) {},
  };
}

actors::node_actor::behavior_type fake_node(actors::node_actor::pointer self,
                                            actors::gpu_server_actor gpu,
                                            std::shared_ptr<actors::host_call_router> router,
                                            actors::scheduler_actor scheduler) {
  return {
    [=](actors::get_scheduler_atom) -> caf::result<actors::scheduler_actor> {
      if (scheduler)
        return scheduler;
      return caf::make_error(caf::sec::unexpected_message);
    },
    [=](actors::get_gpu_atom, uint32_t) { return gpu; },
    // The fake node has no weight cache.
    [=](actors::get_shard_atom) -> caf::result<actors::cache_shard_actor> {
      return caf::make_error(caf::sec::unexpected_message);
    },
    [=](actors::status_atom) { return actors::pb<proto::NodeStatus>{}; },
    [=](actors::host_attach_atom, uint32_t, uint64_t session, const std::string& secret,
        caf::actor client) {
      return router->reattach(session, secret, client);
    },
    [=](actors::kill_atom, uint64_t, const std::string&) { return false; },
    [=](actors::tick_atom) {},
  };
}

} // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: fake_gpu_server PORT STATS_FILE [--policy sharing|stealing] [--workers N] [--op-us U] [--scheduled 0|1] [--token T] "
                         "[--threads N] [--scheduler-tenants NAME:TOKEN,...] [--cache 0|1] "
                         "[--protocol N] [--driver V]\n");
    return 2;
  }
  auto port = static_cast<uint16_t>(std::atoi(argv[1]));
  std::string stats = argv[2];
  std::string policy = "stealing";
  size_t threads = 4;
  int workers = 0;
  int op_us = 0;
  bool scheduled = false;
  std::string token;
  std::string scheduler_tenants;
  for (int i = 3; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--policy") == 0)
      policy = argv[i + 1];
    else if (std::strcmp(argv[i], "--threads") == 0)
      threads = static_cast<size_t>(std::atoi(argv[i + 1]));
    else if (std::strcmp(argv[i], "--workers") == 0)
      workers = std::atoi(argv[i + 1]);
    else if (std::strcmp(argv[i], "--op-us") == 0)
      op_us = std::atoi(argv[i + 1]);
    else if (std::strcmp(argv[i], "--scheduled") == 0)
      scheduled = std::atoi(argv[i + 1]) != 0;
    else if (std::strcmp(argv[i], "--cache") == 0)
      cold_cache = std::atoi(argv[i + 1]) != 0;
    else if (std::strcmp(argv[i], "--token") == 0)
      token = argv[i + 1];
    else if (std::strcmp(argv[i], "--protocol") == 0)
      reported_protocol = static_cast<uint32_t>(std::atoi(argv[i + 1]));
    else if (std::strcmp(argv[i], "--driver") == 0)
      reported_driver = std::atoi(argv[i + 1]);
    else if (std::strcmp(argv[i], "--scheduler-tenants") == 0)
      scheduler_tenants = argv[i + 1];
  }
  tools::stop_signals signals;
  caf::actor_system_config cfg;
  actors::add_message_types(cfg);
  gleam::config::tls_config tls;
  if (const char* cert = std::getenv("GLEAM_TLS_CERT")) {
    tls.enabled = true;
    tls.certificate = cert;
    tls.key = std::getenv("GLEAM_TLS_KEY") ? std::getenv("GLEAM_TLS_KEY") : "";
    tls.ca_file = std::getenv("GLEAM_TLS_CA") ? std::getenv("GLEAM_TLS_CA") : "";
  }
  actors::load_network(cfg, tls);
  cfg.set("scheduler.max-threads", threads);
  cfg.set("scheduler.policy", caf::atom_from_string(policy));
  if (workers >= 0)
    cfg.set("middleman.workers", static_cast<size_t>(workers));
  // As gleamd: a client silent for 2 s is gone (its session is kept for a
  // resume).
  cfg.set("middleman.heartbeat-interval", caf::timespan{std::chrono::milliseconds{200}});
  cfg.set("middleman.connection-timeout", caf::timespan{actors::connection_timeout});
  cfg.set("logger.file-verbosity", caf::atom("quiet"));
  cfg.set("logger.console-verbosity", caf::atom("quiet"));
  std::optional<tools::shutdown_watchdog> watchdog;
  {
    caf::actor_system sys{cfg};
    // As gleamd's default session grace.
    auto router = std::make_shared<actors::host_call_router>(sys, std::chrono::seconds{30});
    // Detached, like the real GPU server.
    auto gpu = scheduled
                 ? sys.spawn(fake_gpu, stats, std::chrono::microseconds{op_us}, token, router)
                 : sys.spawn<caf::detached>(fake_gpu, stats, std::chrono::microseconds{op_us},
                                            token, router);
    // With --scheduler-tenants: a real scheduler with those tenants, on
    // which this fake registers its one GPU.
    actors::scheduler_actor scheduler;
    if (!scheduler_tenants.empty()) {
      actors::admission rules;
      std::istringstream list{scheduler_tenants};
      for (std::string entry; std::getline(list, entry, ',');) {
        auto colon = entry.find(':');
        rules.tenants.emplace_back(entry.substr(0, colon), entry.substr(colon + 1));
      }
      scheduler = actors::spawn_scheduler(sys, std::chrono::seconds{60}, {}, rules);
    }
    auto node = sys.spawn(fake_node, gpu, router, scheduler);
    auto bound = actors::publish(sys, node, port, "127.0.0.1", tls.enabled);
    if (!bound) {
      std::fprintf(stderr, "fake_gpu_server: cannot listen on %u: %s\n", port,
                   sys.render(bound.error()).c_str());
      return 1;
    }
    if (scheduler) {
      actors::pb<proto::NodeRegister> reg;
      reg->set_node_id("fake");
      reg->add_roles(proto::ROLE_GPU_SERVER);
      reg->set_data_host("127.0.0.1");
      reg->set_data_port(*bound);
      auto* g = reg->add_gpus();
      g->set_index(0);
      g->set_name("Gleam fake GPU (host memory)");
      g->set_total_memory(uint64_t{1} << 37);
      caf::scoped_actor self{sys};
      self->request(scheduler, std::chrono::seconds{5}, actors::register_atom::value, reg)
        .receive([](actors::pb<proto::NodeRegistered>&) {},
                 [&](caf::error& e) {
                   std::fprintf(stderr, "fake_gpu_server: registration failed: %s\n",
                                sys.render(e).c_str());
                 });
    }
    std::printf("listening %u\n", *bound);
    std::fflush(stdout);
    signals.wait();
    // Armed here, destroyed only after ~actor_system (declared outside).
    watchdog.emplace(std::chrono::milliseconds{1900});
    static_cast<void>(sys.middleman().unpublish(node, *bound));
    caf::anon_send_exit(node, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(gpu, caf::exit_reason::user_shutdown);
    if (scheduler)
      caf::anon_send_exit(scheduler, caf::exit_reason::user_shutdown);
  }
  return 0;
}
