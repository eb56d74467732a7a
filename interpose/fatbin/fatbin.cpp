#include "interpose/fatbin/fatbin.hpp"

#include <cstring>
#include <tuple>

#include <fmt/format.h>

namespace gleam::interpose::fatbin {

namespace {

constexpr uint16_t supported_image_version = 1;
constexpr size_t max_image_header_size = 4096;
constexpr size_t max_entry_header_size = 1 << 20;

constexpr uint16_t kind_ptx = 1;
constexpr uint16_t kind_elf = 2;
constexpr uint16_t kind_lto_ir = 8;

constexpr uint64_t flag_debug = 0x2;
constexpr uint64_t flag_lz4 = 0x2000;
constexpr uint64_t flag_zstd = 0x8000;
constexpr uint64_t flag_arch_specific = 0x100000;
constexpr uint64_t flag_family_specific = 0x200000;

// Wrapper field offsets (see fatbin.hpp).
constexpr size_t wrapper_size = 8 + 2 * sizeof(void*);

template <class T>
T load(const unsigned char* base, size_t offset) {
  T x;
  std::memcpy(&x, base + offset, sizeof(T));
  return x;
}

caf::error entry_error(size_t index, uint64_t offset, const std::string& what) {
  return make_error(error_code::bad_entry,
                    fmt::format("fatbin entry {} at offset {}: {}; the image "
                                "is corrupt, rebuild the program with nvcc",
                                index, offset, what));
}

const char* prefix(entry_kind kind) {
  switch (kind) {
    case entry_kind::ptx:
      return "compute_";
    case entry_kind::elf:
      return "sm_";
    case entry_kind::lto_ir:
      return "lto_";
    case entry_kind::other:
      break;
  }
  return "kind?_";
}

// Parses one entry header at `offset`; `end` is the image end.
caf::expected<entry> parse_entry(const unsigned char* base, uint64_t offset,
                                 uint64_t end, size_t index) {
  uint64_t left = end - offset;
  if (left < min_entry_header_size)
    return entry_error(index, offset,
                       fmt::format("only {} bytes left, an entry header needs "
                                   "at least {}",
                                   left, min_entry_header_size));
  entry e;
  e.header_offset = offset;
  e.raw_kind = load<uint16_t>(base, offset + 0);
  e.header_size = load<uint32_t>(base, offset + 4);
  e.payload_size = load<uint64_t>(base, offset + 8);
  e.compressed_size = load<uint32_t>(base, offset + 16);
  e.version_minor = load<uint16_t>(base, offset + 24);
  e.version_major = load<uint16_t>(base, offset + 26);
  e.sm = load<uint32_t>(base, offset + 28);
  auto name_offset = load<uint32_t>(base, offset + 32);
  auto name_size = load<uint32_t>(base, offset + 36);
  e.flags = load<uint64_t>(base, offset + 40);
  e.uncompressed_size = load<uint64_t>(base, offset + 56);
  if (e.header_size < min_entry_header_size
      || e.header_size > max_entry_header_size)
    return entry_error(index, offset,
                       fmt::format("header size {} is outside [{}, {}]",
                                   e.header_size, min_entry_header_size,
                                   max_entry_header_size));
  if (e.header_size > left)
    return entry_error(index, offset,
                       fmt::format("header size {} exceeds the {} bytes left",
                                   e.header_size, left));
  left -= e.header_size;
  if (e.payload_size > left)
    return entry_error(index, offset,
                       fmt::format("payload size {} exceeds the {} bytes left",
                                   e.payload_size, left));
  e.payload_offset = offset + e.header_size;
  switch (e.raw_kind) {
    case kind_ptx:
      e.kind = entry_kind::ptx;
      break;
    case kind_elf:
      e.kind = entry_kind::elf;
      break;
    case kind_lto_ir:
      e.kind = entry_kind::lto_ir;
      break;
    default:
      e.kind = entry_kind::other;
  }
  bool lz4 = (e.flags & flag_lz4) != 0;
  bool zstd = (e.flags & flag_zstd) != 0;
  if (lz4 && zstd)
    return entry_error(index, offset,
                       fmt::format("flags {:#x} name both LZ4 and zstd",
                                   e.flags));
  e.compressed_with = lz4    ? compression::lz4
                      : zstd ? compression::zstd
                             : compression::none;
  if (e.compressed()) {
    if (e.compressed_size == 0 || e.compressed_size > e.payload_size)
      return entry_error(index, offset,
                         fmt::format("compressed size {} is outside [1, {}] "
                                     "(the payload size)",
                                     e.compressed_size, e.payload_size));
  }
  bool specific = (e.flags & flag_arch_specific) != 0;
  bool family = (e.flags & flag_family_specific) != 0;
  if (specific && family)
    return entry_error(index, offset,
                       fmt::format("flags {:#x} name both an 'a' and an 'f' "
                                   "arch",
                                   e.flags));
  e.variant = specific ? arch_variant::arch_specific
              : family ? arch_variant::family_specific
                       : arch_variant::generic;
  e.debug = (e.flags & flag_debug) != 0;
  if (name_size > 0) {
    if (name_offset < min_entry_header_size || name_offset > e.header_size
        || name_size > e.header_size - name_offset)
      return entry_error(index, offset,
                         fmt::format("name [{}, +{}) lies outside the {}-byte "
                                     "entry header",
                                     name_offset, name_size, e.header_size));
    const auto* first = reinterpret_cast<const char*>(base + offset
                                                      + name_offset);
    e.name.assign(first, strnlen(first, name_size));
  }
  return e;
}

} // namespace

const char* to_string(entry_kind x) {
  switch (x) {
    case entry_kind::ptx:
      return "ptx";
    case entry_kind::elf:
      return "elf";
    case entry_kind::lto_ir:
      return "lto_ir";
    case entry_kind::other:
      return "other";
  }
  return "other";
}

bool entry::runs_on(int major, int minor) const noexcept {
  if (major < 0 || minor < 0)
    return false;
  auto dev_major = static_cast<uint32_t>(major);
  auto dev_minor = static_cast<uint32_t>(minor);
  switch (variant) {
    case arch_variant::arch_specific:
      if (dev_major != sm_major() || dev_minor != sm_minor())
        return false;
      break;
    case arch_variant::family_specific:
      if (dev_major != sm_major() || dev_minor < sm_minor())
        return false;
      break;
    case arch_variant::generic:
      if (kind == entry_kind::elf) {
        if (dev_major != sm_major() || dev_minor < sm_minor())
          return false;
      } else if (std::make_tuple(dev_major, dev_minor)
                 < std::make_tuple(sm_major(), sm_minor())) {
        return false;
      }
      break;
  }
  return kind == entry_kind::elf || kind == entry_kind::ptx;
}

std::string entry::arch_name() const {
  const char* suffix = variant == arch_variant::arch_specific     ? "a"
                       : variant == arch_variant::family_specific ? "f"
                                                                  : "";
  return fmt::format("{}{}{}", prefix(kind), sm, suffix);
}

bool fatbin_view::has_arch(uint32_t sm) const noexcept {
  for (const auto& e : entries_)
    if (e.kind == entry_kind::elf && e.sm == sm)
      return true;
  return false;
}

bool fatbin_view::has_ptx(uint32_t sm) const noexcept {
  for (const auto& e : entries_)
    if (e.kind == entry_kind::ptx && e.sm == sm)
      return true;
  return false;
}

caf::expected<entry> fatbin_view::best_match(int major, int minor) const {
  // Rank: SASS over PTX, then higher arch, then a > f > generic.
  auto rank = [](const entry& e) {
    int variant_rank = e.variant == arch_variant::arch_specific     ? 2
                       : e.variant == arch_variant::family_specific ? 1
                                                                    : 0;
    return std::make_tuple(e.kind == entry_kind::elf ? 1 : 0, e.sm,
                           variant_rank);
  };
  const entry* best = nullptr;
  for (const auto& e : entries_)
    if (e.runs_on(major, minor) && (best == nullptr || rank(e) > rank(*best)))
      best = &e;
  if (best != nullptr)
    return *best;
  std::string held;
  for (const auto& e : entries_) {
    if (!held.empty())
      held += ", ";
    held += e.arch_name();
  }
  if (held.empty())
    held = "no entries";
  return make_error(error_code::no_compatible_entry,
                    fmt::format("no fatbin entry runs on a device of compute "
                                "capability {}.{} (the image holds: {}); "
                                "rebuild with -gencode arch=compute_{}{},"
                                "code=sm_{}{} or include PTX of a lower arch",
                                major, minor, held, major, minor, major,
                                minor));
}

caf::expected<fatbin_view> parse_image(const void* data, size_t available) {
  if (data == nullptr)
    return make_error(error_code::null_pointer,
                      "fatbin image pointer is null; pass the image start");
  if (available < image_header_size)
    return make_error(error_code::truncated,
                      fmt::format("fatbin image of {} bytes is shorter than "
                                  "its {}-byte header",
                                  available, image_header_size));
  const auto* base = static_cast<const unsigned char*>(data);
  auto magic = load<uint32_t>(base, 0);
  auto version = load<uint16_t>(base, 4);
  auto header_size = load<uint16_t>(base, 6);
  auto fat_size = load<uint64_t>(base, 8);
  if (magic != image_magic)
    return make_error(error_code::bad_magic,
                      fmt::format("fatbin image magic is {:#010x}, expected "
                                  "{:#010x}; the pointer does not point at a "
                                  "fatbin image",
                                  magic, image_magic));
  if (version != supported_image_version)
    return make_error(error_code::unsupported_version,
                      fmt::format("fatbin image version {} is not supported "
                                  "(only {}); build with nvcc 12 or 13",
                                  version, supported_image_version));
  if (header_size < image_header_size || header_size > max_image_header_size)
    return make_error(error_code::bad_header_size,
                      fmt::format("fatbin image header size {} is outside "
                                  "[{}, {}]; the image is corrupt",
                                  header_size, image_header_size,
                                  max_image_header_size));
  if (fat_size > max_image_size - header_size)
    return make_error(error_code::too_large,
                      fmt::format("fatbin image of {} + {} bytes exceeds the "
                                  "{}-byte limit; the image is corrupt",
                                  header_size, fat_size, max_image_size));
  uint64_t total = header_size + fat_size;
  if (available != unknown_size && total > available)
    return make_error(error_code::truncated,
                      fmt::format("fatbin image needs {} bytes ({} header + "
                                  "{} entries) but only {} are available",
                                  total, header_size, fat_size, available));
  fatbin_view result;
  result.data_ = data;
  result.size_ = static_cast<size_t>(total);
  result.version_ = version;
  uint64_t offset = header_size;
  while (offset < total) {
    auto e = parse_entry(base, offset, total, result.entries_.size());
    if (!e)
      return std::move(e.error());
    offset = e->payload_offset + e->payload_size;
    result.entries_.emplace_back(std::move(*e));
  }
  return result;
}

caf::expected<fatbin_view> parse_wrapper(const void* wrapper) {
  if (wrapper == nullptr)
    return make_error(error_code::null_pointer,
                      "fatbin wrapper pointer is null; pass the argument of "
                      "__cudaRegisterFatBinary");
  const auto* base = static_cast<const unsigned char*>(wrapper);
  auto magic = load<uint32_t>(base, 0);
  auto version = load<int32_t>(base, 4);
  auto data = load<const void*>(base, 8);
  auto extra = load<const void*>(base, 8 + sizeof(void*));
  static_assert(wrapper_size == 24, "nvcc's wrapper is 24 bytes on LP64");
  if (magic != wrapper_magic)
    return make_error(error_code::bad_wrapper_magic,
                      fmt::format("fatbin wrapper magic is {:#010x}, expected "
                                  "{:#010x}; the program was not built by "
                                  "nvcc 12/13 or passed a wrong pointer",
                                  magic, wrapper_magic));
  if (version != 1 && version != 2)
    return make_error(error_code::unsupported_wrapper_version,
                      fmt::format("fatbin wrapper version {} is not supported "
                                  "(only 1 and 2); rebuild with nvcc 13",
                                  version));
  auto result = parse_image(data, unknown_size);
  if (!result)
    return result;
  result->wrapper_version_ = version;
  if (version == 2 && extra != nullptr) {
    const auto* list = static_cast<const void* const*>(extra);
    size_t n = 0;
    while (n < max_prelinked && list[n] != nullptr)
      ++n;
    if (n == max_prelinked)
      return make_error(error_code::prelinked_list_unterminated,
                        fmt::format("fatbin wrapper lists more than {} "
                                    "prelinked images without a null "
                                    "terminator; the wrapper is corrupt",
                                    max_prelinked));
    result->prelinked_.assign(list, list + n);
  }
  return result;
}

} // namespace gleam::interpose::fatbin
