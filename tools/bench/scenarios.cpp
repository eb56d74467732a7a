#include "tools/bench/scenarios.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <vector>

#include "tools/bench/bench_env.hpp"
#include "tools/bench/error.hpp"
#include "tools/bench/stats.hpp"
#include "tools/link_emulator/error.hpp"
#include "tools/link_emulator/selftest.hpp"

namespace gleam::tools::bench {

namespace {

/// Runs `program` ctx.reps times with `args_for(rep)` and records the
/// result lines named in `units` as metrics.
scenario_result run_reps(const run_context& ctx, const std::string& program,
                         const std::vector<std::pair<std::string, std::string>>& units,
                         const std::function<std::vector<std::string>(int)>& args_for) {
  scenario_result out;
  for (auto& [name, unit] : units)
    out.metric(name, unit);
  for (int rep = 0; rep < ctx.reps; ++rep) {
    auto lines = run_program(ctx, program, args_for(rep));
    if (!lines) {
      std::vector<std::string> names;
      for (auto& u : units)
        names.push_back(u.first);
      return scenario_result::skip("run failed: " + describe(lines.error()), names);
    }
    for (auto& [name, value] : *lines)
      for (auto& [want, unit] : units)
        if (name == want)
          out.metric(name, unit).samples.push_back(value);
  }
  return out;
}

scenario_result call_latency(const run_context& ctx) {
  auto r = run_reps(ctx, "call_latency",
                    {{"sync_call_us", "us"}, {"async_call_us", "us"}, {"launch_sync_us", "us"}},
                    [](int) { return std::vector<std::string>{"--iters", "1000"}; });
  if (!r.skipped.empty() || ctx.run_mode == mode::local)
    return r;
  // The link's own round trip, measured now with the same emulator code: a
  // 64 B TCP ping-pong. sync_over_rtt_us is what Gleam adds to it.
  namespace le = link_emulator;
  le::selftest_options opts;
  opts.bulk = false;
  opts.pings = 1000;
  auto sync = r.metric("sync_call_us", "us").samples;
  auto& rtt = r.metric("link_rtt_us", "us");
  for (int rep = 0; rep < ctx.reps; ++rep) {
    auto t = le::run_selftest(ctx.link, opts);
    if (!t)
      return scenario_result::skip("link ping failed: " + le::describe(t.error()),
                                   {"sync_call_us", "link_rtt_us"});
    rtt.samples.push_back(2 * t->delay_median_us);
  }
  auto rtt_median = percentile(rtt.samples, 0.5);
  auto& over = r.metric("sync_over_rtt_us", "us"); // may move `rtt`: not used after
  for (double v : sync)
    over.samples.push_back(v - rtt_median);
  return r;
}

scenario_result bulk(const run_context& ctx) {
  auto r = run_reps(ctx, "bulk", {{"h2d_gbit_s", "Gbit/s"}, {"d2h_gbit_s", "Gbit/s"}},
                    [](int rep) {
                      return std::vector<std::string>{"--mib", "256", "--seed",
                                                      std::to_string(rep + 1)};
                    });
  // Throughput against the link's rate, where there is a link.
  if (r.skipped.empty() && ctx.run_mode != mode::local && ctx.link.up.rate_bps > 0) {
    auto h2d = r.metric("h2d_gbit_s", "Gbit/s").samples;
    auto& util = r.metric("h2d_link_util", "%");
    for (double v : h2d)
      util.samples.push_back(v * 1e9 / static_cast<double>(ctx.link.up.rate_bps) * 100);
  }
  return r;
}

scenario_result model_load(const run_context& ctx) {
  const auto& s = *ctx.settings;
  auto bytes = static_cast<uint64_t>(s.model_gib * 1024 * 1024 * 1024);
  auto path = s.work_dir + "/weights.bin";
  scenario_result out;
  // Room for every metric, so the references below stay valid.
  out.metrics.reserve(16);
  auto& uncached = out.metric("load_uncached_s", "s");
  auto& cached = out.metric("load_cached_s", "s");
  auto& speedup = out.metric("cached_speedup", "x");
  auto& sent_uncached = out.metric("sent_uncached_mib", "MiB");
  auto& sent_cached = out.metric("sent_cached_mib", "MiB");
  // Where the cached load's time went (the client's view).
  auto& alloc_cached = out.metric("cached_alloc_s", "s");
  auto& copy_cached = out.metric("cached_copy_s", "s");
  auto& hash_cached = out.metric("cached_hash_s", "s");
  auto& key_wait_cached = out.metric("cached_key_wait_s", "s");
  std::vector<std::string> names{"load_uncached_s", "load_cached_s", "cached_speedup",
                                 "sent_uncached_mib", "sent_cached_mib", "cached_alloc_s",
                                 "cached_copy_s", "cached_hash_s", "cached_key_wait_s"};
  // The interposer reports the bytes its large copies sent (GLEAM_CACHE_REPORT).
  auto run_ctx = ctx;
  if (ctx.run_mode != mode::local)
    run_ctx.env.emplace_back("GLEAM_CACHE_REPORT", "1");
  for (int rep = 0; rep < ctx.reps; ++rep) {
    // Fresh content per repetition, so the first load is a cold one.
    auto seed = static_cast<uint64_t>(rep + 1) * 7919 + static_cast<uint64_t>(ctx.run_mode);
    if (auto err = write_weights_file(path, bytes, seed))
      return scenario_result::skip("run failed: " + describe(err), names);
    for (auto [target, sent] : {std::pair{&uncached, &sent_uncached}, std::pair{&cached, &sent_cached}}) {
      auto lines = run_program(run_ctx, "model_load", {"--file", path});
      if (!lines)
        return scenario_result::skip("run failed: " + describe(lines.error()), names);
      double load_s = -1;
      double ok = 0;
      double sent_bytes = -1;
      std::map<std::string, double> parts;
      for (auto& [name, value] : *lines) {
        if (name == "load_s")
          load_s = value;
        else if (name == "checksum_ok")
          ok = value;
        else if (name == "gleam_sent_bytes")
          sent_bytes = value;
        else
          parts[name] = value;
      }
      if (sent_bytes >= 0)
        sent->samples.push_back(sent_bytes / (1024.0 * 1024.0));
      if (target == &cached)
        for (auto [metric, name] :
             {std::pair{&alloc_cached, "alloc_s"}, std::pair{&copy_cached, "copy_s"},
              std::pair{&hash_cached, "gleam_hash_s"},
              std::pair{&key_wait_cached, "gleam_key_wait_s"}})
          if (auto i = parts.find(name); i != parts.end())
            metric->samples.push_back(i->second);
      if (ok != 1 || load_s < 0)
        return scenario_result::skip(
          "run failed: model_load saw wrong weights on the device (checksum mismatch) in "
            + std::string(to_string(ctx.run_mode)) + " mode",
          names);
      target->samples.push_back(load_s);
    }
    if (cached.samples.back() > 0)
      speedup.samples.push_back(uncached.samples.back() / cached.samples.back());
  }
  // Local runs send nothing over a network: no byte rows.
  out.metrics.erase(std::remove_if(out.metrics.begin(), out.metrics.end(),
                                   [](const metric_samples& m) { return m.samples.empty(); }),
                    out.metrics.end());
  return out;
}

// A decode step of a ~1B-parameter fp16 model: 32 kernels of 156 us GPU
// time each (5.0 ms a token), then the 4 B token read-back. Only a decode
// step with real GPU work can hide a network round trip; see README.md.
scenario_result decode_loop(const run_context& ctx) {
  return run_reps(ctx, "decode_loop", {{"iter_us", "us"}, {"iters_per_s", "1/s"}},
                  [](int) {
                    return std::vector<std::string>{"--iters", "100", "--kernels", "32",
                                                    "--kernel-us", "156"};
                  });
}

// The old decode_loop: 32 tiny kernels and a 4 B sync an iteration. Nothing
// hides the round trip: it measures launch cost and batching alone.
scenario_result launch_storm(const run_context& ctx) {
  return run_reps(ctx, "decode_loop", {{"iter_us", "us"}, {"iters_per_s", "1/s"}},
                  [](int) {
                    return std::vector<std::string>{"--iters", "200", "--kernels", "32",
                                                    "--kernel-us", "0"};
                  });
}

scenario_result link(const run_context& ctx) {
  namespace le = link_emulator;
  le::selftest_options opts;
  opts.bulk_duration = std::chrono::milliseconds{1500};
  opts.pings = 500;
  scenario_result out;
  // Room for every metric, so the references below stay valid.
  out.metrics.reserve(8);
  auto& up = out.metric("up_mbit_s", "Mbit/s");
  auto& down = out.metric("down_mbit_s", "Mbit/s");
  auto& rate_err = out.metric("rate_error_pct", "%");
  auto& delay = out.metric("delay_us", "us");
  auto& delay_p99 = out.metric("delay_p99_us", "us");
  auto& delay_err = out.metric("delay_error_us", "us");
  auto& cpu = out.metric("cpu_pct", "%");
  for (int rep = 0; rep < ctx.reps; ++rep) {
    auto r = le::run_selftest(ctx.link, opts);
    if (!r)
      return scenario_result::skip("run failed: " + le::describe(r.error()),
                                   {"up_mbit_s", "down_mbit_s", "delay_us"});
    up.samples.push_back(r->up_bps / 1e6);
    down.samples.push_back(r->down_bps / 1e6);
    if (r->configured_up_bps > 0)
      rate_err.samples.push_back((r->up_bps - r->configured_up_bps) / r->configured_up_bps
                                 * 100);
    delay.samples.push_back(r->delay_median_us);
    delay_p99.samples.push_back(r->delay_p99_us);
    delay_err.samples.push_back(r->delay_median_us - r->configured_delay_us
                                - r->direct_median_us);
    cpu.samples.push_back(r->bulk_cpu_percent);
  }
  if (rate_err.samples.empty())
    out.metrics.erase(out.metrics.begin() + 2);
  return out;
}

} // namespace

caf::error write_weights_file(const std::string& path, uint64_t bytes, uint64_t seed) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr)
    return make_error(error_code::io_failed, "cannot write weights file '" + path
                                               + "': choose a writable --work-dir");
  std::vector<uint64_t> buf(1 << 17);
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  uint64_t left = bytes;
  bool ok = true;
  while (ok && left > 0) {
    for (auto& w : buf) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      w = x;
    }
    auto n = std::min<uint64_t>(left, buf.size() * sizeof(uint64_t));
    ok = std::fwrite(buf.data(), 1, n, f) == n;
    left -= n;
  }
  ok = std::fclose(f) == 0 && ok;
  if (!ok)
    return make_error(error_code::io_failed, "short write to weights file '" + path
                                               + "': free disk space or use --model-gib");
  return caf::none;
}

void register_builtin_scenarios(registry& reg) {
  reg.add({"call_latency",
           "per-call latency of a sync call (4 B D2H copy), an async call (empty launch) "
           "and launch+sync",
           true, true, {"call_latency"},
           {"sync_call_us", "async_call_us", "launch_sync_us", "link_rtt_us", "sync_over_rtt_us"},
           call_latency});
  reg.add({"bulk", "H2D/D2H throughput of 256 MiB pinned copies vs the link rate", true,
           true, {"bulk"}, {"h2d_gbit_s", "d2h_gbit_s"}, bulk});
  reg.add({"model_load",
           "allocate + upload --model-gib GiB of weight-like tensors from a file, "
           "uncached then cached",
           true, true, {"model_load"},
           {"load_uncached_s", "load_cached_s", "cached_speedup", "sent_uncached_mib",
            "sent_cached_mib", "cached_alloc_s", "cached_copy_s", "cached_hash_s",
            "cached_key_wait_s"},
           model_load});
  reg.add({"decode_loop",
           "100 decode steps of a ~1B fp16 model: 32 kernels of 156 us GPU time, then a "
           "4 B token read-back",
           true, true, {"decode_loop"}, {"iter_us", "iters_per_s"}, decode_loop});
  reg.add({"launch_storm", "200 iterations of 32 tiny kernels and one 4 B sync each", true,
           true, {"decode_loop"}, {"iter_us", "iters_per_s"}, launch_storm});
  reg.add({"link", "gleam-link's own rate and one-way delay on loopback (no GPU)", false,
           false, {}, {"up_mbit_s", "down_mbit_s", "delay_us"}, link});
}

} // namespace gleam::tools::bench
