#include "actors/listener_guard.hpp"

#include <dlfcn.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>

#include "actors/basp_guard.hpp"
#include "actors/log.hpp"

namespace {

using clock = std::chrono::steady_clock;

/// libc's definition of `name`: the next one after ours.
template <class Fn>
Fn next_definition(const char* name) noexcept {
  auto fn = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
  if (fn == nullptr) {
    std::fprintf(stderr, "gleam: listener_guard: %s not found after ours: %s\n", name,
                 dlerror());
    std::abort();
  }
  return fn;
}

/// An accepted connection whose peer has not spoken BASP yet. The socket's
/// inode tells it from a later socket that reuses the descriptor.
struct pending_connection {
  ino_t inode = 0;
  dev_t device = 0;
  clock::time_point accepted;
  std::string host;
};

struct guard_state {
  std::mutex mutex;
  gleam::actors::listener_limits limits;
  std::unordered_map<int, pending_connection> pending;
  /// Every accepted connection still open (pending ones included); an entry
  /// whose descriptor now names another socket was closed.
  std::unordered_map<int, pending_connection> open;
  uint64_t refused = 0;
  uint64_t timed_out = 0;
  bool sweeping = false;
};

std::atomic<bool> enabled{false};

guard_state& state() {
  static auto* s = new guard_state; // outlives static destruction
  return *s;
}

/// The peer's address without its port: the unit of max_pending_per_host.
std::string peer_host(int fd) {
  sockaddr_storage addr{};
  socklen_t len = sizeof(addr);
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0)
    return {};
  if (addr.ss_family == AF_INET) {
    const auto& a = reinterpret_cast<const sockaddr_in&>(addr).sin_addr;
    return std::string(reinterpret_cast<const char*>(&a), sizeof(a));
  }
  if (addr.ss_family == AF_INET6) {
    const auto& a = reinterpret_cast<const sockaddr_in6&>(addr).sin6_addr;
    return std::string(reinterpret_cast<const char*>(&a), sizeof(a));
  }
  return {};
}

bool same_socket(int fd, const pending_connection& c) {
  struct stat st{};
  return fstat(fd, &st) == 0 && st.st_ino == c.inode && st.st_dev == c.device;
}

/// A peer sent a header past the handshake: its connection is CAF's now.
void on_header(int fd, uint8_t operation) noexcept {
  if (fd < 0 || operation <= 1)
    return;
  auto& s = state();
  std::lock_guard<std::mutex> guard{s.mutex};
  s.pending.erase(fd);
}

/// Shuts down the connections pending past the deadline, forgets closed
/// ones. Runs on its own thread for the life of the process.
void sweep() {
  auto& s = state();
  for (;;) {
    std::this_thread::sleep_for(std::chrono::milliseconds{100});
    uint64_t shut = 0;
    {
      std::lock_guard<std::mutex> guard{s.mutex};
      auto now = clock::now();
      for (auto i = s.pending.begin(); i != s.pending.end();) {
        if (!same_socket(i->first, i->second)) {
          i = s.pending.erase(i);
        } else if (now - i->second.accepted >= s.limits.handshake_timeout) {
          // CAF's next read of the socket sees the end and closes it.
          shutdown(i->first, SHUT_RDWR);
          ++shut;
          i = s.pending.erase(i);
        } else {
          ++i;
        }
      }
      s.timed_out += shut;
    }
    if (shut > 0)
      gleam::actors::log(gleam::actors::log_level::warning,
                         "closed {} connection(s) whose peer sent no message within {} ms "
                         "of connecting",
                         shut, s.limits.handshake_timeout.count());
  }
}

/// Records an accepted connection, or refuses it (closes it, and returns
/// false) while too many are pending.
bool admit(int fd) {
  struct stat st{};
  if (fstat(fd, &st) != 0)
    return true;
  auto host = peer_host(fd);
  auto& s = state();
  std::lock_guard<std::mutex> guard{s.mutex};
  s.pending.erase(fd); // a descriptor reused after CAF closed it
  s.open.erase(fd);
  size_t from_host = 0;
  for (const auto& [other, c] : s.pending)
    from_host += c.host == host ? 1 : 0;
  size_t open_from_host = 0;
  for (auto i = s.open.begin(); i != s.open.end();) {
    if (!same_socket(i->first, i->second)) {
      i = s.open.erase(i);
      continue;
    }
    open_from_host += i->second.host == host ? 1 : 0;
    ++i;
  }
  if (s.pending.size() >= s.limits.max_pending || from_host >= s.limits.max_pending_per_host) {
    if (s.refused++ % 1000 == 0)
      gleam::actors::log(gleam::actors::log_level::warning,
                         "refused a connection: {} connections ({} from its address) have "
                         "not sent a message yet; {} refused so far",
                         s.pending.size(), from_host, s.refused);
    return false;
  }
  if (s.open.size() >= s.limits.max_open || open_from_host >= s.limits.max_open_per_host) {
    if (s.refused++ % 1000 == 0)
      gleam::actors::log(gleam::actors::log_level::warning,
                         "refused a connection: {} connections are open ({} from its "
                         "address); {} refused so far",
                         s.open.size(), open_from_host, s.refused);
    return false;
  }
  pending_connection c{st.st_ino, st.st_dev, clock::now(), host};
  s.pending.emplace(fd, c);
  s.open.emplace(fd, std::move(c));
  return true;
}

int guarded(int fd) {
  if (fd < 0 || !enabled.load(std::memory_order_acquire))
    return fd;
  if (admit(fd))
    return fd;
  close(fd);
  errno = EAGAIN; // CAF takes it for "no connection after all"
  return -1;
}

} // namespace

// The guards, hidden so that listener_guard_active() can tell them from
// whatever the process resolves; exported below under libc's names.
extern "C" {

__attribute__((visibility("hidden"))) int gleam_guarded_accept(int fd, sockaddr* addr,
                                                              socklen_t* len) {
  using fn_t = int (*)(int, sockaddr*, socklen_t*);
  static const fn_t real = next_definition<fn_t>("accept");
  return guarded(real(fd, addr, len));
}

__attribute__((visibility("hidden"))) int gleam_guarded_accept4(int fd, sockaddr* addr,
                                                               socklen_t* len, int flags) {
  using fn_t = int (*)(int, sockaddr*, socklen_t*, int);
  static const fn_t real = next_definition<fn_t>("accept4");
  return guarded(real(fd, addr, len, flags));
}

__attribute__((visibility("hidden"))) ssize_t gleam_guarded_recv(int fd, void* buf, size_t n,
                                                                int flags) {
  using fn_t = ssize_t (*)(int, void*, size_t, int);
  static const fn_t real = next_definition<fn_t>("recv");
  gleam::actors::note_basp_socket_read(fd);
  return real(fd, buf, n, flags);
}

__attribute__((visibility("default"), alias("gleam_guarded_accept"))) int
accept(int fd, sockaddr* addr, socklen_t* len);
__attribute__((visibility("default"), alias("gleam_guarded_accept4"))) int
accept4(int fd, sockaddr* addr, socklen_t* len, int flags);
__attribute__((visibility("default"), alias("gleam_guarded_recv"))) ssize_t
recv(int fd, void* buf, size_t n, int flags);

} // extern "C"

namespace gleam::actors {

void guard_listeners(const listener_limits& limits) {
  auto& s = state();
  {
    std::lock_guard<std::mutex> guard{s.mutex};
    s.limits = limits;
    if (!s.sweeping) {
      s.sweeping = true;
      std::thread{sweep}.detach();
    }
  }
  observe_basp_headers(&on_header);
  enabled.store(true, std::memory_order_release);
}

void unguard_listeners() noexcept {
  enabled.store(false, std::memory_order_release);
  observe_basp_headers(nullptr);
  auto& s = state();
  std::lock_guard<std::mutex> guard{s.mutex};
  s.pending.clear();
  s.open.clear();
}

listener_guard_stats listener_stats() noexcept {
  auto& s = state();
  std::lock_guard<std::mutex> guard{s.mutex};
  size_t open = 0;
  for (const auto& [fd, c] : s.open)
    open += same_socket(fd, c) ? 1 : 0;
  return {s.refused, s.timed_out, s.pending.size(), open};
}

bool listener_guard_active() noexcept {
  return dlsym(RTLD_DEFAULT, "accept") == reinterpret_cast<void*>(&gleam_guarded_accept);
}

} // namespace gleam::actors
