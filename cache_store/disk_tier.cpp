#include "cache_store/disk_tier.hpp"

#include "cache_store/error.hpp"

namespace gleam::cache_store {

disk_tier::disk_tier(std::unique_ptr<chunk_store> store, uint64_t capacity)
  : store_(std::move(store)), capacity_(capacity) {
  // nop
}

disk_tier::~disk_tier() = default;

std::string disk_tier::name() const {
  return "disk (" + store_->name() + ")";
}

tier_kind disk_tier::kind() const {
  return tier_kind::disk;
}

uint64_t disk_tier::capacity() const {
  return capacity_;
}

uint64_t disk_tier::used() const {
  return store_->stats().bytes;
}

bool disk_tier::contains(const chunk_key& key) const {
  return store_->contains(key);
}

caf::error disk_tier::put(const chunk_key& key, const void* data, size_t size) {
  return put_for(key, data, size, tenant_set{std::string{}});
}

caf::error disk_tier::put_for(const chunk_key& key, const void* data, size_t size,
                              const tenant_set& tenants) {
  auto in_use = store_->stats().bytes;
  if (!store_->contains(key) && in_use + size > capacity_)
    return make_error(error_code::no_space,
                      "disk tier cannot take chunk " + key.to_string() + " of "
                        + std::to_string(size) + " bytes: "
                        + std::to_string(in_use) + " of "
                        + std::to_string(capacity_)
                        + " bytes in use; evict first or raise its capacity");
  return store_->put(key, data, size, tenants);
}

caf::expected<size_t> disk_tier::read(const chunk_key& key, void* dst,
                                      size_t capacity) {
  return store_->get_into(key, dst, capacity);
}

caf::expected<chunk_view> disk_tier::view(const chunk_key& key) {
  return make_error(error_code::invalid_argument,
                    "the disk tier has no addressable memory for chunk "
                      + key.to_string() + "; read it into a buffer instead");
}

caf::error disk_tier::erase(const chunk_key& key) {
  return store_->erase(key);
}

caf::error disk_tier::mark_verified(const chunk_key& key) {
  return store_->mark_verified(key);
}

caf::error disk_tier::add_tenants(const chunk_key& key, const tenant_set& tenants) {
  return store_->add_tenants(key, tenants);
}

std::vector<listed_chunk> disk_tier::contents() {
  return store_->list(0);
}

} // namespace gleam::cache_store
