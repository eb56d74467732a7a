#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include <cuda_runtime_api.h>

#include "actors/proto/ops.pb.h"

namespace gleam::interpose {

/// Host mirrors of device memory: the client side of managed memory
/// (cudaMallocManaged) and of mapped host memory (cudaHostAllocMapped,
/// cudaHostRegisterMapped). Each mirror is a host range backed by an
/// ordinary device allocation on the server, kept coherent with page
/// protection:
///
/// - A host write to a clean page faults once (PROT_READ), marks the page
///   dirty and makes it writable. Before the next op of the session is
///   queued (mirror_next_upload, at each submit and round trip), every
///   dirty page is uploaded by synchronous MemcpyHtoD ops on the per-thread
///   stream and becomes clean (PROT_READ) again, so a kernel, copy or graph
///   sees every host write made before its call. A dirty page whose
///   mirrored bytes equal what the device holds (a write landed next to
///   them: the allocator's data beside registered app memory, which Gleam's
///   own allocations change while it sends) becomes clean and sends
///   nothing. A page the device may have written since the host last saw
///   it sends only the bytes that differ from its twin (the device's bytes
///   as the host last knew them), so a host write to some bytes of a page
///   never undoes a kernel's write to others (the allocator's data next to
///   registered memory, or host and device writing neighbouring managed
///   data).
/// - An op that may write device memory (anything but the copies to the
///   host, allocations, queries and stream/event bookkeeping) marks the
///   device written; the next completed round trip (a synchronizing call:
///   cudaDeviceSynchronize, cudaStreamSynchronize, a blocking copy, ...)
///   then invalidates the mirrors (mirror_after_round_trip). A lazy mirror's
///   pages become PROT_NONE and the first host access of one faults it in
///   (CtxSynchronize, then MemcpyDtoH of the 256 KiB around it); an eager
///   mirror is read back whole at once.
///
/// Lazy mirrors are memory Gleam maps itself (managed memory, cudaHostAlloc
/// mapped): a memfd mapped twice, the app's view at the server's device
/// address (MAP_FIXED_NOREPLACE, so the pointer is the same on both sides,
/// as with unified addressing) and a private read-write view through which
/// faulted-in bytes are installed without opening the app's view. Eager
/// mirrors are app memory registered with cudaHostRegisterMapped: its pages
/// may hold the app allocator's own data, which must never fault into a
/// network round trip, so they are never made PROT_NONE.
///
/// Limits: a system call that writes into a mirror page that is not
/// writable (read(2) into managed memory) fails with EFAULT instead of
/// faulting; an app's own SIGSEGV handler installed after the first mirror
/// must chain to the previous one; a graph's host node runs while the
/// server's stream waits for it, so a page it touches that the device may
/// have written since the last synchronization is not fetched (the host
/// sees its last copy; logged once); a child after fork() shares the
/// parent's lazy mirrors' pages and has none of their device memory.
///
/// Thread safety: every function is thread-safe; the fault handler runs on
/// the faulting thread. No function touches a protected page while holding
/// the table's lock.

/// How a mirror's host pages learn what the device wrote.
enum class mirror_refresh {
  /// PROT_NONE after a device write; each page is fetched at first access.
  lazy,
  /// Read back whole at once after a device write.
  eager,
};

/// One mirror as its users see it.
struct mirror_info {
  /// The app's host address and the device address of the same bytes
  /// (equal for lazy mirrors).
  uintptr_t host = 0;
  uint64_t device = 0;
  /// Bytes the app asked for.
  size_t size = 0;
  mirror_refresh refresh = mirror_refresh::lazy;
  /// Managed memory (cudaMallocManaged) rather than mapped host memory.
  bool managed = false;
  /// The flags of the call that made it (cudaMemAttach*, cudaHostAlloc*,
  /// cudaHostRegister*).
  unsigned flags = 0;
};

/// Maps a lazy mirror of `size` bytes at `device` (page aligned) and adds
/// it. cudaErrorMemoryAllocation when that address range is taken in this
/// process or no memory is left; the caller then tries another device
/// allocation.
cudaError_t mirror_map(uint64_t device, size_t size, bool managed, unsigned flags);

/// Adds an eager mirror of app memory [host, host + size) backed by
/// `device`; every page starts dirty (the host's bytes are uploaded before
/// the next op).
cudaError_t mirror_register(uintptr_t host, uint64_t device, size_t size, unsigned flags);

/// Removes the mirror that starts at host address `host` (restoring the
/// app's protection, unmapping a lazy one); its description, or nothing.
std::optional<mirror_info> mirror_remove(uintptr_t host);

/// Removes every mirror (cudaDeviceReset: their device memory is gone);
/// their descriptions.
std::vector<mirror_info> mirror_clear();

/// The mirror whose host range holds `p`.
std::optional<mirror_info> mirror_at_host(const void* p);

/// The mirror whose device range holds `p`.
std::optional<mirror_info> mirror_at_device(uint64_t p);

/// Whether any mirror exists (cheap; no lock).
bool mirrors_active() noexcept;

/// Called as `op` is queued: notes whether it may write device memory.
void mirror_note_op(const proto::Op& op) noexcept;

/// Appends to `ops` the next upload of dirty pages (at most
/// max_message_payload bytes of one mirror: whole pages while the device
/// holds what the host last saw, else one copy per run of bytes the host
/// changed), marking those pages clean; false when no dirty page holds
/// mirrored bytes the host changed (those pages become clean without an
/// upload, so sending the uploads, which may re-open a page by allocating
/// next to it, always ends). The caller sends them before the op that made
/// it look.
bool mirror_next_upload(std::vector<proto::Op>& ops);

/// Called after a round trip completed (every earlier op executed): when an
/// op since the last call may have written device memory, invalidates the
/// lazy mirrors and reads the eager ones back.
void mirror_after_round_trip();

} // namespace gleam::interpose
