// The memory family: device allocations (plain, carved from a client's
// slab, pitched), their frees, copies between host and device, memsets and
// the device's memory info. Every device range is checked against the
// session's memory before the driver sees it.

#include <algorithm>
#include <cstring>
#include <limits>
#include <optional>

#include <fmt/format.h>

#include "executor/cache_ops.hpp"
#include "executor/capture_judge.hpp"
#include "executor/op_table.hpp"
#include "executor/session_streams.hpp"
#include "executor/weight_cache.hpp"

namespace gleam::executor {

namespace {

constexpr uint64_t max_u64 = std::numeric_limits<uint64_t>::max();

/// Extent in bytes of a pitched region of `height` rows of `width` bytes,
/// or nothing when it overflows 64 bits. A region without rows or columns
/// has extent 0.
std::optional<uint64_t> pitched_extent(uint64_t width, uint64_t pitch,
                                       uint64_t height) {
  if (width == 0 || height == 0)
    return uint64_t{0};
  uint64_t rows = 0;
  if (__builtin_mul_overflow(pitch, height - 1, &rows) || rows > max_u64 - width)
    return std::nullopt;
  return rows + width;
}

/// True when `stream` is capturing on the server (fails the op): a copy
/// from or to the client's host memory cannot become a graph node, since
/// its host side lives only as long as this op.
bool refuse_capturing(op_context& cx, CUstream stream, const char* what) {
  if (cx.api.cuStreamIsCapturing == nullptr)
    return false;
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  if (cx.api.cuStreamIsCapturing(stream, &status) != CUDA_SUCCESS
      || status == CU_STREAM_CAPTURE_STATUS_NONE)
    return false;
  cx.fail(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
          fmt::format("{} into a capturing stream: copies between host memory "
                      "and the GPU cannot be captured through gleam (the host "
                      "side is on the client); copy outside the capture into "
                      "a device buffer the graph reads",
                      what));
  return true;
}

/// Synchronizes `stream` for the executor's own needs (a copy's result),
/// in relaxed capture mode so that it never counts as an app call.
bool internal_sync(op_context& cx, CUstream stream) {
  scoped_capture_mode mode{cx.api, CU_STREAM_CAPTURE_MODE_RELAXED};
  return cx.check(cx.api.cuStreamSynchronize(stream), "cuStreamSynchronize");
}

/// cuMemAlloc; when the device is full and the weight cache's GPU tier
/// holds memory, the tier gives way (its chunks stay on the host) and the
/// allocation is tried again: the app comes before the cache.
CUresult alloc_device(op_context& cx, CUdeviceptr* p, uint64_t size) {
  auto rc = cx.api.cuMemAlloc(p, size);
  if (rc == CUDA_ERROR_OUT_OF_MEMORY && cx.cache != nullptr
      && cx.cache->shed_gpu(size + (uint64_t{64} << 20)) > 0)
    rc = cx.api.cuMemAlloc(p, size);
  return rc;
}

/// An allocation the client carved from one of its slabs: it must lie in
/// one slab and overlap nothing the session holds.
void mem_carve(op_context& cx, const proto::MemAlloc& op) {
  if (op.size() == 0 || !cx.s.slabs.contains(op.at(), op.size())) {
    cx.fail(CUDA_ERROR_INVALID_VALUE,
            fmt::format("MemAlloc at {:#x} + {} bytes does not lie inside one slab of this "
                        "session",
                        op.at(), op.size()));
    return;
  }
  if (!cx.s.memory.insert(range_entry{op.at(), op.size(), range_kind::carved, 0})) {
    cx.fail(CUDA_ERROR_INVALID_VALUE,
            fmt::format("MemAlloc at {:#x} + {} bytes overlaps an allocation this session "
                        "holds",
                        op.at(), op.size()));
    return;
  }
  cx.r.set_dptr(op.at());
}

void slab_free(op_context& cx, const range_entry& slab) {
  if (cx.s.memory.overlaps(slab.base, slab.size)) {
    cx.fail(CUDA_ERROR_INVALID_VALUE,
            fmt::format("cuMemFree: slab {:#x} still holds allocations; free them first",
                        slab.base));
    return;
  }
  if (cx.check(cx.api.cuMemFree(static_cast<CUdeviceptr>(slab.base)), "cuMemFree"))
    static_cast<void>(cx.s.slabs.erase(slab.base));
}

void mem_alloc(op_context& cx, const proto::MemAlloc& op) {
  if (op.at() != 0)
    return mem_carve(cx, op);
  if (!cx.check_quota(op.size(), "cuMemAlloc"))
    return;
  CUdeviceptr p = 0;
  if (!cx.check(alloc_device(cx, &p, op.size()), "cuMemAlloc"))
    return;
  if (op.slab()) {
    // Fresh driver memory never overlaps a slab this session holds.
    static_cast<void>(cx.s.slabs.insert(range_entry{p, op.size(), range_kind::allocation, 0}));
    cx.r.set_dptr(p);
    return;
  }
  if (cx.register_allocation(p, op.size()))
    cx.r.set_dptr(p);
}


void mem_free(op_context& cx, const proto::MemFree& op) {
  if (op.dptr() == 0)
    return;
  auto e = cx.s.memory.find_base(op.dptr());
  if (!e)
    if (auto slab = cx.s.slabs.find_base(op.dptr()))
      return slab_free(cx, *slab);
  if (e && e->kind == range_kind::carved) {
    cache_ops::verify_placed(cx.api, cx.s, cx.cache, e->base, e->size);
    // cuMemFree waits for the device; so does this, or a later carve of
    // the same bytes could be written before earlier work read them. Not
    // while the session captures: that would break the capture, and
    // captured work does not run until its graph is launched.
    if (cx.s.captures.empty() && !cx.check(sync_session(cx.api, cx.s), "cuMemFree"))
      return;
    static_cast<void>(cx.s.memory.erase(e->base));
    return;
  }
  if (!e || (e->kind != range_kind::allocation && e->kind != range_kind::graph_allocation)) {
    cx.fail(CUDA_ERROR_INVALID_VALUE,
            fmt::format("cuMemFree: address {:#x} is not the start of an "
                        "allocation of this session; free only pointers "
                        "this session's cudaMalloc returned",
                        op.dptr()));
    return;
  }
  cache_ops::verify_placed(cx.api, cx.s, cx.cache, e->base, e->size);
  if (cx.check(cx.api.cuMemFree(static_cast<CUdeviceptr>(op.dptr())), "cuMemFree"))
    static_cast<void>(cx.s.memory.erase(op.dptr()));
}


void mem_alloc_pitch(op_context& cx, const proto::MemAllocPitch& op) {
  // cudaMallocPitch takes no element size; 0 means 4, the smallest the
  // driver accepts.
  auto element = op.element_size() == 0 ? 4u : op.element_size();
  // The pitch is the driver's to choose: the quota is judged on the rows' bytes.
  if (!cx.check_quota(op.width() * op.height(), "cuMemAllocPitch"))
    return;
  CUdeviceptr p = 0;
  size_t pitch = 0;
  if (!cx.check(cx.api.cuMemAllocPitch(&p, &pitch, op.width(), op.height(), element),
                "cuMemAllocPitch")
      || !cx.register_allocation(p, static_cast<uint64_t>(pitch) * op.height()))
    return;
  cx.r.set_dptr(p);
  cx.r.set_pitch(pitch);
}

void mem_get_info(op_context& cx, const proto::MemGetInfo&) {
  size_t free = 0;
  size_t total = 0;
  if (!cx.check(cx.api.cuMemGetInfo(&free, &total), "cuMemGetInfo"))
    return;
  // The GPU tier gives way to the app's allocations (alloc_device).
  if (cx.cache != nullptr)
    free = static_cast<size_t>(std::min<uint64_t>(free + cx.cache->gpu_bytes(), total));
  auto* info = cx.r.mutable_mem_info();
  info->set_free(free);
  info->set_total(total);
}

void memcpy_htod(op_context& cx, const proto::MemcpyHtoD& op) {
  const auto& data = op.data();
  CUstream stream = nullptr;
  if (!cx.check_range(op.dst(), data.size(), "cuMemcpyHtoD")
      || !cx.lookup_stream(op.stream(), stream) || data.empty())
    return;
  auto dst = static_cast<CUdeviceptr>(op.dst());
  if (op.async() && refuse_capturing(cx, stream, "cudaMemcpyAsync host-to-device"))
    return;
  // A synchronous copy goes on the session's stream too (never the
  // context's legacy stream) and is waited for.
  if (cx.check(cx.api.cuMemcpyHtoDAsync(dst, data.data(), data.size(), stream),
               op.async() ? "cuMemcpyHtoDAsync" : "cuMemcpyHtoD")
      && !op.async())
    internal_sync(cx, stream);
}

void memcpy_dtoh(op_context& cx, const proto::MemcpyDtoH& op) {
  CUstream stream = nullptr;
  if (!cx.check_size(op.size(), "cuMemcpyDtoH")
      || !cx.check_range(op.src(), op.size(), "cuMemcpyDtoH")
      || !cx.lookup_stream(op.stream(), stream))
    return;
  if (op.async() && refuse_capturing(cx, stream, "cudaMemcpyAsync device-to-host"))
    return;
  auto* out = cx.r.mutable_data();
  out->resize(op.size());
  if (op.size() == 0)
    return;
  auto src = static_cast<CUdeviceptr>(op.src());
  bool ok = cx.check(cx.api.cuMemcpyDtoHAsync(&(*out)[0], src, op.size(), stream),
                     op.async() ? "cuMemcpyDtoHAsync" : "cuMemcpyDtoH")
            && internal_sync(cx, stream);
  if (!ok)
    cx.r.clear_data();
}

void memcpy_dtod(op_context& cx, const proto::MemcpyDtoD& op) {
  CUstream stream = nullptr;
  if (!cx.check_range(op.src(), op.size(), "cuMemcpyDtoD source")
      || !cx.check_range(op.dst(), op.size(), "cuMemcpyDtoD destination")
      || !cx.lookup_stream(op.stream(), stream) || op.size() == 0)
    return;
  auto dst = static_cast<CUdeviceptr>(op.dst());
  auto src = static_cast<CUdeviceptr>(op.src());
  if (cx.check(cx.api.cuMemcpyDtoDAsync(dst, src, op.size(), stream),
               op.async() ? "cuMemcpyDtoDAsync" : "cuMemcpyDtoD")
      && !op.async())
    internal_sync(cx, stream);
}

/// Validates the device side of a 2D copy.
bool check_pitched(op_context& cx, uint64_t ptr, uint64_t pitch, uint64_t width,
                   uint64_t height, const char* what) {
  if (width > pitch) {
    cx.fail(CUDA_ERROR_INVALID_VALUE,
            fmt::format("{}: width {} bytes exceeds the pitch {} bytes", what,
                        width, pitch));
    return false;
  }
  auto extent = pitched_extent(width, pitch, height);
  if (!extent) {
    cx.fail(CUDA_ERROR_INVALID_VALUE,
            fmt::format("{}: pitch {} x {} rows overflows 64 bits", what, pitch,
                        height));
    return false;
  }
  return cx.check_range(ptr, *extent, what);
}

void memcpy_2d(op_context& cx, const proto::Memcpy2D& op) {
  uint64_t dense = 0;
  if (__builtin_mul_overflow(op.width(), op.height(), &dense)) {
    cx.fail(CUDA_ERROR_INVALID_VALUE,
            fmt::format("cuMemcpy2D: {} x {} bytes overflows 64 bits",
                        op.width(), op.height()));
    return;
  }
  CUDA_MEMCPY2D c;
  std::memset(&c, 0, sizeof(c));
  c.WidthInBytes = op.width();
  c.Height = op.height();
  std::string* out = nullptr;
  switch (op.kind()) {
    case proto::Memcpy2D::HTOD:
      if (op.data().size() != dense) {
        cx.fail(CUDA_ERROR_INVALID_VALUE,
                fmt::format("cuMemcpy2D host-to-device: {} data bytes for a "
                            "{} x {} region (expected {})",
                            op.data().size(), op.width(), op.height(), dense));
        return;
      }
      if (!check_pitched(cx, op.dst(), op.dst_pitch(), op.width(), op.height(),
                         "cuMemcpy2D destination"))
        return;
      c.srcMemoryType = CU_MEMORYTYPE_HOST;
      c.srcHost = op.data().data();
      c.srcPitch = op.width();
      c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
      c.dstDevice = static_cast<CUdeviceptr>(op.dst());
      c.dstPitch = op.dst_pitch();
      break;
    case proto::Memcpy2D::DTOH:
      if (!cx.check_size(dense, "cuMemcpy2D device-to-host")
          || !check_pitched(cx, op.src(), op.src_pitch(), op.width(), op.height(),
                            "cuMemcpy2D source"))
        return;
      out = cx.r.mutable_data();
      out->resize(dense);
      c.srcMemoryType = CU_MEMORYTYPE_DEVICE;
      c.srcDevice = static_cast<CUdeviceptr>(op.src());
      c.srcPitch = op.src_pitch();
      c.dstMemoryType = CU_MEMORYTYPE_HOST;
      c.dstHost = dense == 0 ? nullptr : &(*out)[0];
      c.dstPitch = op.width();
      break;
    case proto::Memcpy2D::DTOD:
      if (!check_pitched(cx, op.src(), op.src_pitch(), op.width(), op.height(),
                         "cuMemcpy2D source")
          || !check_pitched(cx, op.dst(), op.dst_pitch(), op.width(), op.height(),
                            "cuMemcpy2D destination"))
        return;
      c.srcMemoryType = CU_MEMORYTYPE_DEVICE;
      c.srcDevice = static_cast<CUdeviceptr>(op.src());
      c.srcPitch = op.src_pitch();
      c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
      c.dstDevice = static_cast<CUdeviceptr>(op.dst());
      c.dstPitch = op.dst_pitch();
      break;
    default:
      cx.fail(CUDA_ERROR_INVALID_VALUE,
              fmt::format("cuMemcpy2D: unknown copy kind {}",
                          static_cast<int>(op.kind())));
      return;
  }
  CUstream stream = nullptr;
  if (!cx.lookup_stream(op.stream(), stream) || dense == 0)
    return;
  if (op.async() && op.kind() != proto::Memcpy2D::DTOD
      && refuse_capturing(cx, stream, "cudaMemcpy2DAsync with a host side")) {
    cx.r.clear_data();
    return;
  }
  bool ok = cx.check(cx.api.cuMemcpy2DAsync(&c, stream),
                     op.async() ? "cuMemcpy2DAsync" : "cuMemcpy2D");
  if (ok && (out != nullptr || !op.async()))
    ok = internal_sync(cx, stream);
  if (!ok && out != nullptr)
    cx.r.clear_data();
}

void memset(op_context& cx, const proto::Memset& op) {
  auto es = op.element_size();
  if (es != 1 && es != 2 && es != 4) {
    cx.fail(CUDA_ERROR_INVALID_VALUE,
            fmt::format("cuMemset: element size {} bytes; use 1, 2 or 4", es));
    return;
  }
  uint64_t row = 0;
  if (__builtin_mul_overflow(op.count(), uint64_t{es}, &row)) {
    cx.fail(CUDA_ERROR_INVALID_VALUE,
            fmt::format("cuMemset: {} elements of {} bytes overflow 64 bits",
                        op.count(), es));
    return;
  }
  bool two_d = op.height() > 1;
  CUstream stream = nullptr;
  if (two_d) {
    if (!check_pitched(cx, op.dst(), op.pitch(), row, op.height(), "cuMemsetD2D"))
      return;
  } else if (!cx.check_range(op.dst(), row, "cuMemset")) {
    return;
  }
  if (!cx.lookup_stream(op.stream(), stream) || row == 0)
    return;
  auto dst = static_cast<CUdeviceptr>(op.dst());
  auto n = static_cast<size_t>(op.count());
  auto h = static_cast<size_t>(op.height());
  auto pitch = static_cast<size_t>(op.pitch());
  auto v8 = static_cast<unsigned char>(op.value());
  auto v16 = static_cast<unsigned short>(op.value());
  auto v32 = static_cast<unsigned int>(op.value());
  // A synchronous memset goes on the session's stream and is waited for.
  CUresult rc = CUDA_SUCCESS;
  if (two_d)
    rc = es == 1   ? cx.api.cuMemsetD2D8Async(dst, pitch, v8, n, h, stream)
         : es == 2 ? cx.api.cuMemsetD2D16Async(dst, pitch, v16, n, h, stream)
                   : cx.api.cuMemsetD2D32Async(dst, pitch, v32, n, h, stream);
  else
    rc = es == 1   ? cx.api.cuMemsetD8Async(dst, v8, n, stream)
         : es == 2 ? cx.api.cuMemsetD16Async(dst, v16, n, stream)
                   : cx.api.cuMemsetD32Async(dst, v32, n, stream);
  if (cx.check(rc, two_d ? "cuMemsetD2D" : "cuMemset") && !op.async())
    internal_sync(cx, stream);
}

using k = proto::Op::KindCase;

constexpr op_route routes[] = {
  {k::kMemAlloc, with_message<&proto::Op::mem_alloc, mem_alloc>},
  {k::kMemFree, with_message<&proto::Op::mem_free, mem_free>},
  {k::kMemcpyHtod, with_message<&proto::Op::memcpy_htod, memcpy_htod>},
  {k::kMemcpyDtoh, with_message<&proto::Op::memcpy_dtoh, memcpy_dtoh>},
  {k::kMemcpyDtod, with_message<&proto::Op::memcpy_dtod, memcpy_dtod>},
  {k::kMemcpy2D, with_message<&proto::Op::memcpy_2d, memcpy_2d>},
  {k::kMemset, with_message<&proto::Op::memset, memset>},
  {k::kMemGetInfo, with_message<&proto::Op::mem_get_info, mem_get_info>},
  {k::kMemAllocPitch, with_message<&proto::Op::mem_alloc_pitch, mem_alloc_pitch>},
};

} // namespace

const op_family memory_family = make_family(routes);

} // namespace gleam::executor
