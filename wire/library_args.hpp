#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>

/// The argument packing of a LibraryCall op (actors/proto/ops.proto) and
/// the extent arithmetic of the specs' annotations (interpose/spec/*.spec).
///
/// Packing, in parameter order, little-endian as the host is (client and
/// server are both x86-64 or both aarch64; the session refuses a mismatch):
///   by-value parameter         its bytes, sizeof(its C type)
///   library handle             u64 client handle id
///   device pointer ("dev")     u64 address
///   scalar ("scalar"), device pointer mode: u64 address
///   scalar, host pointer mode: in / inout: u64 byte count, then the bytes;
///                              out: nothing (the value comes back in
///                              OpResult.library_outputs)
///   host memory ("host"):      in / inout: u64 byte count, then the bytes;
///                              out: nothing (the bytes come back)
/// The reader never reads past its buffer: a short or long buffer makes
/// ok() false, and the server then refuses the call as malformed.
namespace gleam::wire {

/// The most bytes of host input one call carries (1 MiB, well inside a
/// message): larger is a client or spec error, never memory to allocate.
inline constexpr uint64_t max_host_input_bytes = uint64_t{1} << 20;

/// Writes a LibraryCall's packed arguments. Not thread-safe.
class arg_packer {
public:
  /// Appends the bytes of by-value `v`.
  template <class T>
  void value(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>, "by-value arguments are raw bytes");
    buf_.append(reinterpret_cast<const char*>(&v), sizeof(T));
  }

  /// Appends a device address (or a client handle id).
  void address(const void* p) {
    value(static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p)));
  }

  /// Appends `bytes` bytes at `p`, preceded by their count.
  void bytes(const void* p, uint64_t bytes) {
    value(bytes);
    if (bytes != 0)
      buf_.append(static_cast<const char*>(p), static_cast<size_t>(bytes));
  }

  /// The packed arguments (the packer is left empty).
  [[nodiscard]] std::string take() {
    return std::move(buf_);
  }

private:
  std::string buf_;
};

/// Reads what arg_packer wrote. Not thread-safe.
class arg_reader {
public:
  explicit arg_reader(std::string_view buf) : buf_(buf) {
  }

  /// The next by-value parameter of type T (zero after a failure).
  template <class T>
  T value() {
    static_assert(std::is_trivially_copyable_v<T>, "by-value arguments are raw bytes");
    T v{};
    if (!take(sizeof(T)))
      return v;
    std::memcpy(&v, buf_.data() + pos_ - sizeof(T), sizeof(T));
    return v;
  }

  /// The next device address or handle id.
  uint64_t address() {
    return value<uint64_t>();
  }

  /// The next counted byte run (empty after a failure).
  std::string_view bytes() {
    auto n = value<uint64_t>();
    if (!ok_ || n > buf_.size() - pos_) {
      ok_ = false;
      return {};
    }
    pos_ += static_cast<size_t>(n);
    return buf_.substr(pos_ - static_cast<size_t>(n), static_cast<size_t>(n));
  }

  /// True when every read so far was inside the buffer.
  [[nodiscard]] bool ok() const noexcept {
    return ok_;
  }

  /// True when every read was inside the buffer and all of it was read.
  [[nodiscard]] bool done() const noexcept {
    return ok_ && pos_ == buf_.size();
  }

private:
  bool take(size_t n) {
    if (!ok_ || n > buf_.size() - pos_) {
      ok_ = false;
      return false;
    }
    pos_ += n;
    return true;
  }

  std::string_view buf_;
  size_t pos_ = 0;
  bool ok_ = true;
};

/// The extent arithmetic of the specs' "dev" and "scalar" annotations:
/// element (or byte) counts a call may touch from a pointer's start. All
/// are saturating: a shape cuBLAS-like libraries reject or an overflow
/// gives `invalid_extent`, which no allocation contains, so the server's
/// range check refuses the call. Thread-safe, no CUDA calls.
namespace extents {

/// What an impossible or overflowing shape spans.
inline constexpr uint64_t invalid_extent = UINT64_MAX;

/// a * b, or invalid_extent on overflow or when either is invalid_extent.
uint64_t mul(uint64_t a, uint64_t b) noexcept;

/// a + b, likewise saturating.
uint64_t add(uint64_t a, uint64_t b) noexcept;

/// A strided vector of `n` elements `inc` apart: 1 + (n - 1) * |inc|; 0
/// when n <= 0.
uint64_t vec(int64_t n, int64_t inc) noexcept;

/// A column-major matrix of `rows` x `cols` with leading dimension `ld`:
/// ld * (cols - 1) + rows; 0 when empty; invalid_extent when ld < rows.
uint64_t mat(int64_t rows, int64_t cols, int64_t ld) noexcept;

/// A packed triangle of order n: n * (n + 1) / 2; 0 when n <= 0.
uint64_t packed(int64_t n) noexcept;

/// `batch` operands of `one` elements, `stride` elements apart: one +
/// stride * (batch - 1); 0 when batch <= 0; invalid_extent when stride < 0.
uint64_t strided(uint64_t one, int64_t stride, int64_t batch) noexcept;

/// Bytes of one element of cudaDataType `t`; invalid_extent for types
/// without whole-byte elements or unknown here.
uint64_t type_size(int64_t t) noexcept;

/// max(1, x), for the leading-dimension checks of the specs.
constexpr int64_t max1(int64_t x) noexcept {
  return x > 1 ? x : 1;
}

/// Enum checks of the specs (cuBLAS values): a cublasOperation_t N/T/C,
/// a cublasFillMode_t LOWER/UPPER, a cublasSideMode_t LEFT/RIGHT, a
/// cublasDiagType_t NON_UNIT/UNIT.
constexpr bool op_ok(int64_t t) noexcept {
  return t >= 0 && t <= 2;
}
constexpr bool fill_ok(int64_t u) noexcept {
  return u == 0 || u == 1;
}
constexpr bool side_ok(int64_t s) noexcept {
  return s == 0 || s == 1;
}
constexpr bool diag_ok(int64_t d) noexcept {
  return d == 0 || d == 1;
}

} // namespace extents

} // namespace gleam::wire
