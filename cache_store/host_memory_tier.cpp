#include "cache_store/host_memory_tier.hpp"

#include <cstdlib>
#include <cstring>

#include "cache_store/error.hpp"

namespace gleam::cache_store {

namespace {

caf::error absent(const std::string& tier_name, const chunk_key& key) {
  return make_error(error_code::not_found,
                    "tier " + tier_name + " holds no chunk " + key.to_string());
}

} // namespace

memory_allocator default_allocator() {
  return {[](size_t size) { return std::malloc(size > 0 ? size : 1); },
          [](void* ptr, size_t) { std::free(ptr); }};
}

host_memory_tier::host_memory_tier(std::string name, uint64_t capacity,
                                   memory_allocator alloc, tier_kind kind)
  : name_(std::move(name)),
    capacity_(capacity),
    alloc_(std::move(alloc)),
    kind_(kind) {
  // nop
}

host_memory_tier::~host_memory_tier() {
  for (auto& [key, blk] : blocks_)
    alloc_.deallocate(blk.ptr, blk.size);
}

std::string host_memory_tier::name() const {
  return name_;
}

tier_kind host_memory_tier::kind() const {
  return kind_;
}

uint64_t host_memory_tier::capacity() const {
  return capacity_;
}

uint64_t host_memory_tier::used() const {
  return used_;
}

bool host_memory_tier::contains(const chunk_key& key) const {
  return blocks_.count(key) > 0;
}

caf::error host_memory_tier::put(const chunk_key& key, const void* data,
                                 size_t size) {
  if (blocks_.count(key) > 0)
    return {};
  if (used_ + size > capacity_)
    return make_error(error_code::no_space,
                      "tier " + name_ + " cannot take chunk " + key.to_string()
                        + " of " + std::to_string(size) + " bytes: "
                        + std::to_string(used_) + " of "
                        + std::to_string(capacity_)
                        + " bytes in use; evict first or raise its capacity");
  auto ptr = alloc_.allocate(size);
  if (ptr == nullptr)
    return make_error(error_code::no_space,
                      "tier " + name_ + " could not allocate "
                        + std::to_string(size) + " bytes for chunk "
                        + key.to_string()
                        + "; lower the tier's capacity to what the host has");
  if (size > 0)
    std::memcpy(ptr, data, size);
  blocks_.emplace(key, block{ptr, size});
  used_ += size;
  return {};
}

caf::expected<size_t> host_memory_tier::read(const chunk_key& key, void* dst,
                                             size_t capacity) {
  auto i = blocks_.find(key);
  if (i == blocks_.end())
    return absent(name_, key);
  if (i->second.size > capacity)
    return make_error(error_code::buffer_too_small,
                      "chunk " + key.to_string() + " has "
                        + std::to_string(i->second.size)
                        + " bytes but the buffer holds only "
                        + std::to_string(capacity));
  if (i->second.size > 0)
    std::memcpy(dst, i->second.ptr, i->second.size);
  return i->second.size;
}

caf::expected<chunk_view> host_memory_tier::view(const chunk_key& key) {
  auto i = blocks_.find(key);
  if (i == blocks_.end())
    return absent(name_, key);
  return chunk_view{kind_, i->second.ptr, i->second.size};
}

caf::error host_memory_tier::erase(const chunk_key& key) {
  auto i = blocks_.find(key);
  if (i == blocks_.end())
    return absent(name_, key);
  alloc_.deallocate(i->second.ptr, i->second.size);
  used_ -= i->second.size;
  blocks_.erase(i);
  return {};
}

fake_device_tier::fake_device_tier(uint64_t capacity)
  : impl_("gpu (fake)", capacity, default_allocator(), tier_kind::gpu) {
  // nop
}

fake_device_tier::~fake_device_tier() = default;

std::string fake_device_tier::name() const {
  return impl_.name();
}

uint64_t fake_device_tier::capacity() const {
  return impl_.capacity();
}

uint64_t fake_device_tier::used() const {
  return impl_.used();
}

bool fake_device_tier::contains(const chunk_key& key) const {
  return impl_.contains(key);
}

caf::error fake_device_tier::put(const chunk_key& key, const void* data,
                                 size_t size) {
  return impl_.put(key, data, size);
}

caf::expected<size_t> fake_device_tier::read(const chunk_key& key, void* dst,
                                             size_t capacity) {
  return impl_.read(key, dst, capacity);
}

caf::expected<chunk_view> fake_device_tier::view(const chunk_key& key) {
  return impl_.view(key);
}

caf::error fake_device_tier::erase(const chunk_key& key) {
  return impl_.erase(key);
}

caf::error fake_device_tier::put_from_device(const chunk_key& key, const void* device_src,
                                             size_t size) {
  // The fake's device addresses are host memory.
  auto err = impl_.put(key, device_src, size);
  if (!err && impl_.contains(key))
    from_device_ += size;
  return err;
}

} // namespace gleam::cache_store
