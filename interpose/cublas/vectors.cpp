// The transfer helpers: cublasSetVector / GetVector / SetMatrix / GetMatrix,
// their Async and _64 forms. They take no handle and call no library
// routine: each is a strided copy between the app's host memory and device
// memory, sent as the copy ops libcudart sends (MemcpyHtoD / MemcpyDtoH for
// a contiguous run, Memcpy2D with one element or one column as the row for
// a strided one), in pieces of at most max_message_payload bytes, each in a
// batch of its own, pipelined like a plain copy's chunks.
//
// The checks are the vendor's (cuBLAS 13.1), in its order: INVALID_VALUE
// for an element size, increment or leading dimension below 1 and for
// negative matrix sizes; then the quick return of an empty transfer (n,
// rows or cols 0); then the copy. What the vendor leaves to its
// cudaMemcpy2D, and which fails there, is CUBLAS_STATUS_MAPPING_ERROR here
// without a copy: a negative n, a leading dimension below rows, a null
// pointer, a device range running past its allocation. Byte counts beyond
// 64 bits (which the vendor wraps) are INVALID_VALUE. A copy that fails is
// MAPPING_ERROR; without a server or with the session lost the status is
// blas::from_cuda's, as for every cuBLAS call, and a sticky CUDA error of
// the process is returned at once through from_cuda().
//
// The synchronous forms wait for their copies (on the legacy stream) and
// return their own status only: the deferred error of an earlier async op
// stays for the next synchronizing cudart call, as with every synchronous
// cuBLAS call. The Async forms to the device are error-code-only: the bytes
// are copied into the queued ops at the call (the app may reuse its buffer
// at once) and a failure the server reports later is the runtime's deferred
// error. The Async forms to the host wait for the bytes, as an async copy
// into pageable memory does; a capturing stream refuses both directions
// (the host side lives in this process, not where the graph replays).
#include <algorithm>
#include <cstring>
#include <string>

#include "interpose/blas/common.hpp"
#include "interpose/capture_state.hpp"
#include "interpose/cublas_export.hpp"
#include "interpose/message_size.hpp"
#include "interpose/runtime.hpp"

namespace blas = gleam::interpose::blas;
namespace gi = gleam::interpose;
namespace proto = gleam::proto;

namespace {

/// One transfer between host memory and device memory: `runs` runs of
/// `width` bytes, run r at host + r * host_pitch and device + r *
/// device_pitch. A vector's run is one element; a matrix's is one column.
/// A transfer whose runs are adjacent on both sides is one run.
struct transfer {
  /// The app's host memory: read for a copy to the device, written for one
  /// to the host (only the runs' bytes; the gaps stay as they were).
  char* host = nullptr;
  /// The device address of run 0.
  uint64_t device = 0;
  uint64_t width = 0;
  /// 0: nothing to copy (the quick return).
  uint64_t runs = 0;
  uint64_t host_pitch = 0;
  uint64_t device_pitch = 0;
  /// Bytes from `device` to the end of the last run.
  uint64_t device_span = 0;
};

/// (runs - 1) * pitch + width, the bytes a side spans; false when that
/// overflows 64 bits.
bool span_of(uint64_t runs, uint64_t pitch, uint64_t width, uint64_t* out) {
  uint64_t body = 0;
  return !__builtin_mul_overflow(runs - 1, pitch, &body)
         && !__builtin_add_overflow(body, width, out);
}

/// Fills `t` for `runs` (> 0) runs of `width` bytes at the given pitches
/// (each at least `width`); INVALID_VALUE when a side's span overflows.
cublasStatus_t shape(uint64_t runs, uint64_t width, uint64_t host_pitch, uint64_t device_pitch,
                     transfer* t) {
  uint64_t host_span = 0;
  if (!span_of(runs, host_pitch, width, &host_span)
      || !span_of(runs, device_pitch, width, &t->device_span))
    return CUBLAS_STATUS_INVALID_VALUE;
  if (host_pitch == width && device_pitch == width) {
    // Contiguous on both sides: one plain copy of every byte.
    t->width = t->device_span;
    t->runs = 1;
    t->host_pitch = t->device_pitch = t->width;
    return CUBLAS_STATUS_SUCCESS;
  }
  t->width = width;
  t->runs = runs;
  t->host_pitch = host_pitch;
  t->device_pitch = device_pitch;
  return CUBLAS_STATUS_SUCCESS;
}

/// cublas{Set,Get}Vector*: `n` elements of `elem_size` bytes, `host_inc`
/// and `device_inc` elements apart. cuBLAS refuses an element size or an
/// increment below 1 (INVALID_VALUE) and returns at once for n == 0; a
/// negative n reaches its copy, which fails (MAPPING_ERROR).
cublasStatus_t vector_shape(int64_t n, int64_t elem_size, int64_t host_inc, int64_t device_inc,
                            transfer* t) {
  if (elem_size <= 0 || host_inc <= 0 || device_inc <= 0)
    return CUBLAS_STATUS_INVALID_VALUE;
  if (n == 0)
    return CUBLAS_STATUS_SUCCESS;
  if (n < 0)
    return CUBLAS_STATUS_MAPPING_ERROR;
  uint64_t host_pitch = 0, device_pitch = 0;
  auto elem = static_cast<uint64_t>(elem_size);
  if (__builtin_mul_overflow(static_cast<uint64_t>(host_inc), elem, &host_pitch)
      || __builtin_mul_overflow(static_cast<uint64_t>(device_inc), elem, &device_pitch))
    return CUBLAS_STATUS_INVALID_VALUE;
  return shape(static_cast<uint64_t>(n), elem, host_pitch, device_pitch, t);
}

/// cublas{Set,Get}Matrix*: `rows` x `cols` column-major elements of
/// `elem_size` bytes with leading dimensions `host_ld` and `device_ld`.
/// cuBLAS refuses negative sizes and an element size or leading dimension
/// below 1 (INVALID_VALUE) and returns at once for an empty matrix; a
/// leading dimension below `rows` reaches its cudaMemcpy2D as a pitch below
/// the width, which fails (MAPPING_ERROR).
cublasStatus_t matrix_shape(int64_t rows, int64_t cols, int64_t elem_size, int64_t host_ld,
                            int64_t device_ld, transfer* t) {
  if (rows < 0 || cols < 0 || elem_size <= 0 || host_ld <= 0 || device_ld <= 0)
    return CUBLAS_STATUS_INVALID_VALUE;
  if (rows == 0 || cols == 0)
    return CUBLAS_STATUS_SUCCESS;
  if (host_ld < rows || device_ld < rows)
    return CUBLAS_STATUS_MAPPING_ERROR;
  uint64_t width = 0, host_pitch = 0, device_pitch = 0;
  auto elem = static_cast<uint64_t>(elem_size);
  if (__builtin_mul_overflow(static_cast<uint64_t>(rows), elem, &width)
      || __builtin_mul_overflow(static_cast<uint64_t>(host_ld), elem, &host_pitch)
      || __builtin_mul_overflow(static_cast<uint64_t>(device_ld), elem, &device_pitch))
    return CUBLAS_STATUS_INVALID_VALUE;
  return shape(static_cast<uint64_t>(cols), width, host_pitch, device_pitch, t);
}

/// The most bytes one op carries.
constexpr uint64_t max_piece = gi::max_message_payload;

/// One op's share of a transfer: `runs` runs from run `first`, `bytes`
/// bytes of each from byte `offset` of the run.
struct piece {
  uint64_t first = 0;
  uint64_t runs = 0;
  uint64_t offset = 0;
  uint64_t bytes = 0;
};

/// Whole runs, as many as fit in max_piece, while a run fits; else each run
/// in max_piece slices.
size_t piece_count(const transfer& t) {
  if (t.width <= max_piece) {
    auto per = max_piece / t.width;
    return static_cast<size_t>((t.runs + per - 1) / per);
  }
  return static_cast<size_t>(t.runs * ((t.width + max_piece - 1) / max_piece));
}

piece piece_at(const transfer& t, size_t i) {
  piece p;
  if (t.width <= max_piece) {
    auto per = max_piece / t.width;
    p.first = i * per;
    p.runs = std::min(per, t.runs - p.first);
    p.bytes = t.width;
    return p;
  }
  auto slices = (t.width + max_piece - 1) / max_piece;
  p.first = i / slices;
  p.runs = 1;
  p.offset = (i % slices) * max_piece;
  p.bytes = std::min(max_piece, t.width - p.offset);
  return p;
}

/// The op writing piece `p` of `t` to the device; it carries the bytes.
proto::Op upload_op(const transfer& t, const piece& p, cudaStream_t stream, bool async) {
  proto::Op op;
  auto dst = t.device + p.first * t.device_pitch + p.offset;
  const char* src = t.host + p.first * t.host_pitch + p.offset;
  if (p.runs == 1) {
    auto* m = op.mutable_memcpy_htod();
    m->set_dst(dst);
    m->set_data(src, p.bytes);
    m->set_stream(gi::wire_stream(stream));
    m->set_async(async);
    return op;
  }
  auto* m = op.mutable_memcpy_2d();
  m->set_kind(proto::Memcpy2D::HTOD);
  m->set_dst(dst);
  m->set_dst_pitch(t.device_pitch);
  m->set_width(p.bytes);
  m->set_height(p.runs);
  std::string packed(p.bytes * p.runs, '\0');
  for (uint64_t r = 0; r < p.runs; ++r)
    std::memcpy(&packed[r * p.bytes], src + r * t.host_pitch, p.bytes);
  m->set_data(std::move(packed));
  m->set_stream(gi::wire_stream(stream));
  m->set_async(async);
  return op;
}

/// The op reading piece `p` of `t` from the device (its reply carries the
/// runs densely packed).
proto::Op download_op(const transfer& t, const piece& p, cudaStream_t stream, bool async) {
  proto::Op op;
  auto src = t.device + p.first * t.device_pitch + p.offset;
  if (p.runs == 1) {
    auto* m = op.mutable_memcpy_dtoh();
    m->set_src(src);
    m->set_size(p.bytes);
    m->set_stream(gi::wire_stream(stream));
    m->set_async(async);
    return op;
  }
  auto* m = op.mutable_memcpy_2d();
  m->set_kind(proto::Memcpy2D::DTOH);
  m->set_src(src);
  m->set_src_pitch(t.device_pitch);
  m->set_width(p.bytes);
  m->set_height(p.runs);
  m->set_stream(gi::wire_stream(stream));
  m->set_async(async);
  return op;
}

/// Copies `t` to the device: queued on `stream` when `async`, else sent
/// and waited for. Returns the copies' own error (or the session's).
cudaError_t upload(const transfer& t, cudaStream_t stream, bool async) {
  auto count = piece_count(t);
  if (async) {
    for (size_t i = 0; i < count; ++i)
      if (auto err = gi::submit_on(stream, upload_op(t, piece_at(t, i), stream, true));
          err != cudaSuccess)
        return err;
    return cudaSuccess;
  }
  return gi::run_pipelined(
    count, [&](size_t i) { return upload_op(t, piece_at(t, i), stream, false); }, {});
}

/// Copies `t` to the host and waits for it. Returns the copies' own error
/// (or the session's); a reply of the wrong size is cudaErrorUnknown.
cudaError_t download(const transfer& t, cudaStream_t stream, bool async) {
  size_t next = 0;
  bool short_reply = false;
  auto sink = [&](proto::OpResult& r) {
    auto p = piece_at(t, next++);
    if (r.status() != 0)
      return;
    if (r.data().size() != p.bytes * p.runs) {
      short_reply = true;
      return;
    }
    for (uint64_t k = 0; k < p.runs; ++k)
      std::memcpy(t.host + (p.first + k) * t.host_pitch + p.offset, r.data().data() + k * p.bytes,
                  p.bytes);
  };
  auto err = gi::run_pipelined(
    piece_count(t), [&](size_t i) { return download_op(t, piece_at(t, i), stream, async); }, sink);
  return err == cudaSuccess && short_reply ? cudaErrorUnknown : err;
}

/// The status of a failed copy: the session's state as every cuBLAS call
/// reports it, anything else the vendor's MAPPING_ERROR.
cublasStatus_t copy_status(cudaError_t err) {
  switch (err) {
    case cudaSuccess:
      return CUBLAS_STATUS_SUCCESS;
    case cudaErrorNoDevice:
    case cudaErrorDevicesUnavailable:
    case cudaErrorInitializationError:
    case cudaErrorInsufficientDriver:
      return blas::from_cuda(err);
    default:
      return CUBLAS_STATUS_MAPPING_ERROR;
  }
}

enum class direction { to_device, to_host };

/// Every helper after its shape: `checked` is the shape's status, `t` the
/// transfer (its pointers filled in).
cublasStatus_t copy(cublasStatus_t checked, const transfer& t, direction dir,
                    cudaStream_t stream, bool async) noexcept {
  return blas::guarded([&] {
    if (checked != CUBLAS_STATUS_SUCCESS || t.runs == 0)
      return checked;
    // What cudaMemcpy2D refuses, and CUDA calls from a host function
    // (cudaErrorNotPermitted there): a failed copy.
    if (t.host == nullptr || t.device == 0 || gi::in_host_call())
      return CUBLAS_STATUS_MAPPING_ERROR;
    if (auto s = gi::sticky_error(); s != cudaSuccess)
      return blas::from_cuda(s);
    // A range running past one of our allocations fails here, not later.
    if (!gi::fits_allocation(reinterpret_cast<const void*>(static_cast<uintptr_t>(t.device)),
                             t.device_span))
      return CUBLAS_STATUS_MAPPING_ERROR;
    if (async) {
      if (gi::known_stream(stream) != cudaSuccess)
        return CUBLAS_STATUS_MAPPING_ERROR;
      auto wire = gi::wire_stream(stream);
      if (gi::captures().status(wire) != cudaStreamCaptureStatusNone) {
        blas::report_unsupported("cublasSet/GetVectorAsync or Set/GetMatrixAsync during capture",
                                 "copies of host memory cannot be captured through gleam; "
                                 "copy outside the captured region");
        gi::captures().invalidate(wire);
        return CUBLAS_STATUS_MAPPING_ERROR;
      }
    }
    auto err = dir == direction::to_device ? upload(t, stream, async)
                                           : download(t, stream, async);
    return copy_status(err);
  });
}

cublasStatus_t set_vector(int64_t n, int64_t elem_size, const void* x, int64_t incx, void* y,
                          int64_t incy, cudaStream_t stream, bool async) noexcept {
  transfer t;
  auto checked = vector_shape(n, elem_size, incx, incy, &t);
  // Read only (direction::to_device).
  t.host = const_cast<char*>(static_cast<const char*>(x));
  t.device = reinterpret_cast<uintptr_t>(y);
  return copy(checked, t, direction::to_device, stream, async);
}

cublasStatus_t get_vector(int64_t n, int64_t elem_size, const void* x, int64_t incx, void* y,
                          int64_t incy, cudaStream_t stream, bool async) noexcept {
  transfer t;
  auto checked = vector_shape(n, elem_size, incy, incx, &t);
  t.host = static_cast<char*>(y);
  t.device = reinterpret_cast<uintptr_t>(x);
  return copy(checked, t, direction::to_host, stream, async);
}

cublasStatus_t set_matrix(int64_t rows, int64_t cols, int64_t elem_size, const void* A,
                          int64_t lda, void* B, int64_t ldb, cudaStream_t stream,
                          bool async) noexcept {
  transfer t;
  auto checked = matrix_shape(rows, cols, elem_size, lda, ldb, &t);
  // Read only (direction::to_device).
  t.host = const_cast<char*>(static_cast<const char*>(A));
  t.device = reinterpret_cast<uintptr_t>(B);
  return copy(checked, t, direction::to_device, stream, async);
}

cublasStatus_t get_matrix(int64_t rows, int64_t cols, int64_t elem_size, const void* A,
                          int64_t lda, void* B, int64_t ldb, cudaStream_t stream,
                          bool async) noexcept {
  transfer t;
  auto checked = matrix_shape(rows, cols, elem_size, ldb, lda, &t);
  t.host = static_cast<char*>(B);
  t.device = reinterpret_cast<uintptr_t>(A);
  return copy(checked, t, direction::to_host, stream, async);
}

} // namespace

extern "C" {

// --- vectors ---------------------------------------------------------------

GLEAM_INTERPOSE_EXPORT cublasStatus_t cublasSetVector(int n, int elemSize, const void* x, int incx,
                                                      void* devicePtr, int incy) {
  return set_vector(n, elemSize, x, incx, devicePtr, incy, nullptr, false);
}

GLEAM_INTERPOSE_EXPORT cublasStatus_t cublasSetVector_64(int64_t n, int64_t elemSize,
                                                         const void* x, int64_t incx,
                                                         void* devicePtr, int64_t incy) {
  return set_vector(n, elemSize, x, incx, devicePtr, incy, nullptr, false);
}

GLEAM_INTERPOSE_EXPORT cublasStatus_t cublasGetVector(int n, int elemSize, const void* x, int incx,
                                                      void* y, int incy) {
  return get_vector(n, elemSize, x, incx, y, incy, nullptr, false);
}

GLEAM_INTERPOSE_EXPORT cublasStatus_t cublasGetVector_64(int64_t n, int64_t elemSize,
                                                         const void* x, int64_t incx, void* y,
                                                         int64_t incy) {
  return get_vector(n, elemSize, x, incx, y, incy, nullptr, false);
}

GLEAM_INTERPOSE_EXPORT cublasStatus_t cublasSetVectorAsync(int n, int elemSize,
                                                           const void* hostPtr, int incx,
                                                           void* devicePtr, int incy,
                                                           cudaStream_t stream) {
  return set_vector(n, elemSize, hostPtr, incx, devicePtr, incy, stream, true);
}

GLEAM_INTERPOSE_EXPORT cublasStatus_t cublasSetVectorAsync_64(int64_t n, int64_t elemSize,
                                                              const void* hostPtr, int64_t incx,
                                                              void* devicePtr, int64_t incy,
                                                              cudaStream_t stream) {
  return set_vector(n, elemSize, hostPtr, incx, devicePtr, incy, stream, true);
}

GLEAM_INTERPOSE_EXPORT cublasStatus_t cublasGetVectorAsync(int n, int elemSize,
                                                           const void* devicePtr, int incx,
                                                           void* hostPtr, int incy,
                                                           cudaStream_t stream) {
  return get_vector(n, elemSize, devicePtr, incx, hostPtr, incy, stream, true);
}

GLEAM_INTERPOSE_EXPORT cublasStatus_t cublasGetVectorAsync_64(int64_t n, int64_t elemSize,
                                                              const void* devicePtr,
                                                              int64_t incx, void* hostPtr,
                                                              int64_t incy, cudaStream_t stream) {
  return get_vector(n, elemSize, devicePtr, incx, hostPtr, incy, stream, true);
}

// --- matrices --------------------------------------------------------------

GLEAM_INTERPOSE_EXPORT cublasStatus_t cublasSetMatrix(int rows, int cols, int elemSize,
                                                      const void* A, int lda, void* B, int ldb) {
  return set_matrix(rows, cols, elemSize, A, lda, B, ldb, nullptr, false);
}

GLEAM_INTERPOSE_EXPORT cublasStatus_t cublasSetMatrix_64(int64_t rows, int64_t cols,
                                                         int64_t elemSize, const void* A,
                                                         int64_t lda, void* B, int64_t ldb) {
  return set_matrix(rows, cols, elemSize, A, lda, B, ldb, nullptr, false);
}

GLEAM_INTERPOSE_EXPORT cublasStatus_t cublasGetMatrix(int rows, int cols, int elemSize,
                                                      const void* A, int lda, void* B, int ldb) {
  return get_matrix(rows, cols, elemSize, A, lda, B, ldb, nullptr, false);
}

GLEAM_INTERPOSE_EXPORT cublasStatus_t cublasGetMatrix_64(int64_t rows, int64_t cols,
                                                         int64_t elemSize, const void* A,
                                                         int64_t lda, void* B, int64_t ldb) {
  return get_matrix(rows, cols, elemSize, A, lda, B, ldb, nullptr, false);
}

GLEAM_INTERPOSE_EXPORT cublasStatus_t cublasSetMatrixAsync(int rows, int cols, int elemSize,
                                                           const void* A, int lda, void* B,
                                                           int ldb, cudaStream_t stream) {
  return set_matrix(rows, cols, elemSize, A, lda, B, ldb, stream, true);
}

GLEAM_INTERPOSE_EXPORT cublasStatus_t cublasSetMatrixAsync_64(int64_t rows, int64_t cols,
                                                              int64_t elemSize, const void* A,
                                                              int64_t lda, void* B, int64_t ldb,
                                                              cudaStream_t stream) {
  return set_matrix(rows, cols, elemSize, A, lda, B, ldb, stream, true);
}

GLEAM_INTERPOSE_EXPORT cublasStatus_t cublasGetMatrixAsync(int rows, int cols, int elemSize,
                                                           const void* A, int lda, void* B,
                                                           int ldb, cudaStream_t stream) {
  return get_matrix(rows, cols, elemSize, A, lda, B, ldb, stream, true);
}

GLEAM_INTERPOSE_EXPORT cublasStatus_t cublasGetMatrixAsync_64(int64_t rows, int64_t cols,
                                                              int64_t elemSize, const void* A,
                                                              int64_t lda, void* B, int64_t ldb,
                                                              cudaStream_t stream) {
  return get_matrix(rows, cols, elemSize, A, lda, B, ldb, stream, true);
}

} // extern "C"
