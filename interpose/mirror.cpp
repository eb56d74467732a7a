#include "interpose/mirror.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <map>
#include <mutex>

#include "actors/log.hpp"
#include "interpose/capture_state.hpp"
#include "interpose/host_calls.hpp"
#include "interpose/message_size.hpp"
#include "interpose/runtime.hpp"

namespace gleam::interpose {

namespace {

using actors::log;
using actors::log_level;

enum page_state : uint8_t {
  /// The device may hold newer bytes (lazy mirrors only): PROT_NONE.
  page_invalid = 0,
  /// Host and device agree: PROT_READ.
  page_clean = 1,
  /// The host wrote since the last upload: read-write.
  page_dirty = 2,
  /// Registered app memory whose bytes never went up: read-write, uploaded
  /// whole.
  page_new = 3,
  /// Dirty, and the device may have written the page since the host last
  /// saw it: read-write, uploaded as the bytes that differ from the twin.
  page_stale = 4,
};

bool writable(uint8_t state) noexcept {
  return state == page_dirty || state == page_new || state == page_stale;
}

/// Bytes fetched around a faulting address of a lazy mirror.
constexpr size_t fetch_window = size_t{256} << 10;

size_t page_size() noexcept {
  static const auto size = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  return size;
}

struct mirror {
  mirror_info info;
  /// The page-aligned host range the mirror protects.
  uintptr_t begin = 0;
  size_t pages = 0;
  /// Lazy mirrors: the private read-write view of the same memory.
  char* shadow = nullptr;
  /// The bytes the device holds as far as the host knows (its last fetch
  /// or upload), at the same offsets from `begin`: an upload while the
  /// device may have written the page sends only what the host changed, so
  /// that a host write to other bytes of a page (the allocator's data next
  /// to registered memory) never undoes a kernel's.
  char* twin = nullptr;
  std::vector<uint8_t> state;

  uintptr_t page_addr(size_t p) const noexcept { return begin + p * page_size(); }
  /// The mirror's bytes inside pages [a, b): [lo, hi) in host addresses.
  std::pair<uintptr_t, uintptr_t> bytes(size_t a, size_t b) const noexcept {
    return {std::max(page_addr(a), info.host), std::min(page_addr(b), info.host + info.size)};
  }
  uint64_t device_of(uintptr_t host) const noexcept { return info.device + (host - info.host); }
};

std::mutex table_mutex;
/// Whether this thread holds table_mutex: a fault while it does comes from
/// Gleam's own code (an allocation whose heap metadata sits in a page of
/// registered app memory) and must not wait for the lock.
thread_local bool holding_table = false;

/// table_mutex, noting in holding_table that this thread has it.
class table_lock {
public:
  table_lock() : lock_(table_mutex) {
    holding_table = true;
  }
  ~table_lock() {
    if (lock_.owns_lock())
      holding_table = false;
  }
  table_lock(const table_lock&) = delete;
  table_lock& operator=(const table_lock&) = delete;
  void unlock() {
    holding_table = false;
    lock_.unlock();
  }
  void lock() {
    lock_.lock();
    holding_table = true;
  }

private:
  std::unique_lock<std::mutex> lock_;
};
/// Mirrors by first host page.
std::map<uintptr_t, mirror> table;
std::atomic<int> active{0};
std::atomic<bool> any_dirty{false};
/// Ops queued that may write device memory, and how many of them the
/// mirrors have caught up with (their invalidation and read-back done):
/// while they differ, an upload sends only the bytes the host changed.
std::atomic<uint64_t> device_writes{0};
std::atomic<uint64_t> writes_seen{0};

/// Whether the device may hold bytes the host has not taken in.
bool device_ahead() noexcept {
  return device_writes.load() != writes_seen.load();
}
/// Set while this thread reads mirrors back (their own round trip).
thread_local bool refreshing = false;
struct sigaction previous_action {};

mirror* containing(uintptr_t a) {
  auto i = table.upper_bound(a);
  if (i == table.begin())
    return nullptr;
  --i;
  return a < i->second.page_addr(i->second.pages) ? &i->second : nullptr;
}

void protect(const mirror& m, size_t a, size_t b, int prot) {
  if (b > a && ::mprotect(reinterpret_cast<void*>(m.page_addr(a)), (b - a) * page_size(), prot)
                   != 0)
    log(log_level::error, "mprotect of a host mirror failed: {}", std::strerror(errno));
}

/// Sets pages [a, b) whose state is `from` to `to` with protection `prot`,
/// a run of consecutive pages at a time.
void transition(mirror& m, size_t a, size_t b, uint8_t from, uint8_t to, int prot) {
  size_t p = a;
  while (p < b) {
    if (m.state[p] != from) {
      ++p;
      continue;
    }
    size_t q = p;
    while (q < b && m.state[q] == from)
      m.state[q++] = to;
    protect(m, p, q, prot);
    p = q;
  }
}

/// Writes fetched bytes (host range [lo, lo + data.size())) into the pages
/// of [a, b) that are still `from`, which become clean. Call with the lock.
void install(mirror& m, size_t a, size_t b, uintptr_t lo, const std::string& data,
             uint8_t from) {
  for (size_t p = a; p < b; ++p) {
    if (m.state[p] != from)
      continue;
    auto [plo, phi] = m.bytes(p, p + 1);
    plo = std::max(plo, lo);
    phi = std::min<uintptr_t>(phi, lo + data.size());
    if (phi <= plo)
      continue;
    std::memcpy(m.twin + (plo - m.begin), data.data() + (plo - lo), phi - plo);
    if (m.shadow != nullptr) {
      std::memcpy(m.shadow + (plo - m.begin), data.data() + (plo - lo), phi - plo);
    } else {
      protect(m, p, p + 1, PROT_READ | PROT_WRITE);
      std::memcpy(reinterpret_cast<void*>(plo), data.data() + (plo - lo), phi - plo);
    }
    m.state[p] = page_clean;
    protect(m, p, p + 1, PROT_READ);
  }
}

/// Takes fetched bytes (host range [lo, lo + data.size())) into the dirty
/// and stale pages of [a, b): a byte the host did not change since the
/// twin takes the device's value, one it changed keeps the host's; the
/// twin becomes the device's bytes, and the page dirty (its upload then
/// sends the host's own changes on top of the device's). Call with the
/// lock.
void merge(mirror& m, size_t a, size_t b, uintptr_t lo, const std::string& data) {
  for (size_t p = a; p < b; ++p) {
    if (m.state[p] != page_stale && m.state[p] != page_dirty)
      continue;
    auto [plo, phi] = m.bytes(p, p + 1);
    plo = std::max(plo, lo);
    phi = std::min<uintptr_t>(phi, lo + data.size());
    auto* host = m.shadow != nullptr ? m.shadow + (plo - m.begin) : reinterpret_cast<char*>(plo);
    auto* twin = m.twin + (plo - m.begin);
    const auto* device = data.data() + (plo - lo);
    for (uintptr_t i = 0; plo + i < phi; ++i) {
      if (host[i] == twin[i])
        host[i] = device[i];
      twin[i] = device[i];
    }
    m.state[p] = page_dirty;
  }
}

/// Reads device bytes [device, device + n) back; false when the server
/// refused. Never call with the lock held.
bool fetch(uint64_t device, size_t n, std::string& out) {
  internal_ops internal;
  std::vector<proto::Op> ops;
  // Every earlier kernel finished, on whatever stream (a capture has none
  // running, and a CtxSynchronize would break it).
  bool sync = !captures().any();
  if (sync)
    ops.emplace_back().mutable_ctx_synchronize();
  for (size_t off = 0; off < n; off += max_message_payload) {
    auto* c = ops.emplace_back().mutable_memcpy_dtoh();
    c->set_src(device + off);
    c->set_size(std::min(max_message_payload, n - off));
    c->set_stream(2); // the per-thread stream: never one the app captures on
  }
  std::vector<proto::OpResult> results;
  auto count = ops.size(); // run_ops takes the ops
  refreshing = true;
  auto err = run_ops(ops, &results);
  refreshing = false;
  if (err != cudaSuccess || results.size() != count)
    return false;
  out.clear();
  for (size_t i = sync ? 1 : 0; i < results.size(); ++i)
    out += results[i].data();
  return out.size() == n;
}

void report_fetch_failure() {
  static std::once_flag once;
  std::call_once(once, [] {
    log(log_level::error, "reading managed or mapped memory back from the server failed, "
                          "or was asked by a graph's host node (which cannot wait for the "
                          "server); the host sees its last copy");
  });
}

/// A fault of this thread while it holds the table (a write to a clean
/// page of registered app memory by the allocator): the page opens for
/// writing, without the lock.
bool handle_own_fault(uintptr_t a) {
  auto* m = containing(a);
  if (m == nullptr)
    return false;
  auto p = (a - m->begin) / page_size();
  if (m->state[p] == page_invalid)
    return false; // Gleam's code never touches a page it has not fetched
  if (m->state[p] == page_clean) {
    m->state[p] = page_dirty;
    any_dirty = true;
    protect(*m, p, p + 1, PROT_READ | PROT_WRITE);
  }
  return true;
}

/// A fault in a mirror page: true when handled (the access is retried).
bool handle_fault(uintptr_t a) {
  if (holding_table)
    return handle_own_fault(a);
  table_lock lock;
  auto* m = containing(a);
  if (m == nullptr)
    return false;
  auto p = (a - m->begin) / page_size();
  if (m->state[p] == page_clean) { // a write
    m->state[p] = page_dirty;
    any_dirty = true;
    protect(*m, p, p + 1, PROT_READ | PROT_WRITE);
    return true;
  }
  if (writable(m->state[p]))
    return true; // opened by another thread meanwhile
  auto window_pages = fetch_window / page_size();
  auto a_page = p / window_pages * window_pages;
  auto b_page = std::min(m->pages, a_page + window_pages);
  auto [lo, hi] = m->bytes(a_page, b_page);
  auto begin = m->begin;
  auto device = m->device_of(lo);
  lock.unlock();
  std::string data;
  // A graph's host node runs while the server's stream waits for it: a
  // round trip from here could wait on that stream for ever.
  bool ok = !in_host_call() && fetch(device, hi - lo, data);
  if (!ok) {
    report_fetch_failure();
    data.reserve(hi - lo); // filled under the lock without allocating
  }
  lock.lock();
  m = containing(a);
  if (m == nullptr || m->begin != begin)
    return true;
  if (!ok) {
    data.assign(hi - lo, '\0');
    if (m->shadow != nullptr) // keep the mirror's own bytes
      data.assign(m->shadow + (lo - m->begin), hi - lo);
  }
  install(*m, a_page, b_page, lo, data, page_invalid);
  return true;
}

void on_fault(int sig, siginfo_t* info, void* context) {
  auto saved = errno;
  bool handled = handle_fault(reinterpret_cast<uintptr_t>(info->si_addr));
  errno = saved;
  if (handled)
    return;
  // Not ours: whatever handled SIGSEGV before us.
  if ((previous_action.sa_flags & SA_SIGINFO) != 0 && previous_action.sa_sigaction != nullptr) {
    previous_action.sa_sigaction(sig, info, context);
    return;
  }
  if (previous_action.sa_handler == SIG_IGN)
    return;
  if (previous_action.sa_handler != SIG_DFL && previous_action.sa_handler != nullptr) {
    previous_action.sa_handler(sig);
    return;
  }
  // The default action: the access faults again and kills the process.
  ::signal(sig, SIG_DFL);
}

void install_handler() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction action {};
    action.sa_sigaction = on_fault;
    action.sa_flags = SA_SIGINFO | SA_NODEFER | SA_RESTART;
    sigemptyset(&action.sa_mask);
    ::sigaction(SIGSEGV, &action, &previous_action);
  });
}

void add(mirror m) {
  install_handler();
  // The table's node is made before the lock: nothing allocates while it is
  // held, so a thread that faulted inside the allocator never waits on one
  // that waits for the allocator.
  std::map<uintptr_t, mirror> node;
  auto begin = m.begin;
  node.emplace(begin, std::move(m));
  table_lock guard;
  table.insert(node.extract(begin));
  ++active;
}

/// Whether an op may write device memory (anything not listed here does).
bool may_write(const proto::Op& op) noexcept {
  using k = proto::Op::KindCase;
  switch (op.kind_case()) {
    case k::kMemAlloc:
    case k::kMemcpyDtoh:
    case k::kMemGetInfo:
    case k::kMemAllocPitch:
    case k::kModuleLoad:
    case k::kFuncSetAttribute:
    case k::kFuncSetCacheConfig:
    case k::kOccupancyMaxActiveBlocks:
    case k::kStreamCreate:
    case k::kStreamDestroy:
    case k::kStreamSynchronize:
    case k::kStreamQuery:
    case k::kStreamWaitEvent:
    case k::kEventCreate:
    case k::kEventDestroy:
    case k::kEventRecord:
    case k::kEventSynchronize:
    case k::kEventQuery:
    case k::kEventElapsedTime:
    case k::kCtxSynchronize:
    case k::kCtxGetLimit:
    case k::kStreamCaptureInfo:
      return false;
    case k::kMemcpy2D:
      return op.memcpy_2d().kind() != proto::Memcpy2D::DTOH;
    default:
      return true;
  }
}

} // namespace

namespace {

/// A twin of `length` bytes (zero; pages are only backed once written).
char* new_twin(size_t length) {
  void* p = ::mmap(nullptr, length, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  return p == MAP_FAILED ? nullptr : static_cast<char*>(p);
}

} // namespace

cudaError_t mirror_map(uint64_t device, size_t size, bool managed, unsigned flags) {
  auto page = page_size();
  if (device % page != 0)
    return cudaErrorMemoryAllocation;
  auto length = (std::max<size_t>(size, 1) + page - 1) / page * page;
  int fd = ::memfd_create("gleam-mirror", MFD_CLOEXEC);
  if (fd < 0)
    return cudaErrorMemoryAllocation;
  if (::ftruncate(fd, static_cast<off_t>(length)) != 0) {
    ::close(fd);
    return cudaErrorMemoryAllocation;
  }
  auto* want = reinterpret_cast<void*>(static_cast<uintptr_t>(device));
  void* view = ::mmap(want, length, PROT_READ, MAP_SHARED | MAP_FIXED_NOREPLACE, fd, 0);
  if (view == MAP_FAILED || view != want) {
    if (view != MAP_FAILED) // a kernel without MAP_FIXED_NOREPLACE put it elsewhere
      ::munmap(view, length);
    ::close(fd);
    return cudaErrorMemoryAllocation;
  }
  void* shadow = ::mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ::close(fd);
  auto* twin = new_twin(length);
  if (shadow == MAP_FAILED || twin == nullptr) {
    ::munmap(view, length);
    if (shadow != MAP_FAILED)
      ::munmap(shadow, length);
    if (twin != nullptr)
      ::munmap(twin, length);
    return cudaErrorMemoryAllocation;
  }
  mirror m;
  m.info = {static_cast<uintptr_t>(device), device, size, mirror_refresh::lazy, managed, flags};
  m.begin = static_cast<uintptr_t>(device);
  m.pages = length / page;
  m.shadow = static_cast<char*>(shadow);
  m.twin = twin;
  // Fresh pages read zero on both sides (the caller zeroes the device's).
  m.state.assign(m.pages, page_clean);
  add(std::move(m));
  return cudaSuccess;
}

cudaError_t mirror_register(uintptr_t host, uint64_t device, size_t size, unsigned flags) {
  auto page = page_size();
  mirror m;
  m.info = {host, device, size, mirror_refresh::eager, false, flags};
  m.begin = host / page * page;
  m.pages = (host + size - m.begin + page - 1) / page;
  m.twin = new_twin(m.pages * page);
  if (m.twin == nullptr)
    return cudaErrorMemoryAllocation;
  m.state.assign(m.pages, page_new);
  add(std::move(m));
  any_dirty = true;
  return cudaSuccess;
}

namespace {

/// Gives the app its view back: unmaps a lazy mirror, opens an eager
/// one's pages. Call with the lock held.
void release_view(mirror& m) {
  auto length = m.pages * page_size();
  ::munmap(m.twin, length);
  if (m.shadow != nullptr) {
    ::munmap(reinterpret_cast<void*>(m.begin), length);
    ::munmap(m.shadow, length);
  } else {
    protect(m, 0, m.pages, PROT_READ | PROT_WRITE);
  }
}

} // namespace

std::optional<mirror_info> mirror_remove(uintptr_t host) {
  std::map<uintptr_t, mirror>::node_type gone;
  table_lock guard;
  auto* m = containing(host);
  if (m == nullptr || m->info.host != host)
    return std::nullopt;
  release_view(*m);
  --active;
  gone = table.extract(m->begin); // destroyed after the lock, like every node
  guard.unlock();
  return gone.mapped().info;
}

std::vector<mirror_info> mirror_clear() {
  std::map<uintptr_t, mirror> gone;
  {
    table_lock guard;
    for (auto& kv : table)
      release_view(kv.second);
    gone.swap(table);
    active = 0;
    any_dirty = false;
    writes_seen = device_writes.load();
  }
  std::vector<mirror_info> out;
  for (const auto& kv : gone)
    out.push_back(kv.second.info);
  return out;
}

std::optional<mirror_info> mirror_at_host(const void* p) {
  if (active == 0)
    return std::nullopt;
  table_lock guard;
  auto a = reinterpret_cast<uintptr_t>(p);
  auto* m = containing(a);
  if (m == nullptr || a < m->info.host || a >= m->info.host + m->info.size)
    return std::nullopt;
  return m->info;
}

std::optional<mirror_info> mirror_at_device(uint64_t p) {
  if (active == 0)
    return std::nullopt;
  table_lock guard;
  for (const auto& kv : table) {
    const auto& i = kv.second.info;
    if (p >= i.device && p < i.device + i.size)
      return i;
  }
  return std::nullopt;
}

bool mirrors_active() noexcept {
  return active.load(std::memory_order_relaxed) != 0;
}

void mirror_note_op(const proto::Op& op) noexcept {
  if (mirrors_active() && !refreshing && may_write(op))
    ++device_writes;
}

bool mirror_next_upload(std::vector<proto::Op>& ops) {
  if (!any_dirty.load())
    return false;
  // Filled under the lock without allocating (see add).
  std::string bytes, before;
  bytes.reserve(max_message_payload);
  before.reserve(max_message_payload);
  table_lock guard;
  auto limit = std::max<size_t>(1, max_message_payload / page_size());
  for (auto& kv : table) {
    auto& m = kv.second;
    size_t next = 0;
    for (;;) {
      auto first = std::find_if(m.state.begin() + static_cast<ptrdiff_t>(next), m.state.end(),
                                writable);
      if (first == m.state.end())
        break;
      auto a = static_cast<size_t>(first - m.state.begin());
      auto state = *first;
      auto b = a;
      while (b < m.pages && b - a < limit && m.state[b] == state)
        ++b;
      next = b;
      // Whole pages while the device holds what the twin says; else only the
      // bytes the host changed.
      bool whole = state == page_new || (state == page_dirty && !device_ahead());
      // Closed before the bytes are read: a write from now on faults again.
      transition(m, a, b, state, page_clean, PROT_READ);
      auto [lo, hi] = m.bytes(a, b);
      auto dst = m.device_of(lo);
      const char* now = m.shadow != nullptr ? m.shadow + (lo - m.begin)
                                            : reinterpret_cast<const char*>(lo);
      bytes.assign(now, hi - lo);
      before.assign(m.twin + (lo - m.begin), hi - lo);
      // A page opened by a write outside the mirror's bytes (the allocator's
      // data next to registered app memory, written by the app's threads or
      // by Gleam's own allocations while it sends) holds nothing new: it
      // stays clean and sends nothing. Returning it as an upload would have
      // the caller send it, re-dirty it, and send it again, for ever.
      if (state != page_new && bytes == before)
        continue;
      std::memcpy(m.twin + (lo - m.begin), bytes.data(), bytes.size());
      guard.unlock();
      auto add_op = [&](size_t from, size_t n) {
        auto* c = ops.emplace_back().mutable_memcpy_htod();
        c->set_dst(dst + from);
        c->set_data(bytes.data() + from, n);
        c->set_stream(2);
        c->set_async(false);
      };
      if (whole) {
        add_op(0, bytes.size());
        return true;
      }
      for (size_t x = 0; x < bytes.size();) {
        if (bytes[x] == before[x]) {
          ++x;
          continue;
        }
        auto y = x;
        while (y < bytes.size() && bytes[y] != before[y])
          ++y;
        add_op(x, y - x);
        x = y;
      }
      return true;
    }
  }
  any_dirty = false;
  return false;
}

void mirror_after_round_trip() {
  if (!mirrors_active() || refreshing)
    return;
  auto writes = device_writes.load();
  if (writes == writes_seen.load())
    return;
  // What to read back: an eager mirror whole; of a lazy one the pages the
  // host is writing (the device may have written other bytes of theirs).
  struct job {
    uintptr_t begin; // the mirror's
    uintptr_t lo;    // host bytes [lo, lo + n)
    uint64_t device;
    size_t n;
  };
  std::vector<job> jobs;
  jobs.reserve(static_cast<size_t>(active.load()) + 64); // no allocation under the lock
  {
    table_lock guard;
    for (auto& kv : table) {
      auto& m = kv.second;
      transition(m, 0, m.pages, page_dirty, page_stale, PROT_READ | PROT_WRITE);
      if (m.info.refresh == mirror_refresh::eager) {
        if (jobs.size() < jobs.capacity())
          jobs.push_back({m.begin, m.info.host, m.info.device, m.info.size});
        continue;
      }
      transition(m, 0, m.pages, page_clean, page_invalid, PROT_NONE);
      for (size_t p = 0; p < m.pages && jobs.size() < jobs.capacity();) {
        if (m.state[p] != page_stale) {
          ++p;
          continue;
        }
        auto q = p;
        while (q < m.pages && m.state[q] == page_stale)
          ++q;
        auto [lo, hi] = m.bytes(p, q);
        jobs.push_back({m.begin, lo, m.device_of(lo), hi - lo});
        p = q;
      }
    }
  }
  // A page left stale (a failed read) still uploads only what the host
  // changed.
  for (const auto& j : jobs) {
    std::string data;
    if (!fetch(j.device, j.n, data)) {
      report_fetch_failure();
      continue;
    }
    table_lock guard;
    auto* m = containing(j.lo);
    if (m == nullptr || m->begin != j.begin)
      continue;
    auto a = (j.lo - m->begin) / page_size();
    auto b = (j.lo + j.n - m->begin + page_size() - 1) / page_size();
    install(*m, a, b, j.lo, data, page_clean);
    merge(*m, a, b, j.lo, data);
  }
  // Caught up with those writes (a later one keeps uploads to diffs).
  auto seen = writes_seen.load();
  while (seen < writes && !writes_seen.compare_exchange_weak(seen, writes)) {
  }
}

} // namespace gleam::interpose
