// Unit tests of the runtime's pure parts: the CUresult -> cudaError_t table,
// error names and texts, launch argument packing, client handle values.
#include <catch2/catch.hpp>

#include <cstring>
#include <set>

#include <cuda.h>

#include "interpose/error_map.hpp"
#include "interpose/runtime.hpp"

using namespace gleam::interpose;

TEST_CASE("driver status codes map to the documented runtime errors", "[interpose_runtime]") {
  CHECK(to_cuda_error(CUDA_SUCCESS) == cudaSuccess);
  CHECK(to_cuda_error(CUDA_ERROR_INVALID_VALUE) == cudaErrorInvalidValue);
  CHECK(to_cuda_error(CUDA_ERROR_OUT_OF_MEMORY) == cudaErrorMemoryAllocation);
  CHECK(to_cuda_error(CUDA_ERROR_NOT_READY) == cudaErrorNotReady);
  CHECK(to_cuda_error(CUDA_ERROR_INVALID_HANDLE) == cudaErrorInvalidResourceHandle);
  CHECK(to_cuda_error(CUDA_ERROR_ILLEGAL_ADDRESS) == cudaErrorIllegalAddress);
  CHECK(to_cuda_error(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES) == cudaErrorLaunchOutOfResources);
  CHECK(to_cuda_error(CUDA_ERROR_INVALID_CONTEXT) == cudaErrorDeviceUninitialized);
  CHECK(to_cuda_error(CUDA_ERROR_NOT_FOUND) == cudaErrorSymbolNotFound);
  CHECK(to_cuda_error(CUDA_ERROR_NO_BINARY_FOR_GPU) == cudaErrorNoKernelImageForDevice);
  CHECK(to_cuda_error(CUDA_ERROR_LAUNCH_FAILED) == cudaErrorLaunchFailure);
  CHECK(to_cuda_error(CUDA_ERROR_NO_DEVICE) == cudaErrorNoDevice);
  CHECK(to_cuda_error(CUDA_ERROR_CONTEXT_ALREADY_CURRENT) == cudaErrorUnknown);
  CHECK(to_cuda_error(123456) == cudaErrorUnknown);
}

TEST_CASE("error names and texts come from the CUDA 13 enum", "[interpose_runtime]") {
  CHECK(std::strcmp(error_name(cudaSuccess), "cudaSuccess") == 0);
  CHECK(std::strcmp(error_name(cudaErrorNoDevice), "cudaErrorNoDevice") == 0);
  CHECK(std::strcmp(error_name(cudaErrorIllegalAddress), "cudaErrorIllegalAddress") == 0);
  CHECK(std::strcmp(error_name(cudaErrorUnknown), "cudaErrorUnknown") == 0);
  CHECK(std::strcmp(error_text(cudaErrorNoDevice), "no CUDA-capable device is detected") == 0);
  CHECK(std::strcmp(error_text(cudaErrorMemoryAllocation), "out of memory") == 0);
  CHECK(std::strcmp(error_text(cudaErrorInvalidConfiguration), "invalid configuration argument") == 0);
  // Codes without a short text fall back to the enum's description.
  CHECK(std::strstr(error_text(cudaErrorStreamCaptureUnsupported), "capturing") != nullptr);
  CHECK(error_name(static_cast<cudaError_t>(12345)) == nullptr);
}

TEST_CASE("sticky errors are the context-corrupting ones", "[interpose_runtime]") {
  CHECK(is_sticky(cudaErrorIllegalAddress));
  CHECK(is_sticky(cudaErrorLaunchFailure));
  CHECK(is_sticky(cudaErrorDevicesUnavailable));
  CHECK_FALSE(is_sticky(cudaErrorInvalidValue));
  CHECK_FALSE(is_sticky(cudaErrorInvalidConfiguration));
  CHECK_FALSE(is_sticky(cudaErrorNotReady));
}

TEST_CASE("launch arguments are packed at the server's offsets", "[interpose_runtime]") {
  // Layout of kern(int* p, float x, char c, double d): 0/8, 8/4, 12/1, 16/8.
  std::vector<gleam::proto::ParamInfo> layout(4);
  uint32_t offsets[] = {0, 8, 12, 16};
  uint32_t sizes[] = {8, 4, 1, 8};
  for (size_t i = 0; i < 4; ++i) {
    layout[i].set_offset(offsets[i]);
    layout[i].set_size(sizes[i]);
  }
  int* p = reinterpret_cast<int*>(uintptr_t{0x7f0000001000});
  float x = 2.5f;
  char c = 'z';
  double d = -1.25;
  void* args[] = {&p, &x, &c, &d};
  auto buf = pack_arguments(layout, args);
  REQUIRE(buf.size() == 24);
  int* p2 = nullptr;
  float x2 = 0;
  double d2 = 0;
  std::memcpy(&p2, &buf[0], 8);
  std::memcpy(&x2, &buf[8], 4);
  std::memcpy(&d2, &buf[16], 8);
  CHECK(p2 == p);
  CHECK(x2 == 2.5f);
  CHECK(buf[12] == 'z');
  CHECK(buf[13] == '\0');
  CHECK(d2 == -1.25);
  CHECK(pack_arguments({}, nullptr).empty());
}

TEST_CASE("client handles are never the reserved stream values", "[interpose_runtime]") {
  std::set<uint64_t> seen;
  for (int i = 0; i < 1000; ++i) {
    auto h = next_handle();
    CHECK(h > 2);
    CHECK(h % 0x10 == 0);
    seen.insert(h);
  }
  CHECK(seen.size() == 1000);
}
