#include "tools/bench/runner.hpp"

#include <algorithm>

#include "tools/bench/error.hpp"
#include "tools/link_emulator/error.hpp"

namespace gleam::tools::bench {

namespace le = link_emulator;

caf::expected<std::vector<measurement>> run_bench(const registry& reg,
                                                  const bench_request& req,
                                                  bench_env& env, std::ostream* progress) {
  std::vector<const scenario*> chosen;
  for (auto& name : req.scenarios) {
    if (name == "all") {
      for (auto& s : reg.all())
        chosen.push_back(&s);
      continue;
    }
    auto* s = reg.find(name);
    if (s == nullptr) {
      std::string known;
      for (auto& x : reg.all())
        known += (known.empty() ? "" : ", ") + x.name;
      return make_error(error_code::unknown_scenario,
                        "unknown scenario '" + name + "': use one of " + known
                          + " (gleam-bench --list)");
    }
    chosen.push_back(s);
  }
  std::vector<le::link_spec> links;
  for (auto& text : req.links) {
    auto spec = le::parse_link_spec(text);
    if (!spec)
      return make_error(error_code::bad_argument, le::describe(spec.error()));
    links.push_back(*spec);
  }
  if (links.empty())
    return make_error(error_code::bad_argument,
                      "no link to run over: pass --link SPEC, e.g. --link 1gbit,0.5ms");
  std::vector<measurement> out;
  auto note = [&](const std::string& line) {
    if (progress != nullptr)
      *progress << line << std::endl;
  };
  auto append = [&](const scenario& s, const std::string& link, mode m,
                    const scenario_result& r) {
    auto ms = to_measurements(s.name, link, m, r);
    if (!r.skipped.empty() && !s.metric_names.empty() && r.metric_names.empty())
      ms = to_measurements(s.name, link, m,
                           scenario_result::skip(r.skipped, s.metric_names));
    out.insert(out.end(), ms.begin(), ms.end());
  };
  for (auto* s : chosen) {
    if (!s->uses_modes) {
      for (auto& link : links) {
        note("running " + s->name + " over " + link.text);
        run_context ctx{mode::none, link, env.settings().reps, &env.settings(), {}};
        append(*s, link.text, mode::none, s->run(ctx));
      }
      continue;
    }
    std::optional<scenario_result> local;
    for (auto m : req.modes) {
      if (m != mode::local)
        continue;
      auto why = s->needs_gpu ? env.missing(m, s->programs) : "";
      if (!why.empty()) {
        local = scenario_result::skip(why, s->metric_names);
      } else {
        note("running " + s->name + " in local mode");
        run_context ctx{mode::local, links.front(), env.settings().reps, &env.settings(), {}};
        local = s->run(ctx);
      }
    }
    for (auto& link : links) {
      for (auto m : req.modes) {
        if (m == mode::local) {
          append(*s, link.text, m, *local);
          continue;
        }
        run_context ctx{m, link, env.settings().reps, &env.settings(), {}};
        if (s->needs_gpu) {
          auto why = env.missing(m, s->programs);
          if (!why.empty()) {
            append(*s, link.text, m, scenario_result::skip(why, s->metric_names));
            continue;
          }
          auto e = env.prepare(m, link);
          if (!e) {
            append(*s, link.text, m,
                   scenario_result::skip("run failed: " + describe(e.error()),
                                         s->metric_names));
            continue;
          }
          ctx.env = *e;
        }
        note("running " + s->name + " over " + link.text + " in " + to_string(m) + " mode");
        append(*s, link.text, m, s->run(ctx));
      }
    }
  }
  return out;
}

} // namespace gleam::tools::bench
