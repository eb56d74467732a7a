// Pure helpers of the runtime, kept apart so tests can use them without the
// client: launch argument packing and client handle numbering.
#include <algorithm>
#include <atomic>
#include <cstring>

#include "interpose/runtime.hpp"

namespace gleam::interpose {

namespace {

// Client handles start above the reserved stream values 0 (legacy default),
// 1 (cudaStreamLegacy) and 2 (cudaStreamPerThread) and step by 0x10 so they
// look like aligned pointers to apps that print or hash them.
constexpr uint64_t first_handle = 0x5000;
constexpr uint64_t handle_step = 0x10;

std::atomic<uint64_t> handle_counter{first_handle};

} // namespace

uint64_t next_handle() noexcept {
  auto h = handle_counter.fetch_add(handle_step);
  while (h <= 2)
    h = handle_counter.fetch_add(handle_step);
  return h;
}

std::string pack_arguments(const std::vector<proto::ParamInfo>& params,
                           void** args) {
  size_t total = 0;
  for (const auto& p : params)
    total = std::max<size_t>(total, size_t{p.offset()} + p.size());
  std::string buf(total, '\0');
  for (size_t i = 0; i < params.size(); ++i)
    if (args != nullptr && args[i] != nullptr)
      std::memcpy(&buf[params[i].offset()], args[i], params[i].size());
  return buf;
}

} // namespace gleam::interpose
