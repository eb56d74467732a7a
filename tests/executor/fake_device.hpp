#pragma once

#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "actors/proto/ops.pb.h"
#include "executor/driver_api.hpp"
#include "executor/executor.hpp"
#include "tests/executor/fake_stream_order.hpp"

namespace gleam::test {

/// What the fake device of install_fake_device saw: driver streams in
/// creation order, events recorded (event, stream) and waited for
/// (stream, event), in order. One per process (the driver's entry points
/// are plain function pointers); reset it at the start of a test.
struct fake_device_log {
  std::vector<CUstream> streams;
  std::vector<std::pair<CUevent, CUstream>> records;
  std::vector<std::pair<CUstream, CUevent>> waits;
};

inline fake_device_log& fake_device() {
  static fake_device_log log;
  return log;
}

/// Fills `api` with a GPU in host memory: one device, its primary context,
/// allocations that are host memory (addresses are host pointers, so a
/// fake library may write them directly), copies, streams and events that
/// log into fake_device(). Only what an executor and its library ops reach.
inline void install_fake_device(executor::driver_api& api) {
  api.cuDeviceGetCount = [](int* n) {
    *n = 1;
    return CUDA_SUCCESS;
  };
  api.cuDeviceGet = [](CUdevice* d, int o) {
    *d = o;
    return CUDA_SUCCESS;
  };
  api.cuDevicePrimaryCtxRetain = [](CUcontext* c, CUdevice) {
    *c = reinterpret_cast<CUcontext>(uintptr_t{0x1000});
    return CUDA_SUCCESS;
  };
  api.cuDevicePrimaryCtxRelease = [](CUdevice) { return CUDA_SUCCESS; };
  api.cuCtxSetCurrent = [](CUcontext) { return CUDA_SUCCESS; };
  api.cuCtxSynchronize = [] { return CUDA_SUCCESS; };
  api.cuDeviceGetName = [](char* name, int len, CUdevice) {
    std::strncpy(name, "Fake GPU", static_cast<size_t>(len));
    return CUDA_SUCCESS;
  };
  api.cuDeviceGetUuid = [](CUuuid* u, CUdevice) {
    std::memset(u->bytes, 0xab, sizeof(u->bytes));
    return CUDA_SUCCESS;
  };
  api.cuDeviceTotalMem = [](size_t* b, CUdevice) {
    *b = size_t{80} << 30;
    return CUDA_SUCCESS;
  };
  api.cuDeviceGetAttribute = [](int*, CUdevice_attribute, CUdevice) {
    return CUDA_ERROR_INVALID_VALUE;
  };
  api.cuDriverGetVersion = [](int* v) {
    *v = 13000;
    return CUDA_SUCCESS;
  };
  api.cuMemAlloc = [](CUdeviceptr* p, size_t n) {
    *p = reinterpret_cast<CUdeviceptr>(std::calloc(1, n));
    return CUDA_SUCCESS;
  };
  api.cuMemFree = [](CUdeviceptr p) {
    std::free(reinterpret_cast<void*>(static_cast<uintptr_t>(p)));
    return CUDA_SUCCESS;
  };
  api.cuMemcpyHtoD = [](CUdeviceptr dst, const void* src, size_t n) {
    std::memcpy(reinterpret_cast<void*>(static_cast<uintptr_t>(dst)), src, n);
    return CUDA_SUCCESS;
  };
  api.cuMemcpyHtoDAsync = [](CUdeviceptr dst, const void* src, size_t n, CUstream) {
    std::memcpy(reinterpret_cast<void*>(static_cast<uintptr_t>(dst)), src, n);
    return CUDA_SUCCESS;
  };
  api.cuMemcpyDtoH = [](void* dst, CUdeviceptr src, size_t n) {
    std::memcpy(dst, reinterpret_cast<void*>(static_cast<uintptr_t>(src)), n);
    return CUDA_SUCCESS;
  };
  api.cuMemcpyDtoHAsync = [](void* dst, CUdeviceptr src, size_t n, CUstream) {
    std::memcpy(dst, reinterpret_cast<void*>(static_cast<uintptr_t>(src)), n);
    return CUDA_SUCCESS;
  };
  install_fake_stream_order(api);
  api.cuStreamCreateWithPriority = [](CUstream* s, unsigned, int) {
    *s = reinterpret_cast<CUstream>(uintptr_t{0x5150} + fake_device().streams.size());
    fake_device().streams.push_back(*s);
    return CUDA_SUCCESS;
  };
  api.cuEventRecordWithFlags = [](CUevent e, CUstream s, unsigned) {
    fake_device().records.emplace_back(e, s);
    return CUDA_SUCCESS;
  };
  api.cuStreamWaitEvent = [](CUstream s, CUevent e, unsigned) {
    fake_device().waits.emplace_back(s, e);
    return CUDA_SUCCESS;
  };
  api.cuStreamDestroy = [](CUstream) { return CUDA_SUCCESS; };
  api.cuStreamSynchronize = [](CUstream) { return CUDA_SUCCESS; };
}

/// An executor over the fake device (fake_device() emptied first) with one
/// open session, whose ops run one batch each. Attach fake libraries
/// (use_blas, use_library) before the first op that uses them.
struct fake_executor {
  executor::driver_api driver;
  std::unique_ptr<executor::executor> exec;
  uint64_t session = 0;
  /// The session's secret: every batch carries it.
  std::string secret;
  uint64_t seq = 0;

  fake_executor() {
    fake_device() = fake_device_log{};
    install_fake_device(driver);
    auto ex = executor::executor::make(driver, 0);
    REQUIRE(ex);
    exec = std::move(*ex);
    proto::OpenSession req;
    req.set_client_id("cpu:1");
    auto opened = exec->open_session(req);
    REQUIRE(opened);
    session = opened->session();
    secret = opened->secret();
  }

  /// Runs one op, filled by `fill`, and returns its result.
  proto::OpResult run(const std::function<void(proto::Op&)>& fill) {
    proto::OpBatch batch;
    batch.set_session(session);
    batch.set_session_secret(secret);
    auto* op = batch.add_ops();
    op->set_seq(++seq);
    fill(*op);
    auto reply = exec->execute(batch);
    REQUIRE(reply.results_size() == 1);
    return reply.results(0);
  }

  /// A device allocation of `n` bytes (host memory: its address is a host
  /// pointer).
  uint64_t alloc(uint64_t n) {
    auto r = run([&](proto::Op& op) { op.mutable_mem_alloc()->set_size(n); });
    REQUIRE(r.status() == CUDA_SUCCESS);
    return r.dptr();
  }
};

} // namespace gleam::test
