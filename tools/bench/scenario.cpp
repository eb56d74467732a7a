#include "tools/bench/scenario.hpp"

#include "tools/bench/error.hpp"

namespace gleam::tools::bench {

const char* to_string(mode m) {
  switch (m) {
    case mode::local:
      return "local";
    case mode::naive:
      return "naive";
    case mode::full:
      return "full";
    case mode::none:
      return "-";
  }
  return "?";
}

caf::expected<std::vector<mode>> parse_modes(const std::string& text) {
  std::vector<mode> out;
  std::string cur;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i < text.size() && text[i] != ',') {
      cur += text[i];
      continue;
    }
    if (cur == "local")
      out.push_back(mode::local);
    else if (cur == "naive")
      out.push_back(mode::naive);
    else if (cur == "full")
      out.push_back(mode::full);
    else
      return make_error(error_code::bad_argument,
                        "bad mode '" + cur + "' in '" + text
                          + "': use a comma-separated list of local, naive, full");
    cur.clear();
  }
  return out;
}

scenario_result scenario_result::skip(std::string why, std::vector<std::string> names) {
  scenario_result r;
  r.skipped = std::move(why);
  r.metric_names = std::move(names);
  return r;
}

metric_samples& scenario_result::metric(const std::string& name, const std::string& unit) {
  for (auto& m : metrics)
    if (m.name == name)
      return m;
  metrics.push_back(metric_samples{name, unit, {}});
  return metrics.back();
}

void registry::add(scenario s) {
  for (auto& x : scenarios_) {
    if (x.name == s.name) {
      x = std::move(s);
      return;
    }
  }
  scenarios_.push_back(std::move(s));
}

const scenario* registry::find(const std::string& name) const {
  for (auto& x : scenarios_)
    if (x.name == name)
      return &x;
  return nullptr;
}

} // namespace gleam::tools::bench
