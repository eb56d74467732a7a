#include "actors/auth.hpp"

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
  return tenant_of(admission{auth_token, tenants}, req.auth_token(), "the GPU server");
}

} // namespace gleam::actors
