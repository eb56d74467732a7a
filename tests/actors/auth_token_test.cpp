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
