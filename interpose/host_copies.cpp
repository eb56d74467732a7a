#include "interpose/host_copies.hpp"

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <tuple>

#include "interpose/runtime.hpp"

namespace gleam::interpose {

namespace {

struct host_copy_table {
  std::mutex mutex;
  std::map<host_copy, uint64_t> ids;
  std::map<uint64_t, host_copy> copies;
};

host_copy_table& table() {
  // Never destroyed: requests may come while static destructors run.
  static auto* t = new host_copy_table;
  return *t;
}

} // namespace

bool host_copy::operator<(const host_copy& o) const noexcept {
  return std::tie(base, pitch, slice_rows, width, height, depth)
         < std::tie(o.base, o.pitch, o.slice_rows, o.width, o.height, o.depth);
}

uint64_t register_host_copy(const host_copy& c) {
  auto& t = table();
  std::lock_guard<std::mutex> guard{t.mutex};
  auto [i, fresh] = t.ids.emplace(c, t.ids.size() + 1);
  if (fresh)
    t.copies[i->second] = c;
  return i->second;
}

bool serve_host_copy(uint64_t id, uint64_t offset, const std::string& data, uint64_t want,
                     std::string* out) {
  host_copy c;
  {
    auto& t = table();
    std::lock_guard<std::mutex> guard{t.mutex};
    auto i = t.copies.find(id);
    if (i == t.copies.end())
      return false;
    c = i->second;
  }
  bool writing = !data.empty();
  auto n = writing ? data.size() : want;
  auto total = c.width * c.height * c.depth;
  if (c.width == 0 || offset > total || n > total - offset)
    return false;
  if (!writing)
    out->assign(n, '\0');
  // Row by row: packed offset -> (slice, row, column) of the host end.
  for (uint64_t done = 0; done < n;) {
    auto at = offset + done;
    auto row = at / c.width;
    auto column = at % c.width;
    auto chunk = std::min<uint64_t>(c.width - column, n - done);
    auto* host = c.base + (row / c.height) * c.slice_rows * c.pitch + (row % c.height) * c.pitch
                 + column;
    if (writing)
      std::memcpy(host, data.data() + done, chunk);
    else
      std::memcpy(&(*out)[done], host, chunk);
    done += chunk;
  }
  return true;
}

void describe_copy(const copy_end& dst, const copy_end& src, uint64_t width, uint64_t height,
                   uint64_t depth, cudaMemcpyKind kind, proto::MemcpyNodeParams* out) {
  out->set_width(width);
  out->set_height(height);
  out->set_depth(depth);
  auto device_end = [](const copy_end& e, auto set_ptr, auto set_pitch, auto set_rows) {
    set_ptr(static_cast<uint64_t>(reinterpret_cast<uintptr_t>(e.ptr)));
    set_pitch(e.pitch);
    set_rows(e.slice_rows);
  };
  if (kind != cudaMemcpyHostToDevice)
    device_end(
      src, [&](uint64_t v) { out->set_src(v); }, [&](uint64_t v) { out->set_src_pitch(v); },
      [&](uint64_t v) { out->set_src_height(v); });
  if (kind != cudaMemcpyDeviceToHost)
    device_end(
      dst, [&](uint64_t v) { out->set_dst(v); }, [&](uint64_t v) { out->set_dst_pitch(v); },
      [&](uint64_t v) { out->set_dst_height(v); });
  if (kind == cudaMemcpyDeviceToDevice)
    return;
  const auto& host = kind == cudaMemcpyHostToDevice ? src : dst;
  host_copy c;
  c.base = static_cast<char*>(host.ptr);
  c.pitch = host.pitch;
  c.slice_rows = host.slice_rows;
  c.width = width;
  c.height = height;
  c.depth = depth;
  out->set_host_copy(register_host_copy(c));
  out->set_to_device(kind == cudaMemcpyHostToDevice);
}

cudaError_t capture_host_copy(cudaStream_t stream, void* dst, size_t dpitch, const void* src,
                              size_t spitch, size_t width, size_t height, cudaMemcpyKind kind) {
  proto::Op op;
  auto* c = op.mutable_stream_host_copy();
  c->set_stream(wire_stream(stream));
  describe_copy({dst, dpitch, height}, {const_cast<void*>(src), spitch, height}, width, height,
                1, kind, c->mutable_copy());
  return submit_on(stream, std::move(op));
}

} // namespace gleam::interpose
