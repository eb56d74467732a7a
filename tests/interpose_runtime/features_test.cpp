// The built libcudart.so.13 (and lib/driver/libcuda.so.1) against the
// GPU-less fake server (interpose_features_probe, features_probe.cpp):
// extended launches with every attribute kind; the full device properties;
// stream-ordered memory pools; queries and clones of explicit graphs;
// managed and mapped memory on host mirrors.
#include <catch2/catch.hpp>

#include <cuda.h>

#include <map>
#include <sstream>
#include <string>

#include "tests/interpose_runtime/fake_server.hpp"

namespace {

using gleam::test::fake_server;
using gleam::test::probe_values;

/// The probe's output; a probe still running after `deadline_s` seconds
/// fails its run instead of hanging the test.
std::string features(fake_server& server, const std::string& scenario,
                     const std::string& env = "", int deadline_s = 120) {
  return server.probe_with("tests/interpose_features_probe", scenario,
                           "GLEAM_PROBE_DEADLINE_S=" + std::to_string(deadline_s) + " " + env);
}

} // namespace

TEST_CASE("cudaLaunchKernelExC forwards every launch attribute", "[interpose][launch]") {
  fake_server server;
  for (std::string env : {"", "GLEAM_ASYNC=off"}) {
    INFO("env " << env);
    auto kv = probe_values(features(server, "launch_ex", env));
    CHECK(kv["setup"] == "cudaSuccess");
    CHECK(kv["launch_all"] == "cudaSuccess");
    CHECK(kv["launch_unknown_id"] == "cudaErrorInvalidValue");
    CHECK(kv["launch_unknown_event"] == "cudaErrorInvalidResourceHandle");
    CHECK(kv["launch_null_attrs"] == "cudaErrorInvalidValue");
    CHECK(kv["get_kernel"] == "cudaSuccess");
    CHECK(kv["cu_launch"] == "0");
    CHECK(kv["cu_launch_unknown_id"] == std::to_string(CUDA_ERROR_INVALID_VALUE));
    CHECK(kv["sync"] == "cudaSuccess");
    // What the server got: the attributes in the app's order, the event as
    // the client's handle, the window at the client's buffer.
    auto stats = server.stats();
    auto event = kv["event"];
    auto buffer = kv["buffer"];
    std::string expected = "launch k 6:0,0,0,1,0,0,0,0,0,0 4:2,1,1,0,0,0,0,0,0,0 7:0,0,0,0,"
                           + event + ",0,1,0,0,0 12:0,0,0,0," + event
                           + ",0,0,0,0,0 8:0,0,0,-2,0,0,0,0,0,0 1:0,0,0,0,0,0,0," + buffer
                           + ",4096,0 9:0,0,0,0,0,0,0,0,0,1 0:0,0,0,0,0,0,0,0,0,0\n";
    CHECK_THAT(stats, Catch::Contains(expected));
    // The driver's launch: one attribute, through the same op.
    CHECK_THAT(stats, Catch::Contains("launch k 6:0,0,0,1,0,0,0,0,0,0\n"));
    // Refused launches sent nothing: exactly the two good ones arrived.
    size_t launches = 0;
    for (auto at = stats.find("\nlaunch "); at != std::string::npos;
         at = stats.find("\nlaunch ", at + 1))
      ++launches;
    CHECK(launches == 2);
  }
}

TEST_CASE("cudaGetDeviceProperties fills every field from the server's attributes",
          "[interpose][device]") {
  fake_server server;
  auto kv = probe_values(features(server, "props"));
  REQUIRE(kv["get_properties"] == "cudaSuccess");
  CHECK(kv["attributes_differing"] == "0");
  // The fake server reports attribute a as 100000 + a (except three).
  auto from = [](CUdevice_attribute a) { return std::to_string(100000 + static_cast<int>(a)); };
  const std::map<std::string, CUdevice_attribute> fields = {
    {"sharedMemPerBlock", CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK},
    {"regsPerBlock", CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK},
    {"memPitch", CU_DEVICE_ATTRIBUTE_MAX_PITCH},
    {"maxThreadsDim[0]", CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X},
    {"maxThreadsDim[1]", CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y},
    {"maxThreadsDim[2]", CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z},
    {"maxGridSize[0]", CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X},
    {"maxGridSize[1]", CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y},
    {"maxGridSize[2]", CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z},
    {"totalConstMem", CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY},
    {"major", CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR},
    {"minor", CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR},
    {"textureAlignment", CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT},
    {"texturePitchAlignment", CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT},
    {"integrated", CU_DEVICE_ATTRIBUTE_INTEGRATED},
    {"canMapHostMemory", CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY},
    {"maxTexture1D", CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_WIDTH},
    {"maxTexture1DMipmap", CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_MIPMAPPED_WIDTH},
    {"maxTexture2D[0]", CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_WIDTH},
    {"maxTexture2D[1]", CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_HEIGHT},
    {"maxTexture2DMipmap[0]", CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_MIPMAPPED_WIDTH},
    {"maxTexture2DMipmap[1]", CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_MIPMAPPED_HEIGHT},
    {"maxTexture2DLinear[0]", CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_WIDTH},
    {"maxTexture2DLinear[1]", CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_HEIGHT},
    {"maxTexture2DLinear[2]", CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_PITCH},
    {"maxTexture2DGather[0]", CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_GATHER_WIDTH},
    {"maxTexture2DGather[1]", CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_GATHER_HEIGHT},
    {"maxTexture3D[0]", CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH},
    {"maxTexture3D[1]", CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT},
    {"maxTexture3D[2]", CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH},
    {"maxTexture3DAlt[0]", CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH_ALTERNATE},
    {"maxTexture3DAlt[1]", CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT_ALTERNATE},
    {"maxTexture3DAlt[2]", CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH_ALTERNATE},
    {"maxTextureCubemap", CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_WIDTH},
    {"maxTexture1DLayered[0]", CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LAYERED_WIDTH},
    {"maxTexture1DLayered[1]", CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LAYERED_LAYERS},
    {"maxTexture2DLayered[0]", CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_WIDTH},
    {"maxTexture2DLayered[1]", CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_HEIGHT},
    {"maxTexture2DLayered[2]", CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_LAYERS},
    {"maxTextureCubemapLayered[0]", CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_LAYERED_WIDTH},
    {"maxTextureCubemapLayered[1]", CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_LAYERED_LAYERS},
    {"maxSurface1D", CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_WIDTH},
    {"maxSurface2D[0]", CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_WIDTH},
    {"maxSurface2D[1]", CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_HEIGHT},
    {"maxSurface3D[0]", CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_WIDTH},
    {"maxSurface3D[1]", CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_HEIGHT},
    {"maxSurface3D[2]", CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_DEPTH},
    {"maxSurface1DLayered[0]", CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_LAYERED_WIDTH},
    {"maxSurface1DLayered[1]", CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_LAYERED_LAYERS},
    {"maxSurface2DLayered[0]", CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_WIDTH},
    {"maxSurface2DLayered[1]", CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_HEIGHT},
    {"maxSurface2DLayered[2]", CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_LAYERS},
    {"maxSurfaceCubemap", CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_WIDTH},
    {"maxSurfaceCubemapLayered[0]", CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_LAYERED_WIDTH},
    {"maxSurfaceCubemapLayered[1]", CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_LAYERED_LAYERS},
    {"surfaceAlignment", CU_DEVICE_ATTRIBUTE_SURFACE_ALIGNMENT},
    {"concurrentKernels", CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS},
    {"ECCEnabled", CU_DEVICE_ATTRIBUTE_ECC_ENABLED},
    {"pciBusID", CU_DEVICE_ATTRIBUTE_PCI_BUS_ID},
    {"pciDeviceID", CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID},
    {"pciDomainID", CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID},
    {"tccDriver", CU_DEVICE_ATTRIBUTE_TCC_DRIVER},
    {"asyncEngineCount", CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT},
    {"unifiedAddressing", CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING},
    {"memoryBusWidth", CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH},
    {"l2CacheSize", CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE},
    {"persistingL2CacheMaxSize", CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE},
    {"maxThreadsPerMultiProcessor", CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR},
    {"streamPrioritiesSupported", CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED},
    {"globalL1CacheSupported", CU_DEVICE_ATTRIBUTE_GLOBAL_L1_CACHE_SUPPORTED},
    {"localL1CacheSupported", CU_DEVICE_ATTRIBUTE_LOCAL_L1_CACHE_SUPPORTED},
    {"sharedMemPerMultiprocessor", CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR},
    {"regsPerMultiprocessor", CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR},
    {"managedMemory", CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY},
    {"isMultiGpuBoard", CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD},
    {"multiGpuBoardGroupID", CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD_GROUP_ID},
    {"hostNativeAtomicSupported", CU_DEVICE_ATTRIBUTE_HOST_NATIVE_ATOMIC_SUPPORTED},
    {"pageableMemoryAccess", CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS},
    {"concurrentManagedAccess", CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS},
    {"computePreemptionSupported", CU_DEVICE_ATTRIBUTE_COMPUTE_PREEMPTION_SUPPORTED},
    {"canUseHostPointerForRegisteredMem",
     CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM},
    {"cooperativeLaunch", CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH},
    {"sharedMemPerBlockOptin", CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN},
    {"pageableMemoryAccessUsesHostPageTables",
     CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES},
    {"directManagedMemAccessFromHost", CU_DEVICE_ATTRIBUTE_DIRECT_MANAGED_MEM_ACCESS_FROM_HOST},
    {"maxBlocksPerMultiProcessor", CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR},
    {"accessPolicyMaxWindowSize", CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE},
    {"reservedSharedMemPerBlock", CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK},
    {"hostRegisterSupported", CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED},
    {"sparseCudaArraySupported", CU_DEVICE_ATTRIBUTE_SPARSE_CUDA_ARRAY_SUPPORTED},
    {"hostRegisterReadOnlySupported", CU_DEVICE_ATTRIBUTE_READ_ONLY_HOST_REGISTER_SUPPORTED},
    {"timelineSemaphoreInteropSupported",
     CU_DEVICE_ATTRIBUTE_TIMELINE_SEMAPHORE_INTEROP_SUPPORTED},
    {"memoryPoolsSupported", CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED},
    {"gpuDirectRDMASupported", CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED},
    {"gpuDirectRDMAFlushWritesOptions", CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS},
    {"gpuDirectRDMAWritesOrdering", CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WRITES_ORDERING},
    {"memoryPoolSupportedHandleTypes", CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES},
    {"deferredMappingCudaArraySupported",
     CU_DEVICE_ATTRIBUTE_DEFERRED_MAPPING_CUDA_ARRAY_SUPPORTED},
    {"ipcEventSupported", CU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED},
    {"clusterLaunch", CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH},
    {"unifiedFunctionPointers", CU_DEVICE_ATTRIBUTE_UNIFIED_FUNCTION_POINTERS},
    {"deviceNumaConfig", CU_DEVICE_ATTRIBUTE_NUMA_CONFIG},
    {"deviceNumaId", CU_DEVICE_ATTRIBUTE_NUMA_ID},
    {"mpsEnabled", CU_DEVICE_ATTRIBUTE_MPS_ENABLED},
    {"hostNumaId", CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID},
    {"gpuPciDeviceID", CU_DEVICE_ATTRIBUTE_GPU_PCI_DEVICE_ID},
    {"gpuPciSubsystemID", CU_DEVICE_ATTRIBUTE_GPU_PCI_SUBSYSTEM_ID},
    {"hostNumaMultinodeIpcSupported", CU_DEVICE_ATTRIBUTE_HOST_NUMA_MULTINODE_IPC_SUPPORTED},
  };
  for (const auto& [field, attr] : fields) {
    INFO("prop." << field);
    CHECK(kv["prop." + field] == from(attr));
  }
  CHECK(kv["prop.maxThreadsPerBlock"] == "1024");
  CHECK(kv["prop.warpSize"] == "32");
  CHECK(kv["prop.multiProcessorCount"] == "4");
  CHECK(kv["prop.totalGlobalMem"] == std::to_string(uint64_t{1} << 34));
  // Every field the probe printed is checked above.
  size_t printed = 0;
  for (const auto& entry : kv)
    printed += entry.first.rfind("prop.", 0) == 0;
  CHECK(printed == fields.size() + 4);
}

TEST_CASE("memory pools: the current pool, attributes, allocations and refusals",
          "[interpose][pools]") {
  fake_server server;
  for (std::string env : {"", "GLEAM_ASYNC=off"}) {
    INFO("env " << env);
    auto kv = probe_values(features(server, "pools", env));
    const std::map<std::string, std::string> expected = {
      {"malloc_async_early", "cudaSuccess"},
      {"get_default", "cudaSuccess"},
      {"get_default_again", "cudaSuccess"},
      {"default_stable", "1"},
      {"get_default_bad_device", "cudaErrorInvalidDevice"},
      {"mem_get_default", "cudaSuccess"},
      {"mem_get_default_same", "1"},
      {"mem_get_default_host", "cudaErrorNotSupported"},
      {"get_current", "cudaSuccess"},
      {"current_is_default", "1"},
      // The early cudaMallocAsync was cudaMalloc: not the pool's.
      {"used_default_start", "0"},
      {"malloc_async", "cudaSuccess"},
      {"used_default_after_malloc", "3000"},
      {"free_async", "cudaSuccess"},
      {"free_async_early", "cudaSuccess"},
      {"sync", "cudaSuccess"},
      {"used_default_after_free", "0"},
      {"create", "cudaSuccess"},
      {"set_threshold", "cudaSuccess"},
      {"set_reuse", "cudaSuccess"},
      {"get_threshold", "cudaSuccess"},
      {"threshold", "4294967296"},
      {"get_reuse", "cudaSuccess"},
      {"reuse", "0"},
      {"set_used", "cudaErrorInvalidValue"},
      {"get_bad_attr", "cudaErrorInvalidValue"},
      {"malloc_from_pool", "cudaSuccess"},
      {"used_mine", "5000"},
      {"set_current", "cudaSuccess"},
      {"get_current_mine", "cudaSuccess"},
      {"current_is_mine", "1"},
      {"malloc_async_mine", "cudaSuccess"},
      {"used_mine_after_malloc_async", "5700"},
      {"trim", "cudaSuccess"},
      {"set_access", "cudaSuccess"},
      {"get_access", "cudaSuccess"},
      {"access", "3"},
      {"set_access_host", "cudaErrorNotSupported"},
      {"free_b", "cudaSuccess"},
      {"free_c", "cudaSuccess"},
      {"used_mine_after_free", "0"},
      {"destroy_default", "cudaErrorInvalidValue"},
      {"destroy", "cudaSuccess"},
      {"get_current_after_destroy", "cudaSuccess"},
      {"current_is_default_again", "1"},
      {"destroy_again", "cudaErrorInvalidValue"},
      {"malloc_from_destroyed", "cudaErrorInvalidValue"},
      {"create_host", "cudaErrorNotSupported"},
      {"create_bad_device", "cudaErrorInvalidValue"},
      {"export", "cudaErrorNotSupported"},
      {"final_sync", "cudaSuccess"},
    };
    for (const auto& [key, value] : expected) {
      INFO(key);
      CHECK(kv[key] == value);
    }
  }
}

TEST_CASE("explicit graphs are queried from the client's record; clones copy it",
          "[interpose][graph]") {
  fake_server server;
  auto kv = probe_values(features(server, "graphs"));
  const std::map<std::string, std::string> expected = {
    {"create", "cudaSuccess"},
    {"add_kernel", "cudaSuccess"},
    {"add_e1", "cudaSuccess"},
    {"add_e2", "cudaSuccess"},
    {"add_edge", "cudaSuccess"},
    {"nodes_count", "cudaSuccess"},
    {"nodes", "3"},
    {"nodes_listed", "3 k e1 e2 null"},
    {"nodes_first", "1 k"},
    {"roots_listed", "2 k e2"},
    {"edges", "2"},
    {"edges_listed", "2 k>e1 e2>e1"},
    {"edges_half_null", "cudaErrorInvalidValue"},
    {"deps_listed", "2 k e2"},
    {"dependents_listed", "1 e1"},
    // The node kept its own copy of the arguments.
    {"kernel_params_values", "1 3 64 1234 77"},
    {"kernel_params_of_empty", "cudaErrorInvalidValue"},
    {"kernel_set", "cudaSuccess"},
    {"kernel_params_after_set", "9 5"},
    {"clone", "cudaSuccess"},
    {"find_k", "cudaSuccess"},
    {"find_e1", "cudaSuccess"},
    {"clone_nodes_distinct", "1"},
    {"clone_deps_first_is_k2", "1 count=2"},
    {"clone_type_kernel", "1"},
    {"clone_kernel_int", "5"},
    {"find_in_original", "cudaErrorInvalidValue"},
    {"destroy_clone", "cudaSuccess"},
    {"find_after_destroy", "cudaErrorInvalidValue"},
    {"begin", "cudaSuccess"},
    {"end", "cudaSuccess"},
    {"captured_nodes", "cudaErrorNotSupported"},
    {"unknown_graph_nodes", "cudaErrorInvalidValue"},
    {"destroy", "cudaSuccess"},
    {"node_after_destroy", "cudaErrorInvalidValue"},
  };
  for (const auto& [key, value] : expected) {
    INFO(key);
    CHECK(kv[key] == value);
  }
}

namespace {

/// Runs `scenario` against a fresh fake server with asynchronous
/// forwarding and in strict synchronous mode (GLEAM_ASYNC=off): both give
/// every `expected` key its value.
void check_scenario(const std::string& scenario,
                    const std::map<std::string, std::string>& expected,
                    std::vector<const char*> envs = {"", "GLEAM_ASYNC=off"}) {
  fake_server server;
  for (const char* env : envs) {
    INFO(env);
    auto kv = probe_values(features(server, scenario, env));
    for (const auto& [key, value] : expected) {
      INFO(key);
      auto i = kv.find(key);
      CHECK((i != kv.end() ? i->second : "(missing)") == value);
    }
  }
}

} // namespace

TEST_CASE("managed memory: host writes, kernel, sync, host reads through the mirror",
          "[interpose][managed]") {
  check_scenario("managed", {
    {"null_ptr", "cudaErrorInvalidValue"},
    {"zero_size", "cudaSuccess"},
    {"zero_size_null", "1"},
    {"bad_flags", "cudaErrorInvalidValue"},
    {"alloc", "cudaSuccess"},
    {"fresh", "00000000"},
    {"attributes", "cudaSuccess"},
    {"attributes_values", "1 1 1"},
    {"launch", "cudaSuccess"},
    {"launch_tail", "cudaSuccess"},
    {"sync", "cudaSuccess"},
    // The host's bytes reached the kernel, the kernel's came back.
    {"after_kernel", "0111213141516171"},
    {"after_kernel_tail", "41"},
    {"after_second", "7111"},
    {"host_only", "5a"},
    {"copy_in_default", "cudaSuccess"},
    {"copied_in", "01020304"},
    {"copy_in_htod", "cudaSuccess"},
    {"copied_in_htod", "01020304"},
    {"copy_out_dtoh", "cudaSuccess"},
    {"copied_out", "9"},
    {"copy_hth", "cudaSuccess"},
    {"copied_hth", "01020304"},
    {"copy_dtod", "cudaSuccess"},
    {"memset", "cudaSuccess"},
    {"copy_back", "cudaSuccess"},
    {"memset_and_copy", "33330102"},
    {"prefetch_device", "cudaSuccess"},
    {"prefetch_host", "cudaSuccess"},
    {"prefetch_too_long", "cudaErrorInvalidValue"},
    {"prefetch_flags", "cudaErrorInvalidValue"},
    {"prefetch_not_managed", "cudaErrorInvalidValue"},
    {"prefetch_bad_device", "cudaErrorInvalidDevice"},
    {"advise", "cudaSuccess"},
    {"advise_read_mostly", "cudaSuccess"},
    {"advise_bad", "cudaErrorInvalidValue"},
    {"advise_bad_device", "cudaErrorInvalidDevice"},
    {"attach", "cudaSuccess"},
    {"attach_length", "cudaErrorInvalidValue"},
    {"attach_flags", "cudaErrorInvalidValue"},
    {"after_hints", "7111"},
    {"free_inner", "cudaErrorInvalidValue"},
    {"free", "cudaSuccess"},
    {"free_device", "cudaSuccess"},
    {"alloc_shared", "cudaSuccess"},
    {"launch_shared", "cudaSuccess"},
    {"sync_shared", "cudaSuccess"},
    {"shared_page", "2001"},
    {"free_shared", "cudaSuccess"},
    {"alloc_before_reset", "cudaSuccess"},
    {"reset", "cudaSuccess"},
    {"attributes_after_reset", "cudaSuccess"},
    {"after_reset_unregistered", "1"},
    {"alloc_after_reset", "cudaSuccess"},
    {"launch_after_reset", "cudaSuccess"},
    {"after_reset", "0103"},
    {"final_sync", "cudaSuccess"},
  });
}

TEST_CASE("mapped host memory: cudaHostAlloc and cudaHostRegister with device pointers",
          "[interpose][mapped]") {
  check_scenario("mapped", {
    {"bad_flags", "cudaErrorInvalidValue"},
    {"alloc", "cudaSuccess"},
    {"device_pointer", "cudaSuccess"},
    {"device_pointer_same", "1"},
    {"device_pointer_flags", "cudaErrorInvalidValue"},
    {"flags", "cudaSuccess"},
    {"flags_value", "2"},
    {"attributes", "cudaSuccess"},
    {"attributes_host", "1"},
    {"launch", "cudaSuccess"},
    {"sync", "cudaSuccess"},
    {"after_kernel", "02030405"},
    {"free_wrong", "cudaErrorInvalidValue"},
    {"free", "cudaSuccess"},
    {"pinned", "cudaSuccess"},
    {"pinned_device_pointer", "cudaErrorNotSupported"},
    {"pageable_device_pointer", "cudaErrorInvalidValue"},
    {"free_pinned", "cudaSuccess"},
    {"register_bad_flags", "cudaErrorInvalidValue"},
    {"register", "cudaSuccess"},
    {"register_twice", "cudaErrorHostMemoryAlreadyRegistered"},
    {"registered_pointer", "cudaSuccess"},
    {"launch_registered", "cudaSuccess"},
    {"launch_registered_start", "cudaSuccess"},
    {"sync_registered", "cudaSuccess"},
    // Host writes reached the kernels; their writes came back, and a byte
    // next to the registration stayed the app's.
    {"registered_after", "31 21 00"},
    {"registered_attributes", "cudaSuccess"},
    {"registered_attributes_values", "1 1"},
    {"free_registered_device", "cudaErrorInvalidValue"},
    {"unregister", "cudaSuccess"},
    {"unregister_again", "cudaErrorHostMemoryNotRegistered"},
    {"registered_final", "44"},
    {"register_heap", "cudaSuccess"},
    {"heap_pointer", "cudaSuccess"},
    {"heap_rounds", "cudaSuccess"},
    {"heap_after", "0102030405060708090a0b0c0d0e0f1011121314"},
    {"unregister_heap", "cudaSuccess"},
    {"final_sync", "cudaSuccess"},
  });
}

// A registered page whose bytes next to the registration change while Gleam
// sends (the allocator's data, written by the app's other threads or by
// Gleam's own allocations) holds nothing to upload: uploading it anyway, in
// synchronous mode a round trip per upload, re-opened the page and sent it
// again for ever. The heap rounds of "mapped" met this depending on where
// the allocator put things (an asynchronous session, then a synchronous one
// on the same server, hung); in "mapped_neighbour" a thread of the app keeps
// writing next to the registered bytes. mirror_test.cpp checks the rule
// itself, without timing.
TEST_CASE("registered memory next to changing bytes: uploads end in both modes",
          "[interpose][mapped]") {
  fake_server server;
  for (std::string env : {"", "GLEAM_ASYNC=off"}) {
    INFO("env " << env);
    auto heap = probe_values(features(server, "mapped", env, 60));
    CHECK(heap["heap_rounds"] == "cudaSuccess");
    CHECK(heap["heap_after"] == "0102030405060708090a0b0c0d0e0f1011121314");
    CHECK(heap["unregister_heap"] == "cudaSuccess");
    CHECK(heap["final_sync"] == "cudaSuccess");
    auto kv = probe_values(features(server, "mapped_neighbour", env, 60));
    CHECK(kv["register"] == "cudaSuccess");
    CHECK(kv["device_pointer"] == "cudaSuccess");
    CHECK(kv["rounds"] == "cudaSuccess");
    // The host's bytes reached the kernel, the kernel's came back; bytes the
    // kernel did not touch kept the host's.
    CHECK(kv["after"] == "0102030405060708090a0b0c0d0e0f1011121314");
    CHECK(kv["after_tail"] == "43424140");
    CHECK(kv["unregister"] == "cudaSuccess");
    CHECK(kv["final_sync"] == "cudaSuccess");
  }
}

TEST_CASE("graph memcpy nodes carry the host's bytes at every replay; memset parameters",
          "[interpose][graph]") {
  check_scenario("graph_copies", {
    {"malloc", "cudaSuccess"},
    {"create", "cudaSuccess"},
    {"add_h2d", "cudaSuccess"},
    {"add_d2d", "cudaSuccess"},
    {"add_d2h", "cudaSuccess"},
    {"add_memset", "cudaSuccess"},
    {"add_bad_kind", "cudaErrorInvalidMemcpyDirection"},
    {"add_zero", "cudaErrorInvalidValue"},
    {"add_host_to_host", "cudaErrorNotSupported"},
    {"add_outside", "cudaErrorInvalidValue"},
    {"add_to_unknown_symbol", "cudaErrorInvalidSymbol"},
    {"add_to_symbol_wrong_kind", "cudaErrorInvalidMemcpyDirection"},
    {"type", "cudaSuccess"},
    {"type_memcpy", "1"},
    {"get", "cudaSuccess"},
    {"get_values", "1 16 1 4"},
    {"get_memset_as_memcpy", "cudaErrorInvalidValue"},
    {"memset_get", "cudaSuccess"},
    {"memset_values", "7 16"},
    {"memset_set", "cudaSuccess"},
    {"memset_values2", "9"},
    {"memset_set_bad", "cudaErrorInvalidValue"},
    {"instantiate", "cudaSuccess"},
    {"launch1", "cudaSuccess"},
    {"sync1", "cudaSuccess"},
    {"out1", "0102030405060708090a0b0c0d0e0f10"},
    {"launch2", "cudaSuccess"},
    {"out2", "404142434445464748494a4b4c4d4e4f"},
    {"exec_set_kind", "cudaErrorInvalidValue"},
    {"exec_set_to_device", "cudaErrorNotSupported"},
    {"exec_set", "cudaSuccess"},
    {"exec_memset_set", "cudaSuccess"},
    {"launch3", "cudaSuccess"},
    {"out_b", "7f414243"},
    {"out_kept", "40414243"},
    {"graph_set", "cudaSuccess"},
    {"get_after_set_width", "8"},
    {"exec_destroy", "cudaSuccess"},
    {"destroy", "cudaSuccess"},
    {"begin", "cudaSuccess"},
    {"capture_h2d", "cudaSuccess"},
    {"capture_d2h", "cudaSuccess"},
    {"end", "cudaSuccess"},
    {"captured_instantiate", "cudaSuccess"},
    {"captured_launch1", "cudaSuccess"},
    {"captured_out1", "0001020304050607"},
    {"captured_launch2", "cudaSuccess"},
    {"captured_out2", "1011121314151617"},
  });
}
