#include "tests/support/tls_material.hpp"

#include "tests/support/gpu_probe.hpp"

namespace gleam::test {

bool make_test_certificates(const std::string& dir) {
  std::string out;
  auto step = [&](const std::string& command) {
    return run_command("cd " + dir + " && " + command + " 2>&1", out) == 0;
  };
  return step("openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=gleam-test-ca"
              " -keyout ca.key -out ca.pem")
         && step("openssl req -newkey rsa:2048 -nodes -subj /CN=127.0.0.1"
                 " -keyout node.key -out node.csr")
         && step("printf 'subjectAltName=IP:127.0.0.1\\n' > ext.cnf && openssl x509 -req"
                 " -in node.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2"
                 " -extfile ext.cnf -out node.pem");
}

} // namespace gleam::test
