#include "executor/library_call.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include <fmt/format.h>

#include "executor/driver_api.hpp"

namespace gleam::executor {

library_call_env::scalar_arg library_call_env::scalar(wire::arg_reader& in, bool has_input) {
  if (device_scalars_) {
    scalar_arg a;
    a.address = in.address();
    return a;
  }
  return host(in, has_input);
}

library_call_env::scalar_arg library_call_env::host(wire::arg_reader& in, bool has_input) {
  scalar_arg a;
  if (has_input)
    a.bytes = in.bytes();
  return a;
}

void* library_call_env::host_memory(uint64_t bytes) {
  auto n = (bytes + sizeof(std::max_align_t) - 1) / sizeof(std::max_align_t);
  memory_.emplace_back(new std::max_align_t[n]());
  return memory_.back().get();
}

void* library_call_env::host_copy(const scalar_arg& a, uint64_t bytes, const char* what) {
  if (bytes != a.bytes.size() || bytes > wire::max_host_input_bytes) {
    invalid(fmt::format("{} arrived with {} bytes where its type and size make {}", what,
                        a.bytes.size(), bytes));
    return nullptr;
  }
  void* p = host_memory(bytes);
  std::memcpy(p, a.bytes.data(), a.bytes.size());
  return p;
}

void* library_call_env::scalar_in(const scalar_arg& a, uint64_t bytes, const char* what) {
  if (device_scalars_)
    return device(a.address, bytes, what) ? reinterpret_cast<void*>(a.address) : nullptr;
  return host_copy(a, bytes, what);
}

void* library_call_env::scalar_inout(const scalar_arg& a, uint64_t bytes, const char* what) {
  if (device_scalars_)
    return scalar_in(a, bytes, what);
  return host_inout(a, bytes, what);
}

void* library_call_env::scalar_out(const scalar_arg& a, uint64_t bytes, const char* what) {
  if (device_scalars_)
    return device(a.address, bytes, what) ? reinterpret_cast<void*>(a.address) : nullptr;
  return host_output(bytes, what);
}

void* library_call_env::host_in(const scalar_arg& a, uint64_t bytes, const char* what) {
  return host_copy(a, bytes, what);
}

void* library_call_env::host_inout(const scalar_arg& a, uint64_t bytes, const char* what) {
  void* p = host_copy(a, bytes, what);
  if (p != nullptr)
    outputs_.emplace_back(p, bytes);
  return p;
}

void library_call_env::take_outputs(proto::LibraryOutputs& out) {
  for (auto& [p, bytes] : outputs_)
    out.add_data(static_cast<const char*>(p), static_cast<size_t>(bytes));
  outputs_.clear();
}

std::string library_call_env::take_joined_outputs() {
  std::string out;
  out.reserve(static_cast<size_t>(output_bytes_));
  for (auto& [p, bytes] : outputs_)
    out.append(static_cast<const char*>(p), static_cast<size_t>(bytes));
  outputs_.clear();
  return out;
}

void library_call_env::too_large(std::string detail) {
  invalid(std::move(detail));
}

bool library_call_env::device_array(uint64_t ptr, int64_t, uint64_t, const char* what) {
  invalid(fmt::format("{} ({:#x}): this library takes no device arrays of pointers", what, ptr));
  return false;
}

void* library_call_env::library_handle(uint64_t id, int32_t, handle_use) {
  invalid(fmt::format("handle {}: this library has no declared handle types", id));
  return nullptr;
}

std::shared_ptr<void>* library_call_env::handle_note(uint64_t, int32_t) {
  return nullptr;
}

bool library_call_env::fresh(uint64_t id, int32_t) {
  invalid(fmt::format("handle {}: this library has no declared handle types", id));
  return false;
}

bool library_call_env::adopt(uint64_t id, int32_t, void*, bool) {
  invalid(fmt::format("handle {}: this library has no declared handle types", id));
  return false;
}

bool library_call_env::adopt_address(int32_t, void*) {
  invalid("this library has no declared handle types");
  return false;
}

void library_call_env::destroy(uint64_t id, int32_t, const char*) {
  invalid(fmt::format("handle {}: this library has no declared handle types", id));
}

CUstream library_call_env::stream(uint64_t id, bool) {
  invalid(fmt::format("stream {}: this library's runner takes no streams", id));
  return nullptr;
}

void library_call_env::stream_set(uint64_t, int32_t, uint64_t, CUstream) {
}

library_call_env::placement_arg library_call_env::placement(wire::arg_reader& in) {
  placement_arg p;
  auto flag = in.value<uint8_t>();
  p.host = flag == 1;
  p.bad = flag > 1;
  if (flag == 0)
    p.address = in.address();
  return p;
}

void* library_call_env::host_output(uint64_t bytes, const char* what) {
  if (bytes > max_host_outputs || output_bytes_ + bytes > max_host_outputs) {
    too_large(fmt::format("{}: {} bytes of host results exceed the {} a call may return; "
                          "generate fewer values per call",
                          what, bytes, max_host_outputs));
    return nullptr;
  }
  // At least one byte, so that an empty output still has an address.
  void* p = host_memory(bytes == 0 ? 1 : bytes);
  output_bytes_ += bytes;
  outputs_.emplace_back(p, bytes);
  return p;
}

void* library_call_env::host_scratch(uint64_t bytes, const char* what) {
  if (bytes > max_host_outputs) {
    too_large(fmt::format("{}: {} bytes of host workspace exceed the {} a call may use", what,
                          bytes, max_host_outputs));
    return nullptr;
  }
  return host_memory(bytes == 0 ? 1 : bytes);
}

bool library_call_env::output(const placement_arg& p, uint64_t bytes, const char* what,
                              void** out) {
  if (p.bad) {
    invalid(fmt::format("{}: the output's placement flag is neither device nor host; the "
                        "client was built from another spec",
                        what));
    return false;
  }
  if (handle_host_ >= 0 && p.host != (handle_host_ == 1)) {
    invalid(fmt::format("{}: sent as {} memory for a {} generator; the client's handle "
                        "disagrees with the server's",
                        what, p.host ? "host" : "device", handle_host_ == 1 ? "host" : "device"));
    return false;
  }
  if (p.host) {
    *out = host_output(bytes, what);
    return *out != nullptr;
  }
  if (!device(p.address, bytes, what))
    return false;
  *out = reinterpret_cast<void*>(static_cast<uintptr_t>(p.address));
  return true;
}

pointer_array_check
check_pointer_array(driver_api& driver, CUstream stream, uint64_t ptr, int64_t count,
                    uint64_t bytes_each, const char* what,
                    const std::function<bool(uint64_t, uint64_t, const char*)>& in_range,
                    CUresult* rc) {
  if (count <= 0)
    return pointer_array_check::ok;
  uint64_t bytes = 0;
  if (__builtin_mul_overflow(static_cast<uint64_t>(count), uint64_t{8}, &bytes))
    bytes = wire::extents::invalid_extent;
  if (!in_range(ptr, bytes, what))
    return pointer_array_check::refused;
  if (*rc = driver.cuStreamSynchronize(stream); *rc != CUDA_SUCCESS)
    return pointer_array_check::sync_failed;
  constexpr size_t piece = size_t{1} << 16;
  std::vector<uint64_t> ptrs(std::min(piece, static_cast<size_t>(count)));
  for (size_t first = 0; first < static_cast<size_t>(count); first += piece) {
    auto n = std::min(piece, static_cast<size_t>(count) - first);
    *rc = driver.cuMemcpyDtoH(ptrs.data(), static_cast<CUdeviceptr>(ptr + first * 8), n * 8);
    if (*rc != CUDA_SUCCESS)
      return pointer_array_check::read_failed;
    for (size_t j = 0; j < n; ++j)
      if (!in_range(ptrs[j], bytes_each, fmt::format("{}[{}]", what, first + j).c_str()))
        return pointer_array_check::refused;
  }
  return pointer_array_check::ok;
}

} // namespace gleam::executor
