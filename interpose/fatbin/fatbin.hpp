#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "interpose/fatbin/error.hpp"

// Layouts, as emitted by nvcc 13.0 (all fields little-endian, no padding):
//
// wrapper (__fatBinC_Wrapper_t, fatbinary_section.h), 24 bytes:
//   +0  int32  magic 0x466243b1      +4  int32 version (1, or 2 = linked)
//   +8  ptr    data -> image         +16 ptr   v1: filename or null,
//                                              v2: null-terminated void*[]
//                                                  of prelinked images
// image header, 16 bytes:
//   +0  u32 magic 0xba55ed50   +4 u16 version (1)   +6 u16 header_size (16)
//   +8  u64 fat_size: bytes of entries after the header
// entry header, header_size bytes (64 minimum; 72..128 seen), then payload:
//   +0  u16 kind (1 PTX, 2 ELF, 8 LTO IR)   +2  u16 entry version (0x0101)
//   +4  u32 header_size                      +8  u64 payload size (8-aligned)
//   +16 u32 compressed size (0 = stored)     +20 u32 offset in the entry
//                                                header of the PTX options
//   +24 u16 minor, +26 u16 major: PTX ISA version, or ELF format version
//   +28 u32 arch (sm number: 90, 100, 120)   +32 u32 name offset, +36 u32
//                                                name length (in the header)
//   +40 u64 flags: 0x1 64-bit, 0x2 debug, 0x10 linux, 0x2000 LZ4,
//               0x8000 zstd, 0x100000 "a" (sm_90a), 0x200000 "f" (sm_100f)
//   +48 u64 reserved                         +56 u64 uncompressed size
//   +64 options / name strings when header_size > 64

namespace gleam::interpose::fatbin {

/// Magic number of the wrapper that nvcc passes to __cudaRegisterFatBinary.
constexpr uint32_t wrapper_magic = 0x466243b1;

/// Magic number at the start of every fatbin image.
constexpr uint32_t image_magic = 0xba55ed50;

/// Size in bytes of the image header.
constexpr size_t image_header_size = 16;

/// Smallest entry header in bytes.
constexpr size_t min_entry_header_size = 64;

/// Largest image, in bytes, that the parser accepts (header + entries).
constexpr uint64_t max_image_size = uint64_t{4} << 30;

/// Most prelinked images a version-2 wrapper may list.
constexpr size_t max_prelinked = 65536;

/// Passed as `available` to parse_image when the buffer size is unknown (an
/// image in the app's own memory): the header's sizes are then trusted.
constexpr size_t unknown_size = std::numeric_limits<size_t>::max();

/// What an entry holds.
enum class entry_kind : uint8_t {
  /// PTX text, compiled just in time by the driver.
  ptx,
  /// A cubin (ELF with SASS for one arch).
  elf,
  /// NVVM IR for link-time optimization; not loadable by the driver alone.
  lto_ir,
  /// A kind this parser does not know; kept so the image stays intact.
  other,
};

/// Which devices an entry's arch number admits.
enum class arch_variant : uint8_t {
  /// sm_XY: SASS runs on the same major with minor >= Y; PTX JITs on any
  /// device of arch >= XY.
  generic,
  /// sm_XYa: exactly arch XY.
  arch_specific,
  /// sm_XYf: the same major with minor >= Y.
  family_specific,
};

/// How an entry's payload is stored.
enum class compression : uint8_t {
  /// Stored as is.
  none,
  /// LZ4 (nvcc -compress-mode=speed), flag 0x2000.
  lz4,
  /// zstd (nvcc 13 default), flag 0x8000.
  zstd,
};

/// Name of an entry kind, e.g. "ptx".
const char* to_string(entry_kind x);

/// One entry of a fatbin image. Offsets are in bytes from the image start.
struct entry {
  /// What the entry holds.
  entry_kind kind = entry_kind::other;
  /// The kind field as stored (1 PTX, 2 ELF, 8 LTO IR, others kept as is).
  uint16_t raw_kind = 0;
  /// Arch number: 90 for sm_90 / compute_90, 100 for sm_100.
  uint32_t sm = 0;
  /// Whether the arch carries an "a" or "f" suffix.
  arch_variant variant = arch_variant::generic;
  /// How the payload is stored; the driver decompresses on load.
  compression compressed_with = compression::none;
  /// Compiled with -G (device debug information).
  bool debug = false;
  /// The flags field as stored.
  uint64_t flags = 0;
  /// PTX ISA version (PTX) or ELF format version (ELF), major part.
  uint16_t version_major = 0;
  /// PTX ISA version (PTX) or ELF format version (ELF), minor part.
  uint16_t version_minor = 0;
  /// Offset of this entry's header.
  uint64_t header_offset = 0;
  /// Size of this entry's header in bytes.
  uint32_t header_size = 0;
  /// Offset of the payload (header_offset + header_size).
  uint64_t payload_offset = 0;
  /// Bytes the payload occupies in the image, padding included.
  uint64_t payload_size = 0;
  /// Bytes of compressed data within the payload; 0 when stored plainly.
  uint64_t compressed_size = 0;
  /// Bytes after decompression; 0 when stored plainly.
  uint64_t uncompressed_size = 0;
  /// Source name recorded by nvcc (with -G), otherwise empty.
  std::string name;

  /// True when the payload is compressed.
  bool compressed() const noexcept {
    return compressed_with != compression::none;
  }

  /// Major compute capability of the arch (9 for sm_90, 10 for sm_103).
  uint32_t sm_major() const noexcept {
    return sm / 10;
  }

  /// Minor compute capability of the arch (0 for sm_90, 3 for sm_103).
  uint32_t sm_minor() const noexcept {
    return sm % 10;
  }

  /// True when the driver can load this entry on a device of compute
  /// capability `major`.`minor` (SASS natively, PTX by JIT).
  bool runs_on(int major, int minor) const noexcept;

  /// "sm_90", "compute_90a", "lto_90", ... for messages.
  std::string arch_name() const;
};

/// A checked view of one fatbin image. It does not own the bytes: they
/// belong to the caller (for a registered fatbin, to the app's executable
/// image, alive until __cudaUnregisterFatBinary). Immutable after parsing;
/// safe to share between threads.
class fatbin_view {
public:
  /// Start of the image and its total size in bytes (header_size +
  /// fat_size): exactly the bytes to upload and hand to cuModuleLoadData.
  struct span {
    /// First byte of the image (the fatbin magic).
    const void* data = nullptr;
    /// Bytes from `data` to the end of the last entry.
    size_t size = 0;
  };

  /// The image to upload.
  span image() const noexcept {
    return {data_, size_};
  }

  /// Entries in image order.
  const std::vector<entry>& entries() const noexcept {
    return entries_;
  }

  /// Image header version (1).
  uint16_t version() const noexcept {
    return version_;
  }

  /// Wrapper version (1 or 2) when parsed from a wrapper, 0 otherwise.
  int wrapper_version() const noexcept {
    return wrapper_version_;
  }

  /// Starts of the prelinked images listed by a version-2 wrapper (each to
  /// be parsed with parse_image); empty otherwise.
  const std::vector<const void*>& prelinked() const noexcept {
    return prelinked_;
  }

  /// True when the image holds SASS (an ELF entry) for exactly sm_<sm>.
  bool has_arch(uint32_t sm) const noexcept;

  /// True when the image holds PTX for exactly compute_<sm>.
  bool has_ptx(uint32_t sm) const noexcept;

  /// The entry the driver should load on a device of compute capability
  /// `major`.`minor`: the SASS of the highest compatible arch of the same
  /// major, else the PTX of the highest arch not above the device. Fails
  /// with no_compatible_entry, listing what the image holds, when neither
  /// exists.
  [[nodiscard]] caf::expected<entry> best_match(int major, int minor) const;

private:
  friend caf::expected<fatbin_view> parse_image(const void*, size_t);
  friend caf::expected<fatbin_view> parse_wrapper(const void*);

  const void* data_ = nullptr;
  size_t size_ = 0;
  uint16_t version_ = 0;
  int wrapper_version_ = 0;
  std::vector<entry> entries_;
  std::vector<const void*> prelinked_;
};

/// Parses the image at `data`, of which `available` bytes may be read (or
/// unknown_size for an image in process memory whose extent only its header
/// knows). Bytes past header_size + fat_size are ignored. Reads nothing
/// outside [data, data + available); rejects bad magic, versions and sizes.
[[nodiscard]] caf::expected<fatbin_view> parse_image(const void* data,
                                                     size_t available);

/// Parses the wrapper that nvcc's host code passes to
/// __cudaRegisterFatBinary, then the image it points to (whose size only its
/// header gives). For a version-2 wrapper also collects the prelinked list.
[[nodiscard]] caf::expected<fatbin_view> parse_wrapper(const void* wrapper);

} // namespace gleam::interpose::fatbin
