#include "config/client_config.hpp"

#include <cstdlib>

#include "config/config_file.hpp"
#include "config/error.hpp"

namespace gleam::config {

namespace {

caf::error bad_env(const char* var, const std::string& value, const std::string& what) {
  return make_error(error_code::bad_value, std::string("environment variable ") + var + "='"
                                             + value + "': " + what);
}

caf::expected<bool> parse_switch(const char* var, const std::string& value) {
  if (value == "on" || value == "1" || value == "true" || value == "yes")
    return true;
  if (value == "off" || value == "0" || value == "false" || value == "no")
    return false;
  return bad_env(var, value, "use on or off");
}

} // namespace

caf::expected<client_config> parse_client_config(const std::string& text,
                                                 const std::string& origin,
                                                 const char* (*getenv_fn)(const char*)) {
  client_config cfg;
  if (!text.empty()) {
    auto parsed = config_file::parse(text, origin);
    if (!parsed)
      return std::move(parsed.error());
    auto& f = *parsed;
    auto server = f.get_string("client.server", "");
    if (!server)
      return std::move(server.error());
    if (!server->empty()) {
      auto ep = parse_endpoint(*server, f.where("client.server"));
      if (!ep)
        return std::move(ep.error());
      cfg.server_host = ep->first;
      cfg.server_port = ep->second;
    }
    auto scheduler = f.get_string("client.scheduler", "");
    if (!scheduler)
      return std::move(scheduler.error());
    if (!scheduler->empty()) {
      auto ep = parse_endpoint(*scheduler, f.where("client.scheduler"));
      if (!ep)
        return std::move(ep.error());
      cfg.scheduler_host = ep->first;
      cfg.scheduler_port = ep->second;
    }
    int64_t gpu = 0;
    int64_t pending = 0;
    GLEAM_CONFIG_TRY(gpu, f.get_int("client.gpu", 0, 0, 1023));
    GLEAM_CONFIG_TRY(cfg.async, f.get_bool("client.async", cfg.async));
    GLEAM_CONFIG_TRY(cfg.cache, f.get_bool("client.cache", cfg.cache));
    GLEAM_CONFIG_TRY(cfg.cache_threshold, f.get_bytes("client.cache-threshold", cfg.cache_threshold));
    GLEAM_CONFIG_TRY(cfg.cache_chunk, f.get_bytes("client.cache-chunk", cfg.cache_chunk));
    GLEAM_CONFIG_TRY(cfg.alloc_slab, f.get_bytes("client.alloc-slab", cfg.alloc_slab));
    std::string hash;
    GLEAM_CONFIG_TRY(hash, f.get_string("client.cache-hash", "xxh3"));
    if (hash != "xxh3" && hash != "sha256")
      return make_error(error_code::bad_value, f.where("client.cache-hash") + ": '" + hash
                                                 + "' is not a cache hash: use xxh3 or sha256");
    cfg.cache_sha256 = hash == "sha256";
    GLEAM_CONFIG_TRY(cfg.compress, f.get_string("client.compress", cfg.compress));
    if (cfg.compress != "auto" && cfg.compress != "on" && cfg.compress != "off")
      return make_error(error_code::bad_value, f.where("client.compress") + ": '" + cfg.compress
                                                 + "' is not one of auto, on, off");
    GLEAM_CONFIG_TRY(pending, f.get_int("client.max-pending-batch", cfg.max_pending_batch, 1,
                                            client_config::max_pending_batch_limit));
    GLEAM_CONFIG_TRY(cfg.poll, f.get_duration("client.poll", cfg.poll));
    GLEAM_CONFIG_TRY(cfg.connect_timeout, f.get_duration("client.connect-timeout", cfg.connect_timeout));
    GLEAM_CONFIG_TRY(cfg.request_timeout, f.get_duration("client.request-timeout", cfg.request_timeout));
    GLEAM_CONFIG_TRY(cfg.reconnect_for, f.get_duration("client.reconnect-for", cfg.reconnect_for));
    GLEAM_CONFIG_TRY(cfg.task_signature, f.get_string("client.task", ""));
    GLEAM_CONFIG_TRY(cfg.log_level, f.get_string("client.log-level", cfg.log_level));
    GLEAM_CONFIG_TRY(cfg.auth_token, f.get_string("client.auth-token", ""));
    GLEAM_CONFIG_TRY(cfg.tls.enabled, f.get_bool("tls.enabled", false));
    GLEAM_CONFIG_TRY(cfg.tls.certificate, f.get_string("tls.certificate", ""));
    GLEAM_CONFIG_TRY(cfg.tls.key, f.get_string("tls.key", ""));
    GLEAM_CONFIG_TRY(cfg.tls.ca_file, f.get_string("tls.ca-file", ""));
    cfg.server_gpu = static_cast<uint32_t>(gpu);
    cfg.max_pending_batch = static_cast<uint32_t>(pending);
    if (auto err = f.check_all_used())
      return err;
  }
  if (const char* v = getenv_fn("GLEAM_SERVER"); v != nullptr && *v != '\0') {
    auto ep = parse_endpoint(v, "environment variable GLEAM_SERVER");
    if (!ep)
      return std::move(ep.error());
    cfg.server_host = ep->first;
    cfg.server_port = ep->second;
  }
  if (const char* v = getenv_fn("GLEAM_SCHEDULER"); v != nullptr && *v != '\0') {
    auto ep = parse_endpoint(v, "environment variable GLEAM_SCHEDULER");
    if (!ep)
      return std::move(ep.error());
    cfg.scheduler_host = ep->first;
    cfg.scheduler_port = ep->second;
  }
  if (const char* v = getenv_fn("GLEAM_GPU"); v != nullptr && *v != '\0') {
    char* end = nullptr;
    long gpu = std::strtol(v, &end, 10);
    if (*end != '\0' || gpu < 0 || gpu > 1023)
      return bad_env("GLEAM_GPU", v, "expected a device ordinal 0..1023");
    cfg.server_gpu = static_cast<uint32_t>(gpu);
  }
  if (const char* v = getenv_fn("GLEAM_COMPRESS"); v != nullptr && *v != '\0') {
    std::string mode = v;
    if (mode != "auto" && mode != "on" && mode != "off")
      return bad_env("GLEAM_COMPRESS", v, "use auto, on or off");
    cfg.compress = mode;
  }
  if (const char* v = getenv_fn("GLEAM_CACHE_HASH"); v != nullptr && *v != '\0') {
    std::string hash = v;
    if (hash != "xxh3" && hash != "sha256")
      return bad_env("GLEAM_CACHE_HASH", v, "use xxh3 or sha256");
    cfg.cache_sha256 = hash == "sha256";
  }
  for (auto [var, field] : {std::pair{"GLEAM_ASYNC", &cfg.async}, std::pair{"GLEAM_CACHE", &cfg.cache}}) {
    if (const char* v = getenv_fn(var); v != nullptr && *v != '\0') {
      auto on = parse_switch(var, v);
      if (!on)
        return std::move(on.error());
      *field = *on;
    }
  }
  for (auto [var, field] : {std::pair{"GLEAM_CACHE_THRESHOLD", &cfg.cache_threshold},
                            std::pair{"GLEAM_CACHE_CHUNK", &cfg.cache_chunk},
                            std::pair{"GLEAM_ALLOC_SLAB", &cfg.alloc_slab}}) {
    if (const char* v = getenv_fn(var); v != nullptr && *v != '\0') {
      auto n = parse_bytes(v);
      if (!n)
        return bad_env(var, v, "expected a size such as 1MiB or 16MiB");
      *field = *n;
    }
  }
  if (cfg.cache_chunk < 4096 || cfg.cache_chunk > (uint64_t{16} << 20))
    return make_error(error_code::bad_value,
                      "cache chunk size " + std::to_string(cfg.cache_chunk)
                        + " bytes (GLEAM_CACHE_CHUNK or [client] cache-chunk) is out of range: "
                          "use 4KiB..16MiB");
  if (cfg.alloc_slab != 0 && (cfg.alloc_slab < (uint64_t{2} << 20) || cfg.alloc_slab > (uint64_t{64} << 30)))
    return make_error(error_code::bad_value,
                      "slab size " + std::to_string(cfg.alloc_slab)
                        + " bytes (GLEAM_ALLOC_SLAB or [client] alloc-slab) is out of range: "
                          "use 0 (off) or 2MiB..64GiB");
  if (const char* v = getenv_fn("GLEAM_POLL"); v != nullptr && *v != '\0') {
    auto d = parse_duration(v);
    if (!d)
      return bad_env("GLEAM_POLL", v, "expected a duration such as 2ms, 500us or 0");
    cfg.poll = *d;
  }
  if (cfg.poll > std::chrono::seconds{1})
    return make_error(error_code::bad_value,
                      "poll " + std::to_string(cfg.poll.count())
                        + " us (GLEAM_POLL or [client] poll) is out of range: use 0 (off) "
                          "up to 1s");
  if (const char* v = getenv_fn("GLEAM_TASK"); v != nullptr)
    cfg.task_signature = v;
  if (const char* v = getenv_fn("GLEAM_LOG"); v != nullptr && *v != '\0')
    cfg.log_level = v;
  if (const char* v = getenv_fn("GLEAM_TOKEN"); v != nullptr)
    cfg.auth_token = v;
  if (const char* v = getenv_fn("GLEAM_TLS"); v != nullptr && *v != '\0') {
    auto on = parse_switch("GLEAM_TLS", v);
    if (!on)
      return std::move(on.error());
    cfg.tls.enabled = *on;
  }
  // Which source set each TLS field, for the message of a refused config.
  std::string src_enabled = origin.empty() ? "environment variable GLEAM_TLS" : origin + ": [tls] enabled";
  std::string src_cert = "[tls] certificate / GLEAM_TLS_CERT";
  std::string src_key = "[tls] key / GLEAM_TLS_KEY";
  std::string src_ca = "[tls] ca-file / GLEAM_TLS_CA";
  for (auto [var, field] : {std::pair{"GLEAM_TLS_CERT", &cfg.tls.certificate},
                            std::pair{"GLEAM_TLS_KEY", &cfg.tls.key},
                            std::pair{"GLEAM_TLS_CA", &cfg.tls.ca_file}})
    if (const char* v = getenv_fn(var); v != nullptr && *v != '\0')
      *field = v;
  if (auto err = validate_tls(cfg.tls, src_enabled, src_cert, src_key, src_ca))
    return err;
  return cfg;
}

caf::expected<client_config> load_client_config() {
  auto env = [](const char* name) -> const char* { return std::getenv(name); };
  const char* path = std::getenv("GLEAM_CONFIG");
  if (path == nullptr || *path == '\0')
    return parse_client_config("", "", env);
  auto text = read_text(path);
  if (!text)
    return std::move(text.error());
  return parse_client_config(*text, path, env);
}

} // namespace gleam::config
