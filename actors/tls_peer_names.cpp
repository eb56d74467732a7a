#include "actors/tls_peer_names.hpp"

#include <arpa/inet.h>
#include <dlfcn.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>

#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>

#include "actors/log.hpp"

namespace {

std::mutex names_mutex;

/// "address port" -> the host name a connection there must present.
std::map<std::string, std::string>& expected() {
  static auto* names = new std::map<std::string, std::string>; // outlives static destruction
  return *names;
}

std::string key_of(const sockaddr* addr) {
  char text[INET6_ADDRSTRLEN] = {};
  uint16_t port = 0;
  if (addr->sa_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(addr);
    inet_ntop(AF_INET, &in->sin_addr, text, sizeof text);
    port = ntohs(in->sin_port);
  } else if (addr->sa_family == AF_INET6) {
    const auto* in = reinterpret_cast<const sockaddr_in6*>(addr);
    inet_ntop(AF_INET6, &in->sin6_addr, text, sizeof text);
    port = ntohs(in->sin6_port);
  } else {
    return {};
  }
  return std::string{text} + " " + std::to_string(port);
}

bool is_ip_literal(const std::string& host) {
  unsigned char buf[sizeof(in6_addr)];
  return inet_pton(AF_INET, host.c_str(), buf) == 1 || inet_pton(AF_INET6, host.c_str(), buf) == 1;
}

/// The name the peer of `ssl`'s socket must present; empty when none was
/// recorded (a connection Gleam did not open through remote_actor).
std::string name_for(SSL* ssl) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  if (getpeername(SSL_get_fd(ssl), reinterpret_cast<sockaddr*>(&addr), &len) != 0)
    return {};
  auto key = key_of(reinterpret_cast<const sockaddr*>(&addr));
  std::lock_guard<std::mutex> guard{names_mutex};
  auto i = expected().find(key);
  return i != expected().end() ? i->second : std::string{};
}

} // namespace

extern "C" {

__attribute__((visibility("hidden"))) int gleam_tls_checked_connect(SSL* ssl) {
  using fn_t = int (*)(SSL*);
  static const auto real = reinterpret_cast<fn_t>(dlsym(RTLD_NEXT, "SSL_connect"));
  if (real == nullptr) {
    std::fprintf(stderr, "gleam: tls_peer_names: SSL_connect not found after ours\n");
    std::abort();
  }
  auto name = name_for(ssl);
  if (!name.empty()) {
    auto* param = SSL_get0_param(ssl);
    if (is_ip_literal(name))
      X509_VERIFY_PARAM_set1_ip_asc(param, name.c_str());
    else
      X509_VERIFY_PARAM_set1_host(param, name.c_str(), 0);
  }
  int rc = real(ssl);
  if (rc <= 0 && !name.empty()) {
    auto verdict = SSL_get_verify_result(ssl);
    if (verdict == X509_V_ERR_HOSTNAME_MISMATCH || verdict == X509_V_ERR_IP_ADDRESS_MISMATCH)
      gleam::actors::log(gleam::actors::log_level::error,
                         "TLS: the certificate of the server at '{}' does not name it ({}); "
                         "refusing the connection",
                         name, X509_verify_cert_error_string(verdict));
  }
  return rc;
}

__attribute__((visibility("default"), alias("gleam_tls_checked_connect"))) int
SSL_connect(SSL* ssl);

} // extern "C"

namespace gleam::actors {

void expect_peer_name(const std::string& host, uint16_t port) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found) != 0)
    return; // the connect fails on its own
  std::lock_guard<std::mutex> guard{names_mutex};
  for (auto* a = found; a != nullptr; a = a->ai_next)
    if (auto key = key_of(a->ai_addr); !key.empty())
      expected()[key] = host;
  freeaddrinfo(found);
}

} // namespace gleam::actors
