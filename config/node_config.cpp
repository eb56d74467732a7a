#include "config/node_config.hpp"

#include <unistd.h>

#include "config/config_file.hpp"
#include "config/error.hpp"

namespace gleam::config {

namespace {

std::string default_node_id() {
  char host[256] = {0};
  if (gethostname(host, sizeof(host) - 1) != 0)
    return "gleam-node";
  return host;
}

} // namespace

caf::expected<node_config> parse_node_config(const std::string& text,
                                             const std::string& origin) {
  auto parsed = config_file::parse(text, origin);
  if (!parsed)
    return std::move(parsed.error());
  auto& f = *parsed;
  node_config cfg;
  cfg.source = origin;
  GLEAM_CONFIG_TRY(cfg.node_id, f.get_string("node.id", default_node_id()));
  if (cfg.node_id.empty())
    return make_error(error_code::bad_value, f.where("node.id") + ": must not be empty");
  std::vector<std::string> roles;
  GLEAM_CONFIG_TRY(roles, f.get_list("node.roles", {}));
  if (roles.empty())
    return make_error(error_code::missing_key,
                      origin + ": key 'node.roles' is missing: name the roles of this node, "
                               "e.g. roles = [\"all\"] or [\"scheduler\"] or [\"gpu_server\", \"cache_shard\"]");
  for (const auto& role : roles) {
    if (role == "all") {
      cfg.scheduler = cfg.gpu_server = cfg.cache_shard = true;
    } else if (role == "scheduler") {
      cfg.scheduler = true;
    } else if (role == "gpu_server") {
      cfg.gpu_server = true;
    } else if (role == "cache_shard") {
      cfg.cache_shard = true;
    } else {
      return make_error(error_code::bad_value,
                        f.where("node.roles") + ": unknown role '" + role
                          + "': use all, scheduler, gpu_server or cache_shard");
    }
  }
  GLEAM_CONFIG_TRY(cfg.bind_host, f.get_string("node.bind", ""));
  int64_t port = 0;
  GLEAM_CONFIG_TRY(port, f.get_int("node.port", 4750, 1, 65535));
  cfg.port = static_cast<uint16_t>(port);
  int64_t metrics_port = 0;
  GLEAM_CONFIG_TRY(metrics_port, f.get_int("node.metrics-port", 0, 0, 65535));
  if (metrics_port == port)
    return make_error(error_code::bad_value,
                      f.where("node.metrics-port") + ": " + std::to_string(metrics_port)
                        + " is the node's port; give the metrics their own port (or 0: off)");
  cfg.metrics_port = static_cast<uint16_t>(metrics_port);
  GLEAM_CONFIG_TRY(cfg.advertise_host, f.get_string("node.advertise", "127.0.0.1"));
  std::string scheduler;
  GLEAM_CONFIG_TRY(scheduler, f.get_string("node.scheduler", ""));
  if (!scheduler.empty()) {
    auto ep = parse_endpoint(scheduler, f.where("node.scheduler"));
    if (!ep)
      return std::move(ep.error());
    cfg.scheduler_host = ep->first;
    cfg.scheduler_port = ep->second;
  } else if (cfg.scheduler) {
    cfg.scheduler_host = "127.0.0.1";
    cfg.scheduler_port = cfg.port;
  } else {
    return make_error(error_code::missing_key,
                      origin + ": key 'node.scheduler' is missing: a node without the "
                               "scheduler role must name one, e.g. scheduler = \"10.0.0.5:4750\"");
  }
  GLEAM_CONFIG_TRY(cfg.heartbeat_interval,
                   f.get_duration("node.heartbeat-interval", cfg.heartbeat_interval));
  GLEAM_CONFIG_TRY(cfg.down_after, f.get_duration("node.down-after", cfg.down_after));
  if (cfg.heartbeat_interval.count() < 10)
    return make_error(error_code::bad_value,
                      f.where("node.heartbeat-interval") + ": must be at least 10ms");
  if (cfg.down_after < 2 * cfg.heartbeat_interval)
    return make_error(error_code::conflicting_keys,
                      f.where("node.down-after") + ": must be at least twice "
                                                   "node.heartbeat-interval ("
                        + std::to_string(cfg.heartbeat_interval.count()) + "ms)");
  int64_t threads = 0;
  GLEAM_CONFIG_TRY(threads, f.get_int("node.threads", 2, 1, 256));
  cfg.threads = static_cast<uint32_t>(threads);
  GLEAM_CONFIG_TRY(cfg.poll, f.get_duration("node.poll", cfg.poll));
  if (cfg.poll > std::chrono::seconds{1})
    return make_error(error_code::bad_value,
                      f.where("node.poll") + ": at most 1s (a node polls that long after "
                                             "each message); 0 turns polling off");
  GLEAM_CONFIG_TRY(cfg.log_level, f.get_string("node.log-level", "info"));
  if (cfg.log_level != "error" && cfg.log_level != "warning" && cfg.log_level != "info"
      && cfg.log_level != "debug")
    return make_error(error_code::bad_value, f.where("node.log-level") + ": '" + cfg.log_level
                                               + "' is not one of error, warning, info, debug");
  GLEAM_CONFIG_TRY(cfg.max_message_bytes,
                   f.get_bytes("node.max-message", cfg.max_message_bytes));
  if (cfg.max_message_bytes < (uint64_t{16} << 20) || cfg.max_message_bytes > UINT32_MAX)
    return make_error(error_code::bad_value,
                      f.where("node.max-message") + ": between 16MiB (a cache chunk travels "
                                                    "in one message) and 4GiB");
  std::vector<std::string> devices;
  GLEAM_CONFIG_TRY(devices, f.get_list("gpu_server.devices", {"all"}));
  for (const auto& d : devices) {
    if (d == "all") {
      if (devices.size() != 1)
        return make_error(error_code::bad_value, f.where("gpu_server.devices")
                                                   + ": \"all\" cannot be mixed with ordinals");
      break;
    }
    try {
      size_t used = 0;
      int ordinal = std::stoi(d, &used);
      if (used != d.size() || ordinal < 0)
        throw std::invalid_argument(d);
      cfg.devices.push_back(ordinal);
    } catch (const std::exception&) {
      return make_error(error_code::bad_value, f.where("gpu_server.devices") + ": '" + d
                                                 + "' is not a device ordinal (0, 1, …) or \"all\"");
    }
  }
  GLEAM_CONFIG_TRY(cfg.session_grace,
                   f.get_duration("gpu_server.session-grace", cfg.session_grace));
  {
    std::string isolation;
    GLEAM_CONFIG_TRY(isolation, f.get_string("gpu_server.isolation", "shared"));
    if (isolation == "process")
      cfg.isolation = node_config::isolation_mode::process;
    else if (isolation == "shared")
      cfg.isolation = node_config::isolation_mode::shared;
    else
      return make_error(error_code::bad_value,
                        f.where("gpu_server.isolation") + ": '" + isolation
                          + "' is not one of process (a worker process per session) or "
                            "shared (every session in gleamd's one GPU context)");
  }
  {
    int64_t spare = 0;
    GLEAM_CONFIG_TRY(spare, f.get_int("gpu_server.spare-workers", cfg.spare_workers, 0, 64));
    cfg.spare_workers = static_cast<uint32_t>(spare);
    int64_t seconds = 0;
    GLEAM_CONFIG_TRY(seconds, f.get_int("gpu_server.max-op-seconds", 0, 0, 7 * 86400));
    cfg.max_op = std::chrono::seconds{seconds};
  }
  GLEAM_CONFIG_TRY(cfg.session_memory_bytes,
                   f.get_bytes("gpu_server.session-memory", cfg.session_memory_bytes));
  if (cfg.max_op.count() != 0 && cfg.isolation != node_config::isolation_mode::process)
    return make_error(error_code::bad_value,
                      f.where("gpu_server.max-op-seconds")
                        + ": needs isolation = \"process\" (a session in gleamd's shared "
                          "context cannot be ended alone while its op runs)");
  GLEAM_CONFIG_TRY(cfg.cache_dir, f.get_string("cache.dir", ""));
  GLEAM_CONFIG_TRY(cfg.cache_disk_bytes, f.get_bytes("cache.disk-capacity", cfg.cache_disk_bytes));
  GLEAM_CONFIG_TRY(cfg.cache_host_bytes, f.get_bytes("cache.host-capacity", cfg.cache_host_bytes));
  GLEAM_CONFIG_TRY(cfg.cache_gpu_bytes, f.get_bytes("cache.gpu-capacity", cfg.cache_gpu_bytes));
  {
    auto peers = f.get_list("cache.peers", {});
    if (!peers)
      return std::move(peers.error());
    for (const auto& p : *peers) {
      auto ep = parse_endpoint(p, f.where("cache.peers"));
      if (!ep)
        return std::move(ep.error());
      cfg.cache_peers.push_back(*ep);
    }
  }
  if (cfg.cache_shard && cfg.cache_dir.empty())
    return make_error(error_code::missing_key,
                      origin + ": key 'cache.dir' is missing: the cache_shard role needs a "
                               "directory for its store, e.g. dir = \"/var/lib/gleam/cache\"");
  GLEAM_CONFIG_TRY(cfg.auth_token, f.get_string("node.auth-token", ""));
  std::vector<std::string> tenants;
  GLEAM_CONFIG_TRY(tenants, f.get_list("node.tenants", {}));
  for (size_t i = 0; i < tenants.size(); ++i) {
    const auto& t = tenants[i];
    auto colon = t.find(':');
    // The entry itself is not echoed: it may be a secret.
    if (colon == std::string::npos || colon == 0 || colon + 1 == t.size())
      return make_error(error_code::bad_value,
                        f.where("node.tenants") + ": entry " + std::to_string(i + 1)
                          + " is not NAME:TOKEN; write e.g. tenants = [\"alice:<secret>\", "
                            "\"bob:<secret>\"]");
    auto name = t.substr(0, colon);
    auto token = t.substr(colon + 1);
    for (const auto& [other, other_token] : cfg.tenants)
      if (other == name || other_token == token)
        return make_error(error_code::bad_value,
                          f.where("node.tenants") + ": tenant '" + name
                            + "' repeats a name or a token of tenant '" + other
                            + "'; each tenant needs its own");
    if (token == cfg.auth_token)
      return make_error(error_code::bad_value,
                        f.where("node.tenants") + ": tenant '" + name
                          + "' has the node's auth-token; give it a token of its own");
    cfg.tenants.emplace_back(std::move(name), std::move(token));
  }
  for (auto [key, out] : {std::pair{"gpu_server.tenant-memory", &cfg.tenant_memory},
                          std::pair{"gpu_server.guaranteed-memory", &cfg.guaranteed_memory}}) {
    std::vector<std::string> entries;
    GLEAM_CONFIG_TRY(entries, f.get_list(key, {}));
    for (size_t i = 0; i < entries.size(); ++i) {
      const auto& e = entries[i];
      auto colon = e.rfind(':');
      if (colon == std::string::npos || colon == 0 || colon + 1 == e.size())
        return make_error(error_code::bad_value,
                          f.where(key) + ": entry " + std::to_string(i + 1) + " ('" + e
                            + "') is not NAME:SIZE; write e.g. [\"alice:20GiB\"]");
      auto name = e.substr(0, colon);
      auto bytes = parse_bytes(e.substr(colon + 1));
      if (!bytes)
        return make_error(error_code::bad_value,
                          f.where(key) + ": entry " + std::to_string(i + 1) + " ('" + e
                            + "'): " + describe(bytes.error()));
      bool known = false;
      for (const auto& [tenant, token] : cfg.tenants)
        known |= tenant == name;
      if (!known)
        return make_error(error_code::bad_value,
                          f.where(key) + ": '" + name
                            + "' is not a tenant of [node] tenants; name one of them");
      for (const auto& [other, size] : *out)
        if (other == name)
          return make_error(error_code::bad_value,
                            f.where(key) + ": tenant '" + name + "' appears twice");
      out->emplace_back(std::move(name), *bytes);
    }
  }
  for (const auto& [name, guaranteed] : cfg.guaranteed_memory)
    for (const auto& [limited, limit] : cfg.tenant_memory)
      if (name == limited && guaranteed > limit)
        return make_error(error_code::bad_value,
                          f.where("gpu_server.guaranteed-memory") + ": tenant '" + name
                            + "' is guaranteed more than its tenant-memory limit allows");
  GLEAM_CONFIG_TRY(cfg.admin_token, f.get_string("node.admin-token", ""));
  if (!cfg.admin_token.empty()) {
    // A client's token must never grant admin.
    bool shared = cfg.admin_token == cfg.auth_token;
    for (const auto& [name, token] : cfg.tenants)
      shared |= token == cfg.admin_token;
    if (shared)
      return make_error(error_code::bad_value,
                        f.where("node.admin-token")
                          + ": equals a client token (auth-token or a tenant's); give admins "
                            "a token of their own");
  }
  GLEAM_CONFIG_TRY(cfg.cluster_secret, f.get_string("node.cluster-secret", ""));
  if (!cfg.cluster_secret.empty() && cfg.cluster_secret.size() < 16)
    return make_error(error_code::bad_value,
                      f.where("node.cluster-secret")
                        + ": too short; use at least 16 random characters (e.g. the output "
                          "of 'openssl rand -hex 32'), the same on every node");
  GLEAM_CONFIG_TRY(cfg.tls.enabled, f.get_bool("tls.enabled", false));
  GLEAM_CONFIG_TRY(cfg.tls.certificate, f.get_string("tls.certificate", ""));
  GLEAM_CONFIG_TRY(cfg.tls.key, f.get_string("tls.key", ""));
  GLEAM_CONFIG_TRY(cfg.tls.ca_file, f.get_string("tls.ca-file", ""));
  if (auto err = validate_tls(cfg.tls, [&](const char* k) { return f.where(std::string("tls.") + k); }))
    return err;
  if (auto err = f.check_all_used())
    return err;
  return cfg;
}

caf::expected<node_config> load_node_config(const std::string& path) {
  auto text = read_text(path);
  if (!text)
    return std::move(text.error());
  return parse_node_config(*text, path);
}

} // namespace gleam::config
