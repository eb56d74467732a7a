#include "interpose/fatbin/fatbin.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/support/gpu_probe.hpp"

#if GLEAM_FATBIN_TEST_HAVE_NVCC
#  include "tests/interpose_fatbin/registration_hooks.hpp"
#endif

namespace fb = gleam::interpose::fatbin;

namespace {

using bytes = std::vector<unsigned char>;

template <class T>
void put(bytes& buf, size_t offset, T value) {
  if (buf.size() < offset + sizeof(T))
    buf.resize(offset + sizeof(T));
  std::memcpy(buf.data() + offset, &value, sizeof(T));
}

template <class T>
T get(const bytes& buf, size_t offset) {
  T x;
  std::memcpy(&x, buf.data() + offset, sizeof(T));
  return x;
}

/// One synthetic entry: a 64-byte header (or larger) and its payload.
struct entry_spec {
  uint16_t kind = 2;
  uint32_t sm = 90;
  uint64_t flags = 0x11;
  uint32_t header_size = 64;
  uint32_t compressed_size = 0;
  uint32_t name_offset = 0;
  uint32_t name_size = 0;
  bytes payload = bytes(24, 0xab);
};

/// Builds an image the way nvcc lays it out.
bytes make_image(const std::vector<entry_spec>& specs) {
  bytes out(16, 0);
  for (const auto& s : specs) {
    size_t at = out.size();
    out.resize(at + s.header_size, 0);
    put<uint16_t>(out, at + 0, s.kind);
    put<uint16_t>(out, at + 2, 0x0101);
    put<uint32_t>(out, at + 4, s.header_size);
    put<uint64_t>(out, at + 8, s.payload.size());
    put<uint32_t>(out, at + 16, s.compressed_size);
    put<uint16_t>(out, at + 24, 8);
    put<uint16_t>(out, at + 26, 1);
    put<uint32_t>(out, at + 28, s.sm);
    put<uint32_t>(out, at + 32, s.name_offset);
    put<uint32_t>(out, at + 36, s.name_size);
    put<uint64_t>(out, at + 40, s.flags);
    out.insert(out.end(), s.payload.begin(), s.payload.end());
  }
  put<uint32_t>(out, 0, fb::image_magic);
  put<uint16_t>(out, 4, 1);
  put<uint16_t>(out, 6, 16);
  put<uint64_t>(out, 8, out.size() - 16);
  return out;
}

fb::error_code code_of(const caf::error& err) {
  REQUIRE(err.category() == caf::atom("gleam_fbin"));
  return static_cast<fb::error_code>(err.code());
}

template <class T>
fb::error_code failure(const caf::expected<T>& x) {
  REQUIRE_FALSE(x);
  return code_of(x.error());
}

/// Layout invariants every successfully parsed view must satisfy.
void check_layout(const fb::fatbin_view& view, size_t available) {
  auto img = view.image();
  REQUIRE(img.size <= available);
  uint64_t next = fb::image_header_size;
  for (const auto& e : view.entries()) {
    CHECK(e.header_offset == next);
    CHECK(e.payload_offset == e.header_offset + e.header_size);
    CHECK(e.payload_offset + e.payload_size <= img.size);
    next = e.payload_offset + e.payload_size;
  }
  CHECK(next == img.size);
}

} // namespace

TEST_CASE("synthetic image with two entries parses field by field",
          "[fatbin]") {
  entry_spec ptx;
  ptx.kind = 1;
  ptx.flags = 0x8011;
  ptx.compressed_size = 20;
  ptx.header_size = 80;
  entry_spec elf;
  elf.payload = bytes(40, 0x7f);
  auto img = make_image({ptx, elf});
  auto view = fb::parse_image(img.data(), img.size());
  REQUIRE(view);
  CHECK(view->image().data == img.data());
  CHECK(view->image().size == img.size());
  CHECK(view->version() == 1);
  CHECK(view->wrapper_version() == 0);
  REQUIRE(view->entries().size() == 2);
  const auto& e0 = view->entries()[0];
  CHECK(e0.kind == fb::entry_kind::ptx);
  CHECK(e0.sm == 90);
  CHECK(e0.compressed());
  CHECK(e0.compressed_with == fb::compression::zstd);
  CHECK(e0.compressed_size == 20);
  CHECK(e0.header_size == 80);
  CHECK(e0.payload_offset == 16 + 80);
  CHECK(e0.payload_size == 24);
  CHECK(e0.version_major == 1);
  CHECK(e0.version_minor == 8);
  CHECK(e0.arch_name() == "compute_90");
  const auto& e1 = view->entries()[1];
  CHECK(e1.kind == fb::entry_kind::elf);
  CHECK_FALSE(e1.compressed());
  CHECK(e1.header_offset == 16 + 80 + 24);
  CHECK(e1.payload_size == 40);
  CHECK(e1.arch_name() == "sm_90");
  check_layout(*view, img.size());
}

TEST_CASE("bytes past the image end are ignored", "[fatbin]") {
  auto img = make_image({entry_spec{}});
  auto size = img.size();
  img.resize(size + 100, 0xee);
  auto view = fb::parse_image(img.data(), img.size());
  REQUIRE(view);
  CHECK(view->image().size == size);
  auto trusted = fb::parse_image(img.data(), fb::unknown_size);
  REQUIRE(trusted);
  CHECK(trusted->image().size == size);
}

TEST_CASE("an image with no entries parses and matches nothing", "[fatbin]") {
  auto img = make_image({});
  auto view = fb::parse_image(img.data(), img.size());
  REQUIRE(view);
  CHECK(view->entries().empty());
  CHECK(failure(view->best_match(9, 0)) == fb::error_code::no_compatible_entry);
}

TEST_CASE("unknown kinds are kept as other and never chosen", "[fatbin]") {
  entry_spec odd;
  odd.kind = 77;
  auto img = make_image({odd});
  auto view = fb::parse_image(img.data(), img.size());
  REQUIRE(view);
  REQUIRE(view->entries().size() == 1);
  CHECK(view->entries()[0].kind == fb::entry_kind::other);
  CHECK(view->entries()[0].raw_kind == 77);
  CHECK_FALSE(view->best_match(9, 0));
}

TEST_CASE("bad image headers are rejected with their own codes", "[fatbin]") {
  auto good = make_image({entry_spec{}});
  SECTION("null") {
    CHECK(failure(fb::parse_image(nullptr, 100)) == fb::error_code::null_pointer);
  }
  SECTION("shorter than the header") {
    CHECK(failure(fb::parse_image(good.data(), 15)) == fb::error_code::truncated);
    CHECK(failure(fb::parse_image(good.data(), 0)) == fb::error_code::truncated);
  }
  SECTION("bad magic") {
    auto img = good;
    put<uint32_t>(img, 0, 0xba55ed51);
    auto res = fb::parse_image(img.data(), img.size());
    CHECK(failure(res) == fb::error_code::bad_magic);
    CHECK_THAT(fb::describe(res.error()), Catch::Contains("0xba55ed51"));
  }
  SECTION("unsupported version") {
    auto img = good;
    put<uint16_t>(img, 4, 2);
    CHECK(failure(fb::parse_image(img.data(), img.size()))
          == fb::error_code::unsupported_version);
  }
  SECTION("header size too small or too large") {
    auto img = good;
    put<uint16_t>(img, 6, 8);
    CHECK(failure(fb::parse_image(img.data(), img.size()))
          == fb::error_code::bad_header_size);
    put<uint16_t>(img, 6, 0xffff);
    CHECK(failure(fb::parse_image(img.data(), img.size()))
          == fb::error_code::bad_header_size);
  }
  SECTION("fat_size beyond the buffer") {
    auto img = good;
    put<uint64_t>(img, 8, get<uint64_t>(img, 8) + 1);
    auto res = fb::parse_image(img.data(), img.size());
    CHECK(failure(res) == fb::error_code::truncated);
    CHECK_THAT(fb::describe(res.error()),
               Catch::Contains(std::to_string(img.size())));
  }
  SECTION("fat_size that would overflow or exceed the limit") {
    auto img = good;
    put<uint64_t>(img, 8, UINT64_MAX - 8);
    CHECK(failure(fb::parse_image(img.data(), img.size()))
          == fb::error_code::too_large);
    CHECK(failure(fb::parse_image(img.data(), fb::unknown_size))
          == fb::error_code::too_large);
    put<uint64_t>(img, 8, fb::max_image_size);
    CHECK(failure(fb::parse_image(img.data(), img.size()))
          == fb::error_code::too_large);
  }
}

TEST_CASE("bad entries are rejected", "[fatbin]") {
  SECTION("entry header size below 64") {
    auto img = make_image({entry_spec{}});
    put<uint32_t>(img, 16 + 4, 32);
    CHECK(failure(fb::parse_image(img.data(), img.size()))
          == fb::error_code::bad_entry);
  }
  SECTION("entry header size past the image end") {
    auto img = make_image({entry_spec{}});
    put<uint32_t>(img, 16 + 4, 4096);
    CHECK(failure(fb::parse_image(img.data(), img.size()))
          == fb::error_code::bad_entry);
  }
  SECTION("payload size overflowing") {
    auto img = make_image({entry_spec{}});
    put<uint64_t>(img, 16 + 8, UINT64_MAX);
    CHECK(failure(fb::parse_image(img.data(), img.size()))
          == fb::error_code::bad_entry);
    put<uint64_t>(img, 16 + 8, UINT64_MAX - 70);
    CHECK(failure(fb::parse_image(img.data(), img.size()))
          == fb::error_code::bad_entry);
  }
  SECTION("payload one byte past the image end") {
    auto img = make_image({entry_spec{}, entry_spec{}});
    size_t second = 16 + 64 + 24;
    put<uint64_t>(img, second + 8, 25);
    auto res = fb::parse_image(img.data(), img.size());
    CHECK(failure(res) == fb::error_code::bad_entry);
    CHECK_THAT(fb::describe(res.error()), Catch::Contains("entry 1"));
  }
  SECTION("trailing bytes too short for an entry header") {
    auto img = make_image({entry_spec{}});
    img.resize(img.size() + 10, 0);
    put<uint64_t>(img, 8, img.size() - 16);
    CHECK(failure(fb::parse_image(img.data(), img.size()))
          == fb::error_code::bad_entry);
  }
  SECTION("compressed size zero or larger than the payload") {
    entry_spec s;
    s.flags = 0x8011;
    s.compressed_size = 0;
    auto img = make_image({s});
    CHECK(failure(fb::parse_image(img.data(), img.size()))
          == fb::error_code::bad_entry);
    s.compressed_size = 25;
    img = make_image({s});
    CHECK(failure(fb::parse_image(img.data(), img.size()))
          == fb::error_code::bad_entry);
  }
  SECTION("both compression flags") {
    entry_spec s;
    s.flags = 0xa011;
    s.compressed_size = 10;
    auto img = make_image({s});
    CHECK(failure(fb::parse_image(img.data(), img.size()))
          == fb::error_code::bad_entry);
  }
  SECTION("name outside the entry header") {
    entry_spec s;
    s.header_size = 72;
    s.name_offset = 64;
    s.name_size = 9;
    auto img = make_image({s});
    CHECK(failure(fb::parse_image(img.data(), img.size()))
          == fb::error_code::bad_entry);
    s.name_offset = 0xffffffff;
    s.name_size = 2;
    img = make_image({s});
    CHECK(failure(fb::parse_image(img.data(), img.size()))
          == fb::error_code::bad_entry);
  }
  SECTION("name inside the entry header is read up to its terminator") {
    entry_spec s;
    s.header_size = 72;
    s.name_offset = 64;
    s.name_size = 8;
    auto img = make_image({s});
    std::memcpy(img.data() + 16 + 64, "k.cu\0\0\0\0", 8);
    auto view = fb::parse_image(img.data(), img.size());
    REQUIRE(view);
    CHECK(view->entries()[0].name == "k.cu");
  }
}

TEST_CASE("every truncation of an image is rejected", "[fatbin]") {
  entry_spec ptx;
  ptx.kind = 1;
  auto img = make_image({ptx, entry_spec{}});
  for (size_t n = 0; n < img.size(); ++n) {
    // Copy into an exactly sized buffer so reads past it are caught by
    // sanitizers.
    bytes cut(img.begin(), img.begin() + static_cast<std::ptrdiff_t>(n));
    auto res = fb::parse_image(cut.empty() ? img.data() : cut.data(), n);
    INFO("length " << n);
    CHECK(failure(res) == fb::error_code::truncated);
  }
}

TEST_CASE("best_match follows the driver's compatibility rules", "[fatbin]") {
  entry_spec sm80;
  sm80.sm = 80;
  entry_spec sm86;
  sm86.sm = 86;
  entry_spec sm90;
  entry_spec ptx75;
  ptx75.kind = 1;
  ptx75.sm = 75;
  auto img = make_image({sm80, ptx75, sm86, sm90});
  auto view = fb::parse_image(img.data(), img.size());
  REQUIRE(view);
  CHECK(view->has_arch(80));
  CHECK(view->has_arch(86));
  CHECK_FALSE(view->has_arch(75));
  CHECK(view->has_ptx(75));
  CHECK_FALSE(view->has_ptx(90));
  auto pick = [&](int major, int minor) {
    auto m = view->best_match(major, minor);
    REQUIRE(m);
    return m->arch_name();
  };
  CHECK(pick(8, 0) == "sm_80");
  CHECK(pick(8, 6) == "sm_86");
  CHECK(pick(8, 9) == "sm_86");
  CHECK(pick(9, 0) == "sm_90");
  CHECK(pick(10, 0) == "compute_75");
  CHECK(pick(7, 5) == "compute_75");
  auto none = view->best_match(7, 0);
  CHECK(failure(none) == fb::error_code::no_compatible_entry);
  CHECK_THAT(fb::describe(none.error()),
             Catch::Contains("sm_80, compute_75, sm_86, sm_90"));
}

TEST_CASE("arch-specific and family entries run only where they may",
          "[fatbin]") {
  entry_spec sm90a;
  sm90a.flags = 0x100011;
  entry_spec ptx90a;
  ptx90a.kind = 1;
  ptx90a.flags = 0x100011;
  entry_spec sm100f;
  sm100f.sm = 100;
  sm100f.flags = 0x200011;
  auto img = make_image({sm90a, ptx90a, sm100f});
  auto view = fb::parse_image(img.data(), img.size());
  REQUIRE(view);
  const auto& e = view->entries();
  CHECK(e[0].variant == fb::arch_variant::arch_specific);
  CHECK(e[0].arch_name() == "sm_90a");
  CHECK(e[2].variant == fb::arch_variant::family_specific);
  CHECK(e[2].arch_name() == "sm_100f");
  CHECK(e[0].runs_on(9, 0));
  CHECK_FALSE(e[0].runs_on(9, 1));
  CHECK_FALSE(e[1].runs_on(10, 0));
  CHECK(e[2].runs_on(10, 0));
  CHECK(e[2].runs_on(10, 3));
  CHECK_FALSE(e[2].runs_on(12, 0));
  REQUIRE(view->best_match(9, 0));
  CHECK(view->best_match(9, 0)->arch_name() == "sm_90a");
  CHECK(view->best_match(10, 3)->arch_name() == "sm_100f");
  CHECK_FALSE(view->best_match(12, 0));
}

TEST_CASE("handmade wrappers are checked", "[fatbin]") {
  auto img = make_image({entry_spec{}});
  struct wrapper {
    int magic;
    int version;
    const void* data;
    const void* extra;
  };
  static_assert(sizeof(wrapper) == 24, "LP64 wrapper layout");
  SECTION("version 1") {
    wrapper w{static_cast<int>(fb::wrapper_magic), 1, img.data(), nullptr};
    auto view = fb::parse_wrapper(&w);
    REQUIRE(view);
    CHECK(view->wrapper_version() == 1);
    CHECK(view->image().size == img.size());
    CHECK(view->prelinked().empty());
  }
  SECTION("version 2 with a prelinked list") {
    auto other = make_image({entry_spec{}, entry_spec{}});
    const void* list[] = {other.data(), img.data(), nullptr};
    wrapper w{static_cast<int>(fb::wrapper_magic), 2, img.data(), list};
    auto view = fb::parse_wrapper(&w);
    REQUIRE(view);
    CHECK(view->wrapper_version() == 2);
    REQUIRE(view->prelinked().size() == 2);
    CHECK(view->prelinked()[0] == other.data());
    auto first = fb::parse_image(view->prelinked()[0], other.size());
    REQUIRE(first);
    CHECK(first->entries().size() == 2);
  }
  SECTION("errors") {
    CHECK(failure(fb::parse_wrapper(nullptr)) == fb::error_code::null_pointer);
    wrapper w{0x12345678, 1, img.data(), nullptr};
    CHECK(failure(fb::parse_wrapper(&w)) == fb::error_code::bad_wrapper_magic);
    w = wrapper{static_cast<int>(fb::wrapper_magic), 3, img.data(), nullptr};
    CHECK(failure(fb::parse_wrapper(&w))
          == fb::error_code::unsupported_wrapper_version);
    w = wrapper{static_cast<int>(fb::wrapper_magic), 1, nullptr, nullptr};
    CHECK(failure(fb::parse_wrapper(&w)) == fb::error_code::null_pointer);
    auto bad = img;
    put<uint32_t>(bad, 0, 0);
    w = wrapper{static_cast<int>(fb::wrapper_magic), 1, bad.data(), nullptr};
    CHECK(failure(fb::parse_wrapper(&w)) == fb::error_code::bad_magic);
  }
}

TEST_CASE("error codes have names", "[fatbin]") {
  CHECK(std::string{fb::to_string(fb::error_code::bad_magic)} == "bad_magic");
  CHECK(std::string{fb::to_string(fb::error_code::no_compatible_entry)}
        == "no_compatible_entry");
  CHECK(std::string{fb::to_string(fb::entry_kind::lto_ir)} == "lto_ir");
}

#if GLEAM_FATBIN_TEST_HAVE_NVCC

namespace {

bytes read_fixture(const std::string& name) {
  auto path = gleam::test::build_path("tests/interpose_fatbin/" + name);
  std::ifstream in{path, std::ios::binary};
  INFO("fixture " << path);
  REQUIRE(in.good());
  return bytes{std::istreambuf_iterator<char>{in},
               std::istreambuf_iterator<char>{}};
}

fb::fatbin_view parse_fixture(const bytes& file) {
  auto view = fb::parse_image(file.data(), file.size());
  if (!view)
    FAIL(fb::describe(view.error()));
  check_layout(*view, file.size());
  CHECK(view->image().size == file.size());
  return std::move(*view);
}

bool starts_with_elf(const bytes& file, const fb::entry& e) {
  return e.payload_size >= 4
         && std::memcmp(file.data() + e.payload_offset, "\x7f" "ELF", 4) == 0;
}

} // namespace

TEST_CASE("nvcc fatbin with sm_90 SASS and compute_90 PTX", "[fatbin]") {
  auto file = read_fixture("sm90_ptx90.fatbin");
  auto view = parse_fixture(file);
  REQUIRE(view.entries().size() == 2);
  const auto& ptx = view.entries()[0];
  const auto& elf = view.entries()[1];
  CHECK(ptx.kind == fb::entry_kind::ptx);
  CHECK(ptx.sm == 90);
  CHECK(ptx.version_major >= 8);
  CHECK(elf.kind == fb::entry_kind::elf);
  CHECK(elf.sm == 90);
  CHECK_FALSE(elf.compressed());
  CHECK(starts_with_elf(file, elf));
  CHECK(view.has_arch(90));
  CHECK_FALSE(view.has_arch(80));
  CHECK(view.has_ptx(90));
  CHECK(view.best_match(9, 0)->kind == fb::entry_kind::elf);
  CHECK(view.best_match(10, 0)->kind == fb::entry_kind::ptx);
  CHECK(view.best_match(12, 0)->kind == fb::entry_kind::ptx);
  CHECK(failure(view.best_match(8, 0)) == fb::error_code::no_compatible_entry);
}

TEST_CASE("nvcc fatbin with sm_80 and sm_90 SASS", "[fatbin]") {
  auto file = read_fixture("sm80_sm90.fatbin");
  auto view = parse_fixture(file);
  REQUIRE(view.entries().size() == 2);
  for (const auto& e : view.entries()) {
    CHECK(e.kind == fb::entry_kind::elf);
    CHECK(starts_with_elf(file, e));
  }
  CHECK(view.entries()[0].sm == 80);
  CHECK(view.entries()[1].sm == 90);
  CHECK(view.best_match(8, 6)->sm == 80);
  CHECK(view.best_match(9, 0)->sm == 90);
  CHECK_FALSE(view.best_match(10, 0));
  CHECK_FALSE(view.best_match(7, 5));
}

TEST_CASE("nvcc fatbins compressed with zstd, LZ4 or not at all",
          "[fatbin]") {
  auto plain_file = read_fixture("no_compress.fatbin");
  auto plain = parse_fixture(plain_file);
  REQUIRE(plain.entries().size() == 2);
  for (const auto& e : plain.entries())
    CHECK_FALSE(e.compressed());
  const auto& plain_elf = plain.entries()[1];
  REQUIRE(plain_elf.kind == fb::entry_kind::elf);
  for (auto name : {"compress_all.fatbin", "lz4.fatbin"}) {
    INFO(name);
    auto file = read_fixture(name);
    auto view = parse_fixture(file);
    REQUIRE(view.entries().size() == 2);
    auto expected = std::string{name} == "lz4.fatbin" ? fb::compression::lz4
                                                      : fb::compression::zstd;
    for (const auto& e : view.entries()) {
      CHECK(e.compressed_with == expected);
      CHECK(e.compressed_size <= e.payload_size);
      CHECK(e.compressed_size + 8 > e.payload_size);
    }
    const auto& elf = view.entries()[1];
    CHECK(elf.kind == fb::entry_kind::elf);
    CHECK(elf.uncompressed_size <= plain_elf.payload_size);
    CHECK(elf.uncompressed_size + 8 > plain_elf.payload_size);
    CHECK(view.image().size < plain.image().size);
  }
}

TEST_CASE("nvcc fatbin for sm_90a", "[fatbin]") {
  auto file = read_fixture("sm90a.fatbin");
  auto view = parse_fixture(file);
  REQUIRE(view.entries().size() == 2);
  for (const auto& e : view.entries())
    CHECK(e.variant == fb::arch_variant::arch_specific);
  CHECK(view.best_match(9, 0)->arch_name() == "sm_90a");
  CHECK_FALSE(view.best_match(10, 0));
}

TEST_CASE("nvcc fatbin built with -G names its source", "[fatbin]") {
  auto file = read_fixture("debug.fatbin");
  auto view = parse_fixture(file);
  REQUIRE(view.entries().size() == 2);
  for (const auto& e : view.entries()) {
    CHECK(e.debug);
    CHECK_THAT(e.name, Catch::EndsWith("kernels.cu"));
    CHECK(e.header_size > fb::min_entry_header_size);
  }
}

TEST_CASE("every truncation and single-byte corruption of a real fatbin "
          "stays in bounds",
          "[fatbin]") {
  auto file = read_fixture("sm90_ptx90.fatbin");
  for (size_t n = 0; n < file.size(); ++n) {
    bytes cut(file.begin(), file.begin() + static_cast<std::ptrdiff_t>(n));
    auto res = fb::parse_image(cut.empty() ? file.data() : cut.data(), n);
    if (res) {
      FAIL("a truncation to " << n << " bytes parsed");
    }
  }
  // Corrupt each byte of the headers (image header and first entry header).
  size_t headers = 16 + 80;
  size_t parsed = 0;
  for (size_t i = 0; i < headers; ++i) {
    auto bad = file;
    bad[i] ^= 0xff;
    auto res = fb::parse_image(bad.data(), bad.size());
    if (res) {
      ++parsed;
      check_layout(*res, bad.size());
    }
  }
  // Most header bytes are not sizes or magics; sizes and magics must fail.
  CHECK(parsed < headers);
}

TEST_CASE("random corruptions of real fatbins never break the layout "
          "invariants",
          "[fatbin]") {
  uint32_t state = 0x2545f491;
  auto next = [&] {
    state ^= state << 13;
    state ^= state >> 17;
    state ^= state << 5;
    return state;
  };
  for (auto name : {"sm90_ptx90.fatbin", "sm80_sm90.fatbin", "debug.fatbin"}) {
    auto file = read_fixture(name);
    size_t rejected = 0;
    for (int round = 0; round < 500; ++round) {
      auto bad = file;
      int flips = 1 + static_cast<int>(next() % 4);
      for (int k = 0; k < flips; ++k) {
        // Aim most flips at the headers, where the sizes live.
        size_t limit = next() % 4 == 0 ? bad.size() : std::min<size_t>(bad.size(), 256);
        bad[next() % limit] = static_cast<unsigned char>(next());
      }
      size_t cut = next() % 8 == 0 ? next() % bad.size() : bad.size();
      bytes exact(bad.begin(), bad.begin() + static_cast<std::ptrdiff_t>(cut));
      auto res = fb::parse_image(exact.empty() ? bad.data() : exact.data(), cut);
      if (res)
        check_layout(*res, cut);
      else
        ++rejected;
    }
    INFO(name);
    CHECK(rejected > 0);
  }
}

TEST_CASE("the wrapper of an nvcc host object registers its fatbin",
          "[fatbin]") {
  const auto& reg = gleam::test::recorded_registrations();
  REQUIRE(reg.wrappers.size() == 1);
  CHECK(reg.ends == 1);
  auto view = fb::parse_wrapper(reg.wrappers[0]);
  if (!view)
    FAIL(fb::describe(view.error()));
  CHECK(view->wrapper_version() == 1);
  REQUIRE(view->entries().size() == 2);
  CHECK(view->entries()[0].kind == fb::entry_kind::ptx);
  CHECK(view->entries()[1].kind == fb::entry_kind::elf);
  CHECK(view->has_arch(90));
  CHECK(view->image().size % 8 == 0);
  auto plain = read_fixture("sm90_ptx90.fatbin");
  CHECK(view->image().size == plain.size());
  CHECK(std::count(reg.functions.begin(), reg.functions.end(),
                   "_Z13fixture_scalePffi")
        == 1);
  CHECK(std::count(reg.functions.begin(), reg.functions.end(),
                   "_Z12fixture_pack10odd_recordPx")
        == 1);
  CHECK(std::count(reg.variables.begin(), reg.variables.end(),
                   "fixture_counter")
        == 1);
  CHECK(std::count(reg.variables.begin(), reg.variables.end(),
                   "fixture_table")
        == 1);
}

#endif
