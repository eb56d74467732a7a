// The server side of the process lists (interpose/spec/nvml.spec: the _v3
// forms, class manual with an id): the vendor's list of the session's GPU,
// filtered to this process, the one that runs the session. Two host
// outputs: the number of entries (0 or 1, uint32) and that entry.
#include <unistd.h>

#include <cstring>
#include <vector>

#include "executor/nvml_api.hpp"
#include "executor/nvml_function_ids.hpp"

namespace gleam::executor {

namespace {

namespace ids = generated::nvml_ids;

using list_fn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int*, nvmlProcessInfo_t*);

void send_own_process(library_call_env& env, wire::arg_reader& in, list_fn list,
                      const char* function) {
  auto device_id = in.address();
  if (!in.done())
    return env.malformed(function);
  if (list == nullptr)
    return env.unavailable(function);
  auto device = static_cast<nvmlDevice_t>(env.library_handle(device_id, 0, handle_use::work));
  if (device == nullptr)
    return;
  // The list may grow between the two calls: ask again while it does.
  std::vector<nvmlProcessInfo_t> all;
  unsigned int count = 0;
  auto st = list(device, &count, nullptr);
  for (int tries = 0; st == NVML_ERROR_INSUFFICIENT_SIZE && tries < 4; ++tries) {
    all.resize(count + 4);
    count = static_cast<unsigned int>(all.size());
    st = list(device, &count, all.data());
  }
  if (st != NVML_SUCCESS)
    return env.report(st, function);
  all.resize(all.empty() ? 0 : count);
  auto self = static_cast<unsigned int>(::getpid());
  uint32_t found = 0;
  nvmlProcessInfo_t mine{};
  for (const auto& p : all)
    if (p.pid == self) {
      found = 1;
      mine = p;
    }
  auto* n = env.host_output(sizeof(found), "infoCount");
  auto* info = n == nullptr ? nullptr : env.host_output(sizeof(mine), "infos");
  if (info == nullptr)
    return;
  std::memcpy(n, &found, sizeof(found));
  std::memcpy(info, &mine, sizeof(mine));
  env.report(NVML_SUCCESS, function);
}

} // namespace

bool run_manual_nvml(nvml_api& api, library_call_env& env, uint32_t function,
                     wire::arg_reader& in) {
  switch (function) {
    case ids::nvmlDeviceGetComputeRunningProcesses_v3:
      send_own_process(env, in, api.nvmlDeviceGetComputeRunningProcesses_v3,
                       "nvmlDeviceGetComputeRunningProcesses_v3");
      return true;
    case ids::nvmlDeviceGetGraphicsRunningProcesses_v3:
      send_own_process(env, in, api.nvmlDeviceGetGraphicsRunningProcesses_v3,
                       "nvmlDeviceGetGraphicsRunningProcesses_v3");
      return true;
    case ids::nvmlDeviceGetMPSComputeRunningProcesses_v3:
      send_own_process(env, in, api.nvmlDeviceGetMPSComputeRunningProcesses_v3,
                       "nvmlDeviceGetMPSComputeRunningProcesses_v3");
      return true;
    default:
      return false;
  }
}

} // namespace gleam::executor
