#pragma once

#include <memory>
#include <string>

#include <caf/actor_system.hpp>

#include "actors/interfaces.hpp"
#include "actors/proto/control.pb.h"
#include "actors/telemetry_board.hpp"
#include "config/node_config.hpp"
#include "executor/memory_ledger.hpp"

namespace gleam::actors {

/// The GPU server of one GPU under [gpu_server] isolation = process: a
/// supervisor that runs each session in a worker process of its own.
///
/// A worker is gleamd itself (`/proc/self/exe --worker ...`, see
/// tools/gleamd/worker.cpp): it makes its own CUDA context on the GPU,
/// serves one session through the same gpu_server and executor as shared
/// mode, listens on a port of its own (with the node's TLS and guards) and
/// ends when its session ends. So a session's faults (a sticky error, a
/// crash), its memory (another context's address space: a raw pointer into
/// another session's buffer is not mapped), its waits and hangs stay its
/// own; gleamd's process never runs a session's op.
///
/// How ops reach a worker: the client opens the session here, as in shared
/// mode; the reply (the worker's SessionOpened) names the worker's port
/// (SessionOpened.worker_port), and the client connects there, resumes the
/// session with its secret and sends every batch, and its close, to the
/// worker directly: no op and no byte passes through gleamd, so bulk
/// payloads are copied no more than in shared mode. A reconnect asks here
/// again: the supervisor redirects it while the worker lives and refuses
/// it, saying why the session ended, once the worker is gone.
///
/// `spare_workers` workers are kept started (their context made) so that an
/// open waits for none; a worker that ends is reaped and replaced. The
/// supervisor talks to its workers over socket pairs (actors/worker_link.hpp):
/// opens, and every 500 ms the status of each busy worker, which it posts
/// to the telemetry board and answers status requests with.
///
/// Admission (tokens, tenants, drain) is checked here, as the gpu_server
/// checks it; a worker opens sessions only for its supervisor (the worker's
/// key, a random secret passed in the worker's environment) and resumes
/// only for a client that proves the session's secret.
///
/// A worker sends the measurements of its session (SessionEnded) as it
/// stops; the supervisor posts them to the node's telemetry board for the
/// scheduler, without co-runners (each worker sees only its own session).
/// A worker killed (kill -9, session kill) sends none.
///
/// Not yet under process isolation: the weight cache (workers run without
/// one: cache ops fail with CUDA_ERROR_NOT_SUPPORTED and clients upload
/// plainly) and graphs' host nodes across a reconnect through the node.
///
/// `info` is the GPU as the node advertises it; `config_path` the node's
/// config file, which workers read too. `ledger` (may be null): the GPU's
/// tenants' memory table, which every worker maps; the supervisor drops
/// the slots of a worker that ended.
gpu_server_actor spawn_session_supervisor(caf::actor_system& sys,
                                          const config::node_config& cfg, int ordinal,
                                          proto::GpuInfo info,
                                          std::shared_ptr<telemetry_board> board, size_t slot,
                                          std::shared_ptr<executor::memory_ledger> ledger);

} // namespace gleam::actors
