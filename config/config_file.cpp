#include "config/config_file.hpp"

#include <cctype>
#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>

#include "config/error.hpp"

namespace gleam::config {

std::string trim(const std::string& s) {
  size_t b = 0;
  size_t e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b])))
    ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1])))
    --e;
  return s.substr(b, e - b);
}

namespace {

// Removes a trailing comment that is not inside a quoted string.
std::string strip_comment(const std::string& line) {
  bool in_quote = false;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (c == '"' && (i == 0 || line[i - 1] != '\\'))
      in_quote = !in_quote;
    else if (!in_quote && (c == '#' || c == ';'))
      return line.substr(0, i);
  }
  return line;
}

// Unquotes "..." with \" and \\ escapes; returns false on a bad literal.
bool unquote(const std::string& text, std::string& out) {
  if (text.size() < 2 || text.front() != '"' || text.back() != '"')
    return false;
  out.clear();
  for (size_t i = 1; i + 1 < text.size(); ++i) {
    char c = text[i];
    if (c == '\\' && i + 2 < text.size()) {
      out.push_back(text[++i]);
    } else if (c == '"') {
      return false;
    } else {
      out.push_back(c);
    }
  }
  return true;
}

bool split_list(const std::string& body, std::vector<std::string>& items) {
  std::string cur;
  bool in_quote = false;
  for (char c : body) {
    if (c == '"')
      in_quote = !in_quote;
    if (c == ',' && !in_quote) {
      items.push_back(trim(cur));
      cur.clear();
    } else {
      cur.push_back(c);
    }
  }
  if (in_quote)
    return false;
  if (!trim(cur).empty() || !items.empty())
    items.push_back(trim(cur));
  for (auto& item : items) {
    if (item.empty())
      return false;
    if (item.front() == '"') {
      std::string plain;
      if (!unquote(item, plain))
        return false;
      item = plain;
    }
  }
  return true;
}

} // namespace

caf::expected<config_file> config_file::parse(const std::string& text, std::string origin) {
  config_file result;
  result.origin_ = std::move(origin);
  std::istringstream in(text);
  std::string raw_line;
  std::string section;
  int line_no = 0;
  auto fail = [&](const std::string& what) {
    return make_error(error_code::syntax_error,
                      result.origin_ + ":" + std::to_string(line_no) + ": " + what);
  };
  while (std::getline(in, raw_line)) {
    ++line_no;
    std::string line = trim(strip_comment(raw_line));
    if (line.empty())
      continue;
    if (line.front() == '[') {
      if (line.back() != ']' || line.size() < 3)
        return fail("malformed section header '" + line + "': use [section]");
      section = trim(line.substr(1, line.size() - 2));
      continue;
    }
    auto eq = line.find('=');
    if (eq == std::string::npos)
      return fail("expected 'key = value', got '" + line + "'");
    std::string key = trim(line.substr(0, eq));
    std::string value = trim(line.substr(eq + 1));
    if (key.empty())
      return fail("missing key before '='");
    if (section.empty() && key.find('.') == std::string::npos)
      return fail("key '" + key + "' is outside any [section]");
    std::string full = section.empty() ? key : section + "." + key;
    if (result.entries_.count(full) > 0)
      return fail("key '" + full + "' is set twice (first on line "
                  + std::to_string(result.entries_[full].line) + ")");
    if (value.empty())
      return fail("key '" + full + "' has no value");
    entry e;
    e.line = line_no;
    if (value.front() == '[') {
      if (value.back() != ']')
        return fail("list for key '" + full + "' lacks its closing ']'");
      e.list = true;
      if (!split_list(value.substr(1, value.size() - 2), e.items))
        return fail("malformed list for key '" + full + "': use [\"a\", \"b\"]");
      e.raw = value;
    } else if (value.front() == '"') {
      if (!unquote(value, e.raw))
        return fail("malformed string for key '" + full + "': " + value);
      e.quoted = true;
    } else {
      e.raw = value;
    }
    result.entries_.emplace(full, std::move(e));
  }
  return result;
}

caf::expected<std::string> read_text(const std::string& path) {
  std::ifstream in(path);
  if (!in)
    return make_error(error_code::file_unreadable,
                      "cannot read config file '" + path
                        + "': check the path and its permissions");
  std::stringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

caf::expected<config_file> config_file::load(const std::string& path) {
  auto text = read_text(path);
  if (!text)
    return std::move(text.error());
  return parse(*text, path);
}

bool config_file::has(const std::string& key) const {
  return entries_.count(key) > 0;
}

std::string config_file::where(const std::string& key) const {
  auto i = entries_.find(key);
  std::string loc = origin_;
  if (i != entries_.end())
    loc += ":" + std::to_string(i->second.line);
  return loc + ": key '" + key + "'";
}

namespace {

void mark(std::set<std::string>& used, std::map<std::string, std::set<std::string>>& known,
          const std::string& key) {
  used.insert(key);
  auto dot = key.rfind('.');
  known[key.substr(0, dot)].insert(key.substr(dot + 1));
}

} // namespace

caf::expected<std::string> config_file::get_string(const std::string& key,
                                                   const std::string& fallback) {
  mark(used_, known_, key);
  auto i = entries_.find(key);
  if (i == entries_.end())
    return fallback;
  if (i->second.list)
    return make_error(error_code::bad_value, where(key) + ": expected a string, got a list");
  return i->second.raw;
}

caf::expected<int64_t> config_file::get_int(const std::string& key, int64_t fallback,
                                            int64_t min, int64_t max) {
  mark(used_, known_, key);
  auto i = entries_.find(key);
  if (i == entries_.end())
    return fallback;
  const auto& raw = i->second.raw;
  try {
    size_t pos = 0;
    long long v = std::stoll(raw, &pos, 10);
    if (pos != raw.size() || i->second.quoted || i->second.list)
      throw std::invalid_argument(raw);
    if (v < min || v > max)
      return make_error(error_code::bad_value,
                        where(key) + ": " + raw + " is out of range [" + std::to_string(min)
                          + ", " + std::to_string(max) + "]");
    return static_cast<int64_t>(v);
  } catch (const std::exception&) {
    return make_error(error_code::bad_value,
                      where(key) + ": expected an integer, got '" + raw + "'");
  }
}

caf::expected<bool> config_file::get_bool(const std::string& key, bool fallback) {
  mark(used_, known_, key);
  auto i = entries_.find(key);
  if (i == entries_.end())
    return fallback;
  const auto& raw = i->second.raw;
  if (!i->second.quoted && (raw == "true" || raw == "on" || raw == "yes"))
    return true;
  if (!i->second.quoted && (raw == "false" || raw == "off" || raw == "no"))
    return false;
  return make_error(error_code::bad_value,
                    where(key) + ": expected true or false, got '" + raw + "'");
}

caf::expected<std::chrono::microseconds>
config_file::get_duration(const std::string& key, std::chrono::microseconds fallback) {
  mark(used_, known_, key);
  auto i = entries_.find(key);
  if (i == entries_.end())
    return fallback;
  auto d = parse_duration(i->second.raw);
  if (!d)
    return make_error(error_code::bad_value, where(key) + ": " + describe(d.error()));
  return *d;
}

caf::expected<std::chrono::milliseconds>
config_file::get_duration(const std::string& key, std::chrono::milliseconds fallback) {
  auto d = get_duration(key, std::chrono::microseconds{fallback});
  if (!d)
    return std::move(d.error());
  return std::chrono::duration_cast<std::chrono::milliseconds>(*d);
}

caf::expected<uint64_t> config_file::get_bytes(const std::string& key, uint64_t fallback) {
  mark(used_, known_, key);
  auto i = entries_.find(key);
  if (i == entries_.end())
    return fallback;
  auto b = parse_bytes(i->second.raw);
  if (!b)
    return make_error(error_code::bad_value, where(key) + ": " + describe(b.error()));
  return *b;
}

caf::expected<std::vector<std::string>>
config_file::get_list(const std::string& key, const std::vector<std::string>& fallback) {
  mark(used_, known_, key);
  auto i = entries_.find(key);
  if (i == entries_.end())
    return fallback;
  if (i->second.list)
    return i->second.items;
  return std::vector<std::string>{i->second.raw};
}

caf::error config_file::check_all_used() const {
  for (const auto& [key, e] : entries_) {
    if (used_.count(key) > 0)
      continue;
    auto dot = key.rfind('.');
    std::string section = key.substr(0, dot);
    std::string accepted;
    if (auto k = known_.find(section); k != known_.end()) {
      for (const auto& name : k->second)
        accepted += (accepted.empty() ? "" : ", ") + name;
      accepted = "; [" + section + "] accepts: " + accepted;
    } else {
      std::string sections;
      for (const auto& [s, keys] : known_)
        sections += (sections.empty() ? "[" : ", [") + s + "]";
      accepted = "; unknown section [" + section + "], known sections: " + sections;
    }
    return make_error(error_code::unknown_key, origin_ + ":" + std::to_string(e.line)
                                                 + ": unknown key '" + key + "'" + accepted);
  }
  return caf::none;
}

caf::expected<std::chrono::microseconds> parse_duration(const std::string& text) {
  size_t pos = 0;
  while (pos < text.size() && (std::isdigit(static_cast<unsigned char>(text[pos])) || text[pos] == '.'))
    ++pos;
  std::string number = text.substr(0, pos);
  std::string unit = text.substr(pos);
  double value = 0;
  try {
    size_t used = 0;
    value = std::stod(number, &used);
    if (used != number.size())
      throw std::invalid_argument(number);
  } catch (const std::exception&) {
    return make_error(error_code::bad_value,
                      "bad duration '" + text + "': use e.g. 500ms, 2s, 1min");
  }
  double us_per_unit = 0;
  if (unit.empty() && value == 0)
    return std::chrono::microseconds{0}; // "0" needs no unit
  if (unit == "us")
    us_per_unit = 1;
  else if (unit == "ms")
    us_per_unit = 1e3;
  else if (unit == "s")
    us_per_unit = 1e6;
  else if (unit == "min")
    us_per_unit = 60e6;
  else if (unit == "h")
    us_per_unit = 3600e6;
  else
    return make_error(error_code::bad_value, "bad duration '" + text
                                               + "': unit must be us, ms, s, min or h");
  auto us = value * us_per_unit;
  // A duration the clock cannot hold (about 292,000 years).
  if (!(us < 9.2e18))
    return make_error(error_code::bad_value, "bad duration '" + text + "': too long");
  return std::chrono::microseconds(static_cast<int64_t>(std::llround(us)));
}

caf::expected<uint64_t> parse_bytes(const std::string& text) {
  size_t pos = 0;
  while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos])))
    ++pos;
  if (pos == 0)
    return make_error(error_code::bad_value,
                      "bad size '" + text + "': use e.g. 4096, 512MiB, 2GiB");
  auto too_large = [&] {
    return make_error(error_code::bad_value,
                      "bad size '" + text + "': larger than 2^64 bytes");
  };
  uint64_t value = 0;
  try {
    value = std::stoull(text.substr(0, pos));
  } catch (const std::out_of_range&) {
    return too_large();
  }
  std::string unit = text.substr(pos);
  uint64_t mult = 0;
  if (unit.empty() || unit == "B")
    mult = 1;
  else if (unit == "KiB")
    mult = 1ull << 10;
  else if (unit == "MiB")
    mult = 1ull << 20;
  else if (unit == "GiB")
    mult = 1ull << 30;
  else if (unit == "TiB")
    mult = 1ull << 40;
  else if (unit == "KB")
    mult = 1000ull;
  else if (unit == "MB")
    mult = 1000ull * 1000;
  else if (unit == "GB")
    mult = 1000ull * 1000 * 1000;
  else
    return make_error(error_code::bad_value, "bad size '" + text
                                               + "': unit must be B, KiB, MiB, GiB, TiB, KB, MB or GB");
  if (value > std::numeric_limits<uint64_t>::max() / mult)
    return too_large();
  return value * mult;
}

caf::expected<std::pair<std::string, uint16_t>> parse_endpoint(const std::string& text,
                                                               const std::string& what) {
  auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size())
    return make_error(error_code::bad_value,
                      what + ": expected HOST:PORT, got '" + text + "'");
  std::string host = text.substr(0, colon);
  std::string port_text = text.substr(colon + 1);
  for (char c : port_text)
    if (!std::isdigit(static_cast<unsigned char>(c)))
      return make_error(error_code::bad_value,
                        what + ": port '" + port_text + "' in '" + text + "' is not a number");
  long port = std::stol(port_text);
  if (port < 1 || port > 65535)
    return make_error(error_code::bad_value,
                      what + ": port " + port_text + " is out of range [1, 65535]");
  if (host.size() > 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  return std::make_pair(host, static_cast<uint16_t>(port));
}

} // namespace gleam::config
