// The driver's 16- and 32-bit memsets, 1D and 2D. The server sets 8- and
// 32-bit values (cuMemsetD8 / cuMemsetD32 ops); a 16-bit value becomes a
// 32-bit one over the aligned middle of the range, with a 2-byte copy for
// an unaligned first or odd last element; a 2D memset is one memset per
// row. Every piece goes to the same stream in order, so the result is the
// driver's.
#include "interpose/driver/common.hpp"

#include <cstdint>

namespace {

using namespace gleam::interpose::driver;

CUresult memset16(CUdeviceptr dst, unsigned short us, size_t n, CUstream stream) {
  if (dst % 2 != 0)
    return CUDA_ERROR_INVALID_VALUE;
  if (n == 0)
    return CUDA_SUCCESS;
  // A lone element before a 4-byte boundary, and one after the last pair.
  if (dst % 4 != 0) {
    if (auto err = cuMemcpyHtoDAsync(dst, &us, 2, stream); err != CUDA_SUCCESS)
      return err;
    dst += 2;
    --n;
  }
  auto pairs = n / 2;
  if (pairs > 0) {
    auto both = static_cast<unsigned>(us) | (static_cast<unsigned>(us) << 16);
    if (auto err = cuMemsetD32Async(dst, both, pairs, stream); err != CUDA_SUCCESS)
      return err;
  }
  if (n % 2 != 0)
    return cuMemcpyHtoDAsync(dst + pairs * 4, &us, 2, stream);
  return CUDA_SUCCESS;
}

template <class One>
CUresult rows(CUdeviceptr dst, size_t pitch, size_t width_bytes, size_t height, One one) {
  if (height > 1 && pitch < width_bytes)
    return CUDA_ERROR_INVALID_VALUE;
  for (size_t y = 0; y < height; ++y)
    if (auto err = one(dst + y * pitch); err != CUDA_SUCCESS)
      return err;
  return CUDA_SUCCESS;
}

/// A synchronous memset: asynchronous on the legacy stream, as the driver's
/// memsets of device memory are.
constexpr CUstream legacy = nullptr;

} // namespace

extern "C" {

GLEAM_INTERPOSE_EXPORT CUresult cuMemsetD16Async(CUdeviceptr dstDevice, unsigned short us,
                                                 size_t N, CUstream hStream) {
  return memset16(dstDevice, us, N, hStream);
}

GLEAM_INTERPOSE_EXPORT CUresult cuMemsetD16_v2(CUdeviceptr dstDevice, unsigned short us,
                                               size_t N) {
  return memset16(dstDevice, us, N, legacy);
}

GLEAM_INTERPOSE_EXPORT CUresult cuMemsetD2D16Async(CUdeviceptr dstDevice, size_t dstPitch,
                                                   unsigned short us, size_t Width,
                                                   size_t Height, CUstream hStream) {
  if (dstPitch % 2 != 0)
    return CUDA_ERROR_INVALID_VALUE;
  return rows(dstDevice, dstPitch, Width * 2, Height,
              [&](CUdeviceptr row) { return memset16(row, us, Width, hStream); });
}

GLEAM_INTERPOSE_EXPORT CUresult cuMemsetD2D16_v2(CUdeviceptr dstDevice, size_t dstPitch,
                                                 unsigned short us, size_t Width,
                                                 size_t Height) {
  return cuMemsetD2D16Async(dstDevice, dstPitch, us, Width, Height, legacy);
}

GLEAM_INTERPOSE_EXPORT CUresult cuMemsetD2D32Async(CUdeviceptr dstDevice, size_t dstPitch,
                                                   unsigned int ui, size_t Width, size_t Height,
                                                   CUstream hStream) {
  if (dstDevice % 4 != 0 || dstPitch % 4 != 0)
    return CUDA_ERROR_INVALID_VALUE;
  return rows(dstDevice, dstPitch, Width * 4, Height,
              [&](CUdeviceptr row) { return cuMemsetD32Async(row, ui, Width, hStream); });
}

GLEAM_INTERPOSE_EXPORT CUresult cuMemsetD2D32_v2(CUdeviceptr dstDevice, size_t dstPitch,
                                                 unsigned int ui, size_t Width, size_t Height) {
  return cuMemsetD2D32Async(dstDevice, dstPitch, ui, Width, Height, legacy);
}

} // extern "C"
