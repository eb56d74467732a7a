#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <caf/error.hpp>
#include <caf/expected.hpp>

#include "actors/proto/ops.pb.h"

namespace gleam::actors {

/// The tokens a node admits and the tenant each names: its [node]
/// auth-token and [node] tenants. The gpu_server checks a session's token
/// against them, the scheduler a placement request's, with the same
/// `tenant_of`.
struct admission {
  /// [node] auth-token: "" = none. With tenants, the unnamed tenant's token.
  std::string auth_token;
  /// [node] tenants: (name, token) pairs.
  std::vector<std::pair<std::string, std::string>> tenants;
};

/// Whether a presented token `given` admits the client: true when the node
/// has no token (`expected` empty) or `given` equals it. The time taken
/// does not depend on where the strings differ.
[[nodiscard]] bool auth_token_matches(const std::string& expected,
                                      const std::string& given) noexcept;

/// The error OpenSession `req` gets from a server whose token is
/// `expected` (unauthorized, saying whether the token was missing or wrong
/// and what to set), or none when auth_token_matches.
[[nodiscard]] caf::error check_auth_token(const std::string& expected,
                                          const proto::OpenSession& req);

/// The tenant a client presenting `token` belongs to: with tenants, the one
/// whose token it is, else the unnamed tenant "" if it is the auth-token
/// (when set); without tenants, "" when auth_token_matches. Otherwise an
/// `error_code::unauthorized` that names `who` refused ("the GPU server",
/// "the scheduler"), says whether the token was missing or wrong, and what
/// to set. Every tenant's token is compared, so the time does not say which
/// one matched.
[[nodiscard]] caf::expected<std::string> tenant_of(const admission& rules,
                                                   const std::string& token,
                                                   std::string_view who);

/// The tenant whose session OpenSession `req` opens on a GPU server with
/// `auth_token` and `tenants` ((name, token) pairs): `tenant_of` above.
[[nodiscard]] caf::expected<std::string>
tenant_of(const std::string& auth_token,
          const std::vector<std::pair<std::string, std::string>>& tenants,
          const proto::OpenSession& req);

} // namespace gleam::actors
