#include "executor/memory_ledger.hpp"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <pthread.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>

#include <fmt/format.h>

#include "executor/error.hpp"

namespace gleam::executor {

namespace {

constexpr uint64_t table_magic = 0x474c4d4c45444752ull; // "GLMLEDGR"

struct tenant_rule {
  char name[memory_ledger::max_name + 1];
  uint64_t limit;
  uint64_t guaranteed;
};

struct session_slot {
  /// 0: free.
  uint32_t in_use;
  /// Index into rules, or npos for a tenant without rules.
  uint32_t rule;
  pid_t pid;
  uint64_t session;
  uint64_t held;
  uint64_t reserved;
};

uint64_t mib(uint64_t bytes) {
  return bytes >> 20;
}

} // namespace

struct memory_ledger::table {
  uint64_t magic;
  uint64_t size;
  pthread_mutex_t mutex;
  uint32_t rule_count;
  uint32_t guarantees;
  tenant_rule rules[max_rules];
  session_slot slots[max_slots];

  /// The rule index of `tenant`, or npos.
  uint32_t rule_of(const std::string& tenant) const {
    for (uint32_t i = 0; i < rule_count; ++i)
      if (tenant == rules[i].name)
        return i;
    return npos;
  }

  /// Bytes the sessions under rule `r` hold (and have reserved).
  uint64_t held_by(uint32_t r) const {
    uint64_t sum = 0;
    for (const auto& s : slots)
      if (s.in_use != 0 && s.rule == r)
        sum += s.held + s.reserved;
    return sum;
  }
};

namespace {

/// Holds the table's mutex; a holder that died left it consistent enough
/// (each field is written whole), so the lock is taken over.
class table_lock {
public:
  explicit table_lock(pthread_mutex_t* m) : m_{m} {
    if (pthread_mutex_lock(m_) == EOWNERDEAD)
      pthread_mutex_consistent(m_);
  }
  ~table_lock() {
    pthread_mutex_unlock(m_);
  }
  table_lock(const table_lock&) = delete;
  table_lock& operator=(const table_lock&) = delete;

private:
  pthread_mutex_t* m_;
};

caf::error system_error(const char* what) {
  return make_error(error_code::ledger_failed,
                    fmt::format("the tenants' memory table: {} failed: {}", what,
                                std::strerror(errno)));
}

} // namespace

caf::expected<std::shared_ptr<memory_ledger>>
memory_ledger::create(const std::vector<rule>& rules) {
  if (rules.size() > max_rules)
    return make_error(error_code::ledger_failed,
                      fmt::format("{} tenants have memory rules; at most {} may", rules.size(),
                                  max_rules));
  std::set<std::string> seen;
  for (const auto& r : rules) {
    if (r.tenant.size() > max_name)
      return make_error(error_code::ledger_failed,
                        fmt::format("tenant name '{}' is longer than {} bytes", r.tenant,
                                    max_name));
    if (!seen.insert(r.tenant).second)
      return make_error(error_code::ledger_failed,
                        fmt::format("tenant '{}' has two memory rules", r.tenant));
  }
  int fd = ::memfd_create("gleam-memory-ledger", MFD_CLOEXEC);
  if (fd < 0)
    return system_error("memfd_create");
  if (::ftruncate(fd, sizeof(table)) != 0) {
    auto err = system_error("ftruncate");
    ::close(fd);
    return err;
  }
  void* p = ::mmap(nullptr, sizeof(table), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    auto err = system_error("mmap");
    ::close(fd);
    return err;
  }
  auto* t = static_cast<table*>(p); // zero-filled by ftruncate
  pthread_mutexattr_t attr;
  pthread_mutexattr_init(&attr);
  pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
  pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
  pthread_mutex_init(&t->mutex, &attr);
  pthread_mutexattr_destroy(&attr);
  t->rule_count = static_cast<uint32_t>(rules.size());
  for (size_t i = 0; i < rules.size(); ++i) {
    std::memcpy(t->rules[i].name, rules[i].tenant.data(), rules[i].tenant.size());
    t->rules[i].limit = rules[i].limit;
    t->rules[i].guaranteed = rules[i].guaranteed;
    if (rules[i].guaranteed != 0)
      ++t->guarantees;
  }
  t->size = sizeof(table);
  t->magic = table_magic;
  return std::shared_ptr<memory_ledger>(new memory_ledger(fd, t));
}

caf::expected<std::shared_ptr<memory_ledger>> memory_ledger::attach(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0)
    return system_error("fstat of the inherited descriptor");
  if (static_cast<size_t>(st.st_size) != sizeof(table))
    return make_error(error_code::ledger_failed,
                      fmt::format("descriptor {} holds {} bytes, not a memory table of {}", fd,
                                  st.st_size, sizeof(table)));
  void* p = ::mmap(nullptr, sizeof(table), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED)
    return system_error("mmap of the inherited descriptor");
  auto* t = static_cast<table*>(p);
  if (t->magic != table_magic || t->size != sizeof(table)) {
    ::munmap(p, sizeof(table));
    return make_error(error_code::ledger_failed,
                      fmt::format("descriptor {} holds no memory table", fd));
  }
  return std::shared_ptr<memory_ledger>(new memory_ledger(fd, t));
}

memory_ledger::~memory_ledger() {
  ::munmap(t_, sizeof(table));
  ::close(fd_);
}

bool memory_ledger::has_guarantees() const noexcept {
  return t_->guarantees != 0;
}

uint32_t memory_ledger::join(uint64_t session, const std::string& tenant, pid_t pid) {
  table_lock lock{&t_->mutex};
  for (uint32_t i = 0; i < max_slots; ++i) {
    auto& s = t_->slots[i];
    if (s.in_use != 0)
      continue;
    s.rule = t_->rule_of(tenant);
    s.pid = pid < 0 ? ::getpid() : pid;
    s.session = session;
    s.held = 0;
    s.reserved = 0;
    s.in_use = 1;
    return i;
  }
  return npos;
}

void memory_ledger::leave(uint32_t slot) {
  if (slot >= max_slots)
    return;
  table_lock lock{&t_->mutex};
  t_->slots[slot] = session_slot{};
}

size_t memory_ledger::forget_process(pid_t pid) {
  table_lock lock{&t_->mutex};
  size_t n = 0;
  for (auto& s : t_->slots)
    if (s.in_use != 0 && s.pid == pid) {
      s = session_slot{};
      ++n;
    }
  return n;
}

std::string memory_ledger::reserve(uint32_t slot, uint64_t size, uint64_t device_free) {
  if (slot >= max_slots || t_->rule_count == 0)
    return {};
  table_lock lock{&t_->mutex};
  auto& me = t_->slots[slot];
  if (me.in_use == 0)
    return {};
  if (me.rule != npos) {
    const auto& r = t_->rules[me.rule];
    auto held = t_->held_by(me.rule);
    if (r.limit != 0 && (size > r.limit || held > r.limit - size))
      return fmt::format("tenant '{}' holds {} MiB of this GPU's memory and may hold {} MiB "
                         "([gpu_server] tenant-memory)",
                         r.name, mib(held), mib(r.limit));
  }
  if (t_->guarantees != 0) {
    // What other tenants are guaranteed and do not use, and what sessions
    // reserved without the driver having handed it out yet.
    uint64_t kept = 0;
    std::string whom;
    for (uint32_t i = 0; i < t_->rule_count; ++i) {
      const auto& r = t_->rules[i];
      if (i == me.rule || r.guaranteed == 0)
        continue;
      auto held = t_->held_by(i);
      if (held >= r.guaranteed)
        continue;
      kept += r.guaranteed - held;
      whom += fmt::format("{}'{}' {} MiB", whom.empty() ? "" : ", ", r.name,
                          mib(r.guaranteed - held));
    }
    uint64_t reserved = 0;
    for (const auto& s : t_->slots)
      if (s.in_use != 0)
        reserved += s.reserved;
    auto free = device_free > reserved ? device_free - reserved : 0;
    if (kept != 0 && (size > free || free - size < kept))
      return fmt::format("the GPU has {} MiB free and {} MiB of it are guaranteed to other "
                         "tenants who do not use it yet ({}; [gpu_server] guaranteed-memory)",
                         mib(free), mib(kept), whom);
  }
  me.reserved += size;
  return {};
}

void memory_ledger::settle(uint32_t slot, uint64_t held) {
  if (slot >= max_slots || t_->rule_count == 0)
    return;
  table_lock lock{&t_->mutex};
  auto& s = t_->slots[slot];
  if (s.in_use == 0)
    return;
  s.held = held;
  s.reserved = 0;
}

memory_ledger::usage memory_ledger::of(const std::string& tenant) const {
  table_lock lock{&t_->mutex};
  usage u;
  auto r = t_->rule_of(tenant);
  if (r == npos)
    return u;
  u.held = t_->held_by(r);
  u.limit = t_->rules[r].limit;
  u.guaranteed = t_->rules[r].guaranteed;
  return u;
}

} // namespace gleam::executor
