#include "interpose/library_call.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <limits>
#include <mutex>
#include <set>
#include <string>
#include <tuple>

#include "actors/proto/ops.pb.h"
#include "interpose/error_map.hpp"
#include "interpose/message_size.hpp"
#include "interpose/runtime.hpp"

namespace gleam::interpose {

library_handle* library_handle_of(const void* p, const library_traits& lib,
                                  int32_t type) noexcept {
  if (p == nullptr)
    return nullptr;
  auto* h = static_cast<library_handle*>(const_cast<void*>(p));
  if (h->magic != library_handle_magic || h->library != lib.library || h->type != type)
    return nullptr;
  return h;
}

uint64_t fresh_library_handle_id() noexcept {
  return next_handle();
}

namespace {

/// The live value handles of the process, by (library, type, value).
struct value_handles {
  std::mutex mutex;
  std::set<std::tuple<int32_t, int32_t, long long>> live;
  int next = 1;
};

value_handles& values() {
  static auto* v = new value_handles; // outlives static destruction
  return *v;
}

} // namespace

int make_value_handle(const library_traits& lib, int32_t type) noexcept {
  try {
    auto& v = values();
    std::lock_guard<std::mutex> guard{v.mutex};
    if (v.next == std::numeric_limits<int>::max())
      return 0;
    int id = v.next++;
    v.live.emplace(lib.library, type, id);
    return id;
  } catch (...) {
    return 0;
  }
}

bool value_handle_live(const library_traits& lib, int32_t type, long long id) noexcept {
  auto& v = values();
  std::lock_guard<std::mutex> guard{v.mutex};
  return v.live.count(std::make_tuple(lib.library, type, id)) != 0;
}

void release_value_handle(const library_traits& lib, int32_t type, long long id) noexcept {
  auto& v = values();
  std::lock_guard<std::mutex> guard{v.mutex};
  v.live.erase(std::make_tuple(lib.library, type, id));
}

int32_t status_of_cuda(cudaError_t x, const cuda_error_statuses& s) noexcept {
  switch (x) {
    case cudaSuccess:
      return s.success;
    case cudaErrorNoDevice:
    case cudaErrorInitializationError:
    case cudaErrorInsufficientDriver:
    case cudaErrorDevicesUnavailable:
      return s.no_server;
    case cudaErrorMemoryAllocation:
      return s.alloc_failed;
    case cudaErrorInvalidValue:
      return s.invalid;
    case cudaErrorInvalidResourceHandle:
      return s.bad_handle;
    case cudaErrorNotSupported:
      return s.not_supported;
    default:
      return is_sticky(x) ? s.gpu_fault : s.other;
  }
}

void report_library_unsupported(const char* name, const char* reason) noexcept {
  log_unsupported_once(name, reason);
}

int32_t run_library_op(const library_traits& lib, proto::Op op, proto::OpResult* result) noexcept {
  try {
    proto::OpResult local;
    auto* r = result != nullptr ? result : &local;
    auto err = run_op(std::move(op), r);
    // A result that reached the library carries its status; anything else
    // is a transport or validation failure of the runtime.
    if (r->blas_status() != 0 || err == cudaSuccess)
      return r->blas_status();
    return lib.from_cuda(err);
  } catch (...) {
    return lib.internal_error;
  }
}

int32_t submit_library_op(const library_traits& lib, proto::Op op) noexcept {
  try {
    if (!async_enabled())
      return run_library_op(lib, std::move(op));
    if (auto s = sticky_error(); s != cudaSuccess)
      return lib.from_cuda(s);
    return lib.from_cuda(interpose::submit(std::move(op)));
  } catch (...) {
    return lib.internal_error;
  }
}

library_call::library_call(const library_traits& lib, uint32_t id, const char* name,
                           bool device_scalars)
  : lib_(lib), id_(id), name_(name), device_scalars_(device_scalars) {
}

void library_call::stream(cudaStream_t s) {
  args_.value(wire_stream(s));
}

int32_t library_call::scalar(const void* p, uint64_t bytes, bool send, void* back) {
  if (device_scalars_ && bytes != 0 && bytes <= max_scalar_bytes) {
    args_.address(p);
    return lib_.success;
  }
  return host(p, bytes, max_scalar_bytes, send, back);
}

int32_t library_call::host(const void* p, uint64_t bytes, uint64_t limit, bool send,
                           void* back) {
  // Host memory parameters may be empty (a workspace of 0 bytes, null or
  // not); a scalar always has a size.
  if (bytes > limit || (bytes == 0 && limit == max_scalar_bytes)) {
    report_library_unsupported(name_, limit == max_scalar_bytes
                                          ? "a scalar of a data type whose size Gleam does not know"
                                          : "a host parameter larger than Gleam sends with a call");
    return lib_.not_supported;
  }
  if (p == nullptr && bytes != 0)
    return lib_.invalid;
  if (send)
    args_.bytes(p, bytes);
  if (back != nullptr)
    outputs_.emplace_back(back, bytes);
  return lib_.success;
}

int32_t library_call::scalar_in(const void* p, uint64_t bytes) {
  return scalar(p, bytes, true, nullptr);
}

int32_t library_call::scalar_out(void* p, uint64_t bytes) {
  return scalar(p, bytes, false, p);
}

int32_t library_call::scalar_inout(void* p, uint64_t bytes) {
  return scalar(p, bytes, true, p);
}

int32_t library_call::host_output(void* p, uint64_t bytes) {
  if (p == nullptr && bytes != 0)
    return lib_.invalid;
  outputs_.emplace_back(p, bytes);
  return lib_.success;
}

int32_t library_call::host_in(const void* p, uint64_t bytes) {
  return host(p, bytes, wire::max_host_input_bytes, true, nullptr);
}

int32_t library_call::host_inout(void* p, uint64_t bytes) {
  return host(p, bytes, wire::max_host_input_bytes, true, p);
}

int32_t library_call::host_out(void* p, uint64_t bytes) {
  return host(p, bytes, max_scalar_bytes, false, p);
}

int32_t library_call::output(void* p, uint64_t bytes, bool host) {
  if (host) {
    args_.value(uint8_t{1});
    return host_output(p, bytes);
  }
  args_.value(uint8_t{0});
  args_.address(p);
  return lib_.success;
}

int32_t library_call::read_held(uint64_t hold, uint64_t total) noexcept {
  try {
    const uint64_t piece = max_message_payload;
    auto pieces = static_cast<size_t>((total + piece - 1) / piece);
    auto make = [&](size_t i) {
      proto::Op op;
      auto* rd = op.mutable_library_output_read();
      rd->set_hold(hold);
      rd->set_offset(i * piece);
      rd->set_size(std::min<uint64_t>(piece, total - i * piece));
      rd->set_release(i + 1 == pieces);
      return op;
    };
    // The pieces, in order, scattered over the outputs (concatenated in
    // parameter order on the server).
    size_t next = 0;
    bool short_reply = false;
    auto sink = [&](proto::OpResult& r) {
      auto offset = next++ * piece;
      if (r.status() != 0)
        return;
      auto want = std::min<uint64_t>(piece, total - offset);
      if (r.data().size() != want) {
        short_reply = true;
        return;
      }
      uint64_t at = 0;
      const char* from = r.data().data();
      for (auto& [dst, bytes] : outputs_) {
        auto begin = std::max(at, offset), end = std::min(at + bytes, offset + want);
        if (begin < end)
          std::memcpy(static_cast<char*>(dst) + (begin - at), from + (begin - offset),
                      static_cast<size_t>(end - begin));
        at += bytes;
      }
    };
    auto err = run_pipelined(pieces, make, sink);
    if (err != cudaSuccess)
      return lib_.from_cuda(err);
    return short_reply ? lib_.internal_error : lib_.success;
  } catch (...) {
    return lib_.internal_error;
  }
}

int32_t library_call::finish(bool wait) noexcept {
  try {
    proto::Op op;
    auto* c = op.mutable_library_call();
    c->set_library(static_cast<proto::LibraryCall::Library>(lib_.library));
    c->set_function(id_);
    c->set_args(args_.take());
    c->set_device_scalars(device_scalars_);
    if (outputs_.empty() && !wait)
      return submit_library_op(lib_, std::move(op));
    uint64_t total = 0;
    for (const auto& o : outputs_)
      total += o.second;
    // Results larger than a message stay on the server until read.
    uint64_t hold = total > max_message_payload ? next_handle() : 0;
    c->set_hold(hold);
    proto::OpResult r;
    auto st = run_library_op(lib_, std::move(op), &r);
    if (st != lib_.success)
      return st;
    if (hold != 0)
      return read_held(hold, total);
    const auto& data = r.library_outputs().data();
    if (static_cast<size_t>(data.size()) != outputs_.size())
      return lib_.internal_error;
    for (size_t i = 0; i < outputs_.size(); ++i)
      if (data[static_cast<int>(i)].size() != outputs_[i].second)
        return lib_.internal_error;
    for (size_t i = 0; i < outputs_.size(); ++i)
      if (outputs_[i].second != 0)
        std::memcpy(outputs_[i].first, data[static_cast<int>(i)].data(),
                    static_cast<size_t>(outputs_[i].second));
    return lib_.success;
  } catch (...) {
    return lib_.internal_error;
  }
}

} // namespace gleam::interpose
