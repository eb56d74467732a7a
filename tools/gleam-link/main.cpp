// gleam-link: a userspace TCP link emulator between a listen port and a
// target (rate, delay, jitter, loss stalls, scripted and on-demand cuts).

#include <csignal>
#include <cstdio>
#include <string>
#include <vector>

#include "tools/link_emulator/error.hpp"
#include "tools/link_emulator/link_emulator.hpp"
#include "tools/link_emulator/options.hpp"
#include "tools/link_emulator/selftest.hpp"

namespace le = gleam::tools::link_emulator;

namespace {

le::link_emulator* running = nullptr;

extern "C" void on_signal(int sig) {
  if (running == nullptr)
    return;
  if (sig == SIGUSR1)
    running->cut();
  else if (sig == SIGUSR2)
    running->restore();
  else
    running->stop();
}

} // namespace

int main(int argc, char** argv) {
  auto opts = le::parse_link_options(std::vector<std::string>(argv + 1, argv + argc));
  if (!opts) {
    std::fprintf(stderr, "gleam-link: %s\n", le::describe(opts.error()).c_str());
    return 2;
  }
  if (opts->help) {
    std::fputs(le::link_usage().c_str(), stdout);
    return 0;
  }
  if (opts->selftest) {
    std::printf("gleam-link selftest: link %s, up %s, down %s\n",
                opts->emulator.link.text.c_str(), le::to_string(opts->emulator.link.up).c_str(),
                le::to_string(opts->emulator.link.down).c_str());
    opts->selftest_opts.spin = opts->emulator.spin;
    auto r = le::run_selftest(opts->emulator.link, opts->selftest_opts);
    if (!r) {
      std::fprintf(stderr, "gleam-link: %s\n", le::describe(r.error()).c_str());
      return 1;
    }
    std::fputs(le::to_string(*r).c_str(), stdout);
    return 0;
  }
  auto em = le::link_emulator::create(opts->emulator);
  if (!em) {
    std::fprintf(stderr, "gleam-link: %s\n", le::describe(em.error()).c_str());
    return 1;
  }
  running = em->get();
  for (int sig : {SIGUSR1, SIGUSR2, SIGINT, SIGTERM})
    std::signal(sig, on_signal);
  std::printf("gleam-link: listening on %s:%u -> %s:%u, link %s (up %s, down %s)",
              opts->emulator.listen_host.c_str(), (*em)->port(),
              opts->emulator.target_host.c_str(), opts->emulator.target_port,
              opts->emulator.link.text.c_str(), le::to_string(opts->emulator.link.up).c_str(),
              le::to_string(opts->emulator.link.down).c_str());
  if ((*em)->control_port() != 0)
    std::printf(", control port %u", (*em)->control_port());
  std::printf("\n");
  std::fflush(stdout);
  (*em)->run();
  running = nullptr;
  std::printf("gleam-link: %s\n", le::to_string((*em)->stats()).c_str());
  return 0;
}
