#include "executor/session_secret.hpp"

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/rand.h>

#include "executor/error.hpp"

namespace gleam::executor {

caf::expected<std::string> make_session_secret() {
  std::string out(session_secret_bytes, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(out.data()), static_cast<int>(out.size()))
      != 1) {
    char reason[256] = "unknown reason";
    if (auto code = ERR_get_error(); code != 0)
      ERR_error_string_n(code, reason, sizeof(reason));
    return make_error(error_code::no_secure_random,
                      std::string{"the server's random generator (OpenSSL RAND_bytes) could "
                                  "not make a session secret: "}
                        + reason + "; check the GPU host's entropy source (getrandom)");
  }
  return out;
}

bool session_secret_matches(std::string_view expected, std::string_view presented) noexcept {
  if (expected.empty() || expected.size() != presented.size())
    return false;
  return CRYPTO_memcmp(expected.data(), presented.data(), expected.size()) == 0;
}

} // namespace gleam::executor
