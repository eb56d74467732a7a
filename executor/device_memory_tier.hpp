#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>

#include <cuda.h>

#include "cache_store/tier.hpp"
#include "executor/driver_api.hpp"

namespace gleam::executor {

/// The weight cache's GPU tier: one cuMemAlloc'd buffer per chunk in the
/// device memory of one context, so a hit is a device-to-device copy.
///
/// Threading: called by one tiered_store, which serializes calls; every
/// call makes `context` current on the calling thread first (fills come
/// from the executor's thread, evictions may come from the cache_shard's).
/// Teardown: the destructor frees nothing; the device memory goes with the
/// primary context (the driver may already be unloaded when the store dies).
class device_memory_tier final : public cache_store::device_tier {
public:
  /// A tier of `capacity` bytes on `context`; `api` must outlive every call.
  device_memory_tier(driver_api& api, CUcontext context, uint64_t capacity, std::string name);

  ~device_memory_tier() override;

  // -- tier interface (documented there) ------------------------------------
  std::string name() const override;
  uint64_t capacity() const override;
  uint64_t used() const override;
  bool contains(const cache_store::chunk_key& key) const override;
  [[nodiscard]] caf::error put(const cache_store::chunk_key& key, const void* data,
                               size_t size) override;
  [[nodiscard]] caf::expected<size_t> read(const cache_store::chunk_key& key, void* dst,
                                           size_t capacity) override;
  [[nodiscard]] caf::expected<cache_store::chunk_view>
  view(const cache_store::chunk_key& key) override;
  [[nodiscard]] caf::error erase(const cache_store::chunk_key& key) override;
  [[nodiscard]] caf::error put_from_device(const cache_store::chunk_key& key,
                                           const void* device_src, size_t size) override;

private:
  /// `put` of host (`from_device` false) or device memory.
  caf::error store(const cache_store::chunk_key& key, const void* src, size_t size,
                   bool from_device);

  struct block {
    CUdeviceptr ptr = 0;
    size_t size = 0;
  };

  caf::error driver_error(CUresult rc, const char* what, const cache_store::chunk_key& key);

  /// Runs `issue(stream)` (one async copy) on the tier's own non-blocking
  /// stream and waits for it: a copy neither joins an app stream nor the
  /// context's legacy stream (no session's capture is disturbed), and no
  /// later op can overwrite its source first.
  template <class Issue>
  CUresult copy(Issue&& issue) {
    CUresult rc = CUDA_SUCCESS;
    if (copy_stream_ == nullptr)
      rc = api_.cuStreamCreateWithPriority(&copy_stream_, CU_STREAM_NON_BLOCKING, 0);
    if (rc == CUDA_SUCCESS)
      rc = issue(copy_stream_);
    if (rc == CUDA_SUCCESS)
      rc = api_.cuStreamSynchronize(copy_stream_);
    return rc;
  }

  driver_api& api_;
  CUcontext context_;
  uint64_t capacity_;
  std::string name_;
  uint64_t used_ = 0;
  /// For put_from_device, created on first use (freed with the context).
  CUstream copy_stream_ = nullptr;
  std::unordered_map<cache_store::chunk_key, block> blocks_;
};

} // namespace gleam::executor
