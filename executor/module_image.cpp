#include "executor/module_image.hpp"

#include <cstring>

#include <fmt/format.h>

#include "interpose/fatbin/error.hpp"
#include "interpose/fatbin/fatbin.hpp"

namespace gleam::executor {

namespace {

template <class T>
T load(std::string_view image, size_t offset) {
  T out;
  std::memcpy(&out, image.data() + offset, sizeof(T));
  return out;
}

op_refusal bad_image(std::string detail) {
  return op_refusal{CUDA_ERROR_INVALID_IMAGE, std::move(detail)};
}

/// [offset, offset + count * size) lies inside `total` bytes, without
/// overflow.
bool inside(uint64_t offset, uint64_t count, uint64_t size, uint64_t total) {
  uint64_t len = 0;
  uint64_t end = 0;
  return !__builtin_mul_overflow(count, size, &len) && !__builtin_add_overflow(offset, len, &end)
         && end <= total;
}

std::optional<op_refusal> check_elf(std::string_view image) {
  constexpr size_t ehdr_size = 64;
  constexpr size_t shdr_size = 64;
  constexpr uint32_t sht_nobits = 8;
  if (image.size() < ehdr_size)
    return bad_image(fmt::format("ELF module image of {} bytes is shorter than its {} byte "
                                 "header",
                                 image.size(), ehdr_size));
  if (image[4] != 2 || image[5] != 1)
    return bad_image("ELF module image is not 64-bit little-endian (class "
                     + std::to_string(int{image[4]}) + ", data " + std::to_string(int{image[5]})
                     + "); load a cubin built for this GPU");
  auto phoff = load<uint64_t>(image, 0x20);
  auto shoff = load<uint64_t>(image, 0x28);
  auto phentsize = load<uint16_t>(image, 0x36);
  auto phnum = load<uint16_t>(image, 0x38);
  auto shentsize = load<uint16_t>(image, 0x3a);
  auto shnum = load<uint16_t>(image, 0x3c);
  if (phnum != 0 && !inside(phoff, phnum, phentsize, image.size()))
    return bad_image(fmt::format("ELF module image: {} program headers of {} bytes at offset "
                                 "{} end past its {} bytes; the image is truncated or corrupt",
                                 phnum, phentsize, phoff, image.size()));
  if (shnum == 0)
    return std::nullopt;
  if (shentsize < shdr_size || !inside(shoff, shnum, shentsize, image.size()))
    return bad_image(fmt::format("ELF module image: {} section headers of {} bytes at offset "
                                 "{} do not fit its {} bytes; the image is truncated or corrupt",
                                 shnum, shentsize, shoff, image.size()));
  for (uint64_t i = 0; i < shnum; ++i) {
    auto at = shoff + i * shentsize;
    auto type = load<uint32_t>(image, at + 4);
    auto offset = load<uint64_t>(image, at + 0x18);
    auto size = load<uint64_t>(image, at + 0x20);
    if (type != sht_nobits && !inside(offset, 1, size, image.size()))
      return bad_image(fmt::format("ELF module image: section {} ({} bytes at offset {}) ends "
                                   "past its {} bytes; the image is truncated or corrupt",
                                   i, size, offset, image.size()));
  }
  return std::nullopt;
}

} // namespace

std::optional<op_refusal> check_module_image(std::string_view image) {
  if (image.size() > max_module_image_bytes)
    return op_refusal{CUDA_ERROR_INVALID_VALUE,
                      fmt::format("module image of {} bytes exceeds the {} byte limit of "
                                  "ModuleLoad",
                                  image.size(), max_module_image_bytes)};
  if (image.size() >= 4 && load<uint32_t>(image, 0) == interpose::fatbin::image_magic) {
    auto view = interpose::fatbin::parse_image(image.data(), image.size());
    if (!view)
      return bad_image("fatbin module image refused: "
                       + interpose::fatbin::describe(view.error()));
    return std::nullopt;
  }
  if (image.size() >= 4 && std::memcmp(image.data(), "\x7f" "ELF", 4) == 0)
    return check_elf(image);
  return std::nullopt;
}

} // namespace gleam::executor
