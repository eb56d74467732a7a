#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <caf/expected.hpp>

namespace gleam::executor {

/// Bytes of a session secret: 256 bits.
constexpr size_t session_secret_bytes = 32;

/// A fresh session secret (SessionOpened.secret): session_secret_bytes
/// from OpenSSL's CSPRNG (RAND_bytes, seeded from the kernel's
/// getrandom(2)). Error no_secure_random when the generator cannot deliver:
/// the session is then refused, never handed a weak secret. Thread-safe.
[[nodiscard]] caf::expected<std::string> make_session_secret();

/// Whether `presented` is the secret `expected`. False when `expected` is
/// empty (nothing to match) or the sizes differ; otherwise the time taken
/// does not depend on the bytes (CRYPTO_memcmp). Thread-safe.
[[nodiscard]] bool session_secret_matches(std::string_view expected,
                                          std::string_view presented) noexcept;

} // namespace gleam::executor
