#include "wire/vmm_space.hpp"

#include <limits>

namespace gleam::wire {

namespace {

constexpr uint64_t max_u64 = std::numeric_limits<uint64_t>::max();

bool overflows(uint64_t base, uint64_t size) {
  return base > max_u64 - size;
}

bool aligned(uint64_t value, uint64_t granularity) {
  return granularity == 0 || value % granularity == 0;
}

} // namespace

// --- reservations -------------------------------------------------------------

bool vmm_space::reserve(uint64_t base, uint64_t size) {
  if (size == 0 || overflows(base, size))
    return false;
  auto next = reservations_.lower_bound(base);
  if (next != reservations_.end() && next->first < base + size)
    return false;
  if (next != reservations_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second.size > base)
      return false;
  }
  reservations_.emplace(base, reservation{base, size});
  return true;
}

CUresult vmm_space::check_free(uint64_t ptr, uint64_t size) const {
  auto i = reservations_.find(ptr);
  if (i == reservations_.end() || i->second.size != size)
    return CUDA_ERROR_INVALID_VALUE;
  auto m = mappings_.lower_bound(ptr);
  if (m != mappings_.end() && m->first < ptr + size)
    return CUDA_ERROR_INVALID_VALUE;
  return CUDA_SUCCESS;
}

void vmm_space::free(uint64_t ptr) {
  reservations_.erase(ptr);
}

const vmm_space::reservation* vmm_space::reservation_of(uint64_t ptr, uint64_t size) const {
  if (overflows(ptr, size))
    return nullptr;
  auto i = reservations_.upper_bound(ptr);
  if (i == reservations_.begin())
    return nullptr;
  --i;
  const auto& r = i->second;
  if (ptr - r.base >= r.size || size > r.size - (ptr - r.base))
    return nullptr;
  return &r;
}

bool vmm_space::reserved(uint64_t addr) const {
  return reservation_of(addr, 1) != nullptr;
}

// --- allocations ----------------------------------------------------------------

CUresult vmm_space::check_create(uint64_t handle) const {
  return handle == 0 || allocations_.count(handle) != 0 ? CUDA_ERROR_INVALID_VALUE
                                                        : CUDA_SUCCESS;
}

void vmm_space::create(const allocation& a) {
  auto& out = allocations_[a.handle];
  out = a;
  out.references = 1;
  out.mappings = 0;
  allocated_bytes_ += a.size;
}

const vmm_space::allocation* vmm_space::find(uint64_t handle) const {
  auto i = allocations_.find(handle);
  return i == allocations_.end() ? nullptr : &i->second;
}

CUresult vmm_space::check_release(uint64_t handle) const {
  auto* a = find(handle);
  return a == nullptr || a->references == 0 ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}

std::optional<vmm_space::allocation> vmm_space::collect(uint64_t handle) {
  auto i = allocations_.find(handle);
  if (i == allocations_.end() || i->second.references != 0 || i->second.mappings != 0)
    return std::nullopt;
  auto out = i->second;
  allocated_bytes_ -= out.size;
  allocations_.erase(i);
  return out;
}

std::optional<vmm_space::allocation> vmm_space::release(uint64_t handle) {
  auto i = allocations_.find(handle);
  if (i == allocations_.end() || i->second.references == 0)
    return std::nullopt;
  --i->second.references;
  return collect(handle);
}

std::optional<uint64_t> vmm_space::handle_at(uint64_t addr) const {
  if (auto* m = mapping_at(addr))
    return m->handle;
  return std::nullopt;
}

CUresult vmm_space::retain(uint64_t handle) {
  auto i = allocations_.find(handle);
  if (i == allocations_.end())
    return CUDA_ERROR_INVALID_VALUE;
  ++i->second.references;
  return CUDA_SUCCESS;
}

// --- mappings -------------------------------------------------------------------

CUresult vmm_space::check_map(uint64_t ptr, uint64_t size, uint64_t offset, uint64_t handle,
                              unsigned long long flags) const {
  auto* a = find(handle);
  if (a == nullptr || a->references == 0 || flags != 0 || size == 0)
    return CUDA_ERROR_INVALID_VALUE;
  if (!aligned(ptr, a->granularity))
    return CUDA_ERROR_INVALID_VALUE;
  // What the driver does not map (CUDA 13, measured): a nonzero offset
  // (documented "must be zero"), a size that is not a multiple of the
  // granularity or runs past the allocation.
  if (offset != 0 || !aligned(size, a->granularity) || size > a->size)
    return CUDA_ERROR_NOT_SUPPORTED;
  if (reservation_of(ptr, size) == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  auto next = mappings_.lower_bound(ptr);
  if (next != mappings_.end() && next->first < ptr + size)
    return CUDA_ERROR_INVALID_VALUE;
  if (next != mappings_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second.size > ptr)
      return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}

void vmm_space::map(uint64_t ptr, uint64_t size, uint64_t offset, uint64_t handle) {
  mappings_.emplace(ptr, mapping{ptr, size, offset, handle, CU_MEM_ACCESS_FLAGS_PROT_NONE});
  ++allocations_[handle].mappings;
}

CUresult vmm_space::check_unmap(uint64_t ptr, uint64_t size) const {
  if (size == 0 || reservation_of(ptr, size) == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  auto end = ptr + size;
  uint64_t granularity = 0;
  for (const auto& kv : allocations_)
    if (granularity == 0 || (kv.second.granularity != 0 && kv.second.granularity < granularity))
      granularity = kv.second.granularity;
  // A mapping the range cuts is refused; unmapped bytes in it are not.
  auto i = mappings_.upper_bound(ptr);
  if (i != mappings_.begin())
    --i;
  for (; i != mappings_.end() && i->first < end; ++i) {
    const auto& m = i->second;
    if (m.base + m.size <= ptr)
      continue;
    if (m.base < ptr || m.base + m.size > end)
      return CUDA_ERROR_INVALID_VALUE;
    if (const auto* a = find(m.handle); a != nullptr && a->granularity != 0)
      granularity = a->granularity;
  }
  if (!aligned(ptr, granularity) || !aligned(size, granularity))
    return CUDA_ERROR_INVALID_VALUE;
  return CUDA_SUCCESS;
}

CUresult vmm_space::covered_exactly(uint64_t ptr, uint64_t size) const {
  if (size == 0 || overflows(ptr, size))
    return CUDA_ERROR_INVALID_VALUE;
  auto end = ptr + size;
  auto i = mappings_.find(ptr);
  for (uint64_t at = ptr; at < end; ++i) {
    if (i == mappings_.end() || i->first != at)
      return CUDA_ERROR_INVALID_VALUE;
    at += i->second.size;
    if (at > end)
      return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}

std::vector<vmm_space::mapping> vmm_space::mappings_in(uint64_t ptr, uint64_t size) const {
  std::vector<mapping> out;
  for (auto i = mappings_.lower_bound(ptr); i != mappings_.end() && i->first < ptr + size; ++i)
    out.push_back(i->second);
  return out;
}

std::optional<vmm_space::allocation> vmm_space::unmap(uint64_t base) {
  auto i = mappings_.find(base);
  if (i == mappings_.end())
    return std::nullopt;
  auto handle = i->second.handle;
  mappings_.erase(i);
  auto a = allocations_.find(handle);
  if (a == allocations_.end())
    return std::nullopt;
  --a->second.mappings;
  return collect(handle);
}

CUresult vmm_space::check_access(uint64_t ptr, uint64_t size) const {
  return covered_exactly(ptr, size);
}

void vmm_space::set_access(uint64_t ptr, uint64_t size, unsigned long long flags) {
  for (auto i = mappings_.lower_bound(ptr); i != mappings_.end() && i->first < ptr + size; ++i)
    i->second.access = flags;
}

const vmm_space::mapping* vmm_space::mapping_at(uint64_t addr) const {
  auto i = mappings_.upper_bound(addr);
  if (i == mappings_.begin())
    return nullptr;
  --i;
  return addr - i->first < i->second.size ? &i->second : nullptr;
}

uint64_t vmm_space::read_write_span(uint64_t addr) const {
  auto i = mappings_.upper_bound(addr);
  if (i == mappings_.begin())
    return 0;
  --i;
  if (addr - i->first >= i->second.size)
    return 0;
  uint64_t end = i->first;
  for (; i != mappings_.end() && i->first == end
         && i->second.access == CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
       ++i)
    end += i->second.size;
  return end > addr ? end - addr : 0;
}

// --- the whole space --------------------------------------------------------------

std::vector<vmm_space::reservation> vmm_space::reservations() const {
  std::vector<reservation> out;
  for (const auto& kv : reservations_)
    out.push_back(kv.second);
  return out;
}

std::vector<vmm_space::mapping> vmm_space::mappings() const {
  std::vector<mapping> out;
  for (const auto& kv : mappings_)
    out.push_back(kv.second);
  return out;
}

std::vector<vmm_space::allocation> vmm_space::allocations() const {
  std::vector<allocation> out;
  for (const auto& kv : allocations_)
    out.push_back(kv.second);
  return out;
}

void vmm_space::clear() noexcept {
  reservations_.clear();
  allocations_.clear();
  mappings_.clear();
  allocated_bytes_ = 0;
}

} // namespace gleam::wire
