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

TEST_CASE("a cluster proof binds every field of the message to the secret",
          "[actors][auth][cluster]") {
  using namespace gleam;
  const std::string secret = "0123456789abcdef-cluster";
  proto::NodeRegister reg;
  reg.set_node_id("gpuhost-1");
  reg.set_data_host("10.0.0.7");
  reg.set_data_port(4751);
  reg.set_start_time_ns(42);
  actors::sign_for_cluster(secret, reg);
  CHECK(reg.cluster_proof().size() == 32); // HMAC-SHA256
  CHECK(actors::proves_cluster(secret, reg));
  CHECK_FALSE(actors::proves_cluster("another-secret-of-16+", reg));
  // A captured proof vouches for nothing else: not another address...
  auto moved = reg;
  moved.set_data_host("10.0.0.66");
  CHECK_FALSE(actors::proves_cluster(secret, moved));
  // ...nor another node id or start.
  auto renamed = reg;
  renamed.set_node_id("gpuhost-2");
  CHECK_FALSE(actors::proves_cluster(secret, renamed));
  auto missing = reg;
  missing.clear_cluster_proof();
  CHECK_FALSE(actors::proves_cluster(secret, missing));
  // Without a secret nothing is required, and nothing is signed.
  CHECK(actors::proves_cluster("", missing));
  actors::sign_for_cluster("", missing);
  CHECK(missing.cluster_proof().empty());
}

TEST_CASE("admin commands need the admin token where one is set", "[actors][auth]") {
  using gleam::actors::check_admin;
  CHECK_FALSE(check_admin("", "", "drain"));
  CHECK_FALSE(check_admin("adm1n", "adm1n", "drain"));
  auto missing = check_admin("adm1n", "", "drain");
  REQUIRE(missing);
  auto text = caf::to_string(missing);
  CHECK(text.find("drain needs the node's admin token") != std::string::npos);
  CHECK(text.find("missing") != std::string::npos);
  CHECK(text.find("GLEAM_ADMIN_TOKEN") != std::string::npos);
  auto wrong = check_admin("adm1n", "tenant-token", "cache evict");
  REQUIRE(wrong);
  CHECK(caf::to_string(wrong).find("wrong") != std::string::npos);
  CHECK(caf::to_string(wrong).find("adm1n") == std::string::npos);
}
