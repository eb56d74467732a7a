#include "tools/link_emulator/options.hpp"

#include <cstdlib>

#include "tools/link_emulator/error.hpp"

namespace gleam::tools::link_emulator {

std::string link_usage() {
  return "usage: gleam-link --listen [HOST:]PORT --target HOST:PORT [--link SPEC]\n"
         "                  [--up SPEC] [--down SPEC]\n"
         "                  [--cut-at 5s --cut-for 3s] [--cut-mode hold|reset]\n"
         "                  [--control-port P] [--spin 80us] [--seed N]\n"
         "       gleam-link --selftest [--link SPEC] [--duration 2s] [--pings N]\n"
         "SPEC: comma-separated rate, delay and keys, e.g. 1gbit,0.5ms or wifi\n"
         "      (= 300mbit,3ms,jitter=1ms); keys jitter=, dist=uniform|normal,\n"
         "      loss=0.1%, stall=200ms, burst=64kib; UP/DOWN for asymmetric links.\n"
         "Control: SIGUSR1 cuts, SIGUSR2 restores; the control port takes lines\n"
         "      'cut', 'cut 3s', 'cut reset', 'restore', 'stats'.\n";
}

caf::error parse_host_port(const std::string& text, std::string& host, uint16_t& port) {
  auto colon = text.rfind(':');
  std::string port_text = colon == std::string::npos ? text : text.substr(colon + 1);
  if (colon != std::string::npos)
    host = text.substr(0, colon);
  char* end = nullptr;
  long v = std::strtol(port_text.c_str(), &end, 10);
  if (port_text.empty() || *end != '\0' || v < 0 || v > 65535 || host.empty())
    return make_error(error_code::bad_argument,
                      "bad address '" + text + "': use HOST:PORT, e.g. 127.0.0.1:7000");
  port = static_cast<uint16_t>(v);
  return caf::none;
}

caf::expected<link_options> parse_link_options(const std::vector<std::string>& args) {
  link_options out;
  auto& em = out.emulator;
  em.target_host.clear();
  bool have_listen = false;
  bool have_target = false;
  std::string up_text;
  std::string down_text;
  std::string link_text = "unlimited";
  for (size_t i = 0; i < args.size(); ++i) {
    const auto& a = args[i];
    auto value = [&]() -> caf::expected<std::string> {
      if (i + 1 >= args.size())
        return make_error(error_code::bad_argument,
                          "option " + a + " needs a value: see gleam-link --help");
      return args[++i];
    };
    if (a == "--help" || a == "-h") {
      out.help = true;
      continue;
    }
    if (a == "--selftest") {
      out.selftest = true;
      continue;
    }
    auto v = value();
    if (!v)
      return v.error();
    if (a == "--listen") {
      if (auto err = parse_host_port(*v, em.listen_host, em.listen_port))
        return err;
      have_listen = true;
    } else if (a == "--target") {
      if (auto err = parse_host_port(*v, em.target_host, em.target_port))
        return err;
      have_target = true;
    } else if (a == "--link") {
      link_text = *v;
    } else if (a == "--up") {
      up_text = *v;
    } else if (a == "--down") {
      down_text = *v;
    } else if (a == "--cut-at" || a == "--cut-for" || a == "--spin" || a == "--duration") {
      auto d = parse_duration(*v);
      if (!d)
        return make_error(error_code::bad_argument,
                          "bad value '" + *v + "' for " + a + ": use e.g. 5s, 300ms");
      if (a == "--cut-at")
        em.cut_at = *d;
      else if (a == "--cut-for")
        em.cut_for = *d;
      else if (a == "--spin")
        em.spin = *d;
      else
        out.selftest_opts.bulk_duration = *d;
    } else if (a == "--cut-mode") {
      auto m = parse_cut_mode(*v);
      if (!m)
        return m.error();
      em.mode = *m;
    } else if (a == "--control-port" || a == "--pings" || a == "--seed") {
      char* end = nullptr;
      long long n = std::strtoll(v->c_str(), &end, 10);
      if (v->empty() || *end != '\0' || n < 0
          || (a == "--control-port" && n > 65535))
        return make_error(error_code::bad_argument,
                          "bad value '" + *v + "' for " + a + ": use a non-negative integer");
      if (a == "--control-port")
        em.control_port = static_cast<int>(n);
      else if (a == "--pings")
        out.selftest_opts.pings = static_cast<int>(n);
      else
        em.seed = static_cast<uint64_t>(n);
    } else {
      return make_error(error_code::bad_argument,
                        "unknown option '" + a + "': see gleam-link --help");
    }
  }
  auto spec = parse_link_spec(link_text);
  if (!spec)
    return spec.error();
  em.link = *spec;
  if (!up_text.empty()) {
    auto up = parse_link_spec(up_text);
    if (!up)
      return up.error();
    em.link.up = up->up;
    em.link.text += " up=" + up_text;
  }
  if (!down_text.empty()) {
    auto down = parse_link_spec(down_text);
    if (!down)
      return down.error();
    em.link.down = down->up;
    em.link.text += " down=" + down_text;
  }
  if (em.cut_at && em.cut_for.count() <= 0)
    return make_error(error_code::bad_argument,
                      "--cut-at needs --cut-for: add e.g. --cut-for 3s");
  if (!out.help && !out.selftest && (!have_listen || !have_target))
    return make_error(error_code::bad_argument,
                      "gleam-link needs --listen [HOST:]PORT and --target HOST:PORT "
                      "(or --selftest): see gleam-link --help");
  if (!have_target)
    em.target_host = "127.0.0.1";
  return out;
}

} // namespace gleam::tools::link_emulator
