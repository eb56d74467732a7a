// The driver surface's virtual memory management (lib/driver/libcuda.so.1
// over the built libcudart.so.13) against the GPU-less fake server, whose
// VMM ops run through the executor's handler over host memory
// (interpose_vmm_probe, vmm_probe.cpp): ggml's pool sequence with bytes
// checked, CUDA's refusals with their CUresult, references and retains.
#include <catch2/catch.hpp>

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <map>
#include <sstream>
#include <string>

#include "tests/interpose_runtime/fake_server.hpp"

namespace {

using gleam::test::fake_server;
using gleam::test::probe_values;

std::string vmm(fake_server& server, const std::string& scenario, const std::string& env = "") {
  return server.probe_with("tests/interpose_vmm_probe", scenario,
                           "GLEAM_PROBE_DEADLINE_S=120 " + env);
}

std::string cu(CUresult rc) {
  return std::to_string(static_cast<int>(rc));
}

const std::string ok = cu(CUDA_SUCCESS);
const std::string invalid = cu(CUDA_ERROR_INVALID_VALUE);

} // namespace

TEST_CASE("ggml's VMM pool through the driver surface: bytes in, bytes out, nothing left",
          "[interpose][vmm]") {
  fake_server server;
  std::string checksum;
  for (std::string env : {"", "GLEAM_ASYNC=off"}) {
    INFO("env " << env);
    auto kv = probe_values(vmm(server, "ggml", env));
    CHECK(kv["init"] == ok);
    CHECK(kv["vmm_supported"] == "1");
    CHECK(kv["granularity"] == ok);
    CHECK(kv["granularity_min"] == ok);
    CHECK(kv["granularity_bytes"] == std::to_string(2 << 20));
    for (const char* key : {"reserve", "create", "map", "release", "set_access", "create_2",
                            "map_2", "release_2", "set_access_2", "driver_d2h", "memset_d32",
                            "module", "function", "launch", "range_start", "range_size",
                            "memory_type", "address_range", "get_access", "unmap", "unmap_2",
                            "address_free"}) {
      INFO(key);
      CHECK(kv[key] == ok);
    }
    for (const char* key : {"h2d", "h2d_default", "stream", "h2d_across", "d2h_async",
                            "stream_sync", "memset", "launch_sync", "attributes",
                            "attributes_unmapped", "sync"}) {
      INFO(key);
      CHECK(kv[key] == "cudaSuccess");
    }
    CHECK(kv["d2h_equal"] == "1");
    CHECK(kv["driver_d2h_equal"] == "1");
    CHECK(kv["across_equal"] == "1");
    CHECK(kv["memset_equal"] == "1");
    CHECK(kv["kernel_equal"] == "1");
    CHECK(kv["attributes_type"] == std::to_string(cudaMemoryTypeDevice));
    CHECK(kv["attributes_device_pointer"] == "1");
    CHECK(kv["range_is_mapping"] == "1");
    CHECK(kv["memory_type_value"] == std::to_string(CU_MEMORYTYPE_DEVICE));
    CHECK(kv["address_range_is_mapping"] == "1");
    CHECK(kv["get_access_flags"] == std::to_string(CU_MEM_ACCESS_FLAGS_PROT_READWRITE));
    // Refused at the call: past the mapped range, a mapping freed as an
    // allocation, addresses after their unmap.
    CHECK(kv["past_end"] == "cudaErrorInvalidValue");
    CHECK(kv["past_end_d2h"] == "cudaErrorInvalidValue");
    CHECK(kv["free_mapping"] == "cudaErrorInvalidValue");
    CHECK(kv["after_unmap"] == "cudaErrorInvalidValue");
    CHECK(kv["after_unmap_d2h"] == "cudaErrorInvalidValue");
    CHECK(kv["after_unmap_default"] == "cudaErrorInvalidValue");
    CHECK(kv["attributes_unmapped_type"] == std::to_string(cudaMemoryTypeUnregistered));
    // The same bytes whatever the forwarding mode.
    REQUIRE_FALSE(kv["checksum"].empty());
    if (checksum.empty())
      checksum = kv["checksum"];
    CHECK(kv["checksum"] == checksum);
    // The session's end left nothing reserved, allocated or mapped.
    CHECK_THAT(server.stats(), Catch::Contains("vmm-left 0 0 0\n"));
  }
}

TEST_CASE("the driver surface refuses VMM calls as CUDA does", "[interpose][vmm]") {
  fake_server server;
  for (std::string env : {"", "GLEAM_ASYNC=off"}) {
    INFO("env " << env);
    auto kv = probe_values(vmm(server, "errors", env));
    CHECK(kv["init"] == ok);
    CHECK(kv["granularity"] == ok);
    std::map<std::string, std::string> expected = {
      {"granularity_null_prop", invalid},
      {"granularity_option", invalid},
      {"granularity_device", cu(CUDA_ERROR_INVALID_DEVICE)},
      {"granularity_host", cu(CUDA_ERROR_NOT_SUPPORTED)},
      {"granularity_type", invalid},
      {"reserve_empty", invalid},
      {"reserve_alignment", invalid},
      {"reserve", ok},
      // The server driver's own refusal of a size off the granularity.
      {"create_unaligned", invalid},
      {"create_flags", invalid},
      {"create_device", cu(CUDA_ERROR_INVALID_DEVICE)},
      {"create_empty", invalid},
      {"create_too_big", cu(CUDA_ERROR_OUT_OF_MEMORY)},
      {"create", ok},
      {"create_2", ok},
      {"map_unknown_handle", invalid},
      {"map_unaligned", invalid},
      {"map_past_allocation", cu(CUDA_ERROR_NOT_SUPPORTED)},
      {"map_outside", invalid},
      {"map_flags", invalid},
      {"map", ok},
      {"map_over", invalid},
      {"access_part", invalid},
      {"access_unmapped", invalid},
      {"access_device", cu(CUDA_ERROR_INVALID_DEVICE)},
      {"access_flags", invalid},
      {"access_host", cu(CUDA_ERROR_NOT_SUPPORTED)},
      {"access_none", invalid},
      {"unmap_part", invalid},
      {"unmap_unmapped", ok}, // the driver's answer: nothing to unmap
      {"address_free_size", invalid},
      {"address_free_mapped", invalid},
      {"release_unknown", invalid},
      {"get_access_unmapped", invalid},
      {"properties_unknown", invalid},
      {"retain_unmapped", invalid},
      {"unmap", ok},
      {"release", ok},
      {"release_again", invalid},
      {"release_2", ok},
      {"address_free", ok},
      {"address_free_again", invalid},
    };
    for (const auto& [key, value] : expected) {
      INFO(key);
      CHECK(kv[key] == value);
    }
    CHECK(kv["copy_without_access"] == "cudaErrorInvalidValue");
    CHECK(kv["cuda_free_mapping"] == "cudaErrorInvalidValue");
    // Nothing refused reached the server to fail later.
    CHECK(kv["sync"] == "cudaSuccess");
    CHECK_THAT(server.stats(), Catch::Contains("vmm-left 0 0 0\n"));
  }
}

TEST_CASE("VMM handles: retained references, properties, memory kept while mapped",
          "[interpose][vmm]") {
  fake_server server;
  auto kv = probe_values(vmm(server, "retain"));
  for (const char* key : {"init", "granularity", "reserve", "create", "map", "set_access",
                          "retain", "properties", "get_access", "release", "release_retained",
                          "unmap", "address_free"}) {
    INFO(key);
    CHECK(kv[key] == ok);
  }
  CHECK(kv["retain_same"] == "1");
  CHECK(kv["properties_type"] == std::to_string(CU_MEM_ALLOCATION_TYPE_PINNED));
  CHECK(kv["properties_location_type"] == std::to_string(CU_MEM_LOCATION_TYPE_DEVICE));
  CHECK(kv["properties_location_id"] == "0");
  CHECK(kv["get_access_flags"] == std::to_string(CU_MEM_ACCESS_FLAGS_PROT_READWRITE));
  CHECK(kv["release_again"] == invalid);
  CHECK(kv["map_released"] == invalid);
  CHECK(kv["copy_after_release"] == "cudaSuccess");
  CHECK(kv["kept_equal"] == "1");
  CHECK(kv["retain_after_unmap"] == invalid);
  CHECK(kv["sync"] == "cudaSuccess");
  CHECK_THAT(server.stats(), Catch::Contains("vmm-left 0 0 0\n"));
}

TEST_CASE("driver functions with a runtime twin, per-thread variants and created contexts on the "
          "fake server",
          "[interpose][driver]") {
  fake_server server;
  auto v = probe_values(vmm(server, "forwards"));
  for (const char* key : {"init", "device_get", "ctx_create", "alloc_pitch", "copy_2d_up",
                          "copy_2d_down", "copy_3d", "copy_3d_read", "free_pitch", "default_pool", "pool_set", "pool_get",
                          "stream_create", "stream_flags", "alloc_from_pool", "stream_sync",
                          "pool_htod", "pool_dtoh", "htod_ptds", "sync_ptsz", "dtoh_ptds",
                          "d16_clear", "d16", "d16_read", "d2d32_clear", "d2d32",
                          "d2d32_read", "graph_create", "graph_memset_node", "graph_memcpy_node",
                          "graph_memcpy_get", "graph_nodes",
                          "graph_instantiate", "graph_launch", "graph_sync", "graph_dtoh",
                          "graph_exec_destroy", "graph_destroy", "free_async", "stream_sync2",
                          "storage_table", "storage_put", "ctx_destroy"}) {
    INFO(key);
    CHECK(v[key] == ok);
  }
  CHECK(v["ctx_current_is_created"] == "1");
  CHECK(v["pitch_covers_width"] == "1");
  CHECK(v["copy_2d_bytes_match"] == "1");
  CHECK(v["copy_3d_bytes_match"] == "1");
  CHECK(v["pool_threshold"] == std::to_string(1 << 20));
  CHECK(v["stream_flags_value"] == std::to_string(CU_STREAM_NON_BLOCKING));
  CHECK(v["pool_bytes_match"] == "1");
  CHECK(v["ptds_bytes_match"] == "1");
  CHECK(v["d16_bytes_match"] == "1");
  CHECK(v["d2d32_bytes_match"] == "1");
  // The fake server runs no graph nodes: the graph's bytes are checked on
  // the GPU (tests/programs), its calls here.
  CHECK(v["graph_node_count"] == "2");
  CHECK(v["graph_memcpy_same"] == "1");
  CHECK(v["ctx_push_destroyed"] == cu(CUDA_ERROR_INVALID_CONTEXT));
  CHECK(v["storage_destructors_run"] == "1");
}
