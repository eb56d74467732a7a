#include "tools/link_emulator/link_spec.hpp"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <vector>

#include "config/config_file.hpp"
#include "tools/link_emulator/error.hpp"

namespace gleam::tools::link_emulator {

namespace {

std::string lower_trim(const std::string& s) {
  std::string out = config::trim(s);
  for (auto& c : out)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == sep) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

/// Splits "12.5mbit" into 12.5 and "mbit"; false if no leading number.
bool split_number(const std::string& s, double& value, std::string& unit) {
  if (s.empty() || !(std::isdigit(static_cast<unsigned char>(s[0])) || s[0] == '.'))
    return false;
  char* end = nullptr;
  value = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || !std::isfinite(value) || value < 0)
    return false;
  unit = std::string(end);
  return true;
}

bool is_duration_unit(const std::string& unit) {
  return unit == "ns" || unit == "us" || unit == "ms" || unit == "s";
}

const char* rate_hint = "use e.g. 1gbit, 300mbit, 50mbyte";
const char* duration_hint = "use e.g. 0.5ms, 3ms, 250us, 2s";
const char* size_hint = "use e.g. 64kib, 1mib, 16kb, 1500";

} // namespace

caf::expected<uint64_t> parse_rate(const std::string& text) {
  auto s = lower_trim(text);
  if (s == "unlimited" || s == "none" || s == "0")
    return uint64_t{0};
  double v = 0;
  std::string unit;
  auto bad = [&] {
    return make_error(error_code::bad_rate,
                      "bad rate '" + text + "': " + rate_hint);
  };
  if (!split_number(s, v, unit))
    return bad();
  double mult = 0;
  if (unit == "bit" || unit == "bps")
    mult = 1;
  else if (unit == "kbit" || unit == "kbps")
    mult = 1e3;
  else if (unit == "mbit" || unit == "mbps")
    mult = 1e6;
  else if (unit == "gbit" || unit == "gbps")
    mult = 1e9;
  else if (unit == "byte")
    mult = 8;
  else if (unit == "kbyte")
    mult = 8e3;
  else if (unit == "mbyte")
    mult = 8e6;
  else if (unit == "gbyte")
    mult = 8e9;
  else
    return bad();
  double bps = v * mult;
  if (bps < 1 || bps > 1e13)
    return make_error(error_code::bad_rate, "rate '" + text
                                              + "' is out of range: use 1bit to 10000gbit, "
                                                "or 'unlimited'");
  return static_cast<uint64_t>(std::llround(bps));
}

caf::expected<std::chrono::nanoseconds> parse_duration(const std::string& text) {
  auto s = lower_trim(text);
  double v = 0;
  std::string unit;
  if (!split_number(s, v, unit) || !(is_duration_unit(unit) || (unit.empty() && v == 0)))
    return make_error(error_code::bad_duration,
                      "bad duration '" + text + "': " + duration_hint);
  double mult = unit == "ns" ? 1 : unit == "us" ? 1e3 : unit == "ms" ? 1e6 : 1e9;
  double ns = v * mult;
  if (ns > 1e9 * 86400)
    return make_error(error_code::bad_duration,
                      "duration '" + text + "' is longer than a day: " + duration_hint);
  return std::chrono::nanoseconds{static_cast<int64_t>(std::llround(ns))};
}

caf::expected<uint64_t> parse_size(const std::string& text) {
  auto s = lower_trim(text);
  double v = 0;
  std::string unit;
  if (!split_number(s, v, unit))
    return make_error(error_code::bad_value, "bad size '" + text + "': " + size_hint);
  double mult = 0;
  if (unit.empty() || unit == "b")
    mult = 1;
  else if (unit == "kb")
    mult = 1e3;
  else if (unit == "kib")
    mult = 1024;
  else if (unit == "mb")
    mult = 1e6;
  else if (unit == "mib")
    mult = 1024.0 * 1024;
  else
    return make_error(error_code::bad_value, "bad size '" + text + "': " + size_hint);
  return static_cast<uint64_t>(std::llround(v * mult));
}

namespace {

caf::error apply_item(const std::string& raw, const std::string& spec,
                      direction_spec& d, int& bare_durations) {
  auto where = " in link spec '" + spec + "'";
  auto item = lower_trim(raw);
  if (item.empty())
    return make_error(error_code::bad_spec,
                      "empty item" + where + ": separate items with single commas, "
                                             "e.g. 1gbit,0.5ms");
  std::string key;
  std::string value;
  if (auto eq = item.find_first_of("= "); eq != std::string::npos) {
    key = lower_trim(item.substr(0, eq));
    value = lower_trim(item.substr(eq + 1));
  }
  if (key.empty()) {
    if (item == "wifi") {
      d = direction_spec{};
      d.rate_bps = 300'000'000;
      d.delay = std::chrono::milliseconds{3};
      d.jitter = std::chrono::milliseconds{1};
      return caf::none;
    }
    if (item == "1gbe") {
      d = direction_spec{};
      d.rate_bps = 1'000'000'000;
      d.delay = std::chrono::microseconds{500};
      return caf::none;
    }
    if (item == "unlimited" || item == "none") {
      d.rate_bps = 0;
      return caf::none;
    }
    double v = 0;
    std::string unit;
    if (!split_number(item, v, unit))
      return make_error(error_code::bad_spec,
                        "unknown item '" + raw + "'" + where
                          + ": use a rate (1gbit), a delay (0.5ms), jitter=1ms, "
                            "dist=normal, loss=0.1%, stall=200ms, burst=64kib, "
                            "or a preset (wifi, 1gbe, unlimited)");
    if (is_duration_unit(unit)) {
      auto t = parse_duration(item);
      if (!t)
        return make_error(error_code::bad_duration,
                          "bad delay '" + raw + "'" + where + ": " + duration_hint);
      if (bare_durations == 0)
        d.delay = *t;
      else if (bare_durations == 1)
        d.jitter = *t;
      else
        return make_error(error_code::bad_spec,
                          "third time '" + raw + "'" + where
                            + ": give a delay and at most a jitter, e.g. 3ms,1ms");
      ++bare_durations;
      return caf::none;
    }
    auto r = parse_rate(item);
    if (!r)
      return make_error(error_code::bad_rate,
                        "bad rate '" + raw + "'" + where + ": " + rate_hint);
    d.rate_bps = *r;
    return caf::none;
  }
  if (key == "rate") {
    auto r = parse_rate(value);
    if (!r)
      return make_error(error_code::bad_rate,
                        "bad rate '" + value + "'" + where + ": " + rate_hint);
    d.rate_bps = *r;
  } else if (key == "delay" || key == "jitter" || key == "stall") {
    auto t = parse_duration(value);
    if (!t)
      return make_error(error_code::bad_duration,
                        "bad " + key + " '" + value + "'" + where + ": " + duration_hint);
    (key == "delay" ? d.delay : key == "jitter" ? d.jitter : d.stall) = *t;
  } else if (key == "dist") {
    if (value == "uniform")
      d.distribution = jitter_distribution::uniform;
    else if (value == "normal")
      d.distribution = jitter_distribution::normal;
    else
      return make_error(error_code::bad_value, "bad dist '" + value + "'" + where
                                                 + ": use dist=uniform or dist=normal");
  } else if (key == "loss") {
    double v = 0;
    std::string unit;
    bool ok = split_number(value, v, unit) && (unit.empty() || unit == "%");
    if (ok && unit == "%")
      v /= 100;
    if (!ok || v >= 1)
      return make_error(error_code::bad_value,
                        "bad loss '" + value + "'" + where
                          + ": use a probability per packet below 1, e.g. loss=0.1% or "
                            "loss=0.001");
    d.loss = v;
  } else if (key == "burst") {
    auto b = parse_size(value);
    if (!b)
      return make_error(error_code::bad_value,
                        "bad burst '" + value + "'" + where + ": " + size_hint);
    d.burst_bytes = *b;
  } else {
    return make_error(error_code::bad_spec,
                      "unknown key '" + key + "'" + where
                        + ": use rate=, delay=, jitter=, dist=, loss=, stall= or burst=");
  }
  return caf::none;
}

caf::expected<direction_spec> parse_direction(const std::string& part,
                                              const std::string& spec) {
  direction_spec d;
  int bare_durations = 0;
  for (auto& item : split(part, ',')) {
    if (auto err = apply_item(item, spec, d, bare_durations))
      return err;
  }
  return d;
}

} // namespace

caf::expected<link_spec> parse_link_spec(const std::string& text) {
  if (lower_trim(text).empty())
    return make_error(error_code::bad_spec,
                      "empty link spec: use e.g. 1gbit,0.5ms or wifi");
  auto parts = split(text, '/');
  if (parts.size() > 2)
    return make_error(error_code::bad_spec,
                      "link spec '" + text
                        + "' has more than one '/': write UP/DOWN, e.g. "
                          "300mbit,3ms/1gbit,3ms");
  link_spec out;
  out.text = text;
  auto up = parse_direction(parts[0], text);
  if (!up)
    return up.error();
  out.up = *up;
  if (parts.size() == 2) {
    auto down = parse_direction(parts[1], text);
    if (!down)
      return down.error();
    out.down = *down;
  } else {
    out.down = out.up;
  }
  return out;
}

std::string format_rate(uint64_t rate_bps) {
  if (rate_bps == 0)
    return "unlimited";
  auto fmt = [](double v, const char* unit) {
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%g%s", v, unit);
    return std::string(buf);
  };
  if (rate_bps % 1'000'000'000 == 0)
    return fmt(static_cast<double>(rate_bps) / 1e9, "gbit");
  if (rate_bps >= 1'000'000)
    return fmt(static_cast<double>(rate_bps) / 1e6, "mbit");
  if (rate_bps >= 1'000)
    return fmt(static_cast<double>(rate_bps) / 1e3, "kbit");
  return fmt(static_cast<double>(rate_bps), "bit");
}

std::string format_duration(std::chrono::nanoseconds d) {
  char buf[64];
  auto ns = static_cast<double>(d.count());
  if (d.count() == 0)
    return "0ms";
  if (d.count() % 1'000'000'000 == 0)
    std::snprintf(buf, sizeof(buf), "%gs", ns / 1e9);
  else if (d.count() >= 100'000)
    std::snprintf(buf, sizeof(buf), "%gms", ns / 1e6);
  else if (d.count() >= 1'000)
    std::snprintf(buf, sizeof(buf), "%gus", ns / 1e3);
  else
    std::snprintf(buf, sizeof(buf), "%gns", ns);
  return buf;
}

std::string to_string(const direction_spec& d) {
  std::string out = format_rate(d.rate_bps) + "," + format_duration(d.delay);
  if (d.jitter.count() > 0)
    out += ",jitter=" + format_duration(d.jitter);
  if (d.distribution == jitter_distribution::normal)
    out += ",dist=normal";
  if (d.loss > 0) {
    char buf[64];
    std::snprintf(buf, sizeof(buf), ",loss=%g%%", d.loss * 100);
    out += buf;
    out += ",stall=" + format_duration(d.stall);
  }
  if (d.burst_bytes > 0)
    out += ",burst=" + std::to_string(d.burst_bytes);
  return out;
}

} // namespace gleam::tools::link_emulator
