// The built libcurand.so.10 against the GPU-less fake server
// (fake_gpu_server.cpp, whose fake cuRAND computes value i of a generator
// as seed * 1000 + offset + i): generated calls pack, queue and answer like
// the vendor's, a host generator's values come back (in pieces when they
// are many), handles are refused at the call, a failure the server reports
// later is the next synchronizing call's error.
#include <catch2/catch.hpp>

#include <string>

#include "tests/interpose_runtime/fake_server.hpp"

using gleam::test::fake_server;
using gleam::test::spec_call_classes;

TEST_CASE("cuRAND calls through the built libcurand.so.10 answer like the vendor's",
          "[interpose_runtime][curand]") {
  fake_server server;
  // Generator g: seed 2, offset 10: uniform values (2010 + i) / 4096, then
  // raw values from 2014. Host generator h: seed 3: 3000 + i.
  auto expected = [](const std::string& deferred) {
    return "version=CURAND_STATUS_SUCCESS value=10400\n"
           "create=CURAND_STATUS_SUCCESS\n"
           "seed=CURAND_STATUS_SUCCESS\n"
           "offset=CURAND_STATUS_SUCCESS\n"
           "uniform=CURAND_STATUS_SUCCESS\n"
           "sync=cudaSuccess values=0.490723,0.490967,0.491211,0.491455\n"
           "stream=CURAND_STATUS_SUCCESS\n"
           "raw=CURAND_STATUS_SUCCESS\n"
           "sync=cudaSuccess raw=2014,2015,2016\n"
           "dimensions_zero=CURAND_STATUS_OUT_OF_RANGE\n"
           "poisson_lambda=CURAND_STATUS_OUT_OF_RANGE\n"
           "null_generator=CURAND_STATUS_NOT_INITIALIZED\n"
           + deferred
           + "host_create=CURAND_STATUS_SUCCESS\n"
             "host_seed=CURAND_STATUS_SUCCESS\n"
             "host_uniform=CURAND_STATUS_SUCCESS\n"
             "host_values=0.732422,0.732666,0.732910,0.733154,0.733398\n"
             "host_large=CURAND_STATUS_SUCCESS\n"
             "host_large_wrong=0\n"
             "distribution=CURAND_STATUS_SUCCESS\n"
             "distribution_set=1\n"
             "destroy_distribution=CURAND_STATUS_SUCCESS\n"
             "constants=CURAND_STATUS_SUCCESS\n"
             "constant_3=21\n"
             "same_table=1\n"
             "vectors=CURAND_STATUS_ARCH_MISMATCH\n"
             "destroy=CURAND_STATUS_SUCCESS\n"
             "host_destroy=CURAND_STATUS_SUCCESS\n"
             "final_sync=cudaSuccess\n";
  };
  SECTION("async: a refused call is the next sync call's error, exactly once") {
    CHECK(server.probe_with("tests/interpose_curand_probe", "curand")
          == expected("normal_odd=CURAND_STATUS_SUCCESS\n"
                      "sync_after=cudaErrorInvalidValue\n"
                      "past_end=CURAND_STATUS_SUCCESS\n"
                      "sync_after=cudaErrorInvalidValue\n"
                      "missing=CURAND_STATUS_SUCCESS\n"
                      "sync_after=cudaErrorNotSupported\n"));
  }
  SECTION("GLEAM_ASYNC=off: each call returns its own status") {
    CHECK(server.probe_with("tests/interpose_curand_probe", "curand", "GLEAM_ASYNC=off")
          == expected("normal_odd=CURAND_STATUS_LENGTH_NOT_MULTIPLE\n"
                      "sync_after=cudaSuccess\n"
                      "past_end=CURAND_STATUS_OUT_OF_RANGE\n"
                      "sync_after=cudaSuccess\n"
                      "missing=CURAND_STATUS_ARCH_MISMATCH\n"
                      "sync_after=cudaSuccess\n"));
  }
  auto classes = spec_call_classes("curand.spec");
  CHECK(classes["curandGenerateUniform"] == "async");
  CHECK(classes["curandSetStream"] == "async");
  CHECK(classes["curandDestroyGenerator"] == "async");
  CHECK(classes["curandCreateGenerator"] == "sync");
  CHECK(classes["curandGetVersion"] == "sync");
  CHECK(classes["curandGetProperty"] == "local");
}
