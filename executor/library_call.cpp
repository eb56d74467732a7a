#include "executor/library_call.hpp"

#include <cstring>
#include <string>

#include <fmt/format.h>

namespace gleam::executor {

namespace {

/// Host scalars a call may carry are small (rotm's five doubles): a larger
/// size is a spec or client error, never an allocation to make.
constexpr uint64_t max_host_scalar = 4096;

} // namespace

library_call_env::scalar_arg library_call_env::scalar(wire::arg_reader& in, bool has_input) {
  scalar_arg a;
  if (device_scalars_)
    a.address = in.address();
  else if (has_input)
    a.bytes = in.bytes();
  return a;
}

void* library_call_env::host_memory(uint64_t bytes) {
  auto n = (bytes + sizeof(std::max_align_t) - 1) / sizeof(std::max_align_t);
  memory_.emplace_back(new std::max_align_t[n]());
  return memory_.back().get();
}

void* library_call_env::scalar_in(const scalar_arg& a, uint64_t bytes, const char* what) {
  if (device_scalars_)
    return device(a.address, bytes, what) ? reinterpret_cast<void*>(a.address) : nullptr;
  if (bytes != a.bytes.size() || bytes > max_host_scalar) {
    invalid(fmt::format("scalar {} arrived with {} bytes where its type has {}", what,
                        a.bytes.size(), bytes));
    return nullptr;
  }
  void* p = host_memory(bytes);
  std::memcpy(p, a.bytes.data(), a.bytes.size());
  return p;
}

void* library_call_env::scalar_inout(const scalar_arg& a, uint64_t bytes, const char* what) {
  void* p = scalar_in(a, bytes, what);
  if (p != nullptr && !device_scalars_)
    outputs_.emplace_back(p, bytes);
  return p;
}

void* library_call_env::scalar_out(const scalar_arg& a, uint64_t bytes, const char* what) {
  if (device_scalars_)
    return device(a.address, bytes, what) ? reinterpret_cast<void*>(a.address) : nullptr;
  if (bytes == 0 || bytes > max_host_scalar) {
    invalid(fmt::format("scalar {} has {} bytes: a data type Gleam cannot size", what, bytes));
    return nullptr;
  }
  void* p = host_memory(bytes);
  outputs_.emplace_back(p, bytes);
  return p;
}

void library_call_env::take_outputs(proto::LibraryOutputs& out) {
  for (auto& [p, bytes] : outputs_)
    out.add_data(static_cast<const char*>(p), static_cast<size_t>(bytes));
  outputs_.clear();
}

} // namespace gleam::executor
