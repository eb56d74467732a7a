#include "actors/tls_error_guard.hpp"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "actors/basp_guard.hpp"

namespace {

/// OpenSSL's definition of `name`: the next one after ours in the lookup
/// order. The caller got here from a library linked against libssl, so it
/// exists; its absence is a broken invariant.
template <class Fn>
Fn next_definition(const char* name) noexcept {
  auto fn = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
  if (fn == nullptr) {
    std::fprintf(stderr, "gleam: tls_error_guard: %s not found after ours: %s\n", name, dlerror());
    std::abort();
  }
  return fn;
}

} // namespace

// The guards, hidden so that tls_error_guard_active() can tell them from
// whatever SSL_read the process resolves; exported below under OpenSSL's names.
extern "C" {

__attribute__((visibility("hidden"))) int gleam_tls_guarded_read(SSL* ssl, void* buf, int num) {
  using fn_t = int (*)(SSL*, void*, int);
  static const fn_t real = next_definition<fn_t>("SSL_read");
  gleam::actors::note_basp_socket_read(SSL_get_fd(ssl));
  ERR_clear_error();
  return real(ssl, buf, num);
}

__attribute__((visibility("hidden"))) int gleam_tls_guarded_write(SSL* ssl, const void* buf,
                                                                   int num) {
  using fn_t = int (*)(SSL*, const void*, int);
  static const fn_t real = next_definition<fn_t>("SSL_write");
  ERR_clear_error();
  return real(ssl, buf, num);
}

__attribute__((visibility("default"), alias("gleam_tls_guarded_read"))) int
SSL_read(SSL* ssl, void* buf, int num);

__attribute__((visibility("default"), alias("gleam_tls_guarded_write"))) int
SSL_write(SSL* ssl, const void* buf, int num);

} // extern "C"

namespace gleam::actors {

bool tls_error_guard_active() noexcept {
  return dlsym(RTLD_DEFAULT, "SSL_read") == reinterpret_cast<void*>(&gleam_tls_guarded_read);
}

} // namespace gleam::actors
