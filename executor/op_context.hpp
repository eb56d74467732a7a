#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <cuda.h>

#include "actors/proto/ops.pb.h"
#include "executor/driver_api.hpp"
#include "executor/session.hpp"

namespace gleam::executor {

class blas_api;
class capture_judge;
class weight_cache;

/// What the handler of one op (executor/op_table.hpp) works with: the
/// executor's driver and libraries, the op's session and the op's result,
/// plus the checks and handle lookups that several op families share. Each
/// check or lookup that fails records status and detail in `r` and returns
/// false (or null); the handler then returns without calling the driver.
///
/// Made by the batch loop for one op and dropped after it; holds no state
/// of its own. Not thread-safe (like the executor).
/// Why an allocation of `size` bytes (`what`: "cuMemAlloc", ...) is past
/// session `s`'s memory quota: what it holds and the quota.
std::string quota_refusal(const session& s, uint64_t size, const char* what);

/// Why session `s` may not allocate `size` more bytes of device memory for
/// `what` ("cuMemAlloc"), or "" when it may: its own quota
/// (session::memory_quota), then its tenant's rules in the GPU's memory
/// table (memory_ledger), judged with the device's free memory; when
/// memory guaranteed to other tenants is in the way, the weight cache's GPU
/// tier (`cache`, may be null) gives way first. On "" the bytes are
/// reserved in the table until the op settles.
std::string memory_refusal(driver_api& api, session& s, weight_cache* cache, uint64_t size,
                           const char* what);

struct op_context {
  /// The driver entry points; outlives the op.
  driver_api& api;
  /// cuBLAS / cuBLASLt, loaded at the first cuBLAS op; may be null.
  blas_api* blas;
  /// The session the op belongs to.
  session& s;
  /// The op's result, written by the op's handler.
  proto::OpResult& r;
  /// The node's weight cache; null when the node has none.
  weight_cache* cache;
  /// This executor's GPU.
  CUdevice device;
  /// Judges ops of app threads bound by capture rules; may be null.
  capture_judge* judge;

  /// Records `rc` with its human-readable `detail` as the op's result.
  void fail(CUresult rc, std::string detail);

  /// Records `rc` of driver call `what`; true on success.
  bool check(CUresult rc, const char* what);

  /// Like check, but CUDA_ERROR_NOT_READY is an answer, not a failure.
  void check_query(CUresult rc, const char* what);

  /// Whether [ptr, ptr + len) lies inside memory of the session.
  bool check_range(uint64_t ptr, uint64_t len, const char* what);

  /// Whether `size` bytes fit in one transfer (executor::max_transfer_bytes).
  bool check_size(uint64_t size, const char* what);

  /// Whether the session may allocate `size` more bytes of device memory
  /// (memory_refusal); else the result is CUDA_ERROR_OUT_OF_MEMORY, as
  /// from a full device, naming the quota or rule, and false.
  bool check_quota(uint64_t size, const char* what);

  /// The session's stream `handle`, for the op's work on it
  /// (executor/session_streams.hpp); false with the result set.
  bool lookup_stream(uint64_t handle, CUstream& out);

  /// The session's event `handle`.
  bool lookup_event(uint64_t handle, CUevent& out);

  /// The session's graph `handle` (captured or created).
  bool lookup_graph(uint64_t handle, CUgraph& out);

  /// The session's executable graph `handle`.
  bool lookup_exec(uint64_t handle, CUgraphExec& out);

  /// The function `name` of module `module`, resolved now if ModuleLoad did
  /// not ask for it; null (with the result set) when there is none. Owned
  /// by the session's module entry.
  function_entry* lookup_function(uint64_t module, const std::string& name);

  /// The parameter layout of `f` (cuFuncGetParamInfo), in declaration order.
  std::vector<param_slot> param_layout(CUfunction f);

  /// Enters driver allocation [p, p + size) in the session's memory; when
  /// it overlaps a range the session holds (a corrupt table) frees it and
  /// fails the op.
  bool register_allocation(CUdeviceptr p, uint64_t size);
};

} // namespace gleam::executor
