#pragma once

// A fake NVML for the CPU tests (tests/executor/nvml_test.cpp): one GPU of
// a known UUID with a name, memory, utilization, temperature, versions and
// a process list holding this process and another one; every lookup
// counted. Header-only: the entry points are plain function pointers over
// one process-wide state. Not thread-safe.

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "executor/nvml_api.hpp"

namespace gleam::test {

/// The fake's GPU and what it saw.
struct fake_nvml_state {
  /// The UUID nvmlDeviceGetHandleByUUID finds (the fake driver's GPU).
  std::string uuid = "GPU-abababab-abab-abab-abab-abababababab";
  std::string name = "NVIDIA H100 80GB HBM3";
  unsigned long long total = 85'899'345'920ull; // 80 GiB
  unsigned long long used = 1'073'741'824ull;   // 1 GiB
  /// GPU memory of this process (the session's) and of another process.
  unsigned long long own_memory = 536'870'912ull; // 512 MiB
  unsigned int other_pid = 4242;
  /// nvmlDeviceGetHandleByUUID calls.
  int lookups = 0;
  /// Calls that reached the fake at all.
  int calls = 0;
  /// The device handle it hands out.
  int device = 0;
};

inline fake_nvml_state& fake_nvml() {
  static fake_nvml_state state;
  return state;
}

namespace fake_nvml_detail {

inline bool ours(nvmlDevice_t d) {
  ++fake_nvml().calls;
  return d == reinterpret_cast<nvmlDevice_t>(&fake_nvml().device);
}

inline nvmlReturn_t text(const std::string& s, char* out, unsigned int length) {
  if (length < s.size() + 1)
    return NVML_ERROR_INSUFFICIENT_SIZE;
  std::memcpy(out, s.c_str(), s.size() + 1);
  return NVML_SUCCESS;
}

} // namespace fake_nvml_detail

/// Points every function of `api` the tests use at the fake.
inline void install_fake_nvml(executor::nvml_api& api) {
  namespace d = fake_nvml_detail;
  api.nvmlDeviceGetHandleByUUID = [](const char* uuid, nvmlDevice_t* out) {
    ++fake_nvml().lookups;
    if (uuid == nullptr || out == nullptr)
      return NVML_ERROR_INVALID_ARGUMENT;
    if (fake_nvml().uuid != uuid)
      return NVML_ERROR_NOT_FOUND;
    *out = reinterpret_cast<nvmlDevice_t>(&fake_nvml().device);
    return NVML_SUCCESS;
  };
  api.nvmlDeviceGetName = [](nvmlDevice_t dev, char* name, unsigned int length) {
    return d::ours(dev) ? d::text(fake_nvml().name, name, length) : NVML_ERROR_INVALID_ARGUMENT;
  };
  api.nvmlDeviceGetUUID = [](nvmlDevice_t dev, char* uuid, unsigned int length) {
    return d::ours(dev) ? d::text(fake_nvml().uuid, uuid, length) : NVML_ERROR_INVALID_ARGUMENT;
  };
  api.nvmlDeviceGetMemoryInfo = [](nvmlDevice_t dev, nvmlMemory_t* m) {
    if (!d::ours(dev) || m == nullptr)
      return NVML_ERROR_INVALID_ARGUMENT;
    *m = {fake_nvml().total, fake_nvml().total - fake_nvml().used, fake_nvml().used};
    return NVML_SUCCESS;
  };
  api.nvmlDeviceGetMemoryInfo_v2 = [](nvmlDevice_t dev, nvmlMemory_v2_t* m) {
    if (!d::ours(dev) || m == nullptr)
      return NVML_ERROR_INVALID_ARGUMENT;
    if (m->version != nvmlMemory_v2)
      return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    m->total = fake_nvml().total;
    m->reserved = 0;
    m->used = fake_nvml().used;
    m->free = fake_nvml().total - fake_nvml().used;
    return NVML_SUCCESS;
  };
  api.nvmlDeviceGetUtilizationRates = [](nvmlDevice_t dev, nvmlUtilization_t* u) {
    if (!d::ours(dev) || u == nullptr)
      return NVML_ERROR_INVALID_ARGUMENT;
    *u = {37, 12};
    return NVML_SUCCESS;
  };
  api.nvmlDeviceGetTemperature = [](nvmlDevice_t dev, nvmlTemperatureSensors_t, unsigned int* t) {
    if (!d::ours(dev) || t == nullptr)
      return NVML_ERROR_INVALID_ARGUMENT;
    *t = 41;
    return NVML_SUCCESS;
  };
  api.nvmlSystemGetNVMLVersion = [](char* version, unsigned int length) {
    ++fake_nvml().calls;
    return d::text("13.580.82", version, length);
  };
  api.nvmlSystemGetDriverVersion = [](char* version, unsigned int length) {
    ++fake_nvml().calls;
    return d::text("580.82.07", version, length);
  };
  api.nvmlDeviceGetComputeRunningProcesses_v3 = [](nvmlDevice_t dev, unsigned int* count,
                                                   nvmlProcessInfo_t* infos) {
    if (!d::ours(dev) || count == nullptr)
      return NVML_ERROR_INVALID_ARGUMENT;
    const nvmlProcessInfo_t all[] = {
      {fake_nvml().other_pid, 2'147'483'648ull, 0xffffffffu, 0xffffffffu},
      {static_cast<unsigned int>(::getpid()), fake_nvml().own_memory, 0xffffffffu, 0xffffffffu},
    };
    auto want = *count;
    *count = 2;
    if (want < 2)
      return NVML_ERROR_INSUFFICIENT_SIZE;
    std::copy(all, all + 2, infos);
    return NVML_SUCCESS;
  };
}

} // namespace gleam::test
