// NVML's traits for the generated stubs, and the functions that answer from
// the client: initialization (reference counted), error strings, the
// session's device count and handles, and handle lookups by UUID, serial
// and PCI bus id, which compare with what the server reports of each
// session GPU.
#include "interpose/nvml/library.hpp"

#include <atomic>
#include <cstdio>
#include <cstring>
#include <mutex>

#include "actors/proto/ops.pb.h"
#include "interpose/error_map.hpp"
#include "interpose/nvml_export.hpp"
#include "interpose/runtime.hpp"

namespace gleam::interpose::nvml {

namespace {

/// nvmlInit references the app holds.
std::atomic<int> references{0};

/// Serializes nvmlInit and nvmlShutdown.
std::mutex init_mutex;

/// The device objects, made at first use: id = index in the session.
nvmlDevice_st* device_object(unsigned index) noexcept {
  static nvmlDevice_st objects[max_devices];
  static std::once_flag once;
  std::call_once(once, [] {
    for (unsigned i = 0; i < max_devices; ++i) {
      objects[i].state.id = i;
      objects[i].state.library = proto::LibraryCall::NVML;
      objects[i].state.type = 0;
    }
  });
  return &objects[index];
}

/// The number of GPUs of the session (connecting first), capped at
/// max_devices; 0 with `*status` set when there is no session.
unsigned session_devices(nvmlReturn_t* status) noexcept {
  if (auto err = connect(); err != cudaSuccess) {
    *status = from_cuda(err);
    return 0;
  }
  *status = NVML_SUCCESS;
  auto n = static_cast<unsigned>(session().devices_size());
  return n < max_devices ? n : max_devices;
}

nvmlReturn_t init() noexcept {
  std::lock_guard<std::mutex> guard{init_mutex};
  if (references.load() > 0) {
    ++references;
    return NVML_SUCCESS;
  }
  if (auto err = connect(); err != cudaSuccess)
    return from_cuda(err);
  // The server must be able to run NVML: ask it for its version once.
  references.store(1);
  char version[NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE];
  auto st = nvmlSystemGetNVMLVersion(version, sizeof(version));
  if (st == NVML_SUCCESS)
    return NVML_SUCCESS;
  references.store(0);
  return st == NVML_ERROR_NOT_SUPPORTED ? NVML_ERROR_LIBRARY_NOT_FOUND : st;
}

/// The device of the session whose `read` text equals `want`;
/// NVML_ERROR_NOT_FOUND when none.
template <class Read>
nvmlReturn_t find_device(nvmlDevice_t* device, Read&& read) noexcept {
  if (auto st = initialized(); st != NVML_SUCCESS)
    return static_cast<nvmlReturn_t>(st);
  if (device == nullptr)
    return NVML_ERROR_INVALID_ARGUMENT;
  nvmlReturn_t st = NVML_SUCCESS;
  auto n = session_devices(&st);
  if (st != NVML_SUCCESS)
    return st;
  for (unsigned i = 0; i < n; ++i) {
    auto* d = device_object(i);
    bool same = false;
    if (auto r = read(d, &same); r != NVML_SUCCESS)
      return r;
    if (same) {
      *device = d;
      return NVML_SUCCESS;
    }
  }
  return NVML_ERROR_NOT_FOUND;
}

/// Domain, bus and device of a PCI bus id ("domain:bus:device.function",
/// "bus:device.function"; hex); false when it is none.
bool parse_bus_id(const char* text, unsigned* domain, unsigned* bus, unsigned* device) {
  unsigned d = 0, b = 0, dev = 0, fn = 0;
  int used = 0;
  if (std::sscanf(text, "%x:%x:%x.%x%n", &d, &b, &dev, &fn, &used) == 4 &&
      text[used] == '\0') {
    *domain = d, *bus = b, *device = dev;
    return true;
  }
  used = 0;
  if (std::sscanf(text, "%x:%x.%x%n", &b, &dev, &fn, &used) == 3 && text[used] == '\0') {
    *domain = 0, *bus = b, *device = dev;
    return true;
  }
  return false;
}

nvmlReturn_t by_text(const char* want, nvmlDevice_t* device,
                     nvmlReturn_t (*get)(nvmlDevice_t, char*, unsigned int)) noexcept {
  if (want == nullptr)
    return initialized() == NVML_SUCCESS ? NVML_ERROR_INVALID_ARGUMENT
                                         : NVML_ERROR_UNINITIALIZED;
  return find_device(device, [&](nvmlDevice_st* d, bool* same) {
    char text[NVML_DEVICE_UUID_V2_BUFFER_SIZE] = {};
    auto st = get(d, text, sizeof(text));
    *same = st == NVML_SUCCESS && std::strncmp(text, want, sizeof(text)) == 0;
    return st == NVML_ERROR_NOT_SUPPORTED ? NVML_SUCCESS : st;
  });
}

nvmlReturn_t by_bus_id(const char* want, nvmlDevice_t* device) noexcept {
  if (auto st = initialized(); st != NVML_SUCCESS)
    return static_cast<nvmlReturn_t>(st);
  unsigned domain = 0, bus = 0, dev = 0;
  if (want == nullptr || !parse_bus_id(want, &domain, &bus, &dev))
    return NVML_ERROR_INVALID_ARGUMENT;
  return find_device(device, [&](nvmlDevice_st* d, bool* same) {
    nvmlPciInfo_t pci{};
    auto st = nvmlDeviceGetPciInfo_v3(d, &pci);
    *same = st == NVML_SUCCESS && pci.domain == domain && pci.bus == bus && pci.device == dev;
    return st;
  });
}

} // namespace

nvmlReturn_t from_cuda(cudaError_t x) noexcept {
  switch (x) {
    case cudaSuccess:
      return NVML_SUCCESS;
    case cudaErrorNoDevice:
    case cudaErrorInitializationError:
    case cudaErrorInsufficientDriver:
    case cudaErrorDevicesUnavailable:
      return NVML_ERROR_DRIVER_NOT_LOADED;
    case cudaErrorMemoryAllocation:
      return NVML_ERROR_MEMORY;
    case cudaErrorInvalidValue:
      return NVML_ERROR_INVALID_ARGUMENT;
    case cudaErrorNotSupported:
      return NVML_ERROR_NOT_SUPPORTED;
    default:
      return is_sticky(x) ? NVML_ERROR_GPU_IS_LOST : NVML_ERROR_UNKNOWN;
  }
}

int32_t initialized() noexcept {
  return references.load() > 0 ? NVML_SUCCESS : NVML_ERROR_UNINITIALIZED;
}

const library_traits traits{
  proto::LibraryCall::NVML,
  "NVML",
  NVML_SUCCESS,
  NVML_ERROR_INVALID_ARGUMENT,
  NVML_ERROR_INVALID_ARGUMENT,
  NVML_ERROR_MEMORY,
  NVML_ERROR_NOT_SUPPORTED,
  NVML_ERROR_UNKNOWN,
  [](cudaError_t x) noexcept { return static_cast<int32_t>(from_cuda(x)); },
};

} // namespace gleam::interpose::nvml

namespace nv = gleam::interpose::nvml;

extern "C" {

GLEAM_INTERPOSE_EXPORT nvmlReturn_t nvmlInit_v2(void) {
  return nv::init();
}

GLEAM_INTERPOSE_EXPORT nvmlReturn_t nvmlInit(void) {
  return nv::init();
}

GLEAM_INTERPOSE_EXPORT nvmlReturn_t nvmlInitWithFlags(unsigned int flags) {
  static_cast<void>(flags); // The server's own NVML stays initialized.
  return nv::init();
}

GLEAM_INTERPOSE_EXPORT nvmlReturn_t nvmlShutdown(void) {
  std::lock_guard<std::mutex> guard{nv::init_mutex};
  if (nv::references.load() == 0)
    return NVML_ERROR_UNINITIALIZED;
  --nv::references;
  return NVML_SUCCESS;
}

GLEAM_INTERPOSE_EXPORT const char* nvmlErrorString(nvmlReturn_t result) {
  switch (result) {
    case NVML_SUCCESS: return "Success";
    case NVML_ERROR_UNINITIALIZED: return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT: return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
    case NVML_ERROR_NO_PERMISSION: return "Insufficient Permissions";
    case NVML_ERROR_ALREADY_INITIALIZED: return "Already Initialized";
    case NVML_ERROR_NOT_FOUND: return "Not Found";
    case NVML_ERROR_INSUFFICIENT_SIZE: return "Insufficient Size";
    case NVML_ERROR_INSUFFICIENT_POWER: return "Insufficient External Power";
    case NVML_ERROR_DRIVER_NOT_LOADED: return "Driver Not Loaded";
    case NVML_ERROR_TIMEOUT: return "Timeout";
    case NVML_ERROR_IRQ_ISSUE: return "Interrupt Request Issue";
    case NVML_ERROR_LIBRARY_NOT_FOUND: return "NVML Shared Library Not Found";
    case NVML_ERROR_FUNCTION_NOT_FOUND: return "Function Not Found";
    case NVML_ERROR_CORRUPTED_INFOROM: return "Corrupted infoROM";
    case NVML_ERROR_GPU_IS_LOST: return "GPU is lost";
    case NVML_ERROR_RESET_REQUIRED: return "GPU requires restart";
    case NVML_ERROR_OPERATING_SYSTEM: return "GPU access blocked by the operating system";
    case NVML_ERROR_LIB_RM_VERSION_MISMATCH: return "Driver/library version mismatch";
    case NVML_ERROR_IN_USE: return "In use by another client";
    case NVML_ERROR_MEMORY: return "Insufficient Memory";
    case NVML_ERROR_NO_DATA: return "No data";
    case NVML_ERROR_VGPU_ECC_NOT_SUPPORTED: return "vGPU ECC not supported";
    case NVML_ERROR_INSUFFICIENT_RESOURCES: return "Insufficient resources";
    case NVML_ERROR_FREQ_NOT_SUPPORTED: return "Frequency not supported";
    case NVML_ERROR_ARGUMENT_VERSION_MISMATCH: return "Argument version mismatch";
    case NVML_ERROR_DEPRECATED: return "Deprecated";
    case NVML_ERROR_NOT_READY: return "Not ready";
    case NVML_ERROR_GPU_NOT_FOUND: return "GPU not found";
    case NVML_ERROR_INVALID_STATE: return "Invalid state";
    case NVML_ERROR_RESET_TYPE_NOT_SUPPORTED: return "Reset type not supported";
    case NVML_ERROR_UNKNOWN: return "Unknown Error";
  }
  return "Unknown Error";
}

GLEAM_INTERPOSE_EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* deviceCount) {
  if (auto st = nv::initialized(); st != NVML_SUCCESS)
    return static_cast<nvmlReturn_t>(st);
  if (deviceCount == nullptr)
    return NVML_ERROR_INVALID_ARGUMENT;
  nvmlReturn_t st = NVML_SUCCESS;
  auto n = nv::session_devices(&st);
  if (st == NVML_SUCCESS)
    *deviceCount = n;
  return st;
}

GLEAM_INTERPOSE_EXPORT nvmlReturn_t nvmlDeviceGetCount(unsigned int* deviceCount) {
  return nvmlDeviceGetCount_v2(deviceCount);
}

GLEAM_INTERPOSE_EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index,
                                                                  nvmlDevice_t* device) {
  unsigned int count = 0;
  if (auto st = nvmlDeviceGetCount_v2(&count); st != NVML_SUCCESS)
    return st;
  if (device == nullptr || index >= count)
    return NVML_ERROR_INVALID_ARGUMENT;
  *device = nv::device_object(index);
  return NVML_SUCCESS;
}

GLEAM_INTERPOSE_EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int index,
                                                               nvmlDevice_t* device) {
  return nvmlDeviceGetHandleByIndex_v2(index, device);
}

GLEAM_INTERPOSE_EXPORT nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t device, unsigned int* index) {
  if (auto st = nv::initialized(); st != NVML_SUCCESS)
    return static_cast<nvmlReturn_t>(st);
  auto* h = gleam::interpose::library_handle_of(device, nv::traits, 0);
  if (h == nullptr || index == nullptr)
    return NVML_ERROR_INVALID_ARGUMENT;
  *index = static_cast<unsigned int>(h->id);
  return NVML_SUCCESS;
}

GLEAM_INTERPOSE_EXPORT nvmlReturn_t nvmlDeviceGetHandleByUUID(const char* uuid,
                                                              nvmlDevice_t* device) {
  return nv::by_text(uuid, device, nvmlDeviceGetUUID);
}

GLEAM_INTERPOSE_EXPORT nvmlReturn_t nvmlDeviceGetHandleBySerial(const char* serial,
                                                                nvmlDevice_t* device) {
  return nv::by_text(serial, device, nvmlDeviceGetSerial);
}

GLEAM_INTERPOSE_EXPORT nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char* pciBusId,
                                                                     nvmlDevice_t* device) {
  return nv::by_bus_id(pciBusId, device);
}

GLEAM_INTERPOSE_EXPORT nvmlReturn_t nvmlDeviceGetHandleByPciBusId(const char* pciBusId,
                                                                  nvmlDevice_t* device) {
  return nv::by_bus_id(pciBusId, device);
}

} // extern "C"
