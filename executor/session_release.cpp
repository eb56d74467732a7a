#include "executor/session_release.hpp"

#include <limits>

#include "executor/blas.hpp"
#include "executor/cache_ops.hpp"
#include "executor/graph_copies.hpp"
#include "executor/library_runner.hpp"
#include "executor/mem_pools.hpp"
#include "executor/session_streams.hpp"
#include "executor/vmm.hpp"
#include "executor/weight_cache.hpp"

namespace gleam::executor {

CUresult release_session_resources(driver_api& api, session& s, weight_cache* cache,
                                   CUdevice device) {
  CUresult first = CUDA_SUCCESS;
  auto note = [&first](CUresult rc) {
    if (first == CUDA_SUCCESS)
      first = rc;
  };
  // Host nodes still waiting for the client return: the waits below must
  // not depend on a client that is gone.
  if (s.back_channel != nullptr)
    s.back_channel->end(s.id);
  // Ongoing captures end first (their streams go next); then the graphs.
  for (auto& kv : s.captures) {
    auto st = s.streams.find(kv.first);
    CUgraph g = nullptr;
    if (st != s.streams.end() && api.cuStreamEndCapture != nullptr)
      static_cast<void>(api.cuStreamEndCapture(st->second, &g));
    if (g != nullptr)
      note(api.cuGraphDestroy(g));
  }
  s.captures.clear();
  // Pending work of the session may still use its memory.
  note(sync_session(api, s));
  // Library handles first: they hold the session's streams and workspaces.
  if (release_blas(s) != CUBLAS_STATUS_SUCCESS)
    note(CUDA_ERROR_UNKNOWN);
  if (release_library_handles(s) != 0)
    note(CUDA_ERROR_UNKNOWN);
  // Session end: the weight rule for every chunk still in place, and what
  // the session uploaded on disk before the session is gone.
  cache_ops::verify_placed(api, s, cache, 0, std::numeric_limits<uint64_t>::max());
  if (cache != nullptr)
    cache->wait_persisted();
  for (auto& kv : s.execs)
    note(api.cuGraphExecDestroy(kv.second));
  s.execs.clear();
  for (auto& kv : s.graphs)
    if (kv.second != nullptr)
      note(api.cuGraphDestroy(kv.second));
  s.graphs.clear();
  s.nodes.clear();
  s.host_calls.clear();
  release_host_copies(api, s);
  for (auto& kv : s.streams)
    note(api.cuStreamDestroy(kv.second));
  s.streams.clear();
  release_session_streams(api, s);
  for (auto& kv : s.events)
    note(api.cuEventDestroy(kv.second));
  s.events.clear();
  for (auto& kv : s.modules)
    note(api.cuModuleUnload(kv.second.handle));
  s.modules.clear();
  note(release_vmm(api, s));
  for (const auto& e : s.memory.entries()) {
    if (e.kind == range_kind::allocation)
      note(api.cuMemFree(static_cast<CUdeviceptr>(e.base)));
    // Graph memory a launched graph left allocated; refused (and nothing
    // to free) when its graph never ran.
    if (e.kind == range_kind::graph_allocation)
      static_cast<void>(api.cuMemFree(static_cast<CUdeviceptr>(e.base)));
  }
  // The graph memory pool keeps what the session's graphs used.
  if (api.cuDeviceGraphMemTrim != nullptr)
    note(api.cuDeviceGraphMemTrim(device));
  s.memory.clear();
  note(release_mem_pools(api, s));
  for (const auto& e : s.slabs.entries())
    note(api.cuMemFree(static_cast<CUdeviceptr>(e.base)));
  s.slabs.clear();
  return first;
}

} // namespace gleam::executor
