#include "tests/support/files.hpp"

#include <fstream>
#include <iterator>
#include <sstream>

namespace gleam::test {

std::string read_file(const std::string& path) {
  std::ifstream in{path};
  return std::string{std::istreambuf_iterator<char>{in}, std::istreambuf_iterator<char>{}};
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in{text};
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] != '#')
      out.push_back(line);
  return out;
}

} // namespace gleam::test
