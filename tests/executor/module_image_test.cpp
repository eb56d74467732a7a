// check_module_image: which images cuModuleLoadData may read safely.
#include "executor/module_image.hpp"

#include <catch2/catch.hpp>

#include <cstring>
#include <fstream>
#include <iterator>
#include <string>

using gleam::executor::check_module_image;

namespace {

std::string elf_header() {
  std::string image(64, '\0');
  std::memcpy(&image[0], "\x7f" "ELF", 4);
  image[4] = 2;
  image[5] = 1;
  return image;
}

template <class T>
void put(std::string& image, size_t at, T value) {
  std::memcpy(&image[at], &value, sizeof(T));
}

std::string test_fatbin() {
  std::ifstream in(GLEAM_EXECUTOR_TEST_FATBIN, std::ios::binary);
  return std::string{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

} // namespace

TEST_CASE("module images: PTX text and well-formed ELF pass", "[executor][validation]") {
  CHECK_FALSE(check_module_image(".version 8.0\n.target sm_90\n"));
  auto elf = elf_header();
  CHECK_FALSE(check_module_image(elf));
  // One 16-byte PROGBITS section inside, one NOBITS section of any size.
  elf.resize(64 + 16 + 2 * 64, '\0');
  put<uint64_t>(elf, 0x28, 80);
  put<uint16_t>(elf, 0x3a, 64);
  put<uint16_t>(elf, 0x3c, 2);
  put<uint32_t>(elf, 80 + 4, 1);
  put<uint64_t>(elf, 80 + 0x18, 64);
  put<uint64_t>(elf, 80 + 0x20, 16);
  put<uint32_t>(elf, 144 + 4, 8);
  put<uint64_t>(elf, 144 + 0x18, 0);
  put<uint64_t>(elf, 144 + 0x20, uint64_t{1} << 40);
  CHECK_FALSE(check_module_image(elf));
  SECTION("a section running past the end is refused") {
    put<uint64_t>(elf, 80 + 0x20, 4096);
    auto r = check_module_image(elf);
    REQUIRE(r);
    CHECK(r->rc == CUDA_ERROR_INVALID_IMAGE);
    CHECK_THAT(r->detail, Catch::Contains("section 0") && Catch::Contains("4096 bytes"));
  }
  SECTION("an offset that overflows 64 bits is refused") {
    put<uint64_t>(elf, 80 + 0x18, ~uint64_t{0} - 8);
    CHECK(check_module_image(elf));
  }
  SECTION("a section table past the end is refused") {
    put<uint16_t>(elf, 0x3c, 200);
    auto r = check_module_image(elf);
    REQUIRE(r);
    CHECK_THAT(r->detail, Catch::Contains("200 section headers"));
  }
}

TEST_CASE("module images: truncated ELF and 32-bit ELF are refused", "[executor][validation]") {
  auto short_elf = elf_header().substr(0, 20);
  auto r = check_module_image(short_elf);
  REQUIRE(r);
  CHECK(r->rc == CUDA_ERROR_INVALID_IMAGE);
  auto elf32 = elf_header();
  elf32[4] = 1;
  CHECK(check_module_image(elf32));
  auto ph = elf_header();
  put<uint64_t>(ph, 0x20, 1u << 20);
  put<uint16_t>(ph, 0x36, 56);
  put<uint16_t>(ph, 0x38, 1);
  r = check_module_image(ph);
  REQUIRE(r);
  CHECK_THAT(r->detail, Catch::Contains("program headers"));
}

TEST_CASE("module images: a fatbin passes whole and is refused truncated or with a "
          "header claiming more bytes",
          "[executor][validation]") {
  auto fatbin = test_fatbin();
  if (fatbin.size() < 16) {
    WARN("no " GLEAM_EXECUTOR_TEST_FATBIN " (nvcc missing at build time)");
    return;
  }
  CHECK_FALSE(check_module_image(fatbin));
  auto truncated = fatbin.substr(0, fatbin.size() / 2);
  auto r = check_module_image(truncated);
  REQUIRE(r);
  CHECK(r->rc == CUDA_ERROR_INVALID_IMAGE);
  CHECK_THAT(r->detail, Catch::Contains("fatbin"));
  auto bigger = fatbin;
  uint64_t fat_size = 0;
  std::memcpy(&fat_size, &bigger[8], 8);
  put<uint64_t>(bigger, 8, fat_size + 4096);
  CHECK(check_module_image(bigger));
}
