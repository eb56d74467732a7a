// The process lists (nvmlDeviceGet{Compute,Graphics,MPSCompute}Running
// Processes, v1 to v3): only the processes of this session. The server
// answers for the one process that runs the session (its worker), with the
// GPU memory that process uses; the client reports it under its own pid,
// the app's, since the server's pids mean nothing here.
#include <unistd.h>

#include <cstdint>

#include "interpose/nvml/library.hpp"
#include "interpose/nvml_export.hpp"
#include "interpose/nvml_function_ids.hpp"

namespace {

namespace nv = gleam::interpose::nvml;
namespace ids = gleam::generated::nvml_ids;

/// The session's entries of list `id` on `device` (at most one) into
/// `infos` (of `*count` entries of type Info), as NVML defines the call:
/// NVML_ERROR_INSUFFICIENT_SIZE with the needed count when `*count` is too
/// small.
template <class Info>
nvmlReturn_t session_processes(uint32_t id, const char* name, nvmlDevice_t device,
                               unsigned int* count, Info* infos) noexcept {
  return static_cast<nvmlReturn_t>(gleam::interpose::library_guarded(nv::traits, [&]() -> int {
    if (auto st = nv::initialized(); st != NVML_SUCCESS)
      return st;
    auto* h = gleam::interpose::library_handle_of(device, nv::traits, 0);
    if (h == nullptr || count == nullptr)
      return NVML_ERROR_INVALID_ARGUMENT;
    uint32_t found = 0;
    nvmlProcessInfo_t info{};
    gleam::interpose::library_call call(nv::traits, id, name);
    call.handle(*h);
    if (auto st = call.host_output(&found, sizeof(found)); st != NVML_SUCCESS)
      return st;
    if (auto st = call.host_output(&info, sizeof(info)); st != NVML_SUCCESS)
      return st;
    if (auto st = call.finish(); st != NVML_SUCCESS)
      return st;
    if (found > 1)
      return NVML_ERROR_UNKNOWN;
    if (*count < found) {
      *count = found;
      return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    *count = found;
    if (found == 0)
      return NVML_SUCCESS;
    if (infos == nullptr)
      return NVML_ERROR_INVALID_ARGUMENT;
    Info out{};
    out.pid = static_cast<unsigned int>(::getpid());
    out.usedGpuMemory = info.usedGpuMemory;
    if constexpr (sizeof(Info) == sizeof(nvmlProcessInfo_t)) {
      out.gpuInstanceId = info.gpuInstanceId;
      out.computeInstanceId = info.computeInstanceId;
    }
    infos[0] = out;
    return NVML_SUCCESS;
  }));
}

} // namespace

extern "C" {

#define GLEAM_NVML_PROCESSES(kind)                                                              \
  GLEAM_INTERPOSE_EXPORT nvmlReturn_t nvmlDeviceGet##kind##RunningProcesses_v3(                 \
    nvmlDevice_t device, unsigned int* infoCount, nvmlProcessInfo_t* infos) {                   \
    return session_processes(ids::nvmlDeviceGet##kind##RunningProcesses_v3,                     \
                             "nvmlDeviceGet" #kind "RunningProcesses_v3", device, infoCount,    \
                             infos);                                                            \
  }                                                                                             \
  GLEAM_INTERPOSE_EXPORT nvmlReturn_t nvmlDeviceGet##kind##RunningProcesses_v2(                 \
    nvmlDevice_t device, unsigned int* infoCount, nvmlProcessInfo_v2_t* infos) {                \
    return session_processes(ids::nvmlDeviceGet##kind##RunningProcesses_v3,                     \
                             "nvmlDeviceGet" #kind "RunningProcesses_v2", device, infoCount,    \
                             infos);                                                            \
  }                                                                                             \
  GLEAM_INTERPOSE_EXPORT nvmlReturn_t nvmlDeviceGet##kind##RunningProcesses(                    \
    nvmlDevice_t device, unsigned int* infoCount, nvmlProcessInfo_v1_t* infos) {                \
    return session_processes(ids::nvmlDeviceGet##kind##RunningProcesses_v3,                     \
                             "nvmlDeviceGet" #kind "RunningProcesses", device, infoCount,       \
                             infos);                                                            \
  }

GLEAM_NVML_PROCESSES(Compute)
GLEAM_NVML_PROCESSES(Graphics)
GLEAM_NVML_PROCESSES(MPSCompute)

#undef GLEAM_NVML_PROCESSES

} // extern "C"
