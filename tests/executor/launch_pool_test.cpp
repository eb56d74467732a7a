// Launch attributes, memory pools and graph clones of the executor, over the
// fake driver of tests/executor/fake_driver.hpp: what reaches the driver,
// and what is refused before it does.
#include <catch2/catch.hpp>

#include <map>
#include <set>
#include <utility>

#include "tests/executor/fake_driver.hpp"

using namespace gleam::test::fake;

namespace {

/// The fake driver's memory pools: tokens with attributes, access and the
/// allocations made from them.
struct fake_pools {
  static std::set<CUmemoryPool>& live() {
    static std::set<CUmemoryPool> s;
    return s;
  }
  static std::vector<CUmemPoolProps>& created() {
    static std::vector<CUmemPoolProps> v;
    return v;
  }
  static std::map<std::pair<CUmemoryPool, int>, uint64_t>& attributes() {
    static std::map<std::pair<CUmemoryPool, int>, uint64_t> m;
    return m;
  }
  static std::map<CUdeviceptr, CUmemoryPool>& allocations() {
    static std::map<CUdeviceptr, CUmemoryPool> m;
    return m;
  }
  static std::vector<std::pair<CUmemoryPool, size_t>>& trims() {
    static std::vector<std::pair<CUmemoryPool, size_t>> v;
    return v;
  }
  static std::vector<CUmemAccessDesc>& access_given() {
    static std::vector<CUmemAccessDesc> v;
    return v;
  }
};

bool int_attribute(CUmemPool_attribute a) {
  return a <= CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES;
}

void install_fake_pools(driver_api& api) {
  fake_pools::live().clear();
  fake_pools::created().clear();
  fake_pools::attributes().clear();
  fake_pools::allocations().clear();
  fake_pools::trims().clear();
  fake_pools::access_given().clear();
  api.cuStreamIsCapturing = [](CUstream, CUstreamCaptureStatus* s) {
    *s = CU_STREAM_CAPTURE_STATUS_NONE;
    return CUDA_SUCCESS;
  };
  api.cuMemPoolCreate = [](CUmemoryPool* p, const CUmemPoolProps* props) {
    if (props->allocType != CU_MEM_ALLOCATION_TYPE_PINNED)
      return CUDA_ERROR_INVALID_VALUE;
    static uintptr_t next = 0x9000;
    *p = reinterpret_cast<CUmemoryPool>(next++);
    fake_pools::live().insert(*p);
    fake_pools::created().push_back(*props);
    return CUDA_SUCCESS;
  };
  api.cuMemPoolDestroy = [](CUmemoryPool p) {
    return fake_pools::live().erase(p) != 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
  };
  api.cuMemPoolSetAttribute = [](CUmemoryPool p, CUmemPool_attribute a, void* v) {
    if (a == CU_MEMPOOL_ATTR_USED_MEM_CURRENT)
      return CUDA_ERROR_INVALID_VALUE; // read-only, as the driver says
    fake_pools::attributes()[{p, a}] =
      int_attribute(a) ? static_cast<uint64_t>(*static_cast<int*>(v)) : *static_cast<cuuint64_t*>(v);
    return CUDA_SUCCESS;
  };
  api.cuMemPoolGetAttribute = [](CUmemoryPool p, CUmemPool_attribute a, void* v) {
    auto value = fake_pools::attributes()[{p, a}];
    if (int_attribute(a))
      *static_cast<int*>(v) = static_cast<int>(value);
    else
      *static_cast<cuuint64_t*>(v) = value;
    return CUDA_SUCCESS;
  };
  api.cuMemPoolTrimTo = [](CUmemoryPool p, size_t keep) {
    fake_pools::trims().emplace_back(p, keep);
    return CUDA_SUCCESS;
  };
  api.cuMemPoolSetAccess = [](CUmemoryPool, const CUmemAccessDesc* map, size_t n) {
    fake_pools::access_given().assign(map, map + n);
    return CUDA_SUCCESS;
  };
  api.cuMemPoolGetAccess = [](CUmemAccess_flags* f, CUmemoryPool, CUmemLocation* where) {
    *f = where->type == CU_MEM_LOCATION_TYPE_DEVICE ? CU_MEM_ACCESS_FLAGS_PROT_READWRITE
                                                    : CU_MEM_ACCESS_FLAGS_PROT_NONE;
    return CUDA_SUCCESS;
  };
  api.cuMemAllocFromPoolAsync = [](CUdeviceptr* p, size_t n, CUmemoryPool pool, CUstream) {
    if (fake_pools::live().count(pool) == 0)
      return CUDA_ERROR_INVALID_VALUE;
    *p = reinterpret_cast<CUdeviceptr>(std::calloc(1, n));
    live_allocations().insert(*p);
    fake_pools::allocations()[*p] = pool;
    return CUDA_SUCCESS;
  };
  api.cuMemFreeAsync = [](CUdeviceptr p, CUstream) {
    fake_pools::allocations().erase(p);
    if (live_allocations().erase(p) == 0)
      return CUDA_ERROR_INVALID_VALUE;
    std::free(host(p));
    return CUDA_SUCCESS;
  };
}

/// A fake GPU with modules, pools and a stream 0x5000.
struct pool_gpu {
  fake_gpu gpu;
  pool_gpu() {
    install_fake_modules(gpu.api);
    install_fake_pools(gpu.api);
  }
};

bool ok(const proto::OpResult& r) {
  return r.status() == CUDA_SUCCESS;
}

} // namespace

TEST_CASE("launch attributes reach cuLaunchKernelEx as the app gave them",
          "[executor][fake][launch]") {
  pool_gpu g;
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

TEST_CASE("memory pools are the session's own and go with it", "[executor][fake][pools]") {
  pool_gpu g;
  fake_client c{*g.gpu.exec};
  REQUIRE(ok(c.run([](proto::Op& op) {
    op.mutable_mem_pool_create()->set_pool(0x40);
    op.mutable_mem_pool_create()->set_session_default(true);
  })));
  REQUIRE(ok(c.run([](proto::Op& op) {
    auto* p = op.mutable_mem_pool_create();
    p->set_pool(0x41);
    p->set_alloc_type(CU_MEM_ALLOCATION_TYPE_PINNED);
    p->set_location_type(CU_MEM_LOCATION_TYPE_DEVICE);
    p->set_location_id(0);
    p->set_max_size(uint64_t{1} << 30);
  })));
  REQUIRE(fake_pools::created().size() == 2);
  CHECK(fake_pools::created()[0].location.type == CU_MEM_LOCATION_TYPE_DEVICE);
  CHECK(fake_pools::created()[1].maxSize == (size_t{1} << 30));
  const auto* s = g.gpu.exec->find_session(c.session);
  REQUIRE(s->pools.size() == 2);
  auto pool41 = s->pools.at(0x41);

  SECTION("stream-ordered memory counts against the session's memory quota") {
    // Quotas apply to sessions opened after they are set.
    g.gpu.exec->set_session_memory_quota(1024);
    fake_client q{*g.gpu.exec};
    REQUIRE(ok(q.run([](proto::Op& op) {
      auto* p = op.mutable_mem_pool_create();
      p->set_pool(0x42);
      p->set_alloc_type(CU_MEM_ALLOCATION_TYPE_PINNED);
      p->set_location_type(CU_MEM_LOCATION_TYPE_DEVICE);
    })));
    auto alloc = [&](uint64_t n) {
      return q.run([n](proto::Op& op) {
        op.mutable_mem_alloc_async()->set_size(n);
        op.mutable_mem_alloc_async()->set_pool(0x42);
      });
    };
    auto first = alloc(768);
    REQUIRE(ok(first));
    auto over = alloc(512);
    CHECK(over.status() == CUDA_ERROR_OUT_OF_MEMORY);
    CHECK_THAT(over.error(), Catch::Contains("cuMemAllocFromPoolAsync")
                               && Catch::Contains("session-memory"));
    CHECK(ok(alloc(256)));
  }

  SECTION("allocation, attributes, trim, access and stream-ordered free") {
    auto r = c.run([](proto::Op& op) {
      op.mutable_mem_alloc_async()->set_size(256);
      op.mutable_mem_alloc_async()->set_pool(0x41);
    });
    REQUIRE(ok(r));
    CHECK(fake_pools::allocations().at(r.dptr()) == pool41);
    // The pool's memory is the session's: copies may use it.
    REQUIRE(c.htod(r.dptr(), std::string(256, 'p')) == CUDA_SUCCESS);
    CHECK(c.dtoh(r.dptr(), 256).data() == std::string(256, 'p'));
    CHECK(ok(c.run([](proto::Op& op) {
      auto* a = op.mutable_mem_pool_set_attribute();
      a->set_pool(0x41);
      a->set_attribute(CU_MEMPOOL_ATTR_RELEASE_THRESHOLD);
      a->set_value(uint64_t{1} << 33);
    })));
    CHECK(ok(c.run([](proto::Op& op) {
      auto* a = op.mutable_mem_pool_set_attribute();
      a->set_pool(0x41);
      a->set_attribute(CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC);
      a->set_value(0);
    })));
    auto threshold = c.run([](proto::Op& op) {
      op.mutable_mem_pool_get_attribute()->set_pool(0x41);
      op.mutable_mem_pool_get_attribute()->set_attribute(CU_MEMPOOL_ATTR_RELEASE_THRESHOLD);
    });
    CHECK(threshold.value() == (int64_t{1} << 33));
    auto read_only = c.run([](proto::Op& op) {
      auto* a = op.mutable_mem_pool_set_attribute();
      a->set_pool(0x41);
      a->set_attribute(CU_MEMPOOL_ATTR_USED_MEM_CURRENT);
      a->set_value(1);
    });
    CHECK(read_only.status() == CUDA_ERROR_INVALID_VALUE);
    CHECK(ok(c.run([](proto::Op& op) {
      op.mutable_mem_pool_trim_to()->set_pool(0x41);
      op.mutable_mem_pool_trim_to()->set_min_bytes_to_keep(4096);
    })));
    REQUIRE(fake_pools::trims().size() == 1);
    CHECK(fake_pools::trims()[0] == std::make_pair(pool41, size_t{4096}));
    CHECK(ok(c.run([](proto::Op& op) {
      auto* a = op.mutable_mem_pool_set_access()->add_access();
      op.mutable_mem_pool_set_access()->set_pool(0x41);
      a->set_location_type(CU_MEM_LOCATION_TYPE_DEVICE);
      a->set_location_id(0);
      a->set_flags(CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    })));
    REQUIRE(fake_pools::access_given().size() == 1);
    CHECK(fake_pools::access_given()[0].flags == CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    auto access = c.run([](proto::Op& op) {
      op.mutable_mem_pool_get_access()->set_pool(0x41);
      op.mutable_mem_pool_get_access()->set_location_type(CU_MEM_LOCATION_TYPE_DEVICE);
    });
    CHECK(access.value() == CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    CHECK(ok(c.run([&](proto::Op& op) {
      op.mutable_mem_free_async()->set_dptr(r.dptr());
    })));
    CHECK(fake_pools::allocations().empty());
  }
  SECTION("unknown pools, other devices and host locations are refused") {
    auto unknown = c.run([](proto::Op& op) {
      op.mutable_mem_alloc_async()->set_size(256);
      op.mutable_mem_alloc_async()->set_pool(0x99);
    });
    CHECK(unknown.status() == CUDA_ERROR_INVALID_VALUE);
    CHECK(c.run([](proto::Op& op) { op.mutable_mem_pool_trim_to()->set_pool(0x99); }).status()
          == CUDA_ERROR_INVALID_VALUE);
    auto other_device = c.run([](proto::Op& op) {
      auto* p = op.mutable_mem_pool_create();
      p->set_pool(0x42);
      p->set_location_type(CU_MEM_LOCATION_TYPE_DEVICE);
      p->set_location_id(1);
    });
    CHECK(other_device.status() == CUDA_ERROR_INVALID_DEVICE);
    auto host = c.run([](proto::Op& op) {
      auto* p = op.mutable_mem_pool_create();
      p->set_pool(0x43);
      p->set_location_type(CU_MEM_LOCATION_TYPE_HOST);
    });
    CHECK(host.status() == CUDA_ERROR_NOT_SUPPORTED);
    auto taken = c.run([](proto::Op& op) {
      op.mutable_mem_pool_create()->set_pool(0x41);
      op.mutable_mem_pool_create()->set_session_default(true);
    });
    CHECK(taken.status() == CUDA_ERROR_INVALID_VALUE);
    CHECK(fake_pools::created().size() == 2);
  }
  SECTION("another session does not see this session's pools") {
    fake_client other{*g.gpu.exec};
    CHECK(other.run([](proto::Op& op) { op.mutable_mem_pool_trim_to()->set_pool(0x41); })
            .status()
          == CUDA_ERROR_INVALID_VALUE);
  }
  SECTION("closing the session frees pool memory first, then destroys its pools") {
    auto r = c.run([](proto::Op& op) {
      op.mutable_mem_alloc_async()->set_size(64);
      op.mutable_mem_alloc_async()->set_pool(0x41);
    });
    REQUIRE(ok(r));
    CHECK(live_allocations().count(r.dptr()) == 1);
    g.gpu.exec->close_session(c.session);
    CHECK(live_allocations().count(r.dptr()) == 0);
    CHECK(fake_pools::live().empty());
  }
  SECTION("a destroyed pool is gone") {
    REQUIRE(ok(c.run([](proto::Op& op) { op.mutable_mem_pool_destroy()->set_pool(0x41); })));
    CHECK(fake_pools::live().size() == 1);
    CHECK(c.run([](proto::Op& op) { op.mutable_mem_pool_destroy()->set_pool(0x41); }).status()
          == CUDA_ERROR_INVALID_VALUE);
  }
}

namespace {

void install_fake_graphs(driver_api& api) {
  api.cuGraphCreate = [](CUgraph* g, unsigned) {
    static uintptr_t next = 0xa000;
    *g = reinterpret_cast<CUgraph>(next++);
    return CUDA_SUCCESS;
  };
  api.cuGraphDestroy = [](CUgraph) { return CUDA_SUCCESS; };
  api.cuGraphAddEmptyNode = [](CUgraphNode* n, CUgraph, const CUgraphNode*, size_t) {
    static uintptr_t next = 0xb000;
    *n = reinterpret_cast<CUgraphNode>(next++);
    return CUDA_SUCCESS;
  };
  // A clone's node is its original's address + 0x100.
  api.cuGraphClone = [](CUgraph* g, CUgraph) {
    *g = reinterpret_cast<CUgraph>(uintptr_t{0xc000});
    return CUDA_SUCCESS;
  };
  api.cuGraphNodeFindInClone = [](CUgraphNode* n, CUgraphNode original, CUgraph) {
    *n = reinterpret_cast<CUgraphNode>(reinterpret_cast<uintptr_t>(original) + 0x100);
    return CUDA_SUCCESS;
  };
}

} // namespace

TEST_CASE("a cloned graph is a graph of the session with its nodes mapped",
          "[executor][fake][graph]") {
  fake_gpu g;
  install_fake_graphs(g.api);
  fake_client c{*g.exec};
  REQUIRE(ok(c.run([](proto::Op& op) { op.mutable_graph_create()->set_graph(0x60); })));
  REQUIRE(ok(c.run([](proto::Op& op) {
    op.mutable_graph_add_empty_node()->set_graph(0x60);
    op.mutable_graph_add_empty_node()->set_node(0x61);
  })));
  auto clone = [&](uint64_t graph, uint64_t original, uint64_t node, uint64_t copy) {
    return c.run([&](proto::Op& op) {
      auto* k = op.mutable_graph_clone();
      k->set_graph(graph);
      k->set_original(original);
      k->add_original_nodes(node);
      k->add_nodes(copy);
    });
  };
  REQUIRE(ok(clone(0x70, 0x60, 0x61, 0x71)));
  const auto* s = g.exec->find_session(c.session);
  CHECK(s->graphs.at(0x70) == reinterpret_cast<CUgraph>(uintptr_t{0xc000}));
  auto original = s->nodes.at(0x61).second;
  CHECK(s->nodes.at(0x71).first == 0x70);
  CHECK(s->nodes.at(0x71).second
        == reinterpret_cast<CUgraphNode>(reinterpret_cast<uintptr_t>(original) + 0x100));
  // The clone takes nodes like any graph.
  CHECK(ok(c.run([](proto::Op& op) {
    op.mutable_graph_add_empty_node()->set_graph(0x70);
    op.mutable_graph_add_empty_node()->set_node(0x72);
    op.mutable_graph_add_empty_node()->add_dependencies(0x71);
  })));
  CHECK(clone(0x80, 0x99, 0x61, 0x81).status() == CUDA_ERROR_INVALID_VALUE);
  CHECK(clone(0x80, 0x60, 0x71, 0x81).status() == CUDA_ERROR_INVALID_VALUE);
  CHECK(clone(0x70, 0x60, 0x61, 0x81).status() == CUDA_ERROR_INVALID_VALUE);
  CHECK(clone(0x80, 0x60, 0x61, 0x71).status() == CUDA_ERROR_INVALID_VALUE);
  CHECK(s->graphs.count(0x80) == 0);
}

TEST_CASE("a module load finds its functions by enumeration, loading none of them; a driver "
          "that cannot enumerate is asked by name",
          "[executor][fake][launch]") {
  pool_gpu g;
  fake_client c{*g.gpu.exec};
  auto load = [&](uint64_t module) {
    return c.run([&](proto::Op& op) {
      op.mutable_module_load()->set_module(module);
      op.mutable_module_load()->set_image(".version 8.0\n.target sm_90\n");
      op.mutable_module_load()->add_functions("k");
      op.mutable_module_load()->add_functions("absent");
    });
  };
  auto check_functions = [](const proto::OpResult& r) {
    REQUIRE(r.status() == CUDA_SUCCESS);
    REQUIRE(r.module().functions_size() == 2);
    const auto& k = r.module().functions(0);
    CHECK(k.name() == "k");
    CHECK(k.found());
    REQUIRE(k.params_size() == 2);
    CHECK(k.params(1).offset() == 8);
    CHECK(k.params(1).size() == 4);
    CHECK_FALSE(r.module().functions(1).found());
  };
  auto asked = module_get_functions();
  check_functions(load(1));
  // "k" came from the enumeration; only the name the module lacks was asked.
  CHECK(module_get_functions() == asked + 1);
  // The kernel found that way launches.
  auto launch = c.run([](proto::Op& op) {
    auto* l = op.mutable_launch_kernel();
    l->set_module(1);
    l->set_function("k");
    l->set_params(std::string(12, '\0'));
    l->set_grid_x(1);
    l->set_grid_y(1);
    l->set_grid_z(1);
    l->set_block_x(1);
    l->set_block_y(1);
    l->set_block_z(1);
  });
  CHECK(launch.status() == CUDA_SUCCESS);
  g.gpu.api.cuModuleEnumerateFunctions = nullptr;
  asked = module_get_functions();
  check_functions(load(2));
  CHECK(module_get_functions() == asked + 2);
}
