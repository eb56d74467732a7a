// placement_sim: replays a generated trace through the simulated cluster
// under each policy and prints the comparison table.
#include <cstdio>

#include "placement/sim/run_sim.hpp"

int main(int argc, char** argv) {
  bool ok = false;
  auto out = gleam::placement::sim::run_sim_cli(argc, argv, &ok);
  std::fputs(out.c_str(), ok ? stdout : stderr);
  return ok ? 0 : 2;
}
