#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <caf/expected.hpp>
#include <cuda.h>

#include "actors/proto/control.pb.h"
#include "actors/proto/ops.pb.h"
#include "executor/blas.hpp"
#include "executor/blas_api.hpp"
#include "executor/capture_judge.hpp"
#include "executor/driver_api.hpp"
#include "executor/host_calls.hpp"
#include "executor/library_graveyard.hpp"
#include "executor/memory_ledger.hpp"
#include "executor/session.hpp"
#include "executor/weight_cache.hpp"

namespace gleam::executor {

/// Executes op batches of client sessions on one GPU through the CUDA driver
/// API, in the device's primary context, and answers each op with the
/// CUresult the app would have seen locally.
///
/// Sessions are isolated: each has its own allocation table and handle maps,
/// and every op is validated against them before anything reaches the
/// driver (copies, memsets and frees only inside the session's own memory;
/// unknown handles refused). Context-wide state (CtxSetLimit, the
/// per-thread default stream, CtxSynchronize) is shared by the sessions of
/// one GPU, as it is for processes sharing a GPU under MPS.
///
/// Thread safety: none. One thread at a time calls an executor (gpu_server
/// uses one dedicated thread per GPU); every public call makes the primary
/// context current on the calling thread first.
class executor {
public:
  /// Largest device-to-host transfer of one op, bytes (64 MiB).
  static constexpr uint64_t max_transfer_bytes = uint64_t{64} << 20;

  /// Brings up device `ordinal`: retains its primary context and reads the
  /// device's name, uuid, memory and attributes. `api` must outlive the
  /// executor. Errors: no_such_device, driver_call_failed.
  [[nodiscard]] static caf::expected<std::unique_ptr<executor>>
  make(driver_api& api, int ordinal);

  executor(const executor&) = delete;
  executor& operator=(const executor&) = delete;

  /// Closes every session (frees their resources) and releases the primary
  /// context.
  ~executor();

  /// Opens a new session of `tenant` ("" = the unnamed one), with a fresh
  /// secret (SessionOpened.secret, executor/session_secret.hpp), or
  /// reattaches to `resume_session` when it is nonzero, still open, of
  /// `tenant` and `resume_secret` is its secret (the reply then carries the
  /// same secret). Error: unknown_session for any resume that is not all
  /// of these, one message for all (refusal_text: it does not say whether
  /// the id exists); driver_call_failed when the context cannot be made
  /// current; no_secure_random when no secret can be made.
  [[nodiscard]] caf::expected<proto::SessionOpened>
  open_session(const proto::OpenSession& request, const std::string& tenant = {});

  /// Runs the ops of `batch` in order, one OpResult per op executed. Ops
  /// whose seq is at or below the session's executed_through are skipped
  /// and not answered again (replay after reconnect). A sticky device error
  /// (e.g. CUDA_ERROR_ILLEGAL_ADDRESS) stops the batch after that op. An
  /// unknown session, or a batch whose session_secret is not its session's,
  /// yields one result with CUDA_ERROR_INVALID_CONTEXT and refusal_text, and
  /// nothing runs.
  [[nodiscard]] proto::BatchReply execute(const proto::OpBatch& batch);

  /// Whether session `id` is open and `secret` is its secret (constant
  /// time in the secret's bytes). The caller's check before it acts on a
  /// session for a peer (close, host-call reattach).
  [[nodiscard]] bool authenticate(uint64_t id, std::string_view secret) const;

  /// What a peer that named session `id` without proving it (unknown id,
  /// or another secret) is told: one text for both, so that the answer
  /// does not say whether the id exists.
  [[nodiscard]] std::string refusal_text(uint64_t id) const;

  /// Frees every resource of session `id` (memory, streams, events,
  /// modules) and forgets it. Unknown ids are ignored. The server's own
  /// decision (expiry, drain) or a close whose secret the caller checked
  /// (authenticate).
  void close_session(uint64_t id);

  /// One summary per open session, by ascending id, for the console.
  [[nodiscard]] std::vector<proto::SessionSummary> sessions() const;

  /// The GPU as the control plane describes it; free_memory is 0 when the
  /// driver cannot say.
  [[nodiscard]] proto::GpuInfo gpu_info() const;

  /// The device ordinal this executor runs on.
  [[nodiscard]] int ordinal() const noexcept {
    return ordinal_;
  }

  /// Makes sessions opened from now on run cuBLAS ops with `api` (which
  /// must outlive the executor) instead of blas_api::shared(), the vendor
  /// libraries loaded at the first cuBLAS op. For tests and embedders.
  void use_blas(blas_api& api) noexcept {
    blas_ = &api;
  }

  /// Makes sessions opened from now on run the LibraryCall ops of `Api`'s
  /// library (Api::library, e.g. curand_api) with `api` (which must outlive
  /// the executor) instead of the vendor library loaded at the first call.
  /// For tests and embedders.
  template <class Api>
  void use_library(Api& api) {
    library_overrides_[static_cast<int32_t>(Api::library)] = &api;
  }

  /// Attaches the node's weight cache (shared by the node's executors);
  /// null detaches it, and the cache ops then fail with a reason.
  void set_cache(std::shared_ptr<weight_cache> cache) {
    cache_ = std::move(cache);
  }

  /// A GPU tier of `capacity` bytes for the weight cache, in this
  /// executor's context (executor/device_memory_tier.hpp). The executor's
  /// driver_api must outlive it.
  [[nodiscard]] std::unique_ptr<cache_store::tier> make_device_tier(uint64_t capacity);

  /// The way back to the clients for host nodes of their graphs, for
  /// sessions opened from now on; null (the default) makes host nodes fail
  /// with CUDA_ERROR_NOT_SUPPORTED.
  void set_host_calls(std::shared_ptr<host_call_port> port) {
    host_calls_ = std::move(port);
  }

  /// The attached weight cache, or null.
  [[nodiscard]] const std::shared_ptr<weight_cache>& cache() const noexcept {
    return cache_;
  }

  /// The id the next new session gets, and those after it count up from
  /// (a GPU server's worker process starts where its supervisor says, so
  /// that the ids of one GPU's sessions stay unique).
  void start_session_ids_at(uint64_t first) noexcept {
    next_session_ = first;
  }

  /// [gpu_server] session-memory: device memory each session opened from
  /// now on may hold (session::memory_quota); 0 = no quota.
  void set_session_memory_quota(uint64_t bytes) noexcept {
    session_memory_quota_ = bytes;
  }

  /// The GPU's tenants' memory table ([gpu_server] tenant-memory and
  /// guaranteed-memory, executor/memory_ledger.hpp): sessions opened from
  /// now on take a slot in it and their allocations are judged by their
  /// tenant's rules. Null (the default): no tenant rules.
  void set_memory_ledger(std::shared_ptr<memory_ledger> ledger) {
    ledger_ = std::move(ledger);
  }

  /// What cache ops of sessions opened from now on answer when this
  /// executor has no weight cache (e.g. a worker process, which does not
  /// use the node's); "" = that the node has none configured.
  void set_no_cache_reason(std::string why) {
    no_cache_reason_ = std::move(why);
  }

  /// Sessions open now.
  [[nodiscard]] size_t session_count() const noexcept {
    return sessions_.size();
  }

  /// The session `id`, or null; for inspection and tests.
  [[nodiscard]] const session* find_session(uint64_t id) const;

private:
  executor(driver_api& api, int ordinal, CUdevice device, CUcontext context);

  CUresult make_current() const;

  driver_api& api_;
  blas_api* blas_ = nullptr;
  int ordinal_;
  CUdevice device_;
  CUcontext context_;
  proto::DeviceInfo device_info_;
  int driver_version_ = 0;
  uint64_t next_session_ = 1;
  uint64_t session_memory_quota_ = 0;
  std::string no_cache_reason_;
  std::map<uint64_t, session> sessions_;
  std::shared_ptr<weight_cache> cache_;
  std::shared_ptr<memory_ledger> ledger_;
  std::shared_ptr<host_call_port> host_calls_;
  capture_judge judge_{api_};
  /// Library handles destroyed once no session captures
  /// (executor/library_graveyard.hpp).
  library_graveyard graves_{[this] { return any_capture(); }};
  /// Loaded libraries replacing the vendor's (use_library), by
  /// proto::LibraryCall::Library value.
  std::map<int32_t, void*> library_overrides_;

  /// Whether `s` is an open session (not null) and `secret` its secret;
  /// takes the same time for a null `s`.
  [[nodiscard]] bool proves(const session* s, std::string_view secret) const;

  /// Whether a capture of any session is in progress.
  [[nodiscard]] bool any_capture() const;
};

} // namespace gleam::executor
