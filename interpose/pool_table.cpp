#include "interpose/pool_table.hpp"

#include <iterator>

namespace gleam::interpose {

void pool_table::add(uint64_t pool, int device, bool is_default) {
  pools_[pool] = pool_info{device, is_default};
}

uint64_t pool_table::default_pool(int device) const {
  for (const auto& [handle, info] : pools_)
    if (info.is_default && info.device == device)
      return handle;
  return 0;
}

bool pool_table::known(uint64_t pool) const {
  return pools_.count(pool) != 0;
}

bool pool_table::is_default(uint64_t pool) const {
  auto i = pools_.find(pool);
  return i != pools_.end() && i->second.is_default;
}

int pool_table::device_of(uint64_t pool) const {
  auto i = pools_.find(pool);
  return i == pools_.end() ? -1 : i->second.device;
}

void pool_table::remove(uint64_t pool) {
  pools_.erase(pool);
  for (auto i = current_.begin(); i != current_.end();)
    i = i->second == pool ? current_.erase(i) : std::next(i);
}

uint64_t pool_table::current(int device) const {
  auto i = current_.find(device);
  return i != current_.end() ? i->second : default_pool(device);
}

void pool_table::set_current(int device, uint64_t pool) {
  current_[device] = pool;
}

void pool_table::note_allocation(uint64_t dptr, uint64_t pool) {
  allocations_[dptr] = pool;
}

uint64_t pool_table::pool_of(uint64_t dptr) const {
  auto i = allocations_.find(dptr);
  return i == allocations_.end() ? 0 : i->second;
}

void pool_table::forget_allocation(uint64_t dptr) {
  allocations_.erase(dptr);
}

void pool_table::clear() noexcept {
  pools_.clear();
  current_.clear();
  allocations_.clear();
}

} // namespace gleam::interpose
