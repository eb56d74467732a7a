#include "tools/bench/report.hpp"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <sys/stat.h>
#include <sys/wait.h>

#include "tools/bench/error.hpp"

namespace gleam::tools::bench {

namespace {

std::string num(double v) {
  char buf[64];
  if (v != 0 && (std::fabs(v) >= 1e6 || std::fabs(v) < 1e-3))
    std::snprintf(buf, sizeof(buf), "%.4g", v);
  else if (std::fabs(v) >= 100)
    std::snprintf(buf, sizeof(buf), "%.1f", v);
  else
    std::snprintf(buf, sizeof(buf), "%.3g", v);
  return buf;
}

std::string ratio(const std::optional<double>& r) {
  if (!r)
    return "-";
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.2fx", *r);
  return buf;
}

std::string pad(const std::string& s, size_t w) {
  return s.size() >= w ? s + " " : s + std::string(w - s.size(), ' ');
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", c);
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string json_number(double v) {
  if (!std::isfinite(v))
    return "null";
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.9g", v);
  return buf;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos)
    return s;
  std::string out = "\"";
  for (char c : s)
    out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

caf::error make_dir(const std::string& dir) {
  std::string cur;
  for (size_t i = 0; i <= dir.size(); ++i) {
    if (i == dir.size() || dir[i] == '/') {
      if (!cur.empty() && mkdir(cur.c_str(), 0755) != 0 && errno != EEXIST)
        return make_error(error_code::io_failed, "cannot create directory '" + cur
                                                   + "': " + std::strerror(errno)
                                                   + ": choose a writable --out DIR");
    }
    if (i < dir.size())
      cur += dir[i];
  }
  return caf::none;
}

caf::error write_file(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
  if (!f)
    return make_error(error_code::io_failed,
                      "cannot write '" + path + "': choose a writable --out DIR");
  return caf::none;
}

std::string sanitize(const std::string& s) {
  std::string out;
  for (char c : s)
    out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return out;
}

/// "pngcairo" when this gnuplot has it, else "png" (gnuplot-nox builds).
std::string png_terminal() {
  FILE* p = popen("gnuplot -e 'set terminal' 2>&1", "r");
  if (p == nullptr)
    return "png";
  std::string out;
  char buf[512];
  while (size_t n = std::fread(buf, 1, sizeof(buf), p))
    out.append(buf, n);
  // The listing's exit status carries no information here.
  (void) pclose(p);
  return out.find("pngcairo") != std::string::npos ? "pngcairo" : "png";
}

} // namespace

std::vector<measurement> to_measurements(const std::string& scenario,
                                         const std::string& link, mode m,
                                         const scenario_result& r) {
  std::vector<measurement> out;
  if (!r.skipped.empty()) {
    auto names = r.metric_names;
    if (names.empty())
      names.push_back("-");
    for (auto& n : names)
      out.push_back(measurement{scenario, link, m, n, "", {}, r.skipped});
    return out;
  }
  for (auto& ms : r.metrics)
    out.push_back(measurement{scenario, link, m, ms.name, ms.unit, ms.samples, ""});
  return out;
}

std::vector<row> build_rows(const std::vector<measurement>& ms) {
  std::vector<row> rows;
  std::map<std::string, double> local_median;
  std::map<std::string, double> naive_median;
  auto key = [](const measurement& m) {
    return m.scenario + '\x1f' + m.metric + '\x1f' + m.link;
  };
  for (auto& m : ms) {
    if (!m.skipped.empty() || m.samples.empty())
      continue;
    auto med = summarize(m.samples).median;
    if (m.run_mode == mode::local)
      local_median[key(m)] = med;
    else if (m.run_mode == mode::naive)
      naive_median[key(m)] = med;
  }
  for (auto& m : ms) {
    row r;
    r.scenario = m.scenario;
    r.metric = m.metric;
    r.unit = m.unit;
    r.link = m.link;
    r.run_mode = m.run_mode;
    r.samples = m.samples;
    r.skipped = m.skipped;
    if (m.skipped.empty()) {
      r.stats = summarize(m.samples);
      if (auto it = local_median.find(key(m)); it != local_median.end() && it->second != 0)
        r.vs_local = r.stats.median / it->second;
      if (auto it = naive_median.find(key(m)); it != naive_median.end() && it->second != 0)
        r.vs_naive = r.stats.median / it->second;
    }
    rows.push_back(std::move(r));
  }
  return rows;
}

std::string format_table(const std::vector<row>& rows) {
  std::ostringstream out;
  out << pad("scenario", 14) << pad("metric", 18) << pad("link", 16) << pad("mode", 7)
      << pad("n", 4) << pad("median", 10) << pad("p10", 10) << pad("p90", 10)
      << pad("unit", 8) << pad("vs local", 9) << "vs naive\n";
  for (auto& r : rows) {
    out << pad(r.scenario, 14) << pad(r.metric, 18) << pad(r.link, 16)
        << pad(to_string(r.run_mode), 7);
    if (!r.skipped.empty()) {
      out << "skipped: " << r.skipped << "\n";
      continue;
    }
    out << pad(std::to_string(r.stats.n), 4) << pad(num(r.stats.median), 10)
        << pad(num(r.stats.p10), 10) << pad(num(r.stats.p90), 10) << pad(r.unit, 8)
        << pad(ratio(r.vs_local), 9) << ratio(r.vs_naive) << "\n";
  }
  return out.str();
}

std::string to_csv(const std::vector<row>& rows) {
  std::ostringstream out;
  out << "scenario,metric,unit,link,mode,n,median,p10,p90,mean,vs_local,vs_naive,skipped\n";
  for (auto& r : rows) {
    out << csv_field(r.scenario) << ',' << csv_field(r.metric) << ',' << csv_field(r.unit)
        << ',' << csv_field(r.link) << ',' << to_string(r.run_mode) << ',';
    if (!r.skipped.empty()) {
      out << "0,,,,,,," << csv_field(r.skipped) << "\n";
      continue;
    }
    out << r.stats.n << ',' << json_number(r.stats.median) << ','
        << json_number(r.stats.p10) << ',' << json_number(r.stats.p90) << ','
        << json_number(r.stats.mean) << ','
        << (r.vs_local ? json_number(*r.vs_local) : "") << ','
        << (r.vs_naive ? json_number(*r.vs_naive) : "") << ",\n";
  }
  return out.str();
}

std::string to_json(const std::vector<row>& rows) {
  std::ostringstream out;
  out << "{\"tool\":\"gleam-bench\",\"rows\":[";
  for (size_t i = 0; i < rows.size(); ++i) {
    auto& r = rows[i];
    out << (i == 0 ? "" : ",") << "\n  {\"scenario\":" << json_string(r.scenario)
        << ",\"metric\":" << json_string(r.metric) << ",\"unit\":" << json_string(r.unit)
        << ",\"link\":" << json_string(r.link)
        << ",\"mode\":" << json_string(to_string(r.run_mode));
    if (!r.skipped.empty()) {
      out << ",\"skipped\":" << json_string(r.skipped) << "}";
      continue;
    }
    out << ",\"n\":" << r.stats.n << ",\"median\":" << json_number(r.stats.median)
        << ",\"p10\":" << json_number(r.stats.p10)
        << ",\"p90\":" << json_number(r.stats.p90)
        << ",\"mean\":" << json_number(r.stats.mean)
        << ",\"vs_local\":" << (r.vs_local ? json_number(*r.vs_local) : "null")
        << ",\"vs_naive\":" << (r.vs_naive ? json_number(*r.vs_naive) : "null")
        << ",\"samples\":[";
    for (size_t j = 0; j < r.samples.size(); ++j)
      out << (j == 0 ? "" : ",") << json_number(r.samples[j]);
    out << "]}";
  }
  out << "\n]}\n";
  return out.str();
}

caf::error write_outputs(const std::vector<row>& rows, const std::string& dir) {
  if (auto err = make_dir(dir))
    return err;
  if (auto err = write_file(dir + "/results.csv", to_csv(rows)))
    return err;
  return write_file(dir + "/results.json", to_json(rows));
}

caf::expected<std::vector<std::string>> write_plots(const std::vector<row>& rows,
                                                    const std::string& dir) {
  if (auto err = make_dir(dir))
    return err;
  std::vector<std::string> written;
  auto terminal = png_terminal();
  std::set<std::pair<std::string, std::string>> charts;
  for (auto& r : rows)
    if (r.skipped.empty())
      charts.emplace(r.scenario, r.metric);
  for (auto& [scen, metric] : charts) {
    auto stem = dir + "/" + sanitize(scen) + "_" + sanitize(metric);
    std::ostringstream data;
    std::string unit;
    int i = 0;
    for (auto& r : rows) {
      if (r.scenario != scen || r.metric != metric || !r.skipped.empty())
        continue;
      unit = r.unit;
      data << i++ << " \"" << r.link << "\\n" << to_string(r.run_mode) << "\" "
           << json_number(r.stats.median) << ' ' << json_number(r.stats.p10) << ' '
           << json_number(r.stats.p90) << "\n";
    }
    if (auto err = write_file(stem + ".dat", data.str()))
      return err;
    std::ostringstream gp;
    gp << "set terminal " << terminal << " size 900,500\nset termoption noenhanced\n"
       << "set output '" << stem << ".png'\n"
       << "set title '" << scen << ": " << metric << " (median, p10-p90)'\n"
       << "set ylabel '" << unit << "'\n"
       << "set style fill solid 0.6\nset boxwidth 0.6\nset yrange [0:*]\n"
       << "set xtics rotate by -30\n"
       << "plot '" << stem << ".dat' using 1:3:xtic(2) with boxes notitle, "
       << "'' using 1:3:4:5 with yerrorbars lc rgb 'black' pt 0 notitle\n";
    if (auto err = write_file(stem + ".gp", gp.str()))
      return err;
    auto cmd = "gnuplot '" + stem + ".gp' 2>&1";
    FILE* p = popen(cmd.c_str(), "r");
    if (p == nullptr)
      return make_error(error_code::plot_failed,
                        "cannot run gnuplot: install gnuplot-nox or drop --plot");
    std::string out;
    char buf[512];
    while (size_t n = std::fread(buf, 1, sizeof(buf), p))
      out.append(buf, n);
    int rc = pclose(p);
    if (rc != 0)
      return make_error(error_code::plot_failed,
                        "gnuplot failed on '" + stem + ".gp' (" + out
                          + "): install gnuplot-nox or drop --plot");
    written.push_back(stem + ".png");
  }
  return written;
}

} // namespace gleam::tools::bench
