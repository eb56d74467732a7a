#pragma once

#include <string>

namespace gleam::test {

/// Writes a test CA and a node certificate for 127.0.0.1 signed by it into
/// `dir` with the openssl CLI: ca.pem, node.pem, node.key (valid 2 days;
/// test-only material). Returns false when openssl failed.
bool make_test_certificates(const std::string& dir);

} // namespace gleam::test
