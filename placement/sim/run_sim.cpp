#include "placement/sim/run_sim.hpp"

#include <cstdio>
#include <cstdlib>

#include <caf/make_message.hpp>

#include "placement/error.hpp"

namespace gleam::placement::sim {

namespace {

bool parse_double(const std::string& s, double& out) {
  char* end = nullptr;
  out = std::strtod(s.c_str(), &end);
  return !s.empty() && end == s.c_str() + s.size() && std::isfinite(out);
}

bool parse_uint(const std::string& s, uint64_t& out) {
  if (s.empty() || s[0] == '-')
    return false;
  char* end = nullptr;
  out = std::strtoull(s.c_str(), &end, 10);
  return end == s.c_str() + s.size();
}

caf::error bad(const std::string& option, const std::string& value, const std::string& want) {
  return make_error(error_code::invalid_argument,
                    "option " + option + " got '" + value + "': expected " + want);
}

} // namespace

std::string sim_usage() {
  return "usage: placement_sim [--seed N] [--tasks N] [--rate TASKS_PER_S] [--clients N]\n"
         "                     [--servers H200,A100,L40S] [--cache-gb N] [--noise SIGMA]\n"
         "                     [--fit-fraction F] [--mixes N] [--lookahead N] [--peer-mbps R]\n"
         "                     [--uplinks shared|per-server]\n"
         "                     [--policy gleam|round_robin|least_loaded|memory_fit|all]...\n";
}

caf::expected<std::pair<sim_config, std::vector<policy_kind>>>
parse_sim_args(const std::vector<std::string>& args) {
  sim_config cfg;
  std::vector<policy_kind> policies;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const auto& opt = args[i];
    if (i + 1 >= args.size())
      return make_error(error_code::invalid_argument, "option " + opt + " needs a value");
    const auto& val = args[++i];
    uint64_t u = 0;
    double d = 0;
    if (opt == "--seed") {
      if (!parse_uint(val, u))
        return bad(opt, val, "an unsigned integer");
      cfg.trace.seed = u;
    } else if (opt == "--tasks") {
      if (!parse_uint(val, u) || u == 0)
        return bad(opt, val, "a positive integer");
      cfg.trace.tasks = u;
    } else if (opt == "--rate") {
      if (!parse_double(val, d) || d <= 0)
        return bad(opt, val, "a positive rate in tasks per second");
      cfg.trace.arrival_rate_per_s = d;
    } else if (opt == "--clients") {
      if (!parse_uint(val, u) || u == 0 || u > 1024)
        return bad(opt, val, "1..1024");
      cfg.trace.clients = static_cast<uint32_t>(u);
    } else if (opt == "--servers") {
      std::vector<uint32_t> counts;
      std::size_t pos = 0;
      while (pos <= val.size()) {
        auto comma = val.find(',', pos);
        auto part = val.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
        if (!parse_uint(part, u) || u > 100000)
          return bad(opt, val, "comma-separated server counts per GPU type, e.g. 8,12,12");
        counts.push_back(static_cast<uint32_t>(u));
        if (comma == std::string::npos)
          break;
        pos = comma + 1;
      }
      if (counts.size() != cfg.gpu_types.size())
        return bad(opt, val, std::to_string(cfg.gpu_types.size()) + " counts (H200,A100-80G,L40S)");
      cfg.cluster.servers_per_type = counts;
    } else if (opt == "--peer-mbps") {
      if (!parse_double(val, d) || d < 0)
        return bad(opt, val, "a non-negative backbone rate in MB/s (0 = no peer fetch)");
      cfg.cluster.peer_rate_bytes_per_s = d * 1e6;
    } else if (opt == "--uplinks") {
      if (val != "shared" && val != "per-server")
        return bad(opt, val, "shared (a client's loads share its NIC) or per-server");
      cfg.cluster.shared_uplinks = val == "shared";
    } else if (opt == "--cache-gb") {
      if (!parse_double(val, d) || d < 0)
        return bad(opt, val, "a non-negative size in GB");
      cfg.cluster.cache_capacity_bytes = static_cast<uint64_t>(d * 1e9);
    } else if (opt == "--noise") {
      if (!parse_double(val, d) || d < 0 || d > 1)
        return bad(opt, val, "a log-normal sigma in [0, 1]");
      cfg.trace.noise_sigma = d;
    } else if (opt == "--fit-fraction") {
      if (!parse_double(val, d) || d <= 0 || d >= 1)
        return bad(opt, val, "a fraction in (0, 1)");
      cfg.fit_fraction = d;
    } else if (opt == "--mixes") {
      if (!parse_uint(val, u))
        return bad(opt, val, "an unsigned integer");
      cfg.holdout_mixes = u;
    } else if (opt == "--lookahead") {
      if (!parse_uint(val, u) || u == 0)
        return bad(opt, val, "a positive integer");
      cfg.lookahead = u;
    } else if (opt == "--policy") {
      if (val == "all") {
        policies.assign(std::begin(all_policy_kinds), std::end(all_policy_kinds));
      } else {
        auto k = parse_policy_kind(val);
        if (!k)
          return std::move(k.error());
        policies.push_back(*k);
      }
    } else {
      return make_error(error_code::invalid_argument, "unknown option " + opt);
    }
  }
  if (policies.empty())
    policies.assign(std::begin(all_policy_kinds), std::end(all_policy_kinds));
  return std::make_pair(std::move(cfg), std::move(policies));
}

std::string run_sim_cli(int argc, char** argv, bool* ok) {
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i)
    args.emplace_back(argv[i]);
  auto parsed = parse_sim_args(args);
  if (!parsed) {
    if (ok)
      *ok = false;
    auto msg = parsed.error().context().match_elements<std::string>()
                 ? parsed.error().context().get_as<std::string>(0)
                 : std::string{"invalid arguments"};
    return "error: " + msg + "\n" + sim_usage();
  }
  const auto& [cfg, policies] = *parsed;
  std::vector<sim_report> reports;
  for (auto p : policies)
    reports.push_back(simulate(cfg, p));
  auto peers = cfg.cluster.peer_rate_bytes_per_s > 0
                 ? std::to_string(static_cast<long long>(cfg.cluster.peer_rate_bytes_per_s / 1e6))
                     + " MB/s"
                 : std::string{"off"};
  char head[320];
  std::snprintf(head, sizeof(head),
                "trace: %zu tasks, Poisson %.2f tasks/s, seed %llu, %u clients; servers H200/A100/L40S = "
                "%u/%u/%u, cache %.0f GB each, peer fetch %s, client uplinks %s\n\n",
                cfg.trace.tasks, cfg.trace.arrival_rate_per_s,
                static_cast<unsigned long long>(cfg.trace.seed), cfg.trace.clients,
                cfg.cluster.servers_per_type.size() > 0 ? cfg.cluster.servers_per_type[0] : 0,
                cfg.cluster.servers_per_type.size() > 1 ? cfg.cluster.servers_per_type[1] : 0,
                cfg.cluster.servers_per_type.size() > 2 ? cfg.cluster.servers_per_type[2] : 0,
                static_cast<double>(cfg.cluster.cache_capacity_bytes) / 1e9,
                peers.c_str(), cfg.cluster.shared_uplinks ? "shared" : "per server");
  std::string out = head + format_reports(reports);
  if (reports.size() > 1 && reports.front().policy == policy_kind::gleam) {
    out += "\nthroughput gleam vs:";
    for (std::size_t i = 1; i < reports.size(); ++i) {
      char buf[96];
      std::snprintf(buf, sizeof(buf), " %s %.2fx",
                    std::string{to_string(reports[i].policy)}.c_str(),
                    reports[i].throughput_tasks_per_s > 0
                      ? reports.front().throughput_tasks_per_s / reports[i].throughput_tasks_per_s
                      : 0.0);
      out += buf;
    }
    out += "\n";
  }
  auto bound = throughput_bound(cfg);
  if (bound > 0 && !reports.empty()) {
    char buf[128];
    std::snprintf(buf, sizeof(buf),
                  "throughput bound (no load time, perfect packing) %.3f tasks/s; share of it:",
                  bound);
    out += buf;
    for (const auto& r : reports) {
      std::snprintf(buf, sizeof(buf), " %s %.1f%%", std::string{to_string(r.policy)}.c_str(),
                    100.0 * r.throughput_tasks_per_s / bound);
      out += buf;
    }
    out += "\n";
  }
  if (ok)
    *ok = true;
  return out;
}

} // namespace gleam::placement::sim
