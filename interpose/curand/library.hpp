#pragma once

#include <curand.h>

#include "interpose/library_call.hpp"

/// The hand-written pieces of Gleam's libcurand.so.10 that its generated
/// stubs (interpose/spec/curand.spec, <build>/interpose/curand_generated.cpp)
/// use: cuRAND's traits and the client object behind a curandGenerator_t.
namespace gleam::interpose::curand {

/// cuRAND as interpose/library_call.hpp sees it: LibraryCall library
/// CURAND, its statuses (CURAND_STATUS_OUT_OF_RANGE for arguments refused
/// at the call, CURAND_STATUS_ARCH_MISMATCH for what Gleam cannot do:
/// cuRAND has no "not supported"), and from_cuda().
extern const library_traits traits;

/// The curandStatus_t an app sees when the transport failed with `x`: no
/// server or a lost session CURAND_STATUS_INITIALIZATION_FAILED, a sticky
/// GPU fault of the process CURAND_STATUS_PREEXISTING_FAILURE (the
/// vendor's "existing error from a previous kernel launch"), other runtime
/// errors by kind.
curandStatus_t from_cuda(cudaError_t x) noexcept;

} // namespace gleam::interpose::curand

/// The app-visible generator behind a curandGenerator_t (the spec's
/// 'handle curandGenerator_t object curandGenerator_st').
struct curandGenerator_st {
  gleam::interpose::library_handle state;
};
