#pragma once

// Reading a library spec (interpose/spec/<lib>.spec) and a library's
// exports, for the tests of the library surfaces (blas_spec_test.cpp,
// curand_spec_test.cpp).

#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/support/files.hpp"
#include "tests/support/gpu_probe.hpp"

namespace gleam::test::spec {

/// The parts of one spec entry these tests look at.
struct entry {
  std::string name;
  std::vector<std::string> classes;
  std::string reason;
  std::string call;
  /// The 'id' line, empty when there is none.
  std::string id;
};

inline std::string trim(const std::string& s) {
  auto first = s.find_first_not_of(" \t");
  if (first == std::string::npos)
    return {};
  return s.substr(first, s.find_last_not_of(" \t") - first + 1);
}

/// The entries of interpose/spec/<lib>.spec, in file order.
inline std::vector<entry> read_spec(const std::string& lib) {
  std::vector<entry> out;
  for (const auto& raw : lines_of(read_file(source_path("interpose/spec/" + lib + ".spec")))) {
    auto line = trim(raw);
    auto space = line.find(' ');
    auto key = line.substr(0, space);
    auto rest = space == std::string::npos ? std::string{} : trim(line.substr(space));
    if (key == "fn")
      out.push_back(entry{rest, {}, {}, {}, {}});
    else if (out.empty())
      continue;
    else if (key == "class")
      out.back().classes.push_back(rest.substr(0, rest.find(' ')));
    else if (key == "reason")
      out.back().reason = rest;
    else if (key == "call")
      out.back().call = rest;
    else if (key == "id")
      out.back().id = rest;
  }
  return out;
}

/// The names of `spec`.
inline std::set<std::string> names_of(const std::vector<entry>& spec) {
  std::set<std::string> names;
  for (const auto& e : spec)
    names.insert(e.name);
  return names;
}

/// `nm -D --defined-only` of `library`: names with version `version`, and
/// everything else (as "<type> <symbol>").
struct exported_set {
  std::multiset<std::string> versioned;
  std::vector<std::string> other;
};

inline exported_set exported_by(const std::string& library, const std::string& version) {
  std::string out;
  REQUIRE(run_command("nm -D --defined-only '" + library + "'", out) == 0);
  exported_set result;
  std::istringstream in{out};
  const std::string tag = "@@" + version;
  for (std::string line; std::getline(in, line);) {
    std::istringstream words{line};
    std::string address, type, symbol;
    words >> address >> type >> symbol;
    if (type == "T" && symbol.size() > tag.size()
        && symbol.compare(symbol.size() - tag.size(), tag.size(), tag) == 0)
      result.versioned.insert(symbol.substr(0, symbol.size() - tag.size()));
    else if (!(type == "A" && symbol == version))
      result.other.push_back(type + " " + symbol);
  }
  return result;
}

} // namespace gleam::test::spec
