#include <catch2/catch.hpp>

#include <csignal>
#include <cstdlib>
#include <map>
#include <fstream>
#include <sstream>

#include <sys/stat.h>
#include <unistd.h>

#include "tests/tools/loopback.hpp"
#include "tools/bench/bench_env.hpp"
#include "tools/bench/error.hpp"
#include "tools/bench/options.hpp"
#include "tools/bench/process.hpp"
#include "tools/bench/report.hpp"
#include "tools/bench/runner.hpp"
#include "tools/bench/scenarios.hpp"
#include "tools/bench/stats.hpp"

using namespace gleam::tools::bench;

namespace {

/// A scenario whose samples depend only on the mode: local 10-12 us,
/// naive 100-120 us, full 20-24 us.
scenario synthetic() {
  scenario s;
  s.name = "synthetic";
  s.description = "samples injected by the test";
  s.run = [](const run_context& ctx) {
    scenario_result r;
    auto& m = r.metric("t_us", "us");
    double base = ctx.run_mode == mode::local ? 10 : ctx.run_mode == mode::naive ? 100 : 20;
    for (int i = 0; i < ctx.reps; ++i)
      m.samples.push_back(base * (1 + 0.1 * i));
    return r;
  };
  return s;
}

std::string temp_dir() {
  char tmpl[] = "/tmp/gleam-bench-test-XXXXXX";
  REQUIRE(mkdtemp(tmpl) != nullptr);
  return tmpl;
}

void write_script(const std::string& path, const std::string& body) {
  std::ofstream f(path);
  f << "#!/bin/sh\n" << body;
  f.close();
  chmod(path.c_str(), 0755);
}

std::vector<row> synthetic_rows(bench_env& env) {
  registry reg;
  reg.add(synthetic());
  bench_request req;
  req.scenarios = {"synthetic"};
  req.links = {"1gbit,0.5ms", "wifi"};
  req.modes = {mode::local, mode::naive, mode::full};
  auto ms = run_bench(reg, req, env, nullptr);
  REQUIRE(ms);
  return build_rows(*ms);
}

/// Minimal JSON well-formedness: brackets balance outside strings, strings
/// close, and the text is one value.
bool json_balanced(const std::string& s) {
  std::vector<char> stack;
  bool in_string = false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"')
      in_string = true;
    else if (c == '{' || c == '[')
      stack.push_back(c);
    else if (c == '}' || c == ']') {
      if (stack.empty() || stack.back() != (c == '}' ? '{' : '['))
        return false;
      stack.pop_back();
    }
  }
  return stack.empty() && !in_string;
}

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1))
    ++n;
  return n;
}

} // namespace

TEST_CASE("summaries: median, p10, p90 by interpolation") {
  auto s = summarize({5, 1, 4, 2, 3});
  CHECK(s.n == 5);
  CHECK(s.median == 3);
  CHECK(s.p10 == Approx(1.4));
  CHECK(s.p90 == Approx(4.6));
  CHECK(s.mean == 3);
  CHECK(s.min == 1);
  CHECK(s.max == 5);
  CHECK(summarize({1, 2, 3, 4}).median == 2.5);
  CHECK(summarize({}).n == 0);
}

TEST_CASE("modes parse from a comma-separated list, with clear errors") {
  auto m = parse_modes("local,full");
  REQUIRE(m);
  CHECK(*m == std::vector<mode>{mode::local, mode::full});
  auto bad = parse_modes("local,remote");
  REQUIRE(!bad);
  CHECK(describe(bad.error())
        == "bad mode 'remote' in 'local,remote': use a comma-separated list of local, "
           "naive, full");
}

TEST_CASE("ratios compare each mode with local and naive of the same link and run") {
  bench_settings st;
  st.reps = 3;
  bench_env env(st);
  auto rows = synthetic_rows(env);
  REQUIRE(rows.size() == 6);
  for (auto& r : rows) {
    CHECK(r.skipped.empty());
    CHECK(r.stats.n == 3);
    REQUIRE(r.vs_local);
    REQUIRE(r.vs_naive);
    if (r.run_mode == mode::local) {
      CHECK(r.stats.median == Approx(11));
      CHECK(*r.vs_local == Approx(1));
      CHECK(*r.vs_naive == Approx(0.1));
    } else if (r.run_mode == mode::full) {
      CHECK(r.stats.median == Approx(22));
      CHECK(*r.vs_local == Approx(2));
      CHECK(*r.vs_naive == Approx(0.2));
    } else {
      CHECK(*r.vs_local == Approx(10));
    }
  }
  CHECK(rows[0].link == "1gbit,0.5ms");
  CHECK(rows[3].link == "wifi");
}

TEST_CASE("the table has the documented columns and one line per row") {
  bench_settings st;
  st.reps = 3;
  bench_env env(st);
  auto rows = synthetic_rows(env);
  auto table = format_table(rows);
  std::istringstream in(table);
  std::string header;
  std::getline(in, header);
  for (auto col : {"scenario", "metric", "link", "mode", "median", "p10", "p90", "unit",
                   "vs local", "vs naive"})
    CHECK(header.find(col) != std::string::npos);
  CHECK(header.find("scenario") < header.find("link"));
  CHECK(header.find("median") < header.find("p90"));
  CHECK(header.find("vs local") < header.find("vs naive"));
  CHECK(count(table, "\n") == 7);
  CHECK(table.find("synthetic     t_us              1gbit,0.5ms     full   3   22        ")
        != std::string::npos);
  CHECK(table.find("2.00x") != std::string::npos);
}

TEST_CASE("CSV has a fixed header and one row per measurement") {
  bench_settings st;
  st.reps = 3;
  bench_env env(st);
  auto csv = to_csv(synthetic_rows(env));
  std::istringstream in(csv);
  std::string header;
  std::string first;
  std::getline(in, header);
  std::getline(in, first);
  CHECK(header == "scenario,metric,unit,link,mode,n,median,p10,p90,mean,vs_local,vs_naive,skipped");
  CHECK(first == "synthetic,t_us,us,\"1gbit,0.5ms\",local,3,11,10.2,11.8,11,1,0.1,");
  CHECK(count(csv, "\n") == 7);
}

TEST_CASE("JSON is balanced and carries every key and the samples") {
  bench_settings st;
  st.reps = 3;
  bench_env env(st);
  auto json = to_json(synthetic_rows(env));
  CHECK(json_balanced(json));
  CHECK(json.rfind("{\"tool\":\"gleam-bench\",\"rows\":[", 0) == 0);
  for (auto key : {"\"scenario\":", "\"metric\":", "\"unit\":", "\"link\":", "\"mode\":",
                   "\"n\":", "\"median\":", "\"p10\":", "\"p90\":", "\"vs_local\":",
                   "\"vs_naive\":", "\"samples\":"})
    CHECK(count(json, key) == 6u);
  CHECK(json.find("\"samples\":[20,22,24]") != std::string::npos);
  CHECK(!json_balanced("{\"a\":[1,2}"));
}

TEST_CASE("outputs land in the --out directory") {
  bench_settings st;
  st.reps = 2;
  bench_env env(st);
  auto rows = synthetic_rows(env);
  auto dir = temp_dir() + "/nested/out";
  REQUIRE(!write_outputs(rows, dir));
  std::ifstream csv(dir + "/results.csv");
  std::string header;
  std::getline(csv, header);
  CHECK(header.rfind("scenario,metric,unit,link,mode", 0) == 0);
  std::ifstream json(dir + "/results.json");
  std::stringstream all;
  all << json.rdbuf();
  CHECK(json_balanced(all.str()));
}

TEST_CASE("GPU scenarios are skipped with the reason, never given numbers") {
  auto dir = temp_dir();
  bench_settings st;
  st.build_dir = dir;
  st.work_dir = dir;
  st.reps = 1;
  registry reg;
  register_builtin_scenarios(reg);
  bench_request req;
  req.scenarios = {"call_latency"};
  req.links = {"1gbit,0.5ms"};
  req.modes = {mode::local, mode::naive};
  {
    bench_env env(st);
    auto ms = run_bench(reg, req, env, nullptr);
    REQUIRE(ms);
    // Five metrics (the program's three, the link's RTT and the sync call's
    // excess over it) in each of two modes.
    REQUIRE(ms->size() == 10);
    for (auto& m : *ms) {
      CHECK(m.samples.empty());
      CHECK(m.skipped.find("bench program 'call_latency' not built") == 0);
    }
  }
  // With the program present, local needs the driver and remote gleam-run.
  mkdir((dir + "/bench").c_str(), 0755);
  write_script(dir + "/bench/call_latency", "echo result sync_call_us 1\n");
  bench_env env(st);
  auto ms = run_bench(reg, req, env, nullptr);
  REQUIRE(ms);
  for (auto& m : *ms) {
    if (m.run_mode == mode::naive)
      CHECK(m.skipped == "gleam-run not built");
    else if (!has_cuda_driver())
      CHECK(m.skipped == "needs a GPU (no libcuda.so.1)");
  }
  auto table = format_table(build_rows(*ms));
  CHECK(table.find("skipped: gleam-run not built") != std::string::npos);
}

TEST_CASE("unknown scenarios and bad links fail before anything runs") {
  registry reg;
  register_builtin_scenarios(reg);
  bench_settings st;
  bench_env env(st);
  bench_request req;
  req.scenarios = {"warp_drive"};
  req.links = {"1gbit"};
  req.modes = {mode::local};
  auto r = run_bench(reg, req, env, nullptr);
  REQUIRE(!r);
  CHECK(describe(r.error()).find("unknown scenario 'warp_drive': use one of call_latency, "
                                 "bulk, model_load, decode_loop, launch_storm, link")
        == 0);
  req.scenarios = {"link"};
  req.links = {"1gbt,0.5ms"};
  auto bad = run_bench(reg, req, env, nullptr);
  REQUIRE(!bad);
  CHECK(describe(bad.error()).find("bad rate '1gbt'") != std::string::npos);
}

TEST_CASE("result lines of a program are parsed in order") {
  auto r = parse_result_lines("hello\nresult sync_call_us 12.5\nresult x\nresult bytes 1e9\n");
  REQUIRE(r.size() == 2);
  CHECK(r[0].first == "sync_call_us");
  CHECK(r[0].second == 12.5);
  CHECK(r[1].second == 1e9);
}

TEST_CASE("remote modes run the program through gleam-run at the link's port") {
  auto dir = temp_dir();
  mkdir((dir + "/bin").c_str(), 0755);
  mkdir((dir + "/bench").c_str(), 0755);
  // A stand-in gleam-run that reports the wiring it was given.
  write_script(dir + "/bin/gleam-run",
               "[ \"$1\" = -- ] && shift\n"
               "echo result async_off $([ \"$GLEAM_ASYNC\" = off ] && echo 1 || echo 0)\n"
               "echo result port ${GLEAM_SERVER##*:}\n"
               "exec \"$@\"\n");
  write_script(dir + "/bench/prog", "echo result value $1\n");
  // The "gleamd": a server that answers one byte, reached through the link.
  gleam::test::loopback_server server([](int fd) { gleam::test::send_all(fd, "!", 1); });
  bench_settings st;
  st.build_dir = dir;
  st.work_dir = dir;
  st.server = "127.0.0.1:" + std::to_string(server.port());
  bench_env env(st);
  CHECK(env.missing(mode::naive, {"prog"}).empty());
  auto link = gleam::tools::link_emulator::parse_link_spec("unlimited,1ms");
  REQUIRE(link);
  auto e = env.prepare(mode::naive, *link);
  REQUIRE(e);
  run_context ctx{mode::naive, *link, 1, &st, *e};
  auto lines = run_program(ctx, "prog", {"7"});
  REQUIRE(lines);
  REQUIRE(lines->size() == 3);
  CHECK((*lines)[0] == std::make_pair(std::string("async_off"), 1.0));
  auto port = static_cast<uint16_t>((*lines)[1].second);
  CHECK((*lines)[2] == std::make_pair(std::string("value"), 7.0));
  // GLEAM_SERVER points at the link emulator, which reaches the server.
  CHECK(port != server.port());
  int fd = gleam::test::connect_to(port);
  REQUIRE(fd >= 0);
  char c = 0;
  REQUIRE(gleam::test::recv_all(fd, &c, 1));
  CHECK(c == '!');
  close(fd);
  auto full = env.prepare(mode::full, *link);
  REQUIRE(full);
  CHECK(full->size() == 1);
  CHECK(full->front().second == "127.0.0.1:" + std::to_string(port));
}

TEST_CASE("a failing program is an error naming it, its exit code and log") {
  auto dir = temp_dir();
  mkdir((dir + "/bench").c_str(), 0755);
  write_script(dir + "/bench/bad", "echo oops >&2\nexit 3\n");
  bench_settings st;
  st.build_dir = dir;
  st.work_dir = dir;
  run_context ctx{mode::local, {}, 1, &st, {}};
  auto r = run_program(ctx, "bad", {});
  REQUIRE(!r);
  CHECK(describe(r.error())
        == "bench program 'bad' (local mode) exited with 3: see " + dir + "/bad.local.log");
  std::ifstream log(dir + "/bad.local.log");
  std::string line;
  std::getline(log, line);
  CHECK(line == "oops");
}

TEST_CASE("processes start with a pid file and stop with it removed") {
  auto dir = temp_dir();
  auto pid_file = dir + "/sleep.pid";
  auto p = start_process({"/bin/sleep", "30"}, {}, dir + "/sleep.log", pid_file);
  REQUIRE(p);
  std::ifstream f(pid_file);
  int pid = 0;
  f >> pid;
  CHECK(pid == p->pid);
  CHECK(stop_process(*p) == 128 + SIGTERM);
  CHECK(access(pid_file.c_str(), F_OK) != 0);
  auto missing = start_process({dir + "/nope"}, {}, "", "");
  REQUIRE(!missing);
  CHECK(describe(missing.error()).find("is not an executable") != std::string::npos);
}

TEST_CASE("wait_for_port sees a listener and times out on a free port") {
  gleam::test::loopback_server server([](int) {});
  CHECK(!wait_for_port("127.0.0.1", server.port(), std::chrono::seconds{5}));
  auto port = free_port();
  REQUIRE(port);
  auto err = wait_for_port("127.0.0.1", *port, std::chrono::milliseconds{100});
  REQUIRE(err);
  CHECK(err.code() == static_cast<uint8_t>(error_code::port_timeout));
  CHECK(describe(err).find("nothing listens on 127.0.0.1:" + std::to_string(*port))
        == 0);
}

TEST_CASE("gleam-bench options: defaults, repeated links, errors") {
  auto o = parse_bench_options({"call_latency", "bulk", "--link", "wifi", "--link",
                                "1gbit,0.5ms", "--reps", "7", "--modes", "local,full"},
                               "/b");
  REQUIRE(o);
  CHECK(o->request.scenarios == std::vector<std::string>{"call_latency", "bulk"});
  CHECK(o->request.links == std::vector<std::string>{"wifi", "1gbit,0.5ms"});
  CHECK(o->request.modes == std::vector<mode>{mode::local, mode::full});
  CHECK(o->settings.reps == 7);
  CHECK(o->settings.build_dir == "/b");
  CHECK(o->settings.work_dir == "/b/bench-work");
  auto d = parse_bench_options({"link"}, "/b");
  REQUIRE(d);
  CHECK(d->request.links == std::vector<std::string>{"1gbit,0.5ms"});
  CHECK(d->request.modes.size() == 3);
  auto none = parse_bench_options({}, "/b");
  REQUIRE(!none);
  CHECK(describe(none.error()).find("no scenario given") == 0);
  auto plot = parse_bench_options({"link", "--plot"}, "/b");
  REQUIRE(!plot);
  CHECK(describe(plot.error()).find("--out DIR") != std::string::npos);
  auto reps = parse_bench_options({"link", "--reps", "zero"}, "/b");
  REQUIRE(!reps);
  CHECK(describe(reps.error()).find("bad value 'zero' for --reps") == 0);
}

TEST_CASE("weights files have the requested size and seeded content") {
  auto dir = temp_dir();
  REQUIRE(!write_weights_file(dir + "/a", 3 << 20, 1));
  REQUIRE(!write_weights_file(dir + "/b", 3 << 20, 1));
  REQUIRE(!write_weights_file(dir + "/c", 3 << 20, 2));
  auto slurp = [](const std::string& p) {
    std::ifstream f(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), {});
  };
  auto a = slurp(dir + "/a");
  CHECK(a.size() == (3u << 20));
  CHECK(a == slurp(dir + "/b"));
  CHECK(a != slurp(dir + "/c"));
}

TEST_CASE("the link scenario measures gleam-link on loopback") {
  registry reg;
  register_builtin_scenarios(reg);
  auto* s = reg.find("link");
  REQUIRE(s);
  CHECK(!s->uses_modes);
  CHECK(!s->needs_gpu);
  auto link = gleam::tools::link_emulator::parse_link_spec("50mbit,1ms");
  REQUIRE(link);
  bench_settings st;
  run_context ctx{mode::none, *link, 1, &st, {}};
  auto r = s->run(ctx);
  REQUIRE(r.skipped.empty());
  std::map<std::string, double> got;
  for (auto& m : r.metrics) {
    REQUIRE(m.samples.size() == 1);
    got[m.name] = m.samples[0];
  }
  CHECK(got["up_mbit_s"] == Approx(50).epsilon(0.15));
  CHECK(got["down_mbit_s"] == Approx(50).epsilon(0.15));
  CHECK(got["delay_us"] >= 1000);
}
