#include "executor/library_call.hpp"

#include <cstring>
#include <string>

#include <fmt/format.h>

namespace gleam::executor {

namespace {

/// Host parameters a call may carry are small (rotm's five doubles, a
/// batch's info): a larger size is a spec or client error, never an
/// allocation to make.
constexpr uint64_t max_host_scalar = 4096;

} // namespace

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
  if (bytes != a.bytes.size() || bytes > max_host_scalar) {
    invalid(fmt::format("{} arrived with {} bytes where its type and size make {}", what,
                        a.bytes.size(), bytes));
    return nullptr;
  }
  void* p = host_memory(bytes);
  std::memcpy(p, a.bytes.data(), a.bytes.size());
  return p;
}

void* library_call_env::host_result(uint64_t bytes, const char* what) {
  if (bytes == 0 || bytes > max_host_scalar) {
    invalid(fmt::format("{} has {} bytes: a size Gleam cannot give host memory for", what,
                        bytes));
    return nullptr;
  }
  void* p = host_memory(bytes);
  outputs_.emplace_back(p, bytes);
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
  return host_out(a, bytes, what);
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

void* library_call_env::host_out(const scalar_arg& a, uint64_t bytes, const char* what) {
  static_cast<void>(a);
  return host_result(bytes, what);
}

void library_call_env::take_outputs(proto::LibraryOutputs& out) {
  for (auto& [p, bytes] : outputs_)
    out.add_data(static_cast<const char*>(p), static_cast<size_t>(bytes));
  outputs_.clear();
}

} // namespace gleam::executor
