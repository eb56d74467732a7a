#pragma once

// Reading a library spec (interpose/spec/<lib>.spec) and a library's
// exports, for the tests of the library surfaces (blas_spec_test.cpp,
// curand_spec_test.cpp, cudnn_spec_test.cpp), and the checks those
// surfaces share: the vendor's name list, the built library's exports, the
// generated name lists.

#include <fstream>
#include <map>
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
  /// The 'header' line (the vendor header declaring it; "none" for an
  /// internal export), empty when there is none.
  std::string header;
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
      out.push_back(entry{rest, {}, {}, {}, {}, {}});
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
    else if (key == "header")
      out.back().header = rest;
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

/// The vendor's exported names as committed next to the specs
/// (interpose/spec/<soname>.symbols).
inline std::vector<std::string> committed_names(const std::string& soname) {
  return lines_of(read_file(source_path("interpose/spec/" + soname + ".symbols")));
}

/// Checks that the vendor library at `vendor` exports exactly the committed
/// names, every one versioned `soname`; skipped with a warning when the
/// vendor library is not installed.
inline void check_vendor_list(const std::string& vendor, const std::string& soname) {
  if (!std::ifstream{vendor}.good()) {
    WARN("no vendor " << vendor << " to compare with; skipped");
    return;
  }
  auto exported = exported_by(vendor, soname);
  auto committed = committed_names(soname);
  CHECK(std::set<std::string>(exported.versioned.begin(), exported.versioned.end())
        == std::set<std::string>(committed.begin(), committed.end()));
  // The vendor versions every export: so must we.
  CHECK(exported.other.empty());
}

/// Checks that the built <build>/lib/<soname> exports exactly the names of
/// interpose/spec/<lib>.spec, once each, versioned `soname` (the version
/// script says so), and carries SONAME `soname`.
inline void check_built_exports(const std::string& lib, const std::string& soname) {
  auto built = build_path("lib/" + soname);
  auto exported = exported_by(built, soname);
  auto names = names_of(read_spec(lib));
  std::set<std::string> unique(exported.versioned.begin(), exported.versioned.end());
  CHECK(exported.versioned.size() == unique.size());
  CHECK(unique == names);
  INFO("first unexpected export: " << (exported.other.empty() ? "" : exported.other.front()));
  CHECK(exported.other.empty());
  auto map = read_file(build_path("interpose/" + lib + ".map"));
  CHECK(map.find(soname + " {") != std::string::npos);
  std::string out;
  REQUIRE(run_command("readelf -d '" + built + "'", out) == 0);
  CHECK(out.find("Library soname: [" + soname + "]") != std::string::npos);
}

/// Checks the generated name lists of <lib> (<build>/interpose/<lib>_symbols.txt,
/// _manual.txt, _generated.txt, _unsupported.txt) against its spec.
inline void check_generated_lists(const std::string& lib) {
  auto spec = read_spec(lib);
  auto names = names_of(spec);
  auto listed = [&](const std::string& what) {
    std::set<std::string> out;
    for (const auto& line :
         lines_of(read_file(build_path("interpose/" + lib + "_" + what + ".txt"))))
      out.insert(line.substr(0, line.find('\t')));
    return out;
  };
  auto symbols = lines_of(read_file(build_path("interpose/" + lib + "_symbols.txt")));
  CHECK(symbols == std::vector<std::string>(names.begin(), names.end()));
  std::map<std::string, std::set<std::string>> by_class;
  for (const auto& e : spec)
    by_class[e.classes.front()].insert(e.name);
  CHECK(listed("manual") == by_class["manual"]);
  CHECK(listed("generated") == by_class["generated"]);
  CHECK(listed("unsupported") == by_class["unsupported"]);
}

/// Runs tests/programs/<program> (skipped with a warning when nvcc did not
/// build it) against the built libraries with no server reachable (port 1
/// of the loopback refuses at once): it must exit 1 with `failure` in its
/// output, and the dynamic linker must bind `symbol` to the built
/// lib/<soname> under its version.
inline void check_program_binds(const std::string& program, const std::string& soname,
                                const std::string& symbol, const std::string& failure) {
  auto path = build_path("tests/programs/" + program);
  if (!std::ifstream{path}.good()) {
    WARN("tests/programs/" << program << " is not built (no nvcc); skipped");
    return;
  }
  auto dir = build_path("tests/interpose_spec_test.d");
  std::string out;
  REQUIRE(run_command("mkdir -p '" + dir + "'", out) == 0);
  auto rc = run_command("GLEAM_SERVER=127.0.0.1:1 LD_DEBUG=bindings LD_DEBUG_OUTPUT='" + dir + "/"
                          + program + "' LD_LIBRARY_PATH='" + build_path("lib") + "' '" + path
                          + "' 2>&1",
                        out);
  INFO(out);
  CHECK(rc == 1);
  CHECK(out.find(failure) != std::string::npos);
  std::string bindings;
  REQUIRE(run_command("cat '" + dir + "'/" + program + ".* && rm -f '" + dir + "'/" + program
                        + ".*",
                      bindings)
          == 0);
  auto at = bindings.find("`" + symbol + "'");
  REQUIRE(at != std::string::npos);
  auto start = bindings.rfind('\n', at);
  auto line = bindings.substr(start + 1, bindings.find('\n', at) - start - 1);
  INFO(line);
  CHECK(line.find(build_path("lib/" + soname)) != std::string::npos);
  CHECK(line.find("[" + soname + "]") != std::string::npos);
}

} // namespace gleam::test::spec
