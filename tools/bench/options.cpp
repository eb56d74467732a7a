#include "tools/bench/options.hpp"

#include <cstdlib>
#include <sstream>

#include <limits.h>
#include <unistd.h>

#include "tools/bench/error.hpp"

namespace gleam::tools::bench {

std::string bench_usage() {
  return "usage: gleam-bench --list\n"
         "       gleam-bench SCENARIO... [--link SPEC]... [--modes local,naive,full]\n"
         "                   [--reps N] [--out DIR] [--plot]\n"
         "                   [--server HOST:PORT | --gleamd-config F --gleamd-port P]\n"
         "                   [--client-config F] [--model-gib G] [--build-dir D]\n"
         "                   [--work-dir D]\n"
         "       gleam-bench sim [simulator options]\n"
         "SCENARIO: a name from --list, or all. SPEC: a gleam-link spec, e.g.\n"
         "1gbit,0.5ms (default) or wifi. Remote modes run build/bench programs\n"
         "through build/bin/gleam-run with GLEAM_SERVER pointing at an in-process\n"
         "gleam-link in front of the gleamd (naive adds GLEAM_ASYNC=off GLEAM_CACHE=off).\n";
}

std::string list_scenarios(const registry& reg) {
  std::ostringstream out;
  for (auto& s : reg.all()) {
    out << s.name << std::string(s.name.size() < 14 ? 14 - s.name.size() : 1, ' ')
        << s.description << (s.needs_gpu ? " [GPU]" : "") << "\n";
  }
  return out.str();
}

std::string default_build_dir() {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0)
    return ".";
  std::string exe(buf, static_cast<size_t>(n));
  auto bin = exe.rfind('/');
  if (bin == std::string::npos || bin == 0)
    return ".";
  auto parent = exe.rfind('/', bin - 1);
  return parent == std::string::npos ? "." : exe.substr(0, parent);
}

caf::expected<bench_options> parse_bench_options(const std::vector<std::string>& args,
                                                 const std::string& build_dir) {
  bench_options out;
  out.settings.build_dir = build_dir;
  out.request.modes = {mode::local, mode::naive, mode::full};
  bool links_given = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const auto& a = args[i];
    if (a == "--list") {
      out.list = true;
      continue;
    }
    if (a == "--help" || a == "-h") {
      out.help = true;
      continue;
    }
    if (a == "--plot") {
      out.plot = true;
      continue;
    }
    if (a.rfind("--", 0) != 0) {
      out.request.scenarios.push_back(a);
      continue;
    }
    if (i + 1 >= args.size())
      return make_error(error_code::bad_argument,
                        "option " + a + " needs a value: see gleam-bench --help");
    const auto& v = args[++i];
    auto number = [&](double lo, double hi) -> caf::expected<double> {
      char* end = nullptr;
      double d = std::strtod(v.c_str(), &end);
      if (v.empty() || *end != '\0' || d < lo || d > hi)
        return make_error(error_code::bad_argument,
                          "bad value '" + v + "' for " + a + ": use a number from "
                            + std::to_string(static_cast<long long>(lo)) + " to "
                            + std::to_string(static_cast<long long>(hi)));
      return d;
    };
    if (a == "--link") {
      if (!links_given)
        out.request.links.clear();
      links_given = true;
      out.request.links.push_back(v);
    } else if (a == "--modes") {
      auto m = parse_modes(v);
      if (!m)
        return m.error();
      out.request.modes = *m;
    } else if (a == "--reps") {
      auto n = number(1, 100000);
      if (!n)
        return n.error();
      out.settings.reps = static_cast<int>(*n);
    } else if (a == "--gleamd-port") {
      auto n = number(1, 65535);
      if (!n)
        return n.error();
      out.settings.gleamd_port = static_cast<uint16_t>(*n);
    } else if (a == "--model-gib") {
      auto n = number(0, 1024);
      if (!n)
        return n.error();
      out.settings.model_gib = *n;
    } else if (a == "--out") {
      out.out_dir = v;
    } else if (a == "--server") {
      out.settings.server = v;
    } else if (a == "--gleamd-config") {
      out.settings.gleamd_config = v;
    } else if (a == "--client-config") {
      out.settings.client_config = v;
    } else if (a == "--build-dir") {
      out.settings.build_dir = v;
    } else if (a == "--work-dir") {
      out.settings.work_dir = v;
    } else {
      return make_error(error_code::bad_argument,
                        "unknown option '" + a + "': see gleam-bench --help");
    }
  }
  if (!links_given)
    out.request.links = {"1gbit,0.5ms"};
  if (out.settings.work_dir.empty())
    out.settings.work_dir = out.settings.build_dir + "/bench-work";
  if (out.plot && out.out_dir.empty())
    return make_error(error_code::bad_argument,
                      "--plot writes into the --out directory: add --out DIR");
  if (!out.list && !out.help && out.request.scenarios.empty())
    return make_error(error_code::bad_argument,
                      "no scenario given: name one (gleam-bench --list) or all");
  return out;
}

} // namespace gleam::tools::bench
