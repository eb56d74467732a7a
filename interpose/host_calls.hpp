#pragma once

#include <cstdint>

#include <cuda_runtime_api.h>

namespace gleam::interpose {

/// Host functions of graph host nodes. The function stays in this process:
/// the server's node asks the client to run it at every replay
/// (actors/host_call_router.hpp) and its stream waits for the answer. Each
/// (function, user data) pair gets one callback id, the name the server's
/// nodes carry. Thread-safe.

/// The callback id of (`fn`, `data`), registered at the first use; never 0.
uint64_t register_host_call(cudaHostFn_t fn, void* data);

/// The pair registered as `callback`; false when there is none.
bool host_call_of(uint64_t callback, cudaHostFn_t* fn, void** data);

/// Runs `callback` for the server's invocation (`session`, `invocation`)
/// unless that invocation already ran (the server asks again when an answer
/// was late or lost): a function runs once per replay of its node. False
/// when `callback` names nothing registered. Runs on the client's host-call
/// thread, one function at a time.
bool run_host_call(uint64_t session, uint64_t callback, uint64_t invocation);

/// Whether the calling thread runs a host function now: CUDA calls from it
/// fail with cudaErrorNotPermitted, as CUDA documents for host functions.
bool in_host_call() noexcept;

} // namespace gleam::interpose
