// Blocking loopback helpers for the link emulator tests: servers on
// 127.0.0.1 that echo, sink or send, and client socket helpers.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace gleam::test {

inline int connect_to(uint16_t port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
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

inline bool send_all(int fd, const void* data, size_t n) {
  auto* p = static_cast<const char*>(data);
  while (n > 0) {
    ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
    if (k <= 0)
      return false;
    p += k;
    n -= static_cast<size_t>(k);
  }
  return true;
}

inline bool recv_all(int fd, void* data, size_t n) {
  auto* p = static_cast<char*>(data);
  while (n > 0) {
    ssize_t k = recv(fd, p, n, 0);
    if (k <= 0)
      return false;
    p += k;
    n -= static_cast<size_t>(k);
  }
  return true;
}

/// Bytes readable on `fd` within `ms` milliseconds: >0 data, 0 EOF or
/// reset, -1 nothing arrived.
inline int wait_readable(int fd, int ms) {
  pollfd p{fd, POLLIN, 0};
  if (poll(&p, 1, ms) <= 0)
    return -1;
  char c;
  ssize_t k = recv(fd, &c, 1, MSG_PEEK);
  return k > 0 ? 1 : 0;
}

/// A TCP server on 127.0.0.1 running `serve(fd)` on a thread per client.
class loopback_server {
public:
  explicit loopback_server(std::function<void(int)> serve) : serve_(std::move(serve)) {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a));
    listen(fd_, 16);
    socklen_t len = sizeof(a);
    getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] {
      for (;;) {
        int c = accept(fd_, nullptr, nullptr);
        if (c < 0)
          return;
        int one = 1;
        setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        std::lock_guard<std::mutex> guard(mtx_);
        workers_.emplace_back([this, c] {
          serve_(c);
          close(c);
        });
      }
    });
  }

  ~loopback_server() {
    shutdown(fd_, SHUT_RDWR);
    close(fd_);
    thread_.join();
    std::lock_guard<std::mutex> guard(mtx_);
    for (auto& t : workers_)
      t.join();
  }

  uint16_t port() const {
    return port_;
  }

private:
  std::function<void(int)> serve_;
  int fd_ = -1;
  uint16_t port_ = 0;
  std::thread thread_;
  std::mutex mtx_;
  std::vector<std::thread> workers_;
};

/// Echoes everything until EOF.
inline void echo(int fd) {
  char buf[65536];
  for (;;) {
    ssize_t k = recv(fd, buf, sizeof(buf), 0);
    if (k <= 0 || !send_all(fd, buf, static_cast<size_t>(k)))
      return;
  }
}

} // namespace gleam::test
