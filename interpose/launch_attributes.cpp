#include "interpose/launch_attributes.hpp"

namespace gleam::interpose {

namespace {

uint64_t handle(cudaEvent_t e) noexcept {
  return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(e));
}

} // namespace

cudaError_t encode_launch_attribute(const cudaLaunchAttribute& a, const event_known& known,
                                    proto::LaunchAttribute* out) {
  const auto& v = a.val;
  out->Clear();
  out->set_id(static_cast<int32_t>(a.id));
  switch (a.id) {
    case cudaLaunchAttributeIgnore:
      return cudaSuccess;
    case cudaLaunchAttributeAccessPolicyWindow:
      out->set_base_ptr(reinterpret_cast<uintptr_t>(v.accessPolicyWindow.base_ptr));
      out->set_num_bytes(v.accessPolicyWindow.num_bytes);
      out->set_hit_ratio(v.accessPolicyWindow.hitRatio);
      out->set_hit_prop(static_cast<int32_t>(v.accessPolicyWindow.hitProp));
      out->set_miss_prop(static_cast<int32_t>(v.accessPolicyWindow.missProp));
      return cudaSuccess;
    case cudaLaunchAttributeCooperative:
      out->set_value(v.cooperative);
      return cudaSuccess;
    case cudaLaunchAttributeSynchronizationPolicy:
      out->set_value(static_cast<int64_t>(v.syncPolicy));
      return cudaSuccess;
    case cudaLaunchAttributeClusterDimension:
      out->set_x(v.clusterDim.x);
      out->set_y(v.clusterDim.y);
      out->set_z(v.clusterDim.z);
      return cudaSuccess;
    case cudaLaunchAttributeClusterSchedulingPolicyPreference:
      out->set_value(static_cast<int64_t>(v.clusterSchedulingPolicyPreference));
      return cudaSuccess;
    case cudaLaunchAttributeProgrammaticStreamSerialization:
      out->set_value(v.programmaticStreamSerializationAllowed);
      return cudaSuccess;
    case cudaLaunchAttributeProgrammaticEvent:
      if (!known(handle(v.programmaticEvent.event)))
        return cudaErrorInvalidResourceHandle;
      out->set_event(handle(v.programmaticEvent.event));
      out->set_flags(v.programmaticEvent.flags);
      out->set_trigger_at_block_start(v.programmaticEvent.triggerAtBlockStart);
      return cudaSuccess;
    case cudaLaunchAttributePriority:
      out->set_value(v.priority);
      return cudaSuccess;
    case cudaLaunchAttributeMemSyncDomainMap:
      out->set_domain_default(v.memSyncDomainMap.default_);
      out->set_domain_remote(v.memSyncDomainMap.remote);
      return cudaSuccess;
    case cudaLaunchAttributeMemSyncDomain:
      out->set_value(static_cast<int64_t>(v.memSyncDomain));
      return cudaSuccess;
    case cudaLaunchAttributePreferredClusterDimension:
      out->set_x(v.preferredClusterDim.x);
      out->set_y(v.preferredClusterDim.y);
      out->set_z(v.preferredClusterDim.z);
      return cudaSuccess;
    case cudaLaunchAttributeLaunchCompletionEvent:
      if (!known(handle(v.launchCompletionEvent.event)))
        return cudaErrorInvalidResourceHandle;
      out->set_event(handle(v.launchCompletionEvent.event));
      out->set_flags(v.launchCompletionEvent.flags);
      return cudaSuccess;
    case cudaLaunchAttributeDeviceUpdatableKernelNode:
      out->set_value(v.deviceUpdatableKernelNode.deviceUpdatable);
      return cudaSuccess;
    case cudaLaunchAttributePreferredSharedMemoryCarveout:
      out->set_value(v.sharedMemCarveout);
      return cudaSuccess;
    case cudaLaunchAttributeNvlinkUtilCentricScheduling:
      out->set_value(v.nvlinkUtilCentricScheduling);
      return cudaSuccess;
  }
  return cudaErrorInvalidValue;
}

uint64_t recorded_event(const cudaLaunchAttribute& a) noexcept {
  if (a.id == cudaLaunchAttributeProgrammaticEvent)
    return handle(a.val.programmaticEvent.event);
  if (a.id == cudaLaunchAttributeLaunchCompletionEvent)
    return handle(a.val.launchCompletionEvent.event);
  return 0;
}

} // namespace gleam::interpose
