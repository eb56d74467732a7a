#include "actors/auth.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include "actors/error.hpp"

namespace gleam::actors {

bool auth_token_matches(const std::string& expected, const std::string& given) noexcept {
  if (expected.empty())
    return true;
  unsigned char diff = expected.size() == given.size() ? 0 : 1;
  for (size_t i = 0; i < expected.size(); ++i)
    diff |= static_cast<unsigned char>(expected[i] ^ (i < given.size() ? given[i] : 0));
  return diff == 0;
}

std::string cluster_proof(const std::string& secret, const google::protobuf::Message& msg) {
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream stream{&bytes};
    google::protobuf::io::CodedOutputStream coded{&stream};
    coded.SetSerializationDeterministic(true);
    msg.SerializeToCodedStream(&coded);
  }
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
       reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), mac, &len);
  return std::string(reinterpret_cast<const char*>(mac), len);
}

bool cluster_proof_matches(const std::string& secret, const google::protobuf::Message& msg,
                           const std::string& proof) {
  if (secret.empty())
    return true;
  auto expected = cluster_proof(secret, msg);
  return proof.size() == expected.size()
         && CRYPTO_memcmp(proof.data(), expected.data(), expected.size()) == 0;
}

caf::error check_admin(const std::string& expected, const std::string& given,
                       std::string_view what) {
  if (auth_token_matches(expected, given))
    return {};
  return make_error(error_code::unauthorized,
                    std::string{what} + " needs the node's admin token and the one presented is "
                      + (given.empty() ? "missing" : "wrong")
                      + ": pass gleam-console --token TOKEN or set GLEAM_ADMIN_TOKEN to the "
                        "[node] admin-token");
}

caf::error check_auth_token(const std::string& expected, const proto::OpenSession& req) {
  if (auth_token_matches(expected, req.auth_token()))
    return {};
  return make_error(error_code::unauthorized,
                    std::string{"the GPU server requires an auth token and the one presented is "}
                      + (req.auth_token().empty() ? "missing" : "wrong")
                      + ": set GLEAM_TOKEN (or [client] auth-token) to the server's [node] "
                        "auth-token");
}

caf::expected<std::string> tenant_of(const admission& rules, const std::string& token,
                                     std::string_view who) {
  auto missing_or_wrong = token.empty() ? "missing" : "wrong";
  if (rules.tenants.empty()) {
    if (auth_token_matches(rules.auth_token, token))
      return std::string{};
    return make_error(error_code::unauthorized,
                      std::string{who} + " requires an auth token and the one presented is "
                        + missing_or_wrong
                        + ": set GLEAM_TOKEN (or [client] auth-token) to the node's [node] "
                          "auth-token");
  }
  // Every token is compared, so the time does not say which one matched.
  const std::string* found = nullptr;
  for (const auto& [name, tenant_token] : rules.tenants)
    if (auth_token_matches(tenant_token, token) && found == nullptr)
      found = &name;
  if (found != nullptr)
    return *found;
  if (!rules.auth_token.empty() && auth_token_matches(rules.auth_token, token))
    return std::string{};
  return make_error(error_code::unauthorized,
                    std::string{who} + " admits its tenants only and the token presented is "
                      + missing_or_wrong
                      + ": set GLEAM_TOKEN (or [client] auth-token) to your tenant's token");
}

caf::expected<std::string>
tenant_of(const std::string& auth_token,
          const std::vector<std::pair<std::string, std::string>>& tenants,
          const proto::OpenSession& req) {
  return tenant_of(admission{auth_token, tenants, {}, {}}, req.auth_token(), "the GPU server");
}

} // namespace gleam::actors
