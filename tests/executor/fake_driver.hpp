#pragma once

// A fake CUDA driver for the executor's CPU tests: device memory is host
// memory (addresses are host pointers), streams and events are tokens, and
// only the entry points the tests reach are filled in; fake_gpu brings up
// an executor on it and fake_client runs ops of one session. Shared by the
// test files of tests/executor; not thread-safe (the counters are globals).

#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "executor/executor.hpp"
#include "tests/executor/fake_stream_order.hpp"

namespace gleam::test::fake {

namespace proto = gleam::proto;
using gleam::executor::driver_api;
using gleam::executor::executor;

/// Host memory standing in for device memory; addresses are host pointers.
inline std::set<CUdeviceptr>& live_allocations() {
  static std::set<CUdeviceptr> live;
  return live;
}

inline int& stream_syncs() {
  static int n = 0;
  return n;
}

inline int& context_retains() {
  static int n = 0;
  return n;
}

inline void* host(CUdeviceptr p) {
  return reinterpret_cast<void*>(static_cast<uintptr_t>(p));
}

inline CUstream fake_stream(uint64_t n) {
  return reinterpret_cast<CUstream>(static_cast<uintptr_t>(0x5000 + n));
}

inline void install_fake_driver(driver_api& api) {
  api.cuDeviceGetCount = [](int* n) {
    *n = 1;
    return CUDA_SUCCESS;
  };
  api.cuDeviceGet = [](CUdevice* d, int ordinal) {
    *d = ordinal;
    return CUDA_SUCCESS;
  };
  api.cuDevicePrimaryCtxRetain = [](CUcontext* c, CUdevice) {
    ++context_retains();
    *c = reinterpret_cast<CUcontext>(uintptr_t{0x1000});
    return CUDA_SUCCESS;
  };
  api.cuDevicePrimaryCtxRelease = [](CUdevice) {
    --context_retains();
    return CUDA_SUCCESS;
  };
  api.cuCtxSetCurrent = [](CUcontext) { return CUDA_SUCCESS; };
  api.cuCtxSynchronize = [] { return CUDA_SUCCESS; };
  api.cuDeviceGetName = [](char* name, int len, CUdevice) {
    std::strncpy(name, "Fake GPU", static_cast<size_t>(len));
    return CUDA_SUCCESS;
  };
  api.cuDeviceGetUuid = [](CUuuid* u, CUdevice) {
    for (int i = 0; i < 16; ++i)
      u->bytes[i] = static_cast<char>(0xa0 + i);
    return CUDA_SUCCESS;
  };
  api.cuDeviceTotalMem = [](size_t* bytes, CUdevice) {
    *bytes = size_t{80} << 30;
    return CUDA_SUCCESS;
  };
  api.cuDeviceGetAttribute = [](int* v, CUdevice_attribute a, CUdevice) {
    switch (a) {
      case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
        *v = 132;
        return CUDA_SUCCESS;
      case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
        *v = 9;
        return CUDA_SUCCESS;
      case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
        *v = 0;
        return CUDA_SUCCESS;
      default:
        return CUDA_ERROR_INVALID_VALUE;
    }
  };
  api.cuDriverGetVersion = [](int* v) {
    *v = 13000;
    return CUDA_SUCCESS;
  };
  api.cuMemGetInfo = [](size_t* free, size_t* total) {
    *free = size_t{70} << 30;
    *total = size_t{80} << 30;
    return CUDA_SUCCESS;
  };
  api.cuMemAlloc = [](CUdeviceptr* p, size_t n) {
    if (n == 0)
      return CUDA_ERROR_INVALID_VALUE;
    *p = reinterpret_cast<CUdeviceptr>(std::calloc(1, n));
    live_allocations().insert(*p);
    return CUDA_SUCCESS;
  };
  api.cuMemFree = [](CUdeviceptr p) {
    if (live_allocations().erase(p) == 0)
      return CUDA_ERROR_INVALID_VALUE;
    std::free(host(p));
    return CUDA_SUCCESS;
  };
  api.cuMemcpyHtoDAsync = [](CUdeviceptr dst, const void* src, size_t n,
                             CUstream) {
    std::memcpy(host(dst), src, n);
    return CUDA_SUCCESS;
  };
  api.cuMemcpyDtoHAsync = [](void* dst, CUdeviceptr src, size_t n, CUstream) {
    std::memcpy(dst, host(src), n);
    return CUDA_SUCCESS;
  };
  api.cuMemcpyDtoDAsync = [](CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream) {
    std::memmove(host(dst), host(src), n);
    return CUDA_SUCCESS;
  };
  api.cuMemsetD8Async = [](CUdeviceptr dst, unsigned char v, size_t n, CUstream) {
    std::memset(host(dst), v, n);
    return CUDA_SUCCESS;
  };
  gleam::test::install_fake_stream_order(api);

  api.cuStreamCreateWithPriority = [](CUstream* s, unsigned, int) {
    static uint64_t created = 0;
    *s = fake_stream(0x100 + ++created);
    return CUDA_SUCCESS;
  };
  api.cuStreamDestroy = [](CUstream) { return CUDA_SUCCESS; };
  api.cuStreamSynchronize = [](CUstream) {
    ++stream_syncs();
    return CUDA_SUCCESS;
  };
  api.cuStreamQuery = [](CUstream s) {
    // Every stream is busy.
    static_cast<void>(s);
    return CUDA_ERROR_NOT_READY;
  };
}

struct fake_gpu {
  driver_api api;
  std::unique_ptr<executor> exec;

  fake_gpu() {
    install_fake_driver(api);
    auto ex = executor::make(api, 0);
    REQUIRE(ex);
    exec = std::move(*ex);
  }
};

/// Numbers ops of one session and runs them one batch at a time.
struct fake_client {
  executor& ex;
  uint64_t session = 0;
  /// The session's secret: every batch carries it.
  std::string secret;
  uint64_t seq = 0;

  explicit fake_client(executor& e) : ex(e) {
    proto::OpenSession req;
    req.set_client_id("cpu:1");
    auto opened = ex.open_session(req);
    REQUIRE(opened);
    session = opened->session();
    secret = opened->secret();
  }

  proto::OpResult run(const std::function<void(proto::Op&)>& fill) {
    proto::OpBatch batch;
    batch.set_session(session);
    batch.set_session_secret(secret);
    auto* op = batch.add_ops();
    op->set_seq(++seq);
    fill(*op);
    auto reply = ex.execute(batch);
    REQUIRE(reply.results_size() == 1);
    return reply.results(0);
  }

  uint64_t alloc(uint64_t n) {
    auto r = run([&](proto::Op& op) { op.mutable_mem_alloc()->set_size(n); });
    REQUIRE(r.status() == CUDA_SUCCESS);
    return r.dptr();
  }

  int htod(uint64_t dst, const std::string& data) {
    return run([&](proto::Op& op) {
             op.mutable_memcpy_htod()->set_dst(dst);
             op.mutable_memcpy_htod()->set_data(data);
           })
      .status();
  }

  proto::OpResult dtoh(uint64_t src, uint64_t n) {
    return run([&](proto::Op& op) {
      op.mutable_memcpy_dtoh()->set_src(src);
      op.mutable_memcpy_dtoh()->set_size(n);
    });
  }
};


inline int& module_loads() {
  static int n = 0;
  return n;
}

inline int& launches() {
  static int n = 0;
  return n;
}

/// The attributes of the last launch the fake driver saw.
inline std::vector<CUlaunchAttribute>& launch_attributes_given() {
  static std::vector<CUlaunchAttribute> given;
  return given;
}

/// Adds modules with one function "k" of layout (u64 at 0, u32 at 8).
/// cuModuleGetFunction calls of the fake modules (each loads a kernel
/// under lazy loading).
inline int& module_get_functions() {
  static int n = 0;
  return n;
}

/// A fake module holds one kernel "k" (two parameters: 8 bytes at 0, 4 at
/// 8), which it also lists through cuModuleEnumerateFunctions.
inline void install_fake_modules(driver_api& api) {
  api.cuModuleLoadData = [](CUmodule* m, const void*) {
    ++module_loads();
    *m = reinterpret_cast<CUmodule>(uintptr_t{0x7000});
    return CUDA_SUCCESS;
  };
  api.cuModuleUnload = [](CUmodule) { return CUDA_SUCCESS; };
  api.cuModuleGetFunction = [](CUfunction* f, CUmodule, const char* name) {
    ++module_get_functions();
    if (std::strcmp(name, "k") != 0)
      return CUDA_ERROR_NOT_FOUND;
    *f = reinterpret_cast<CUfunction>(uintptr_t{0x7100});
    return CUDA_SUCCESS;
  };
  api.cuModuleGetFunctionCount = [](unsigned* n, CUmodule) {
    *n = 1;
    return CUDA_SUCCESS;
  };
  api.cuModuleEnumerateFunctions = [](CUfunction* out, unsigned n, CUmodule) {
    if (n < 1)
      return CUDA_ERROR_INVALID_VALUE;
    out[0] = reinterpret_cast<CUfunction>(uintptr_t{0x7100});
    return CUDA_SUCCESS;
  };
  api.cuFuncGetName = [](const char** name, CUfunction f) {
    if (f != reinterpret_cast<CUfunction>(uintptr_t{0x7100}))
      return CUDA_ERROR_INVALID_HANDLE;
    *name = "k";
    return CUDA_SUCCESS;
  };
  api.cuFuncGetParamInfo = [](CUfunction, size_t i, size_t* offset, size_t* size) {
    if (i >= 2)
      return CUDA_ERROR_INVALID_VALUE;
    *offset = i == 0 ? 0 : 8;
    *size = i == 0 ? 8 : 4;
    return CUDA_SUCCESS;
  };
  api.cuFuncGetAttribute = [](int*, CUfunction_attribute, CUfunction) {
    return CUDA_ERROR_INVALID_VALUE;
  };
  api.cuLaunchKernelEx = [](const CUlaunchConfig* config, CUfunction, void**, void**) {
    ++launches();
    launch_attributes_given().assign(config->attrs, config->attrs + config->numAttrs);
    return CUDA_SUCCESS;
  };
}

} // namespace gleam::test::fake
