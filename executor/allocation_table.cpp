#include "executor/allocation_table.hpp"

#include <limits>

namespace gleam::executor {

namespace {

constexpr uint64_t max_u64 = std::numeric_limits<uint64_t>::max();

} // namespace

bool allocation_table::insert(range_entry entry) {
  if (entry.size == 0 || entry.base > max_u64 - entry.size)
    return false;
  auto next = by_base_.lower_bound(entry.base);
  if (next != by_base_.end() && next->first < entry.base + entry.size)
    return false;
  if (next != by_base_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second.size > entry.base)
      return false;
  }
  total_bytes_ += entry.size;
  if (entry.kind == range_kind::allocation)
    allocated_bytes_ += entry.size;
  by_base_.emplace(entry.base, entry);
  return true;
}

std::optional<range_entry> allocation_table::erase(uint64_t base) {
  auto i = by_base_.find(base);
  if (i == by_base_.end())
    return std::nullopt;
  auto entry = i->second;
  total_bytes_ -= entry.size;
  if (entry.kind == range_kind::allocation)
    allocated_bytes_ -= entry.size;
  by_base_.erase(i);
  return entry;
}

bool allocation_table::overlaps(uint64_t base, uint64_t size) const {
  if (size == 0)
    return false;
  auto end = base > max_u64 - size ? max_u64 : base + size;
  auto next = by_base_.lower_bound(base);
  if (next != by_base_.end() && next->first < end)
    return true;
  if (next == by_base_.begin())
    return false;
  auto prev = std::prev(next);
  return prev->first + prev->second.size > base;
}

std::optional<range_entry> allocation_table::find_base(uint64_t base) const {
  auto i = by_base_.find(base);
  if (i == by_base_.end())
    return std::nullopt;
  return i->second;
}

std::optional<range_entry> allocation_table::find(uint64_t ptr) const {
  auto i = by_base_.upper_bound(ptr);
  if (i == by_base_.begin())
    return std::nullopt;
  --i;
  if (ptr - i->first < i->second.size)
    return i->second;
  return std::nullopt;
}

bool allocation_table::contains(uint64_t ptr, uint64_t len) const {
  if (ptr > max_u64 - len)
    return false;
  auto i = by_base_.upper_bound(ptr);
  if (i == by_base_.begin())
    return false;
  --i;
  const auto& e = i->second;
  // ptr >= e.base here; both offsets are relative to the entry's base.
  auto offset = ptr - e.base;
  if (len == 0)
    return offset <= e.size;
  if (offset >= e.size)
    return false;
  if (len <= e.size - offset)
    return true;
  if (e.kind != range_kind::vmm_mapping)
    return false;
  // Mappings side by side are one range of virtual addresses.
  auto end = ptr + len;
  auto covered = e.base + e.size;
  for (auto j = std::next(i); j != by_base_.end() && j->first == covered
                              && j->second.kind == range_kind::vmm_mapping;
       ++j) {
    covered += j->second.size;
    if (covered >= end)
      return true;
  }
  return false;
}

size_t allocation_table::erase_module(uint64_t module) {
  size_t n = 0;
  for (auto i = by_base_.begin(); i != by_base_.end();) {
    const auto& e = i->second;
    if (e.kind == range_kind::module_variable && e.module == module) {
      total_bytes_ -= e.size;
      i = by_base_.erase(i);
      ++n;
    } else {
      ++i;
    }
  }
  return n;
}

std::vector<range_entry> allocation_table::entries() const {
  std::vector<range_entry> out;
  out.reserve(by_base_.size());
  for (const auto& kv : by_base_)
    out.push_back(kv.second);
  return out;
}

void allocation_table::clear() noexcept {
  by_base_.clear();
  allocated_bytes_ = 0;
  total_bytes_ = 0;
}

} // namespace gleam::executor
