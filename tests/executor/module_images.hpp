#pragma once

// Module images the executor must refuse before cuModuleLoadData, shared
// by the executor's CPU tests.

#include <cstdint>
#include <cstring>
#include <string>

namespace gleam::test {

/// A 64-bit ELF header whose section table lies past the image's end: a
/// driver trusting it would read past the bytes received.
inline std::string elf_with_section_table_past_end() {
  std::string image(64, '\0');
  image[0] = 0x7f;
  image[1] = 'E';
  image[2] = 'L';
  image[3] = 'F';
  image[4] = 2; // ELFCLASS64
  image[5] = 1; // little-endian
  uint64_t shoff = 4096;
  uint16_t shentsize = 64;
  uint16_t shnum = 3;
  std::memcpy(&image[0x28], &shoff, 8);
  std::memcpy(&image[0x3a], &shentsize, 2);
  std::memcpy(&image[0x3c], &shnum, 2);
  return image;
}

} // namespace gleam::test
