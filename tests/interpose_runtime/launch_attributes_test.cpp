// interpose/launch_attributes.hpp: every cudaLaunchAttribute kind CUDA 13
// defines encoded for the wire, unknown ids and events refused as CUDA
// refuses them at the launch.
#include "interpose/launch_attributes.hpp"

#include <catch2/catch.hpp>

#include <cstring>

using gleam::interpose::encode_launch_attribute;
using gleam::interpose::recorded_event;

namespace {

cudaLaunchAttribute make(cudaLaunchAttributeID id) {
  cudaLaunchAttribute a;
  std::memset(&a, 0, sizeof(a));
  a.id = id;
  return a;
}

cudaEvent_t event(uintptr_t h) {
  return reinterpret_cast<cudaEvent_t>(h);
}

const gleam::interpose::event_known only_0x77 = [](uint64_t e) { return e == 0x77; };

} // namespace

TEST_CASE("launch attributes: every kind is encoded", "[interpose][launch]") {
  gleam::proto::LaunchAttribute out;
  auto a = make(cudaLaunchAttributeClusterDimension);
  a.val.clusterDim = {2, 3, 4};
  REQUIRE(encode_launch_attribute(a, only_0x77, &out) == cudaSuccess);
  CHECK(out.id() == 4);
  CHECK((out.x() == 2 && out.y() == 3 && out.z() == 4));

  a = make(cudaLaunchAttributePreferredClusterDimension);
  a.val.preferredClusterDim = {4, 1, 1};
  REQUIRE(encode_launch_attribute(a, only_0x77, &out) == cudaSuccess);
  CHECK((out.id() == 11 && out.x() == 4 && out.y() == 1));

  a = make(cudaLaunchAttributeProgrammaticStreamSerialization);
  a.val.programmaticStreamSerializationAllowed = 1;
  REQUIRE(encode_launch_attribute(a, only_0x77, &out) == cudaSuccess);
  CHECK((out.id() == 6 && out.value() == 1));

  a = make(cudaLaunchAttributeProgrammaticEvent);
  a.val.programmaticEvent.event = event(0x77);
  a.val.programmaticEvent.flags = 2;
  a.val.programmaticEvent.triggerAtBlockStart = 1;
  REQUIRE(encode_launch_attribute(a, only_0x77, &out) == cudaSuccess);
  CHECK((out.event() == 0x77 && out.flags() == 2 && out.trigger_at_block_start() == 1));
  CHECK(recorded_event(a) == 0x77);

  a = make(cudaLaunchAttributeLaunchCompletionEvent);
  a.val.launchCompletionEvent.event = event(0x77);
  a.val.launchCompletionEvent.flags = 1;
  REQUIRE(encode_launch_attribute(a, only_0x77, &out) == cudaSuccess);
  CHECK((out.id() == 12 && out.event() == 0x77 && out.flags() == 1));
  CHECK(recorded_event(a) == 0x77);

  a = make(cudaLaunchAttributeAccessPolicyWindow);
  a.val.accessPolicyWindow.base_ptr = reinterpret_cast<void*>(uintptr_t{0x7f0000001000});
  a.val.accessPolicyWindow.num_bytes = 1 << 20;
  a.val.accessPolicyWindow.hitRatio = 0.75f;
  a.val.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
  a.val.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
  REQUIRE(encode_launch_attribute(a, only_0x77, &out) == cudaSuccess);
  CHECK(out.base_ptr() == 0x7f0000001000);
  CHECK(out.num_bytes() == (1u << 20));
  CHECK(out.hit_ratio() == 0.75f);
  CHECK(out.hit_prop() == cudaAccessPropertyPersisting);
  CHECK(out.miss_prop() == cudaAccessPropertyStreaming);
  CHECK(recorded_event(a) == 0);

  a = make(cudaLaunchAttributeMemSyncDomainMap);
  a.val.memSyncDomainMap.default_ = 1;
  a.val.memSyncDomainMap.remote = 0;
  REQUIRE(encode_launch_attribute(a, only_0x77, &out) == cudaSuccess);
  CHECK((out.domain_default() == 1 && out.domain_remote() == 0));

  struct scalar_case {
    cudaLaunchAttributeID id;
    int value;
  };
  for (auto c : {scalar_case{cudaLaunchAttributeCooperative, 1},
                 scalar_case{cudaLaunchAttributeSynchronizationPolicy, 2},
                 scalar_case{cudaLaunchAttributeClusterSchedulingPolicyPreference, 1},
                 scalar_case{cudaLaunchAttributePriority, -4},
                 scalar_case{cudaLaunchAttributeMemSyncDomain, 1},
                 scalar_case{cudaLaunchAttributeDeviceUpdatableKernelNode, 1},
                 scalar_case{cudaLaunchAttributePreferredSharedMemoryCarveout, 60},
                 scalar_case{cudaLaunchAttributeNvlinkUtilCentricScheduling, 1}}) {
    a = make(c.id);
    // Each of these is an int-sized member at the start of the union.
    std::memcpy(&a.val, &c.value, sizeof(int));
    INFO("attribute " << c.id);
    REQUIRE(encode_launch_attribute(a, only_0x77, &out) == cudaSuccess);
    CHECK(out.id() == static_cast<int>(c.id));
    CHECK(out.value() == (c.id == cudaLaunchAttributePreferredSharedMemoryCarveout
                                  || c.id == cudaLaunchAttributeNvlinkUtilCentricScheduling
                                ? static_cast<int64_t>(static_cast<unsigned>(c.value))
                                : c.value));
  }
  a = make(cudaLaunchAttributeIgnore);
  REQUIRE(encode_launch_attribute(a, only_0x77, &out) == cudaSuccess);
  CHECK(out.id() == 0);
}

TEST_CASE("launch attributes: unknown ids and events are refused", "[interpose][launch]") {
  gleam::proto::LaunchAttribute out;
  for (int id : {15, 17, 99, -1}) {
    auto a = make(static_cast<cudaLaunchAttributeID>(id));
    INFO("id " << id);
    CHECK(encode_launch_attribute(a, only_0x77, &out) == cudaErrorInvalidValue);
  }
  auto a = make(cudaLaunchAttributeProgrammaticEvent);
  a.val.programmaticEvent.event = event(0x78);
  CHECK(encode_launch_attribute(a, only_0x77, &out) == cudaErrorInvalidResourceHandle);
  a = make(cudaLaunchAttributeLaunchCompletionEvent);
  CHECK(encode_launch_attribute(a, only_0x77, &out) == cudaErrorInvalidResourceHandle);
}
