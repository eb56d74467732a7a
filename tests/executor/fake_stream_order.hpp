#pragma once

#include <cstdint>

#include "executor/driver_api.hpp"

namespace gleam::test {

/// Fills the entry points a session's stream ordering uses
/// (executor/session_streams.hpp) with no-ops that succeed, for the test
/// binaries' fake drivers.
inline void install_fake_stream_order(executor::driver_api& api) {
  api.cuEventCreate = [](CUevent* e, unsigned) {
    *e = reinterpret_cast<CUevent>(uintptr_t{0xe000});
    return CUDA_SUCCESS;
  };
  api.cuEventRecordWithFlags = [](CUevent, CUstream, unsigned) { return CUDA_SUCCESS; };
  api.cuEventDestroy = [](CUevent) { return CUDA_SUCCESS; };
  api.cuStreamWaitEvent = [](CUstream, CUevent, unsigned) { return CUDA_SUCCESS; };
}

} // namespace gleam::test
