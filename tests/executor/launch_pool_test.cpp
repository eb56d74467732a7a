// Launch attributes of the executor, over the
// fake driver of tests/executor/fake_driver.hpp: what reaches the driver,
// and what is refused before it does.
#include <catch2/catch.hpp>

#include "tests/executor/fake_driver.hpp"

using namespace gleam::test::fake;

namespace {

/// A fake GPU with modules.
struct module_gpu {
  fake_gpu gpu;
  module_gpu() {
    install_fake_modules(gpu.api);
  }
};

bool ok(const proto::OpResult& r) {
  return r.status() == CUDA_SUCCESS;
}

} // namespace

TEST_CASE("launch attributes reach cuLaunchKernelEx as the app gave them",
          "[executor][fake][launch]") {
  module_gpu g;
  fake_client c{*g.gpu.exec};
  REQUIRE(ok(c.run([](proto::Op& op) {
    op.mutable_module_load()->set_module(6);
    op.mutable_module_load()->set_image(".version 8.0\n.target sm_90\n");
    op.mutable_module_load()->add_functions("k");
  })));
  REQUIRE(ok(c.run([](proto::Op& op) { op.mutable_event_create()->set_event(0x77); })));
  auto buffer = c.alloc(4096);
  auto launch = [&](const std::function<void(proto::LaunchKernel&)>& fill) {
    return c.run([&](proto::Op& op) {
      auto* l = op.mutable_launch_kernel();
      l->set_module(6);
      l->set_function("k");
      l->set_grid_x(4);
      l->set_block_x(32);
      l->set_params(std::string(12, '\0'));
      fill(*l);
    });
  };
  SECTION("every attribute kind, in order, with events mapped to the session's") {
    auto r = launch([&](proto::LaunchKernel& l) {
      l.set_cooperative(true);
      auto* a = l.add_attributes();
      a->set_id(CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION);
      a->set_value(1);
      a = l.add_attributes();
      a->set_id(CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION);
      a->set_x(2);
      a->set_y(1);
      a->set_z(1);
      a = l.add_attributes();
      a->set_id(CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT);
      a->set_event(0x77);
      a->set_flags(0);
      a->set_trigger_at_block_start(1);
      a = l.add_attributes();
      a->set_id(CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT);
      a->set_event(0x77);
      a = l.add_attributes();
      a->set_id(CU_LAUNCH_ATTRIBUTE_PRIORITY);
      a->set_value(-3);
      a = l.add_attributes();
      a->set_id(CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP);
      a->set_domain_default(1);
      a->set_domain_remote(0);
      a = l.add_attributes();
      a->set_id(CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN);
      a->set_value(CU_LAUNCH_MEM_SYNC_DOMAIN_REMOTE);
      a = l.add_attributes();
      a->set_id(CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW);
      a->set_base_ptr(buffer + 64);
      a->set_num_bytes(1024);
      a->set_hit_ratio(0.5f);
      a->set_hit_prop(CU_ACCESS_PROPERTY_PERSISTING);
      a->set_miss_prop(CU_ACCESS_PROPERTY_STREAMING);
      a = l.add_attributes();
      a->set_id(CU_LAUNCH_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT);
      a->set_value(50);
      a = l.add_attributes();
      a->set_id(CU_LAUNCH_ATTRIBUTE_IGNORE);
    });
    REQUIRE(ok(r));
    const auto& got = launch_attributes_given();
    REQUIRE(got.size() == 11);
    CHECK(got[0].id == CU_LAUNCH_ATTRIBUTE_COOPERATIVE);
    CHECK(got[0].value.cooperative == 1);
    CHECK(got[1].id == CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION);
    CHECK(got[1].value.programmaticStreamSerializationAllowed == 1);
    CHECK(got[2].value.clusterDim.x == 2);
    CHECK(got[2].value.clusterDim.z == 1);
    // The client's handle 0x77 became the driver event the session made.
    auto driver_event = g.gpu.exec->find_session(c.session)->events.at(0x77);
    CHECK(got[3].value.programmaticEvent.event == driver_event);
    CHECK(got[3].value.programmaticEvent.triggerAtBlockStart == 1);
    CHECK(got[4].id == CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT);
    CHECK(got[4].value.launchCompletionEvent.event == driver_event);
    CHECK(got[5].value.priority == -3);
    CHECK(got[6].value.memSyncDomainMap.default_ == 1);
    CHECK(got[7].value.memSyncDomain == CU_LAUNCH_MEM_SYNC_DOMAIN_REMOTE);
    CHECK(got[8].value.accessPolicyWindow.base_ptr
          == reinterpret_cast<void*>(static_cast<uintptr_t>(buffer + 64)));
    CHECK(got[8].value.accessPolicyWindow.num_bytes == 1024);
    CHECK(got[8].value.accessPolicyWindow.hitRatio == 0.5f);
    CHECK(got[8].value.accessPolicyWindow.hitProp == CU_ACCESS_PROPERTY_PERSISTING);
    CHECK(got[8].value.accessPolicyWindow.missProp == CU_ACCESS_PROPERTY_STREAMING);
    CHECK(got[9].value.sharedMemCarveout == 50);
    CHECK(got[10].id == CU_LAUNCH_ATTRIBUTE_IGNORE);
  }
  SECTION("an unknown event, a window outside the session, an unknown id: refused, "
          "nothing launched") {
    auto before = launches();
    auto unknown_event = launch([](proto::LaunchKernel& l) {
      auto* a = l.add_attributes();
      a->set_id(CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT);
      a->set_event(0x78);
    });
    CHECK(unknown_event.status() == CUDA_ERROR_INVALID_HANDLE);
    CHECK_THAT(unknown_event.error(), Catch::Contains("event handle 120"));
    auto window = launch([](proto::LaunchKernel& l) {
      auto* a = l.add_attributes();
      a->set_id(CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW);
      a->set_base_ptr(0x1000);
      a->set_num_bytes(4096);
    });
    CHECK(window.status() == CUDA_ERROR_INVALID_VALUE);
    CHECK_THAT(window.error(), Catch::Contains("access policy window"));
    auto unknown_id = launch([](proto::LaunchKernel& l) { l.add_attributes()->set_id(15); });
    CHECK(unknown_id.status() == CUDA_ERROR_INVALID_VALUE);
    CHECK(launches() == before);
    // The session still launches.
    CHECK(ok(launch([](proto::LaunchKernel&) {})));
    CHECK(launches() == before + 1);
  }
}
