#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include <cuda.h>

#include "actors/proto/ops.pb.h"
#include "cache_store/hash.hpp"
#include "consistency/replay_log.hpp"
#include "executor/allocation_table.hpp"
#include "executor/host_calls.hpp"
#include "executor/library_handles.hpp"
#include "executor/memory_ledger.hpp"
#include "wire/vmm_space.hpp"

namespace gleam::executor {

/// One entry of a kernel's parameter layout, as cuFuncGetParamInfo says.
struct param_slot {
  /// Bytes into the packed parameter buffer.
  uint32_t offset = 0;
  /// Bytes.
  uint32_t size = 0;
};

/// A resolved device function of a loaded module.
struct function_entry {
  /// The driver handle; owned by the module.
  CUfunction handle = nullptr;
  /// Parameters in declaration order.
  std::vector<param_slot> params;
};

/// A module loaded for a session.
struct module_entry {
  /// The driver handle; the session owns it (cuModuleUnload on release).
  CUmodule handle = nullptr;
  /// Resolved functions by device name (mangled as in the fatbin).
  std::map<std::string, function_entry> functions;
};

/// A weight-cache chunk written into device memory.
struct placed_chunk {
  /// Key of the chunk's content.
  cache_store::chunk_key key;
  /// Bytes.
  uint64_t size = 0;
};

/// A weight-cache chunk whose CacheUpload parts are still arriving.
struct chunk_in_parts {
  /// The chunk's key (binary form), as every part names it.
  std::string key;
  /// Bytes of the whole chunk.
  uint64_t size = 0;
  /// The parts so far, in order.
  std::string bytes;
};

/// Client stream handles with a fixed meaning; they need no StreamCreate.
/// Each session has stand-ins of its own for them (executor/session_streams.hpp).
namespace stream_handle {
/// The legacy default stream, (CUstream)0.
constexpr uint64_t legacy_default = 0;
/// CU_STREAM_LEGACY.
constexpr uint64_t legacy = 1;
/// The per-thread default stream.
constexpr uint64_t per_thread = 2;
} // namespace stream_handle

/// A blocking stream of a session (created without CU_STREAM_NON_BLOCKING,
/// or the per-thread default stream) against the session's legacy stream:
/// CUDA's implicit synchronization between the two, kept with events
/// (executor/session_streams.hpp).
struct blocking_stream {
  /// Recorded on the stream when the legacy stream waits for it.
  CUevent done = nullptr;
  /// Ops issued on the stream.
  uint64_t work = 0;
  /// `work` when the legacy stream last waited for the stream.
  uint64_t seen_by_legacy = 0;
  /// session::legacy_work when the stream last waited for the legacy stream.
  uint64_t legacy_seen = 0;
};

struct blas_tables;
class library_graveyard;

/// The resource tables of one client session: every driver handle it
/// created, keyed by the handle the client chose. The executor owns the
/// session and every driver object in it. Not thread-safe.
struct session {
  /// Server-assigned id, never 0.
  uint64_t id = 0;
  /// The session's secret (executor/session_secret.hpp), handed to its
  /// client in SessionOpened: every batch, resume and close must carry it;
  /// the id alone names nothing (ids are sequential). Never logged.
  std::string secret;
  /// host:pid of the app, from OpenSession.
  std::string client_id;
  /// From OpenSession.
  std::string task_signature;
  /// The UUID of the session's GPU as NVML and nvidia-smi write it
  /// ("GPU-…"): how the server's NVML finds the session's GPU.
  std::string gpu_uuid;
  /// Unix time of OpenSession, nanoseconds.
  uint64_t opened_time_ns = 0;
  /// Device memory and module variables the session may touch.
  allocation_table memory;
  /// Slabs (MemAlloc.slab): device memory the client carves allocations
  /// from; those allocations are `memory` entries of kind `carved`.
  allocation_table slabs;

  /// Reservations, physical allocations and mappings of the virtual
  /// memory API (executor/vmm.hpp); read-write mappings are `memory`
  /// entries of kind vmm_mapping too.
  wire::vmm_space vmm;

  /// Device memory the session holds: its own allocations, its slabs and
  /// its physical allocations of the virtual memory API.
  uint64_t device_bytes() const noexcept {
    return memory.allocated_bytes() + slabs.total_bytes() + vmm.allocated_bytes();
  }
  /// [gpu_server] session-memory: the most device_bytes() may reach; 0 =
  /// no quota. An allocation past it fails as on a full device.
  uint64_t memory_quota = 0;
  /// Why cache ops fail on this GPU server when it has no weight cache
  /// (executor::set_no_cache_reason); "" = the default reason.
  std::string no_cache_reason;
  /// The GPU's tenants' memory table (executor/memory_ledger.hpp) and the
  /// session's slot in it; null when no tenant has memory rules.
  memory_ledger* ledger = nullptr;
  uint32_t ledger_slot = memory_ledger::npos;
  /// device_bytes() as last told to the ledger (memory_ledger::settle),
  /// and whether the current op reserved bytes there.
  uint64_t ledger_held = 0;
  bool ledger_reserved = false;
  /// Whether `size` more bytes stay within memory_quota.
  bool within_memory_quota(uint64_t size) const noexcept {
    return memory_quota == 0 || (size <= memory_quota && device_bytes() <= memory_quota - size);
  }
  /// Client stream handle -> driver stream (created ones only; 0, 1, 2 are
  /// implicit, see stream_handle). Every driver stream is non-blocking: the
  /// context's legacy stream is shared by all sessions.
  std::unordered_map<uint64_t, CUstream> streams;
  /// The session's stand-ins for the legacy and the per-thread default
  /// stream, created at first use; the legacy stream's ops so far, and the
  /// event the blocking streams wait on.
  CUstream legacy_stream = nullptr;
  CUstream per_thread_stream = nullptr;
  uint64_t legacy_work = 0;
  CUevent legacy_done = nullptr;
  /// Client handle -> the streams that the app created blocking (and the
  /// per-thread default stream once used).
  std::unordered_map<uint64_t, blocking_stream> blocking;
  /// Client event handle -> driver event.
  std::unordered_map<uint64_t, CUevent> events;
  /// Client memory pool handle -> driver pool the session created
  /// (executor/mem_pools.hpp); destroyed with the session, after its memory.
  std::unordered_map<uint64_t, CUmemoryPool> pools;
  /// Client module handle -> loaded module.
  std::unordered_map<uint64_t, module_entry> modules;
  /// cuBLAS / cuBLASLt handles and descriptors (executor/blas.hpp); null
  /// until the session's first library op.
  std::shared_ptr<blas_tables> blas;
  /// Where the session's library handles are destroyed
  /// (executor/library_graveyard.hpp); null: at once.
  library_graveyard* graves = nullptr;
  /// Handles the generated calls of libraries other than cuBLAS created
  /// (cuRAND generators, distributions), and host outputs kept for
  /// LibraryOutputRead (executor/library_runner.hpp).
  library_handle_table library_handles;
  library_held_outputs library_held;
  /// Bytes in library_held.
  uint64_t library_held_bytes = 0;
  /// Loaded libraries the executor uses instead of the vendor's shared ones
  /// (executor::use_library); null: none. Owned by the executor.
  const std::map<int32_t, void*>* library_overrides = nullptr;
  /// Client graph handle -> driver graph (captured ones; the session owns
  /// them, cuGraphDestroy on release).
  std::unordered_map<uint64_t, CUgraph> graphs;
  /// Client graph-exec handle -> driver executable graph (owned).
  std::unordered_map<uint64_t, CUgraphExec> execs;
  /// Client node handle -> (client graph handle, driver node); the graph
  /// owns the node.
  std::unordered_map<uint64_t, std::pair<uint64_t, CUgraphNode>> nodes;
  /// Client stream handle a capture began on -> client graph handle of that
  /// capture, while it is ongoing.
  std::unordered_map<uint64_t, uint64_t> captures;
  /// Where host nodes of this session's graphs call the client; null when
  /// the server has no way back (host nodes are then refused).
  host_call_port* back_channel = nullptr;
  /// Client callback id -> the user data of the server's host nodes that
  /// run it. Kept until the session is released (after its graphs).
  std::unordered_map<uint64_t, host_call_target> host_calls;
  /// What the host nodes of memcpy nodes with a host end in the client
  /// point at, each with its pinned staging buffer
  /// (executor/graph_copies.hpp). Kept until the session is released.
  std::deque<host_copy_target> host_copies;
  /// Highest op seq executed; ops at or below it are skipped on replay.
  uint64_t executed_through = 0;
  /// Number of ops executed (skipped replays not counted).
  uint64_t ops_executed = 0;
  /// The tenant the session's token named ([node] tenants); "" = unnamed.
  std::string tenant;
  /// Times the client resumed the session after a lost connection.
  uint32_t resumes = 0;
  /// Replies the client has not confirmed, for batches it re-sends after a
  /// reconnect.
  consistency::replay_log<proto::BatchReply> replies;
  /// Weight-cache chunks written into this session's memory (CacheFill,
  /// CacheUpload) by device address, awaiting verification at MemFree or
  /// session end (see weight_cache::verify).
  std::map<uint64_t, placed_chunk> placed;
  /// Chunks uploaded in parts whose last part has not come yet, by device
  /// address (executor/cache_ops.hpp).
  std::map<uint64_t, chunk_in_parts> chunks_in_parts;
};

} // namespace gleam::executor
