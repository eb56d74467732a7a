#pragma once

#include <string>
#include <vector>

namespace gleam::test {

/// The whole content of the file at `path`; empty when it cannot be read.
std::string read_file(const std::string& path);

/// The lines of `text` that are neither empty nor comments ('#' first), as
/// in the spec files and the generated name lists.
std::vector<std::string> lines_of(const std::string& text);

} // namespace gleam::test
