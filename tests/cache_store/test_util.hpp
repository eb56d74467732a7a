#pragma once

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

namespace gleam::cache_store::test {

/// A fresh directory under $TMPDIR (or /tmp), removed with its contents
/// when the object goes away.
class temp_dir {
public:
  temp_dir() {
    const char* base = std::getenv("TMPDIR");
    std::string tmpl = std::string{base != nullptr ? base : "/tmp"}
                       + "/gleam_cache_store_XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    if (mkdtemp(buf.data()) != nullptr)
      path_ = buf.data();
  }

  ~temp_dir() {
    if (!path_.empty()) {
      std::error_code ec;
      std::filesystem::remove_all(path_, ec);
    }
  }

  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;

  /// The directory; empty when it could not be created.
  const std::string& path() const {
    return path_;
  }

  /// `path()/name`.
  std::string sub(const std::string& name) const {
    return path_ + "/" + name;
  }

private:
  std::string path_;
};

/// `size` pseudo-random bytes determined by `seed`.
inline std::vector<uint8_t> make_bytes(uint64_t seed, size_t size) {
  std::vector<uint8_t> result(size);
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (auto& b : result) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    b = static_cast<uint8_t>(x >> 24);
  }
  return result;
}

/// Bytes of chunk `i` of the crash test: 1 KiB to 96 KiB, so that some live
/// inline in the SST files and most in blob files.
inline std::vector<uint8_t> crash_chunk(uint64_t i) {
  return make_bytes(1000 + i, 1024 + (i * 7919) % (95 * 1024));
}

/// The tenant the crash writer stores chunk `i` for: one of three, so that
/// records of several lengths are torn by the kills.
inline std::string crash_tenant(uint64_t i) {
  static const char* const names[] = {"", "alice", "tenant-with-a-longer-name"};
  return names[i % 3];
}

} // namespace gleam::cache_store::test
