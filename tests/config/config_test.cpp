#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>

#include <unistd.h>
#include <map>
#include <string>

#include "config/client_config.hpp"
#include "config/config_file.hpp"
#include "config/error.hpp"
#include "config/node_config.hpp"

using namespace gleam::config;

namespace {

std::string error_text(const caf::error& err) {
  return describe(err);
}

uint8_t code_of(const caf::error& err) {
  return err.code();
}

} // namespace

TEST_CASE("a complete node config parses with every value", "[config]") {
  auto cfg = parse_node_config(R"(
# a GPU host
[node]
id = "gpu-1"
roles = ["gpu_server", "cache_shard"]
port = 4800
advertise = "10.0.0.7"
scheduler = "10.0.0.5:4750"
heartbeat-interval = 250ms
down-after = 1.5s
threads = 4

[gpu_server]
devices = [0, 1]
session-grace = 1min

[cache]
dir = "/var/lib/gleam"   ; trailing comment
disk-capacity = 100GiB
host-capacity = 512MiB
)",
                               "gpu.conf");
  REQUIRE(cfg);
  CHECK(cfg->node_id == "gpu-1");
  CHECK_FALSE(cfg->scheduler);
  CHECK(cfg->gpu_server);
  CHECK(cfg->cache_shard);
  CHECK(cfg->port == 4800);
  CHECK(cfg->advertise_host == "10.0.0.7");
  CHECK(cfg->scheduler_host == "10.0.0.5");
  CHECK(cfg->scheduler_port == 4750);
  CHECK(cfg->heartbeat_interval == std::chrono::milliseconds{250});
  CHECK(cfg->down_after == std::chrono::milliseconds{1500});
  CHECK(cfg->threads == 4);
  CHECK(cfg->devices == std::vector<int>{0, 1});
  CHECK(cfg->session_grace == std::chrono::milliseconds{60000});
  CHECK(cfg->cache_dir == "/var/lib/gleam");
  CHECK(cfg->cache_disk_bytes == 100ull << 30);
  CHECK(cfg->cache_host_bytes == 512ull << 20);
}

TEST_CASE("roles = all enables every role and the node is its own scheduler", "[config]") {
  auto cfg = parse_node_config("[node]\nroles = [\"all\"]\nport = 4999\n[cache]\ndir = \"/tmp/c\"\n",
                               "a.conf");
  REQUIRE(cfg);
  CHECK(cfg->scheduler);
  CHECK(cfg->gpu_server);
  CHECK(cfg->cache_shard);
  CHECK(cfg->scheduler_host == "127.0.0.1");
  CHECK(cfg->scheduler_port == 4999);
  CHECK(cfg->devices.empty());
}

TEST_CASE("config errors name the file, the key and the problem", "[config]") {
  SECTION("missing roles") {
    auto cfg = parse_node_config("[node]\nid = \"x\"\n", "n.conf");
    REQUIRE_FALSE(cfg);
    CHECK(code_of(cfg.error()) == static_cast<uint8_t>(error_code::missing_key));
    CHECK_THAT(error_text(cfg.error()), Catch::Contains("n.conf") && Catch::Contains("node.roles"));
  }
  SECTION("misspelt key, with its line and the accepted keys") {
    auto cfg = parse_node_config("[node]\nroles = [\"scheduler\"]\nprot = 4750\n", "n.conf");
    REQUIRE_FALSE(cfg);
    CHECK(code_of(cfg.error()) == static_cast<uint8_t>(error_code::unknown_key));
    CHECK_THAT(error_text(cfg.error()), Catch::Contains("n.conf:3")
                                          && Catch::Contains("node.prot")
                                          && Catch::Contains("port"));
  }
  SECTION("port out of range") {
    auto cfg = parse_node_config("[node]\nroles = [\"scheduler\"]\nport = 70000\n", "n.conf");
    REQUIRE_FALSE(cfg);
    CHECK(code_of(cfg.error()) == static_cast<uint8_t>(error_code::bad_value));
    CHECK_THAT(error_text(cfg.error()), Catch::Contains("n.conf:3") && Catch::Contains("70000"));
  }
  SECTION("unknown role") {
    auto cfg = parse_node_config("[node]\nroles = [\"gpu-server\"]\n", "n.conf");
    REQUIRE_FALSE(cfg);
    CHECK_THAT(error_text(cfg.error()), Catch::Contains("gpu-server")
                                          && Catch::Contains("gpu_server"));
  }
  SECTION("bad duration unit") {
    auto cfg = parse_node_config("[node]\nroles = [\"scheduler\"]\ndown-after = 2 sec\n",
                                 "n.conf");
    REQUIRE_FALSE(cfg);
    CHECK_THAT(error_text(cfg.error()), Catch::Contains("node.down-after"));
  }
  SECTION("down-after shorter than two heartbeats") {
    auto cfg = parse_node_config(
      "[node]\nroles = [\"scheduler\"]\nheartbeat-interval = 1s\ndown-after = 1s\n", "n.conf");
    REQUIRE_FALSE(cfg);
    CHECK(code_of(cfg.error()) == static_cast<uint8_t>(error_code::conflicting_keys));
  }
  SECTION("a node without scheduler role must name one") {
    auto cfg = parse_node_config("[node]\nroles = [\"gpu_server\"]\n", "n.conf");
    REQUIRE_FALSE(cfg);
    CHECK_THAT(error_text(cfg.error()), Catch::Contains("node.scheduler"));
  }
  SECTION("bad scheduler endpoint") {
    auto cfg = parse_node_config("[node]\nroles = [\"gpu_server\"]\nscheduler = \"host\"\n",
                                 "n.conf");
    REQUIRE_FALSE(cfg);
    CHECK_THAT(error_text(cfg.error()), Catch::Contains("HOST:PORT"));
  }
  SECTION("cache role without a directory") {
    auto cfg = parse_node_config("[node]\nroles = [\"all\"]\n", "n.conf");
    REQUIRE_FALSE(cfg);
    CHECK_THAT(error_text(cfg.error()), Catch::Contains("cache.dir"));
  }
  SECTION("syntax errors carry the line") {
    auto cfg = parse_node_config("[node]\nroles [\"all\"]\n", "n.conf");
    REQUIRE_FALSE(cfg);
    CHECK(code_of(cfg.error()) == static_cast<uint8_t>(error_code::syntax_error));
    CHECK_THAT(error_text(cfg.error()), Catch::Contains("n.conf:2"));
  }
  SECTION("duplicate keys") {
    auto cfg = parse_node_config("[node]\nroles = [\"scheduler\"]\nport = 1\nport = 2\n", "n.conf");
    REQUIRE_FALSE(cfg);
    CHECK_THAT(error_text(cfg.error()), Catch::Contains("twice"));
  }
  SECTION("unreadable file") {
    auto cfg = load_node_config("/nonexistent/gleam.conf");
    REQUIRE_FALSE(cfg);
    CHECK(code_of(cfg.error()) == static_cast<uint8_t>(error_code::file_unreadable));
    CHECK_THAT(error_text(cfg.error()), Catch::Contains("/nonexistent/gleam.conf"));
  }
}

TEST_CASE("sizes and durations parse with their units", "[config]") {
  CHECK(*parse_bytes("4096") == 4096);
  CHECK(*parse_bytes("2GiB") == 2ull << 30);
  CHECK(*parse_bytes("1GB") == 1000000000ull);
  CHECK_FALSE(parse_bytes("2gb"));
  CHECK(*parse_duration("250us") == std::chrono::microseconds{250});
  CHECK(*parse_duration("1.5s") == std::chrono::microseconds{1500000});
  CHECK_FALSE(parse_duration("fast"));
}

namespace {

std::map<std::string, std::string> fake_env;

const char* fake_getenv(const char* name) {
  auto i = fake_env.find(name);
  return i == fake_env.end() ? nullptr : i->second.c_str();
}

} // namespace

TEST_CASE("client config: environment overrides the file", "[config]") {
  fake_env = {{"GLEAM_SERVER", "10.1.1.1:4751"}, {"GLEAM_ASYNC", "off"}};
  auto cfg = parse_client_config("[client]\nscheduler = \"10.0.0.5:4750\"\nasync = true\n",
                                 "c.conf", fake_getenv);
  REQUIRE(cfg);
  CHECK(cfg->server_host == "10.1.1.1");
  CHECK(cfg->server_port == 4751);
  CHECK(cfg->scheduler_host == "10.0.0.5");
  CHECK_FALSE(cfg->async);
  CHECK(cfg->cache);
}

TEST_CASE("client config: defaults reach the embedded node", "[config]") {
  fake_env.clear();
  auto cfg = parse_client_config("", "", fake_getenv);
  REQUIRE(cfg);
  CHECK(cfg->server_host.empty());
  CHECK(cfg->scheduler_host == "127.0.0.1");
  CHECK(cfg->scheduler_port == 4750);
  CHECK(cfg->max_pending_batch == 8);
}

TEST_CASE("client config: max-pending-batch stays within the batches a server answers again "
          "after a reconnect",
          "[config]") {
  fake_env.clear();
  auto most = parse_client_config("[client]\nmax-pending-batch = 16\n", "c.conf", fake_getenv);
  REQUIRE(most);
  CHECK(most->max_pending_batch == 16);
  auto over = parse_client_config("[client]\nmax-pending-batch = 17\n", "c.conf", fake_getenv);
  REQUIRE_FALSE(over);
  CHECK_THAT(caf::to_string(over.error()), Catch::Contains("client.max-pending-batch"));
}

TEST_CASE("client config: bad environment values are named", "[config]") {
  fake_env = {{"GLEAM_ASYNC", "maybe"}};
  auto cfg = parse_client_config("", "", fake_getenv);
  REQUIRE_FALSE(cfg);
  CHECK_THAT(describe(cfg.error()), Catch::Contains("GLEAM_ASYNC") && Catch::Contains("maybe"));
  fake_env = {{"GLEAM_SERVER", "nohost"}};
  auto cfg2 = parse_client_config("", "", fake_getenv);
  REQUIRE_FALSE(cfg2);
  CHECK_THAT(describe(cfg2.error()), Catch::Contains("GLEAM_SERVER"));
}

TEST_CASE("poll: a duration from the file or GLEAM_POLL, 0 turns it off, above 1s refused",
          "[config]") {
  using std::chrono::microseconds;
  fake_env.clear();
  auto def = parse_client_config("", "", fake_getenv);
  REQUIRE(def);
  CHECK(def->poll == microseconds{2000});
  auto file = parse_client_config("[client]\npoll = 500us\n", "c.conf", fake_getenv);
  REQUIRE(file);
  CHECK(file->poll == microseconds{500});
  fake_env = {{"GLEAM_POLL", "0"}};
  auto off = parse_client_config("[client]\npoll = 500us\n", "c.conf", fake_getenv);
  REQUIRE(off);
  CHECK(off->poll == microseconds{0});
  fake_env = {{"GLEAM_POLL", "fast"}};
  auto bad = parse_client_config("", "", fake_getenv);
  REQUIRE_FALSE(bad);
  CHECK_THAT(describe(bad.error()), Catch::Contains("GLEAM_POLL") && Catch::Contains("fast"));
  fake_env = {{"GLEAM_POLL", "2s"}};
  auto big = parse_client_config("", "", fake_getenv);
  REQUIRE_FALSE(big);
  CHECK_THAT(describe(big.error()), Catch::Contains("GLEAM_POLL"));
  fake_env.clear();

  auto node = parse_node_config("[node]\nroles = [\"scheduler\"]\n", "n.conf");
  REQUIRE(node);
  CHECK(node->poll == microseconds{2000});
  auto node_off = parse_node_config("[node]\nroles = [\"scheduler\"]\npoll = 0\n", "n.conf");
  REQUIRE(node_off);
  CHECK(node_off->poll == microseconds{0});
  auto node_big = parse_node_config("[node]\nroles = [\"scheduler\"]\npoll = 5s\n", "n.conf");
  REQUIRE_FALSE(node_big);
  CHECK_THAT(describe(node_big.error()), Catch::Contains("n.conf:3") && Catch::Contains("node.poll"));
}

TEST_CASE("the example configs in deploy/examples are valid", "[config]") {
  const char* src = std::getenv("GLEAM_SOURCE_DIR");
  REQUIRE(src != nullptr);
  for (const char* name : {"all-in-one.conf", "scheduler.conf", "gpu-host.conf"}) {
    auto cfg = load_node_config(std::string(src) + "/deploy/examples/" + name);
    INFO(name);
    CHECK(cfg);
  }
}

namespace {

/// A readable file in the temp dir, for TLS paths that must exist.
std::string readable_file(const std::string& name) {
  auto path = std::string{"/tmp/gleam_config_test_"} + std::to_string(::getpid()) + "_" + name;
  std::FILE* f = std::fopen(path.c_str(), "w");
  REQUIRE(f != nullptr);
  std::fputs("-----BEGIN TEST-----\n", f);
  std::fclose(f);
  return path;
}

} // namespace

TEST_CASE("TLS enabled without its files is refused with file, line and key",
          "[config][tls]") {
  const std::string base = "[node]\nroles = [\"all\"]\n[cache]\ndir = \"/tmp/c\"\n";
  SECTION("no certificate at all") {
    auto cfg = parse_node_config(base + "[tls]\nenabled = true\n", "n.conf");
    REQUIRE_FALSE(cfg);
    CHECK(code_of(cfg.error()) == static_cast<uint8_t>(error_code::missing_key));
    CHECK_THAT(error_text(cfg.error()), Catch::Contains("n.conf:6")
                                          && Catch::Contains("tls.certificate")
                                          && Catch::Contains("anonymous"));
  }
  SECTION("a certificate file that does not exist") {
    auto key = readable_file("key.pem");
    auto ca = readable_file("ca.pem");
    auto cfg = parse_node_config(base + "[tls]\nenabled = true\ncertificate = \"/nonexistent/c.pem\"\n"
                                        "key = \"" + key + "\"\nca-file = \"" + ca + "\"\n",
                                 "n.conf");
    REQUIRE_FALSE(cfg);
    CHECK(code_of(cfg.error()) == static_cast<uint8_t>(error_code::file_unreadable));
    CHECK_THAT(error_text(cfg.error()), Catch::Contains("n.conf:7")
                                          && Catch::Contains("/nonexistent/c.pem"));
  }
  SECTION("no CA file") {
    auto cert = readable_file("cert.pem");
    auto key = readable_file("key.pem");
    auto cfg = parse_node_config(base + "[tls]\nenabled = true\ncertificate = \"" + cert
                                   + "\"\nkey = \"" + key + "\"\n",
                                 "n.conf");
    REQUIRE_FALSE(cfg);
    CHECK_THAT(error_text(cfg.error()), Catch::Contains("tls.ca-file"));
  }
  SECTION("all three files: accepted, with the auth token") {
    auto cert = readable_file("cert.pem");
    auto key = readable_file("key.pem");
    auto ca = readable_file("ca.pem");
    auto cfg = parse_node_config("[node]\nroles = [\"all\"]\nauth-token = \"s3cret\"\n"
                                 "[cache]\ndir = \"/tmp/c\"\n[tls]\nenabled = true\n"
                                 "certificate = \"" + cert + "\"\nkey = \"" + key
                                   + "\"\nca-file = \"" + ca + "\"\n",
                                 "n.conf");
    REQUIRE(cfg);
    CHECK(cfg->tls.enabled);
    CHECK(cfg->tls.certificate == cert);
    CHECK(cfg->tls.ca_file == ca);
    CHECK(cfg->auth_token == "s3cret");
  }
  SECTION("TLS off needs no files") {
    auto cfg = parse_node_config(base + "[tls]\nenabled = false\n", "n.conf");
    REQUIRE(cfg);
    CHECK_FALSE(cfg->tls.enabled);
    CHECK(cfg->auth_token.empty());
  }
}

TEST_CASE("client TLS and token come from the environment, and are validated",
          "[config][tls]") {
  SECTION("GLEAM_TLS=on without files names the variables") {
    fake_env = {{"GLEAM_TLS", "on"}};
    auto cfg = parse_client_config("", "", fake_getenv);
    REQUIRE_FALSE(cfg);
    CHECK(code_of(cfg.error()) == static_cast<uint8_t>(error_code::missing_key));
    CHECK_THAT(error_text(cfg.error()), Catch::Contains("GLEAM_TLS_CERT"));
  }
  SECTION("complete TLS and a token") {
    auto cert = readable_file("ccert.pem");
    auto key = readable_file("ckey.pem");
    auto ca = readable_file("cca.pem");
    fake_env = {{"GLEAM_TLS", "on"}, {"GLEAM_TLS_CERT", cert}, {"GLEAM_TLS_KEY", key},
                {"GLEAM_TLS_CA", ca}, {"GLEAM_TOKEN", "t0k"}};
    auto cfg = parse_client_config("", "", fake_getenv);
    REQUIRE(cfg);
    CHECK(cfg->tls.enabled);
    CHECK(cfg->tls.key == key);
    CHECK(cfg->auth_token == "t0k");
  }
  SECTION("the file's [tls] and [client] auth-token") {
    fake_env.clear();
    auto cfg = parse_client_config("[client]\nauth-token = \"abc\"\n[tls]\nenabled = true\n",
                                   "c.conf", fake_getenv);
    REQUIRE_FALSE(cfg);
    CHECK_THAT(error_text(cfg.error()), Catch::Contains("c.conf") && Catch::Contains("certificate"));
  }
  fake_env.clear();
}

TEST_CASE("sizes and durations too large for their type are refused, not fatal",
          "[config]") {
  // Found by fuzz_node_config: stoull threw out of the parser.
  auto huge = parse_node_config("[node]\nid = \"n\"\nroles = [\"all\"]\n[cache]\ndir = \"/tmp/c\"\n"
                                "disk-capacity = 166666666666666666666666666GiB\n",
                                "big.conf");
  REQUIRE_FALSE(huge);
  CHECK_THAT(describe(huge.error()), Catch::Contains("larger than 2^64 bytes"));
  auto overflow = parse_node_config("[node]\nid = \"n\"\nroles = [\"all\"]\n[cache]\n"
                                    "dir = \"/tmp/c\"\ndisk-capacity = 17179869184GiB\n",
                                    "big.conf");
  REQUIRE_FALSE(overflow);
  CHECK_THAT(describe(overflow.error()), Catch::Contains("larger than 2^64 bytes"));
  auto ok = parse_node_config("[node]\nid = \"n\"\nroles = [\"all\"]\n[cache]\ndir = \"/tmp/c\"\n"
                              "disk-capacity = 16GiB\n",
                              "ok.conf");
  REQUIRE(ok);
  CHECK(ok->cache_disk_bytes == (uint64_t{16} << 30));
  auto long_beat = parse_node_config("[node]\nid = \"n\"\nroles = [\"scheduler\"]\n"
                                     "heartbeat-interval = 99999999999999999999min\n",
                                     "t.conf");
  REQUIRE_FALSE(long_beat);
  CHECK_THAT(describe(long_beat.error()), Catch::Contains("too long"));
}

TEST_CASE("tenants are NAME:TOKEN pairs, each with its own name and token", "[config]") {
  SECTION("two tenants") {
    auto cfg = parse_node_config("[node]\nroles = [\"all\"]\n"
                                 "tenants = [\"alice:a-secret\", \"bob:b:with:colons\"]\n"
                                 "[cache]\ndir = \"/tmp/c\"\n",
                                 "n.conf");
    REQUIRE(cfg);
    REQUIRE(cfg->tenants.size() == 2);
    CHECK(cfg->tenants[0] == std::pair<std::string, std::string>{"alice", "a-secret"});
    CHECK(cfg->tenants[1] == std::pair<std::string, std::string>{"bob", "b:with:colons"});
  }
  for (const char* bad : {"[\"no-colon-secret\"]", "[\":secret\"]", "[\"alice:\"]",
                          "[\"alice:x\", \"alice:y\"]", "[\"alice:x\", \"bob:x\"]",
                          "[\"alice:node-secret\"]"}) {
    INFO(bad);
    auto cfg = parse_node_config("[node]\nroles = [\"all\"]\nauth-token = \"node-secret\"\n"
                                 "tenants = " + std::string{bad} + "\n[cache]\ndir = \"/tmp/c\"\n",
                                 "n.conf");
    REQUIRE_FALSE(cfg);
    auto text = caf::to_string(cfg.error());
    CHECK(text.find("n.conf") != std::string::npos);
    CHECK(text.find("tenants") != std::string::npos);
    // A secret is never echoed.
    CHECK(text.find("no-colon-secret") == std::string::npos);
    CHECK(text.find("node-secret") == std::string::npos);
  }
}

TEST_CASE("the client's cache hash: xxh3 by default, sha256 to share across tenants",
          "[config][tenant]") {
  fake_env.clear();
  auto plain = parse_client_config("", "", fake_getenv);
  REQUIRE(plain);
  CHECK_FALSE(plain->cache_sha256);
  auto file = parse_client_config("[client]\ncache-hash = \"sha256\"\n", "c.conf", fake_getenv);
  REQUIRE(file);
  CHECK(file->cache_sha256);
  fake_env = {{"GLEAM_CACHE_HASH", "xxh3"}};
  auto env = parse_client_config("[client]\ncache-hash = \"sha256\"\n", "c.conf", fake_getenv);
  REQUIRE(env);
  CHECK_FALSE(env->cache_sha256);
  fake_env = {{"GLEAM_CACHE_HASH", "md5"}};
  auto bad_env = parse_client_config("", "", fake_getenv);
  REQUIRE_FALSE(bad_env);
  CHECK(caf::to_string(bad_env.error()).find("GLEAM_CACHE_HASH") != std::string::npos);
  fake_env.clear();
  auto bad = parse_client_config("[client]\ncache-hash = \"crc\"\n", "c.conf", fake_getenv);
  REQUIRE_FALSE(bad);
  CHECK(caf::to_string(bad.error()).find("c.conf") != std::string::npos);
}

TEST_CASE("admin token and cluster secret: read, and refused when they weaken the node",
          "[config][auth]") {
  auto node = [](const std::string& keys) {
    return parse_node_config("[node]\nroles = [\"all\"]\nauth-token = \"client-secret\"\n"
                               "tenants = [\"alice:alice-secret\"]\n"
                               + keys + "[cache]\ndir = \"/tmp/c\"\n",
                             "n.conf");
  };
  auto ok = node("admin-token = \"admin-secret\"\ncluster-secret = \"0123456789abcdef01\"\n");
  REQUIRE(ok);
  CHECK(ok->admin_token == "admin-secret");
  CHECK(ok->cluster_secret == "0123456789abcdef01");
  auto none = node("");
  REQUIRE(none);
  CHECK(none->admin_token.empty());
  CHECK(none->cluster_secret.empty());
  // A client's token never grants admin.
  for (const char* shared : {"client-secret", "alice-secret"}) {
    auto cfg = node("admin-token = \"" + std::string{shared} + "\"\n");
    REQUIRE_FALSE(cfg);
    auto text = caf::to_string(cfg.error());
    CHECK(text.find("admin-token") != std::string::npos);
    CHECK(text.find("a token of their own") != std::string::npos);
    CHECK(text.find(shared) == std::string::npos);
  }
  auto short_secret = node("cluster-secret = \"guessable\"\n");
  REQUIRE_FALSE(short_secret);
  auto text = caf::to_string(short_secret.error());
  CHECK(text.find("cluster-secret") != std::string::npos);
  CHECK(text.find("at least 16") != std::string::npos);
  CHECK(text.find("guessable") == std::string::npos);
}

TEST_CASE("max-message: a size, 256MiB by default, between 16MiB and 4GiB", "[config]") {
  auto node = [](const std::string& keys) {
    return parse_node_config("[node]\nroles = [\"all\"]\n" + keys + "[cache]\ndir = \"/tmp/c\"\n",
                             "n.conf");
  };
  auto dflt = node("");
  REQUIRE(dflt);
  CHECK(dflt->max_message_bytes == uint64_t{256} << 20);
  auto set = node("max-message = 64MiB\n");
  REQUIRE(set);
  CHECK(set->max_message_bytes == uint64_t{64} << 20);
  for (const char* bad : {"max-message = 1MiB\n", "max-message = 8GiB\n",
                          "max-message = lots\n"}) {
    auto cfg = node(bad);
    REQUIRE_FALSE(cfg);
    CHECK(caf::to_string(cfg.error()).find("max-message") != std::string::npos);
  }
}

TEST_CASE("the client's compression: auto by default, on or off from the file or "
          "GLEAM_COMPRESS",
          "[config]") {
  fake_env.clear();
  auto plain = parse_client_config("", "", fake_getenv);
  REQUIRE(plain);
  CHECK(plain->compress == "auto");
  auto file = parse_client_config("[client]\ncompress = \"off\"\n", "c.conf", fake_getenv);
  REQUIRE(file);
  CHECK(file->compress == "off");
  fake_env = {{"GLEAM_COMPRESS", "on"}};
  auto env = parse_client_config("[client]\ncompress = \"off\"\n", "c.conf", fake_getenv);
  REQUIRE(env);
  CHECK(env->compress == "on");
  fake_env = {{"GLEAM_COMPRESS", "max"}};
  auto bad_env = parse_client_config("", "", fake_getenv);
  REQUIRE_FALSE(bad_env);
  CHECK(caf::to_string(bad_env.error()).find("GLEAM_COMPRESS") != std::string::npos);
  fake_env.clear();
  auto bad = parse_client_config("[client]\ncompress = \"zip\"\n", "c.conf", fake_getenv);
  REQUIRE_FALSE(bad);
  CHECK(caf::to_string(bad.error()).find("client.compress") != std::string::npos);
}

TEST_CASE("gpu_server isolation: process or shared, spare workers and max-op-seconds checked",
          "[config]") {
  auto parse = [](const std::string& gpu_section) {
    return parse_node_config(
      "[node]\nid = \"g\"\nroles = [\"gpu_server\", \"scheduler\"]\n[gpu_server]\n" + gpu_section,
      "i.conf");
  };
  auto shared = parse("");
  REQUIRE(shared);
  CHECK(shared->isolation == node_config::isolation_mode::shared);
  CHECK(shared->spare_workers == 1);
  CHECK(shared->max_op.count() == 0);
  auto process = parse("isolation = \"process\"\nspare-workers = 3\nmax-op-seconds = 30\n");
  REQUIRE(process);
  CHECK(process->isolation == node_config::isolation_mode::process);
  CHECK(process->spare_workers == 3);
  CHECK(process->max_op == std::chrono::seconds{30});
  CHECK_FALSE(process->worker.active); // never from a file
  CHECK(shared->session_memory_bytes == 0);
  auto quota = parse("session-memory = 16GiB\n");
  REQUIRE(quota);
  CHECK(quota->session_memory_bytes == (uint64_t{16} << 30));
  auto bad = parse("isolation = \"threads\"\n");
  REQUIRE_FALSE(bad);
  CHECK_THAT(error_text(bad.error()), Catch::Contains("gpu_server.isolation")
                                        && Catch::Contains("'threads'")
                                        && Catch::Contains("process"));
  auto too_many = parse("spare-workers = 65\n");
  REQUIRE_FALSE(too_many);
  CHECK_THAT(error_text(too_many.error()), Catch::Contains("gpu_server.spare-workers"));
  // A limit needs a process to end: shared mode cannot end one session.
  auto limit_shared = parse("max-op-seconds = 10\n");
  REQUIRE_FALSE(limit_shared);
  CHECK_THAT(error_text(limit_shared.error()), Catch::Contains("gpu_server.max-op-seconds")
                                                 && Catch::Contains("process"));
}

TEST_CASE("gpu_server tenant-memory and guaranteed-memory name tenants and sizes",
          "[config]") {
  auto parse = [](const std::string& gpu_section) {
    return parse_node_config("[node]\nid = \"g\"\nroles = [\"gpu_server\", \"scheduler\"]\n"
                             "tenants = [\"alice:token-of-alice\", \"bob:token-of-bob\"]\n"
                             "[gpu_server]\n"
                               + gpu_section,
                             "t.conf");
  };
  auto none = parse("");
  REQUIRE(none);
  CHECK(none->tenant_memory.empty());
  CHECK(none->guaranteed_memory.empty());
  auto rules = parse("tenant-memory = [\"alice:40GiB\", \"bob:8GiB\"]\n"
                     "guaranteed-memory = [\"bob:2GiB\"]\n");
  REQUIRE(rules);
  REQUIRE(rules->tenant_memory.size() == 2);
  CHECK(rules->tenant_memory[0] == std::pair<std::string, uint64_t>{"alice", uint64_t{40} << 30});
  CHECK(rules->guaranteed_memory
        == std::vector<std::pair<std::string, uint64_t>>{{"bob", uint64_t{2} << 30}});
  auto unknown = parse("tenant-memory = [\"carol:1GiB\"]\n");
  REQUIRE_FALSE(unknown);
  CHECK_THAT(error_text(unknown.error()), Catch::Contains("gpu_server.tenant-memory")
                                            && Catch::Contains("'carol' is not a tenant"));
  auto no_size = parse("guaranteed-memory = [\"bob\"]\n");
  REQUIRE_FALSE(no_size);
  CHECK_THAT(error_text(no_size.error()), Catch::Contains("NAME:SIZE"));
  auto bad_size = parse("tenant-memory = [\"alice:lots\"]\n");
  REQUIRE_FALSE(bad_size);
  CHECK_THAT(error_text(bad_size.error()), Catch::Contains("alice:lots"));
  auto twice = parse("tenant-memory = [\"alice:1GiB\", \"alice:2GiB\"]\n");
  REQUIRE_FALSE(twice);
  CHECK_THAT(error_text(twice.error()), Catch::Contains("appears twice"));
  auto over = parse("tenant-memory = [\"bob:1GiB\"]\nguaranteed-memory = [\"bob:2GiB\"]\n");
  REQUIRE_FALSE(over);
  CHECK_THAT(error_text(over.error()), Catch::Contains("more than its tenant-memory"));
}
