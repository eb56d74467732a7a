#include "tools/link_emulator/selftest.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <thread>
#include <vector>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tools/link_emulator/error.hpp"
#include "tools/link_emulator/link_emulator.hpp"
#include "tools/link_emulator/shaper.hpp"

namespace gleam::tools::link_emulator {

namespace {

using std::chrono::duration;
using std::chrono::nanoseconds;

int connect_loopback(uint16_t port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return -1;
  int one = 1;
  (void) setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

bool write_all(int fd, const char* p, size_t n) {
  while (n > 0) {
    ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0)
      return false;
    p += k;
    n -= static_cast<size_t>(k);
  }
  return true;
}

bool read_all(int fd, char* p, size_t n) {
  while (n > 0) {
    ssize_t k = read(fd, p, n);
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0)
      return false;
    p += k;
    n -= static_cast<size_t>(k);
  }
  return true;
}

/// Receives until EOF and returns the rate in bits/s after `warmup`.
double receive_rate(int fd, nanoseconds warmup) {
  std::vector<char> buf(1 << 20);
  uint64_t total = 0;
  uint64_t at_warm = 0;
  time_point first{};
  time_point warm{};
  time_point last{};
  bool started = false;
  bool warmed = false;
  for (;;) {
    ssize_t k = read(fd, buf.data(), buf.size());
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0)
      break;
    auto now = clock_type::now();
    if (!started) {
      started = true;
      first = now;
    }
    if (!warmed && now - first >= warmup) {
      warmed = true;
      warm = now;
      at_warm = total;
    }
    total += static_cast<uint64_t>(k);
    last = now;
  }
  if (!warmed || last <= warm)
    return 0;
  return static_cast<double>(total - at_warm) * 8 / duration<double>(last - warm).count();
}

/// The far end: 'E' echo, 'S' sink (replies its receive rate as a double),
/// 'G' + 8-byte duration in ns: send as fast as possible, then close.
class test_server {
public:
  explicit test_server(nanoseconds warmup) : warmup_(warmup) {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    (void) setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0 && listen(fd_, 16) == 0) {
      socklen_t len = sizeof(a);
      getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
      port_ = ntohs(a.sin_port);
    }
    thread_ = std::thread([this] { accept_loop(); });
  }

  ~test_server() {
    stopping_ = true;
    shutdown(fd_, SHUT_RDWR);
    close(fd_);
    thread_.join();
    for (auto& t : workers_)
      t.join();
  }

  uint16_t port() const {
    return port_;
  }

private:
  void accept_loop() {
    while (!stopping_) {
      int c = accept(fd_, nullptr, nullptr);
      if (c < 0)
        return;
      workers_.emplace_back([this, c] { serve(c); });
    }
  }

  void serve(int c) {
    int one = 1;
    (void) setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    char mode = 0;
    if (!read_all(c, &mode, 1)) {
      close(c);
      return;
    }
    if (mode == 'E') {
      char buf[65536];
      for (;;) {
        ssize_t k = read(c, buf, sizeof(buf));
        if (k <= 0 || !write_all(c, buf, static_cast<size_t>(k)))
          break;
      }
    } else if (mode == 'S') {
      double rate = receive_rate(c, warmup_);
      (void) write_all(c, reinterpret_cast<const char*>(&rate), sizeof(rate));
    } else if (mode == 'G') {
      int64_t ns = 0;
      if (read_all(c, reinterpret_cast<char*>(&ns), sizeof(ns))) {
        std::vector<char> buf(1 << 20, 'g');
        auto end = clock_type::now() + nanoseconds{ns};
        while (clock_type::now() < end && write_all(c, buf.data(), buf.size()))
          ;
      }
    }
    close(c);
  }

  int fd_ = -1;
  uint16_t port_ = 0;
  nanoseconds warmup_;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
  std::vector<std::thread> workers_;
};

caf::error fail(const std::string& what) {
  return make_error(error_code::selftest_failed,
                    "link selftest failed: " + what
                      + ": check that loopback TCP works and ports are free");
}

caf::expected<std::vector<double>> ping(uint16_t port, int count) {
  int fd = connect_loopback(port);
  if (fd < 0)
    return fail("cannot connect to 127.0.0.1:" + std::to_string(port));
  std::vector<double> out;
  char mode = 'E';
  char msg[64];
  std::memset(msg, 'p', sizeof(msg));
  bool ok = write_all(fd, &mode, 1);
  for (int i = 0; ok && i < count; ++i) {
    auto t0 = clock_type::now();
    ok = write_all(fd, msg, sizeof(msg)) && read_all(fd, msg, sizeof(msg));
    out.push_back(duration<double, std::micro>(clock_type::now() - t0).count() / 2);
  }
  close(fd);
  if (!ok)
    return fail("ping connection closed early");
  return out;
}

double percentile(std::vector<double> v, double q) {
  if (v.empty())
    return 0;
  std::sort(v.begin(), v.end());
  auto idx = static_cast<size_t>(q * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(idx, v.size() - 1)];
}

double cpu_percent(uint64_t cpu_ns, nanoseconds wall) {
  if (wall.count() <= 0)
    return 0;
  return 100.0 * static_cast<double>(cpu_ns) / static_cast<double>(wall.count());
}

} // namespace

caf::expected<selftest_result> run_selftest(const link_spec& spec,
                                            const selftest_options& opts) {
  test_server server(opts.warmup);
  if (server.port() == 0)
    return fail("cannot listen on 127.0.0.1");
  emulator_config cfg;
  cfg.target_port = server.port();
  cfg.link = spec;
  cfg.spin = opts.spin;
  auto em = link_emulator::create(cfg);
  if (!em)
    return em.error();
  (*em)->start();
  selftest_result r;
  r.configured_up_bps = static_cast<double>(spec.up.rate_bps);
  r.configured_down_bps = static_cast<double>(spec.down.rate_bps);
  r.configured_delay_us =
    duration<double, std::micro>(spec.up.delay + spec.down.delay).count() / 2;
  uint16_t port = (*em)->port();

  auto bulk_start = clock_type::now();
  auto cpu0 = (*em)->stats().cpu_ns;
  if (opts.bulk) {
    {
      int fd = connect_loopback(port);
      if (fd < 0)
        return fail("cannot connect to the emulator");
      char mode = 'S';
      std::vector<char> buf(1 << 20, 's');
      bool ok = write_all(fd, &mode, 1);
      auto end = clock_type::now() + opts.bulk_duration;
      while (ok && clock_type::now() < end)
        ok = write_all(fd, buf.data(), buf.size());
      shutdown(fd, SHUT_WR);
      ok = ok && read_all(fd, reinterpret_cast<char*>(&r.up_bps), sizeof(r.up_bps));
      close(fd);
      if (!ok)
        return fail("upstream bulk transfer broke off");
    }
    {
      int fd = connect_loopback(port);
      if (fd < 0)
        return fail("cannot connect to the emulator");
      char hdr[9];
      hdr[0] = 'G';
      int64_t ns = opts.bulk_duration.count();
      std::memcpy(hdr + 1, &ns, sizeof(ns));
      bool ok = write_all(fd, hdr, sizeof(hdr));
      if (ok)
        r.down_bps = receive_rate(fd, opts.warmup);
      close(fd);
      if (!ok)
        return fail("downstream bulk transfer broke off");
    }
  }
  auto cpu1 = (*em)->stats().cpu_ns;
  auto ping_start = clock_type::now();
  r.bulk_cpu_percent = cpu_percent(cpu1 - cpu0, ping_start - bulk_start);
  auto through = ping(port, opts.pings);
  if (!through)
    return through.error();
  auto cpu2 = (*em)->stats().cpu_ns;
  r.ping_cpu_percent = cpu_percent(cpu2 - cpu1, clock_type::now() - ping_start);
  auto direct = ping(server.port(), std::min(opts.pings, 200));
  if (!direct)
    return direct.error();
  r.delay_median_us = percentile(*through, 0.5);
  r.delay_p99_us = percentile(*through, 0.99);
  r.direct_median_us = percentile(*direct, 0.5);
  (*em)->stop();
  return r;
}

std::string to_string(const selftest_result& r) {
  char buf[1024];
  auto rate_line = [](const char* dir, double want, double got) {
    char line[256];
    if (want > 0)
      std::snprintf(line, sizeof(line), "%s rate: %.1f Mbit/s of %.1f Mbit/s (%+.2f%%)\n",
                    dir, got / 1e6, want / 1e6, (got - want) / want * 100);
    else
      std::snprintf(line, sizeof(line), "%s rate: %.1f Mbit/s (unlimited)\n", dir,
                    got / 1e6);
    return std::string(line);
  };
  std::string out = rate_line("up  ", r.configured_up_bps, r.up_bps)
                    + rate_line("down", r.configured_down_bps, r.down_bps);
  std::snprintf(buf, sizeof(buf),
                "one-way delay (RTT/2 of 64 B pings): median %.1f us, p99 %.1f us, "
                "configured %.1f us (median error %+.1f us; %+.1f us net of the "
                "%.1f us direct loopback RTT/2)\n"
                "emulator CPU: %.0f%% of one core during bulk, %.0f%% during pings\n",
                r.delay_median_us, r.delay_p99_us, r.configured_delay_us,
                r.delay_median_us - r.configured_delay_us,
                r.delay_median_us - r.configured_delay_us - r.direct_median_us,
                r.direct_median_us, r.bulk_cpu_percent, r.ping_cpu_percent);
  return out + buf;
}

} // namespace gleam::tools::link_emulator
