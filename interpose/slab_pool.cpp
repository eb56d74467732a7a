#include "interpose/slab_pool.hpp"

#include <algorithm>
#include <iterator>

namespace gleam::interpose {

slab_pool::slab_pool(uint64_t max_slab, uint64_t first_slab)
  : max_slab_(max_slab), first_slab_(std::min(first_slab, max_slab)) {
}

bool slab_pool::carves(uint64_t size) const noexcept {
  return max_slab_ != 0 && size > 0 && size <= max_slab_ / 4;
}

std::optional<uint64_t> slab_pool::carve(uint64_t size) {
  if (!carves(size))
    return std::nullopt;
  auto align = size >= large_align ? large_align : small_align;
  auto need = round_up(size, small_align);
  // First fit, newest slab first: it is the one with room most often.
  std::vector<std::map<uint64_t, slab>::iterator> order;
  for (auto i = slabs_.begin(); i != slabs_.end(); ++i)
    order.push_back(i);
  std::sort(order.begin(), order.end(),
            [](auto a, auto b) { return a->second.serial > b->second.serial; });
  for (auto it : order) {
    auto& s = it->second;
    if (s.size - s.used < need)
      continue;
    for (auto f = s.free.begin(); f != s.free.end(); ++f) {
      auto start = round_up(it->first + f->first, align) - it->first;
      auto end = f->first + f->second;
      if (start > end || end - start < need)
        continue;
      // Split the free range around [start, start + need).
      auto before = start - f->first;
      auto after = end - (start + need);
      auto f_off = f->first;
      s.free.erase(f);
      if (before > 0)
        s.free.emplace(f_off, before);
      if (after > 0)
        s.free.emplace(start + need, after);
      s.used += need;
      auto addr = it->first + start;
      carved_.emplace(addr, carved{it->first, start, need});
      return addr;
    }
  }
  return std::nullopt;
}

uint64_t slab_pool::next_slab_size(uint64_t size) const noexcept {
  auto grown = first_slab_;
  for (uint64_t i = 0; i < created_ && grown < max_slab_; ++i)
    grown *= 2;
  grown = std::min(grown, max_slab_);
  // Room for the request at its alignment.
  auto need = round_up(size, large_align);
  return std::max(grown, need);
}

void slab_pool::add_slab(uint64_t base, uint64_t size) {
  slab s;
  s.size = size;
  s.free.emplace(0, size);
  s.serial = ++created_;
  newest_ = base;
  slabs_[base] = std::move(s);
}

bool slab_pool::owns(uint64_t addr) const {
  return carved_.count(addr) > 0;
}

bool slab_pool::release(uint64_t addr, uint64_t* empty_slab) {
  if (empty_slab != nullptr)
    *empty_slab = 0;
  auto c = carved_.find(addr);
  if (c == carved_.end())
    return false;
  auto si = slabs_.find(c->second.slab);
  auto off = c->second.offset;
  auto len = c->second.size;
  carved_.erase(c);
  if (si == slabs_.end())
    return true;
  auto& s = si->second;
  s.used -= len;
  // Insert and merge with the neighbours.
  auto next = s.free.lower_bound(off);
  if (next != s.free.end() && off + len == next->first) {
    len += next->second;
    next = s.free.erase(next);
  }
  if (next != s.free.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == off) {
      prev->second += len;
      off = prev->first;
      len = prev->second;
    } else {
      s.free.emplace(off, len);
    }
  } else {
    s.free.emplace(off, len);
  }
  if (s.used == 0 && si->first != newest_) {
    if (empty_slab != nullptr)
      *empty_slab = si->first;
    slabs_.erase(si);
  }
  return true;
}

uint64_t slab_pool::take_empty() {
  auto i = slabs_.find(newest_);
  if (i == slabs_.end() || i->second.used != 0)
    return 0;
  auto base = i->first;
  slabs_.erase(i);
  newest_ = 0;
  return base;
}

uint64_t slab_pool::unused_bytes() const noexcept {
  uint64_t n = 0;
  for (const auto& kv : slabs_)
    n += kv.second.size - kv.second.used;
  return n;
}

uint64_t slab_pool::slab_bytes() const noexcept {
  uint64_t n = 0;
  for (const auto& kv : slabs_)
    n += kv.second.size;
  return n;
}

void slab_pool::clear() noexcept {
  slabs_.clear();
  carved_.clear();
  newest_ = 0;
}

} // namespace gleam::interpose
