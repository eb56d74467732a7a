#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <caf/expected.hpp>

namespace gleam::config {

/// A parsed configuration file in CAF's INI-style syntax:
///
///     # comment
///     [section]
///     key = "string" | 42 | true | 500ms | ["a", "b"]
///
/// Keys are addressed as "section.key". Typed getters convert on demand and
/// return errors that name the file, line and key. Every key a getter reads
/// is marked used, so `check_all_used` can reject unknown (misspelt) keys.
/// Not thread-safe.
class config_file {
public:
  struct entry {
    std::string raw; // value text as written, quotes removed for strings
    bool quoted = false;
    bool list = false;
    std::vector<std::string> items; // list elements, unquoted
    int line = 0;
  };

  /// Parses `text`; `origin` (a path) names it in error messages.
  [[nodiscard]] static caf::expected<config_file> parse(const std::string& text,
                                                        std::string origin);

  /// Reads and parses the file at `path`.
  [[nodiscard]] static caf::expected<config_file> load(const std::string& path);

  bool has(const std::string& key) const;

  [[nodiscard]] caf::expected<std::string> get_string(const std::string& key,
                                                      const std::string& fallback);
  [[nodiscard]] caf::expected<int64_t> get_int(const std::string& key, int64_t fallback,
                                               int64_t min, int64_t max);
  [[nodiscard]] caf::expected<bool> get_bool(const std::string& key, bool fallback);
  [[nodiscard]] caf::expected<std::chrono::milliseconds>
  get_duration(const std::string& key, std::chrono::milliseconds fallback);
  /// The same to the microsecond (e.g. poll = "500us").
  [[nodiscard]] caf::expected<std::chrono::microseconds>
  get_duration(const std::string& key, std::chrono::microseconds fallback);
  /// Byte sizes: plain integers or with a unit: 512MiB, 2GiB, 1GB, 64KiB.
  [[nodiscard]] caf::expected<uint64_t> get_bytes(const std::string& key, uint64_t fallback);
  /// A list of strings; a single string counts as a one-element list.
  [[nodiscard]] caf::expected<std::vector<std::string>>
  get_list(const std::string& key, const std::vector<std::string>& fallback);

  /// Fails with unknown_key for the first key no getter has read, listing the
  /// keys that section accepts.
  [[nodiscard]] caf::error check_all_used() const;

  /// "file:line: key 'section.key'" for messages.
  std::string where(const std::string& key) const;

  const std::string& origin() const {
    return origin_;
  }

private:
  std::string origin_;
  std::map<std::string, entry> entries_;
  std::set<std::string> used_;
  std::map<std::string, std::set<std::string>> known_; // section -> keys read
};

/// `s` without leading and trailing white space.
std::string trim(const std::string& s);

/// Reads a whole text file; file_unreadable names the path.
[[nodiscard]] caf::expected<std::string> read_text(const std::string& path);

/// Parses a duration such as "500ms", "2s", "1.5s", "1min", "2h", "250us".
[[nodiscard]] caf::expected<std::chrono::microseconds> parse_duration(const std::string& text);

/// Parses a byte size such as "4096", "512MiB", "2GiB", "1GB".
[[nodiscard]] caf::expected<uint64_t> parse_bytes(const std::string& text);

/// Splits "host:port"; fails with bad_value naming `what` on a bad form.
[[nodiscard]] caf::expected<std::pair<std::string, uint16_t>>
parse_endpoint(const std::string& text, const std::string& what);

} // namespace gleam::config
