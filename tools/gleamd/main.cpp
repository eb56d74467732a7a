// gleamd: one Gleam node, with the roles its config file names.
//
//   gleamd --config-file=deploy/examples/all-in-one.conf
//
// The node's wiring is tools/gleamd/node_main.cpp; a GPU server's worker
// process (isolation = process) is tools/gleamd/worker.cpp.
#include "tools/gleamd/node_main.hpp"

int main(int argc, char** argv) {
  return gleam::tools::run_gleamd(argc, argv);
}
