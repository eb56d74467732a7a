#include <catch2/catch.hpp>

#include "tools/link_emulator/error.hpp"
#include "tools/link_emulator/link_spec.hpp"
#include "tools/link_emulator/options.hpp"
#include "tools/link_emulator/shaper.hpp"

using namespace gleam::tools::link_emulator;
using namespace std::chrono_literals;

namespace {

std::string error_text(const std::string& spec) {
  auto r = parse_link_spec(spec);
  REQUIRE(!r);
  return describe(r.error());
}

} // namespace

TEST_CASE("a rate and a delay set both directions") {
  auto s = parse_link_spec("1gbit,0.5ms");
  REQUIRE(s);
  CHECK(s->text == "1gbit,0.5ms");
  CHECK(s->up.rate_bps == 1'000'000'000);
  CHECK(s->up.delay == 500us);
  CHECK(s->down.rate_bps == 1'000'000'000);
  CHECK(s->down.delay == 500us);
  CHECK(s->up.jitter == 0ns);
}

TEST_CASE("rate units are decimal bits, byte units are eight bits") {
  CHECK(*parse_rate("300mbit") == 300'000'000);
  CHECK(*parse_rate("10mbit") == 10'000'000);
  CHECK(*parse_rate("50mbyte") == 400'000'000);
  CHECK(*parse_rate("2.5gbit") == 2'500'000'000);
  CHECK(*parse_rate("64kbit") == 64'000);
  CHECK(*parse_rate("unlimited") == 0);
}

TEST_CASE("durations accept ns, us, ms and s") {
  CHECK(*parse_duration("250us") == 250us);
  CHECK(*parse_duration("3ms") == 3ms);
  CHECK(*parse_duration("1.5s") == 1500ms);
  CHECK(*parse_duration("100ns") == 100ns);
  CHECK(!parse_duration("3"));
  CHECK(!parse_duration("3min"));
}

TEST_CASE("the wifi preset is 300mbit, 3ms, 1ms jitter") {
  auto s = parse_link_spec("wifi");
  REQUIRE(s);
  CHECK(s->up.rate_bps == 300'000'000);
  CHECK(s->up.delay == 3ms);
  CHECK(s->up.jitter == 1ms);
  CHECK(s->down.jitter == 1ms);
}

TEST_CASE("keys set jitter, distribution, loss, stall and burst") {
  auto s = parse_link_spec("10mbit,3ms,jitter=1ms,dist=normal,loss=0.1%,stall=50ms,burst=64kib");
  REQUIRE(s);
  CHECK(s->up.rate_bps == 10'000'000);
  CHECK(s->up.jitter == 1ms);
  CHECK(s->up.distribution == jitter_distribution::normal);
  CHECK(s->up.loss == Approx(0.001));
  CHECK(s->up.stall == 50ms);
  CHECK(s->up.burst_bytes == 65536);
  auto spaced = parse_link_spec("300mbit,3ms,jitter 1ms");
  REQUIRE(spaced);
  CHECK(spaced->up.jitter == 1ms);
  auto bare = parse_link_spec("300mbit,3ms,1ms");
  REQUIRE(bare);
  CHECK(bare->up.jitter == 1ms);
}

TEST_CASE("UP/DOWN specs shape the directions independently") {
  auto s = parse_link_spec("10mbit,5ms/1gbit,1ms");
  REQUIRE(s);
  CHECK(s->up.rate_bps == 10'000'000);
  CHECK(s->up.delay == 5ms);
  CHECK(s->down.rate_bps == 1'000'000'000);
  CHECK(s->down.delay == 1ms);
}

TEST_CASE("presets can be overridden by later items") {
  auto s = parse_link_spec("wifi,loss=1%");
  REQUIRE(s);
  CHECK(s->up.rate_bps == 300'000'000);
  CHECK(s->up.loss == Approx(0.01));
}

TEST_CASE("a bad rate names the item, the spec and valid examples") {
  CHECK(error_text("1gbt,0.5ms")
        == "bad rate '1gbt' in link spec '1gbt,0.5ms': use e.g. 1gbit, 300mbit, 50mbyte");
  auto r = parse_link_spec("1gbt,0.5ms");
  CHECK(r.error().code() == static_cast<uint8_t>(error_code::bad_rate));
}

TEST_CASE("other bad specs say what is wrong") {
  CHECK(error_text("").find("empty link spec") != std::string::npos);
  CHECK(error_text("fast").find("unknown item 'fast'") != std::string::npos);
  CHECK(error_text("1gbit,,1ms").find("empty item") != std::string::npos);
  CHECK(error_text("1gbit,1ms,2ms,3ms").find("third time '3ms'") != std::string::npos);
  CHECK(error_text("1gbit,jitter=fast").find("bad jitter 'fast'") != std::string::npos);
  CHECK(error_text("1gbit,loss=150%").find("bad loss") != std::string::npos);
  CHECK(error_text("1gbit,dist=pareto").find("dist=uniform or dist=normal")
        != std::string::npos);
  CHECK(error_text("1gbit,color=red").find("unknown key 'color'") != std::string::npos);
  CHECK(error_text("a/b/c").find("more than one '/'") != std::string::npos);
}

TEST_CASE("a direction renders back to a spec that parses to the same values") {
  auto s = parse_link_spec("300mbit,3ms,jitter=1ms,loss=0.5%,stall=20ms");
  REQUIRE(s);
  auto again = parse_link_spec(to_string(s->up));
  REQUIRE(again);
  CHECK(again->up.rate_bps == s->up.rate_bps);
  CHECK(again->up.delay == s->up.delay);
  CHECK(again->up.jitter == s->up.jitter);
  CHECK(again->up.loss == Approx(s->up.loss));
  CHECK(again->up.stall == s->up.stall);
  CHECK(format_rate(1'000'000'000) == "1gbit");
  CHECK(format_rate(300'000'000) == "300mbit");
  CHECK(format_duration(500us) == "0.5ms");
}

TEST_CASE("the shaper spaces admitted bytes at the line rate") {
  direction_spec d;
  d.rate_bps = 8'000'000; // 1 byte per microsecond
  shaper sh(d);
  time_point t0{std::chrono::seconds{100}};
  // Burst (two segments of 1500 bytes) goes at once, then line time accrues.
  auto first = sh.admit(t0, 1000);
  CHECK(first == t0);
  sh.admit(t0, 10'000);
  auto last = sh.admit(t0, 1000);
  // 12000 bytes at 1 B/us, minus the 3000 B burst credit.
  CHECK(last - t0 == std::chrono::microseconds{12000 - 2 * sh.segment_bytes()});
  // 9 ms queued is over the 6 ms backlog limit (four segments): wait 3 ms.
  CHECK(sh.read_budget(t0) == 0);
  CHECK(sh.next_read_time(t0) == t0 + 3ms);
  CHECK(sh.read_budget(t0 + 3500us) >= sh.segment_bytes());
}

TEST_CASE("the delay line adds the delay and never reorders under jitter") {
  direction_spec d;
  d.delay = 1ms;
  d.jitter = 900us;
  delay_line line(d, 42);
  time_point t{std::chrono::seconds{1}};
  uint64_t stalls = 0;
  time_point prev{};
  for (int i = 0; i < 1000; ++i) {
    auto at = line.release(t + std::chrono::microseconds{i}, 100, stalls);
    CHECK(at >= prev);
    CHECK(at >= t + std::chrono::microseconds{i} + 100us);
    prev = at;
  }
  CHECK(stalls == 0);
}

TEST_CASE("losses stall the direction for the stall time") {
  direction_spec d;
  d.loss = 0.5;
  d.stall = 200ms;
  delay_line line(d, 7);
  uint64_t stalls = 0;
  time_point t{std::chrono::seconds{1}};
  time_point at{};
  for (int i = 0; i < 20; ++i)
    at = line.release(t, 1500, stalls);
  // Overlapping stalls hold the direction until the latest one ends.
  CHECK(stalls > 0);
  CHECK(at - t == 200ms);
}

TEST_CASE("gleam-link options: listen, target, link and cuts") {
  auto o = parse_link_options({"--listen", "7001", "--target", "10.0.0.2:7000", "--link",
                               "wifi", "--cut-at", "5s", "--cut-for", "3s", "--cut-mode",
                               "reset", "--control-port", "7002"});
  REQUIRE(o);
  CHECK(o->emulator.listen_port == 7001);
  CHECK(o->emulator.listen_host == "127.0.0.1");
  CHECK(o->emulator.target_host == "10.0.0.2");
  CHECK(o->emulator.target_port == 7000);
  CHECK(o->emulator.link.up.rate_bps == 300'000'000);
  CHECK(*o->emulator.cut_at == 5s);
  CHECK(o->emulator.cut_for == 3s);
  CHECK(o->emulator.mode == cut_mode::reset);
  CHECK(o->emulator.control_port == 7002);
  auto asym = parse_link_options({"--selftest", "--link", "1gbit,1ms", "--down", "10mbit,1ms"});
  REQUIRE(asym);
  CHECK(asym->emulator.link.up.rate_bps == 1'000'000'000);
  CHECK(asym->emulator.link.down.rate_bps == 10'000'000);
}

TEST_CASE("gleam-link options: errors name the option") {
  auto no_target = parse_link_options({"--listen", "7001"});
  REQUIRE(!no_target);
  CHECK(describe(no_target.error()).find("--target HOST:PORT") != std::string::npos);
  auto cut = parse_link_options({"--selftest", "--cut-at", "5s"});
  REQUIRE(!cut);
  CHECK(describe(cut.error()).find("--cut-for") != std::string::npos);
  auto mode = parse_link_options({"--selftest", "--cut-mode", "drop"});
  REQUIRE(!mode);
  CHECK(describe(mode.error()) == "bad cut mode 'drop': use hold or reset");
  auto spec = parse_link_options({"--selftest", "--link", "1gbt,0.5ms"});
  REQUIRE(!spec);
  CHECK(describe(spec.error()).find("bad rate '1gbt'") != std::string::npos);
}
