// fake_gleamd: gleamd (tools/gleamd/node_main.hpp) on the executor tests'
// fake driver (tests/executor/fake_driver.hpp): device memory is host
// memory of the process that allocates it. Takes gleamd's command line; under
// [gpu_server] isolation = "process" its worker processes are fake_gleamd
// too, each on a fake driver of its own.
//
// The fake driver models what a real GPU context does to its process's
// sessions:
//   - a memset of value 0xDD fails with CUDA_ERROR_ILLEGAL_ADDRESS and
//     poisons the context: every later call of the process fails with it,
//     as every session of a context after a kernel fault does;
//   - a memset of value 0xCC takes 30 s (a kernel that runs long): the
//     thread that issued it is held for that long.
#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

#include "executor/driver_api.hpp"
#include "tests/executor/fake_driver.hpp"
#include "tools/gleamd/node_main.hpp"

namespace {

using gleam::executor::driver_api;

std::atomic<bool> poisoned{false};

struct originals {
  decltype(driver_api::cuMemsetD8Async) memset = nullptr;
  decltype(driver_api::cuMemAlloc) alloc = nullptr;
  decltype(driver_api::cuMemcpyDtoHAsync) dtoh = nullptr;
  decltype(driver_api::cuMemcpyHtoDAsync) htod = nullptr;
  decltype(driver_api::cuStreamSynchronize) stream_sync = nullptr;
  decltype(driver_api::cuCtxSynchronize) ctx_sync = nullptr;
};

originals& base() {
  static originals o;
  return o;
}

std::shared_ptr<driver_api> make_driver() {
  auto api = std::make_shared<driver_api>();
  gleam::test::fake::install_fake_driver(*api);
  auto& o = base();
  o.memset = api->cuMemsetD8Async;
  o.alloc = api->cuMemAlloc;
  o.dtoh = api->cuMemcpyDtoHAsync;
  o.htod = api->cuMemcpyHtoDAsync;
  o.stream_sync = api->cuStreamSynchronize;
  o.ctx_sync = api->cuCtxSynchronize;
  api->cuMemsetD8Async = [](CUdeviceptr dst, unsigned char v, size_t n, CUstream s) {
    if (poisoned)
      return CUDA_ERROR_ILLEGAL_ADDRESS;
    if (v == 0xDD) {
      poisoned = true;
      return CUDA_ERROR_ILLEGAL_ADDRESS;
    }
    if (v == 0xCC)
      std::this_thread::sleep_for(std::chrono::seconds{30});
    return base().memset(dst, v, n, s);
  };
  api->cuMemAlloc = [](CUdeviceptr* p, size_t n) {
    return poisoned ? CUDA_ERROR_ILLEGAL_ADDRESS : base().alloc(p, n);
  };
  api->cuMemcpyDtoHAsync = [](void* dst, CUdeviceptr src, size_t n, CUstream s) {
    return poisoned ? CUDA_ERROR_ILLEGAL_ADDRESS : base().dtoh(dst, src, n, s);
  };
  api->cuMemcpyHtoDAsync = [](CUdeviceptr dst, const void* src, size_t n, CUstream s) {
    return poisoned ? CUDA_ERROR_ILLEGAL_ADDRESS : base().htod(dst, src, n, s);
  };
  api->cuStreamSynchronize = [](CUstream s) {
    return poisoned ? CUDA_ERROR_ILLEGAL_ADDRESS : base().stream_sync(s);
  };
  api->cuCtxSynchronize = [] {
    return poisoned ? CUDA_ERROR_ILLEGAL_ADDRESS : base().ctx_sync();
  };
  return api;
}

} // namespace

int main(int argc, char** argv) {
  return gleam::tools::run_gleamd(argc, argv, make_driver);
}
