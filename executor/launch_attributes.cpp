#include "executor/launch_attributes.hpp"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

namespace gleam::executor {

namespace {

CUlaunchAttribute blank(CUlaunchAttributeID id) {
  CUlaunchAttribute a;
  std::memset(&a, 0, sizeof(a));
  a.id = id;
  return a;
}

/// The driver event of client event `handle`; null when `s` has none.
CUevent event_of(const session& s, uint64_t handle) {
  auto i = s.events.find(handle);
  return i == s.events.end() ? nullptr : i->second;
}

} // namespace

CUresult launch_attributes(const proto::LaunchKernel& op, const session& s,
                           std::vector<CUlaunchAttribute>& out, std::string& detail) {
  out.clear();
  if (op.cluster_x() != 0 || op.cluster_y() != 0 || op.cluster_z() != 0) {
    auto a = blank(CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION);
    a.value.clusterDim.x = std::max(1u, op.cluster_x());
    a.value.clusterDim.y = std::max(1u, op.cluster_y());
    a.value.clusterDim.z = std::max(1u, op.cluster_z());
    out.push_back(a);
  }
  if (op.cooperative()) {
    auto a = blank(CU_LAUNCH_ATTRIBUTE_COOPERATIVE);
    a.value.cooperative = 1;
    out.push_back(a);
  }
  for (const auto& in : op.attributes()) {
    auto a = blank(static_cast<CUlaunchAttributeID>(in.id()));
    auto& v = a.value;
    auto scalar = static_cast<int>(in.value());
    switch (in.id()) {
      case CU_LAUNCH_ATTRIBUTE_IGNORE:
        break;
      case CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW:
        if (in.num_bytes() != 0 && !s.memory.find(in.base_ptr())) {
          detail = fmt::format("access policy window at {:#x} ({} bytes) does not start in "
                               "this session's memory; pass an address of one of its "
                               "allocations",
                               in.base_ptr(), in.num_bytes());
          return CUDA_ERROR_INVALID_VALUE;
        }
        v.accessPolicyWindow.base_ptr =
          reinterpret_cast<void*>(static_cast<uintptr_t>(in.base_ptr()));
        v.accessPolicyWindow.num_bytes = static_cast<size_t>(in.num_bytes());
        v.accessPolicyWindow.hitRatio = in.hit_ratio();
        v.accessPolicyWindow.hitProp = static_cast<CUaccessProperty>(in.hit_prop());
        v.accessPolicyWindow.missProp = static_cast<CUaccessProperty>(in.miss_prop());
        break;
      case CU_LAUNCH_ATTRIBUTE_COOPERATIVE:
        v.cooperative = scalar;
        break;
      case CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY:
        v.syncPolicy = static_cast<CUsynchronizationPolicy>(scalar);
        break;
      case CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION:
        v.clusterDim.x = in.x();
        v.clusterDim.y = in.y();
        v.clusterDim.z = in.z();
        break;
      case CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
        v.clusterSchedulingPolicyPreference = static_cast<CUclusterSchedulingPolicy>(scalar);
        break;
      case CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION:
        v.programmaticStreamSerializationAllowed = scalar;
        break;
      case CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT:
      case CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT: {
        auto* e = event_of(s, in.event());
        if (e == nullptr) {
          detail = fmt::format("launch attribute {} names event handle {}, which is not an "
                               "event of this session (never created, or destroyed)",
                               in.id(), in.event());
          return CUDA_ERROR_INVALID_HANDLE;
        }
        if (in.id() == CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT) {
          v.programmaticEvent.event = e;
          v.programmaticEvent.flags = in.flags();
          v.programmaticEvent.triggerAtBlockStart = in.trigger_at_block_start();
        } else {
          v.launchCompletionEvent.event = e;
          v.launchCompletionEvent.flags = in.flags();
        }
        break;
      }
      case CU_LAUNCH_ATTRIBUTE_PRIORITY:
        v.priority = scalar;
        break;
      case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP:
        v.memSyncDomainMap.default_ = static_cast<unsigned char>(in.domain_default());
        v.memSyncDomainMap.remote = static_cast<unsigned char>(in.domain_remote());
        break;
      case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN:
        v.memSyncDomain = static_cast<CUlaunchMemSyncDomain>(scalar);
        break;
      case CU_LAUNCH_ATTRIBUTE_PREFERRED_CLUSTER_DIMENSION:
        v.preferredClusterDim.x = in.x();
        v.preferredClusterDim.y = in.y();
        v.preferredClusterDim.z = in.z();
        break;
      case CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE:
        // devNode is the driver's output (read back through node queries).
        v.deviceUpdatableKernelNode.deviceUpdatable = scalar;
        break;
      case CU_LAUNCH_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
        v.sharedMemCarveout = static_cast<unsigned>(in.value());
        break;
      case CU_LAUNCH_ATTRIBUTE_NVLINK_UTIL_CENTRIC_SCHEDULING:
        v.nvlinkUtilCentricScheduling = static_cast<unsigned>(in.value());
        break;
      default:
        detail = fmt::format("launch attribute id {} is not one this server knows", in.id());
        return CUDA_ERROR_INVALID_VALUE;
    }
    out.push_back(a);
  }
  return CUDA_SUCCESS;
}

} // namespace gleam::executor
