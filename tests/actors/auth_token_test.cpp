// The gpu_server's OpenSession token check (issue #10 client identity).
#include "actors/gpu_server.hpp"

#include <catch2/catch.hpp>

using gleam::actors::auth_token_matches;

TEST_CASE("a server without a token admits every client", "[actors][auth]") {
  CHECK(auth_token_matches("", ""));
  CHECK(auth_token_matches("", "anything"));
}

TEST_CASE("a server with a token admits only that token", "[actors][auth]") {
  CHECK(auth_token_matches("s3cret", "s3cret"));
  CHECK_FALSE(auth_token_matches("s3cret", ""));
  CHECK_FALSE(auth_token_matches("s3cret", "s3cre"));
  CHECK_FALSE(auth_token_matches("s3cret", "s3cret!"));
  CHECK_FALSE(auth_token_matches("s3cret", "S3cret"));
  CHECK_FALSE(auth_token_matches("s3cret", std::string("s3cret\0", 7)));
}

TEST_CASE("a token names the session's tenant; without tenants the node token decides",
          "[actors][auth][tenant]") {
  using gleam::actors::tenant_of;
  std::vector<std::pair<std::string, std::string>> tenants{{"alice", "a-secret"},
                                                           {"bob", "b-secret"}};
  auto with = [](const std::string& token) {
    gleam::proto::OpenSession req;
    req.set_auth_token(token);
    return req;
  };
  CHECK(*tenant_of("", tenants, with("a-secret")) == "alice");
  CHECK(*tenant_of("", tenants, with("b-secret")) == "bob");
  CHECK(*tenant_of("node", tenants, with("node")) == "");
  CHECK_FALSE(tenant_of("", tenants, with("")));
  CHECK_FALSE(tenant_of("", tenants, with("c-secret")));
  CHECK_FALSE(tenant_of("node", tenants, with("a-secre")));
  auto refused = tenant_of("", tenants, with("wrong"));
  REQUIRE_FALSE(refused);
  CHECK(caf::to_string(refused.error()).find("wrong") != std::string::npos);
  // No tenants: the node's auth-token, as before.
  CHECK(*tenant_of("", {}, with("anything")) == "");
  CHECK(*tenant_of("node", {}, with("node")) == "");
  CHECK_FALSE(tenant_of("node", {}, with("other")));
}
