#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <caf/expected.hpp>

namespace gleam::executor {

/// Device memory by tenant on one GPU, for the tenants' rules of
/// [gpu_server] tenant-memory (the most a tenant's sessions may hold
/// together) and guaranteed-memory (memory no other tenant may take while
/// the tenant does not use it).
///
/// Every session of the GPU, wherever it runs, has a slot: its tenant, the
/// device memory it holds (`settle`) and what it is about to allocate
/// (`reserve`). Under isolation = "shared" the sessions are gleamd's; under
/// "process" each runs in a worker process, so the table lives in a shared
/// memory mapping (a memfd) that gleamd makes (`create`) and each worker
/// maps from the descriptor it inherits (`attach`). A robust process-shared
/// mutex guards it: a worker killed while holding it does not block the
/// others. A worker that dies leaves its slots behind; its supervisor drops
/// them (`forget_process`), as the driver frees the memory of a dead
/// process.
///
/// The rule for `size` more bytes of a session of tenant T, given the
/// device's free memory F (cuMemGetInfo) and what other sessions reserved
/// and have not settled yet (R):
///   - T's sessions hold H_T; with a tenant-memory limit L_T,
///     H_T + size <= L_T;
///   - every other tenant U with a guarantee G_U keeps what it does not use:
///     F - R - size >= sum over U != T of max(0, G_U - H_U).
/// A refusal says which rule and which numbers, as a user must read them.
///
/// Threading: every member may be called from any thread and any process
/// that mapped the table.
class memory_ledger {
public:
  /// One tenant's rules; 0 = no such rule.
  struct rule {
    std::string tenant;
    uint64_t limit = 0;
    uint64_t guaranteed = 0;
  };

  /// Most tenants with rules, and most sessions of one GPU at a time.
  static constexpr size_t max_rules = 64;
  static constexpr size_t max_slots = 4096;
  /// Longest tenant name in a rule, bytes.
  static constexpr size_t max_name = 63;

  /// A new table (a memfd of its own) with `rules`. Errors: bad_value for
  /// more than max_rules rules, a name longer than max_name or twice;
  /// driver_call_failed-class system errors (ledger_failed) when no shared
  /// memory can be made.
  [[nodiscard]] static caf::expected<std::shared_ptr<memory_ledger>>
  create(const std::vector<rule>& rules);

  /// Maps the table of another process from `fd` (inherited from the
  /// process that made it), which this object then owns. Errors:
  /// ledger_failed when `fd` holds no table.
  [[nodiscard]] static caf::expected<std::shared_ptr<memory_ledger>> attach(int fd);

  ~memory_ledger();
  memory_ledger(const memory_ledger&) = delete;
  memory_ledger& operator=(const memory_ledger&) = delete;

  /// The descriptor of the shared mapping, for a worker process to inherit.
  [[nodiscard]] int fd() const noexcept {
    return fd_;
  }

  /// Whether any tenant has a guarantee (callers then read the device's
  /// free memory for `reserve`; without one they may pass 0).
  [[nodiscard]] bool has_guarantees() const noexcept;

  /// A slot for session `session` of `tenant` in process `pid` (-1: this
  /// process); npos when every slot is taken (the session then runs
  /// without one: nothing it allocates is judged by tenant).
  static constexpr uint32_t npos = 0xffffffffu;
  [[nodiscard]] uint32_t join(uint64_t session, const std::string& tenant, pid_t pid = -1);

  /// Frees `slot` (the session ended and freed its memory).
  void leave(uint32_t slot);

  /// Frees every slot of process `pid` (a worker that ended: the driver
  /// freed what its sessions held). Returns how many.
  size_t forget_process(pid_t pid);

  /// Judges `size` more bytes for the session in `slot` against the rules
  /// above, with `device_free` the device's free memory now. On success
  /// the bytes are held as reserved until the next `settle` of the slot
  /// and "" is returned; else the refusal, in words. A slot of npos, or a
  /// table without rules, always succeeds.
  [[nodiscard]] std::string reserve(uint32_t slot, uint64_t size, uint64_t device_free);

  /// The session in `slot` now holds `held` bytes of device memory; its
  /// reservation is spent.
  void settle(uint32_t slot, uint64_t held);

  /// Bytes the sessions of `tenant` hold, and the tenant's rules (0 = none).
  struct usage {
    uint64_t held = 0;
    uint64_t limit = 0;
    uint64_t guaranteed = 0;
  };
  [[nodiscard]] usage of(const std::string& tenant) const;

private:
  struct table;
  memory_ledger(int fd, table* t) : fd_{fd}, t_{t} {
  }
  int fd_;
  table* t_;
};

} // namespace gleam::executor
