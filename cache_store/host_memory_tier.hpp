#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>

#include "cache_store/tier.hpp"

namespace gleam::cache_store {

/// How a memory tier obtains and returns its buffers. The server injects
/// pinned allocation (cuMemHostAlloc / cuMemFreeHost) here; the default is
/// plain malloc / free.
struct memory_allocator {
  /// Returns `size` bytes, or null when none are available.
  std::function<void*(size_t size)> allocate;
  /// Returns a buffer obtained from `allocate` with the same `size`.
  std::function<void(void* ptr, size_t size)> deallocate;
};

/// malloc / free.
memory_allocator default_allocator();

/// A tier in host memory, one buffer per chunk from an injected allocator.
/// Not persistent. Threading: see `tier`. Teardown: the destructor returns
/// every buffer to the allocator.
class host_memory_tier : public tier {
public:
  /// A tier named `name` of `capacity` bytes reporting `kind`, allocating
  /// through `alloc`.
  host_memory_tier(std::string name, uint64_t capacity,
                   memory_allocator alloc = default_allocator(),
                   tier_kind kind = tier_kind::host);

  /// Returns every buffer to the allocator.
  ~host_memory_tier() override;

  host_memory_tier(const host_memory_tier&) = delete;
  host_memory_tier& operator=(const host_memory_tier&) = delete;

  // -- tier interface (documented there) ------------------------------------

  std::string name() const override;
  tier_kind kind() const override;
  uint64_t capacity() const override;
  uint64_t used() const override;
  bool contains(const chunk_key& key) const override;
  [[nodiscard]] caf::error put(const chunk_key& key, const void* data,
                               size_t size) override;
  [[nodiscard]] caf::expected<size_t>
  read(const chunk_key& key, void* dst, size_t capacity) override;
  [[nodiscard]] caf::expected<chunk_view> view(const chunk_key& key) override;
  [[nodiscard]] caf::error erase(const chunk_key& key) override;

private:
  struct block {
    void* ptr;
    size_t size;
  };

  std::string name_;
  uint64_t capacity_;
  memory_allocator alloc_;
  tier_kind kind_;
  uint64_t used_ = 0;
  std::unordered_map<chunk_key, block> blocks_;
};

/// An in-memory stand-in for the GPU tier, for tests and for nodes without a
/// GPU: behaves like a device_tier whose "device addresses" are host memory.
class fake_device_tier final : public device_tier {
public:
  /// A fake GPU tier of `capacity` bytes.
  explicit fake_device_tier(uint64_t capacity);

  /// Frees every chunk.
  ~fake_device_tier() override;

  // -- tier interface (documented there) ------------------------------------

  std::string name() const override;
  uint64_t capacity() const override;
  uint64_t used() const override;
  bool contains(const chunk_key& key) const override;
  [[nodiscard]] caf::error put(const chunk_key& key, const void* data,
                               size_t size) override;
  [[nodiscard]] caf::expected<size_t>
  read(const chunk_key& key, void* dst, size_t capacity) override;
  [[nodiscard]] caf::expected<chunk_view> view(const chunk_key& key) override;
  [[nodiscard]] caf::error erase(const chunk_key& key) override;
  [[nodiscard]] caf::error put_from_device(const chunk_key& key, const void* device_src,
                                           size_t size) override;

  /// Bytes that came in through `put_from_device`.
  uint64_t bytes_from_device() const {
    return from_device_;
  }

private:
  host_memory_tier impl_;
  uint64_t from_device_ = 0;
};

} // namespace gleam::cache_store
