#include <catch2/catch.hpp>

#include <chrono>
#include <csignal>
#include <string>
#include <thread>

#include <pthread.h>

#include "actors/stall_sampler.hpp"

using namespace gleam;
using namespace std::chrono_literals;

namespace {

/// Runs one step of `busy` sleeping on a thread of its own, sampled with a
/// threshold of 100 ms every 20 ms; returns where() after the step.
std::string sample_a_step(std::chrono::milliseconds busy) {
  std::string out;
  std::thread t{[&] {
    actors::stall_sampler sampler{pthread_self(), 100ms, 20ms};
    sampler.step_began(std::chrono::steady_clock::now());
    std::this_thread::sleep_for(busy);
    sampler.step_ended();
    out = sampler.where();
  }};
  t.join();
  return out;
}

} // namespace

TEST_CASE("a stall sampler names the function a long step is in", "[actors][stall]") {
  auto where = sample_a_step(600ms);
  INFO(where);
  // sleep_for ends in glibc's nanosleep: the stack's innermost frames.
  CHECK(where.find("nanosleep") != std::string::npos);
  CHECK(where.find("stack samples") != std::string::npos);
}

TEST_CASE("a stall sampler takes no sample of a step shorter than its threshold",
          "[actors][stall]") {
  CHECK(sample_a_step(30ms).empty());
}

TEST_CASE("a stall sampler leaves a signal the process handles itself", "[actors][stall]") {
  int sig = SIGRTMIN + 5;
  struct sigaction mine{};
  mine.sa_handler = SIG_IGN;
  struct sigaction before{};
  REQUIRE(sigaction(sig, &mine, &before) == 0);
  auto where = sample_a_step(400ms);
  struct sigaction after{};
  REQUIRE(sigaction(sig, nullptr, &after) == 0);
  CHECK(after.sa_handler == SIG_IGN);
  CHECK(where.find("uses the sampling signal") != std::string::npos);
  REQUIRE(sigaction(sig, &before, nullptr) == 0);
}
