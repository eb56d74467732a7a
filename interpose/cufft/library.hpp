#pragma once

#include <cufft.h>

#include "interpose/library_call.hpp"

/// The hand-written pieces of Gleam's libcufft.so.12 that its generated
/// stubs (interpose/spec/cufft.spec, <build>/interpose/cufft_generated.cpp)
/// and its manual functions (plans.cpp) use.
namespace gleam::interpose::cufft {

/// cuFFT as interpose/library_call.hpp sees it: LibraryCall library CUFFT,
/// its statuses (CUFFT_INVALID_VALUE for arguments refused at the call,
/// CUFFT_INVALID_PLAN for a plan the app does not hold) and from_cuda().
extern const library_traits traits;

/// The spec's handle type index of cufftHandle (its one 'handle' line).
inline constexpr int32_t plan_type = 0;

/// The cufftResult an app sees when the transport failed with `x`: no
/// server or a lost session CUFFT_SETUP_FAILED, a GPU fault of the process
/// CUFFT_EXEC_FAILED, other runtime errors by kind.
cufftResult from_cuda(cudaError_t x) noexcept;

} // namespace gleam::interpose::cufft
