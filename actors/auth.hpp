#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <caf/error.hpp>
#include <caf/expected.hpp>
#include <google/protobuf/message.h>

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
  /// [node] admin-token: what the console's mutating commands (drain,
  /// cache evict) and key listings present; "" = not required.
  std::string admin_token;
  /// [node] cluster-secret: shared by the cluster's nodes; registrations,
  /// heartbeats and peer cache reads carry a proof of it; "" = not required.
  std::string cluster_secret;
};

/// HMAC-SHA256 under `secret` of `msg` serialized deterministically: the
/// proof a node attaches to a registration, heartbeat or peer request (the
/// message's own proof field empty while it is computed). Binds every field,
/// so a captured proof cannot vouch for another address or telemetry.
[[nodiscard]] std::string cluster_proof(const std::string& secret,
                                        const google::protobuf::Message& msg);

/// Whether `proof` is cluster_proof(secret, msg), compared in constant
/// time; true when `secret` is empty (the cluster does not require one).
[[nodiscard]] bool cluster_proof_matches(const std::string& secret,
                                         const google::protobuf::Message& msg,
                                         const std::string& proof);

/// Sets `msg`'s cluster_proof field (NodeRegister, Heartbeat, OpBatch) to
/// its proof under `secret`; leaves it empty when there is no secret.
template <class Msg>
void sign_for_cluster(const std::string& secret, Msg& msg) {
  msg.clear_cluster_proof();
  if (!secret.empty())
    msg.set_cluster_proof(cluster_proof(secret, msg));
}

/// Whether `msg`'s cluster_proof field proves `secret` (true without one).
template <class Msg>
[[nodiscard]] bool proves_cluster(const std::string& secret, Msg msg) {
  if (secret.empty())
    return true;
  std::string proof = msg.cluster_proof();
  msg.clear_cluster_proof();
  return cluster_proof_matches(secret, msg, proof);
}

/// None when the admin token `given` admits `what` (an admin command) on a
/// node whose [node] admin-token is `expected` (none required when empty);
/// else error_code::unauthorized saying whether it was missing or wrong and
/// how to pass it (gleam-console --token, GLEAM_ADMIN_TOKEN).
[[nodiscard]] caf::error check_admin(const std::string& expected, const std::string& given,
                                     std::string_view what);

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
