#include "executor/device_memory_tier.hpp"

#include <fmt/format.h>

#include "cache_store/error.hpp"

namespace gleam::executor {

namespace cs = cache_store;

device_memory_tier::device_memory_tier(driver_api& api, CUcontext context, uint64_t capacity,
                                       std::string name)
  : api_(api), context_(context), capacity_(capacity), name_(std::move(name)) {
}

device_memory_tier::~device_memory_tier() = default;

std::string device_memory_tier::name() const {
  return name_;
}

uint64_t device_memory_tier::capacity() const {
  return capacity_;
}

uint64_t device_memory_tier::used() const {
  return used_;
}

bool device_memory_tier::contains(const cs::chunk_key& key) const {
  return blocks_.count(key) > 0;
}

caf::error device_memory_tier::driver_error(CUresult rc, const char* what,
                                            const cs::chunk_key& key) {
  return cs::make_error(cs::error_code::tier_failed,
                        fmt::format("{} for chunk {} in {} failed: {}", what, key.to_string(),
                                    name_, api_.describe(rc)));
}

caf::error device_memory_tier::put(const cs::chunk_key& key, const void* data, size_t size) {
  return store(key, data, size, false);
}

caf::error device_memory_tier::put_from_device(const cs::chunk_key& key, const void* device_src,
                                               size_t size) {
  return store(key, device_src, size, true);
}

caf::error device_memory_tier::store(const cs::chunk_key& key, const void* data, size_t size,
                                     bool from_device) {
  if (blocks_.count(key) > 0)
    return {};
  if (used_ + size > capacity_)
    return cs::make_error(cs::error_code::no_space,
                          fmt::format("{} holds {} of {} bytes; chunk {} needs {}", name_,
                                      used_, capacity_, key.to_string(), size));
  if (auto rc = api_.cuCtxSetCurrent(context_); rc != CUDA_SUCCESS)
    return driver_error(rc, "cuCtxSetCurrent", key);
  CUdeviceptr p = 0;
  if (auto rc = api_.cuMemAlloc(&p, size == 0 ? 1 : size); rc != CUDA_SUCCESS)
    return cs::make_error(cs::error_code::no_space,
                          fmt::format("{}: cuMemAlloc of {} bytes failed: {}", name_, size,
                                      api_.describe(rc)));
  if (size > 0) {
    auto rc = copy([&](CUstream s) {
      return from_device
               ? api_.cuMemcpyDtoDAsync(p, static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(data)),
                                        size, s)
               : api_.cuMemcpyHtoDAsync(p, data, size, s);
    });
    if (rc != CUDA_SUCCESS) {
      static_cast<void>(api_.cuMemFree(p));
      return driver_error(rc, from_device ? "cuMemcpyDtoD" : "cuMemcpyHtoD", key);
    }
  }
  blocks_.emplace(key, block{p, size});
  used_ += size;
  return {};
}

caf::expected<size_t> device_memory_tier::read(const cs::chunk_key& key, void* dst,
                                               size_t capacity) {
  auto i = blocks_.find(key);
  if (i == blocks_.end())
    return cs::make_error(cs::error_code::not_found, name_ + " lacks chunk " + key.to_string());
  if (capacity < i->second.size)
    return cs::make_error(cs::error_code::buffer_too_small,
                          fmt::format("chunk {} is {} bytes, the buffer {}", key.to_string(),
                                      i->second.size, capacity));
  if (auto rc = api_.cuCtxSetCurrent(context_); rc != CUDA_SUCCESS)
    return driver_error(rc, "cuCtxSetCurrent", key);
  if (i->second.size > 0)
    if (auto rc = copy([&](CUstream s) {
          return api_.cuMemcpyDtoHAsync(dst, i->second.ptr, i->second.size, s);
        });
        rc != CUDA_SUCCESS)
      return driver_error(rc, "cuMemcpyDtoH", key);
  return i->second.size;
}

caf::expected<cs::chunk_view> device_memory_tier::view(const cs::chunk_key& key) {
  auto i = blocks_.find(key);
  if (i == blocks_.end())
    return cs::make_error(cs::error_code::not_found, name_ + " lacks chunk " + key.to_string());
  return cs::chunk_view{cs::tier_kind::gpu,
                        reinterpret_cast<const void*>(static_cast<uintptr_t>(i->second.ptr)),
                        i->second.size};
}

caf::error device_memory_tier::erase(const cs::chunk_key& key) {
  auto i = blocks_.find(key);
  if (i == blocks_.end())
    return cs::make_error(cs::error_code::not_found, name_ + " lacks chunk " + key.to_string());
  if (api_.cuCtxSetCurrent(context_) == CUDA_SUCCESS)
    static_cast<void>(api_.cuMemFree(i->second.ptr)); // a failed free only leaks
  used_ -= i->second.size;
  blocks_.erase(i);
  return {};
}

} // namespace gleam::executor
