#pragma once

#include <cusolverDn.h>

#include "interpose/library_call.hpp"
#include "wire/solver_extents.hpp"

/// The hand-written pieces of Gleam's libcusolver.so.12 that its generated
/// stubs (interpose/spec/cusolver.spec, <build>/interpose/cusolver_generated.cpp)
/// use: cuSOLVER's traits and the client objects behind its handles.
namespace gleam::interpose::cusolver {

/// cuSOLVER as interpose/library_call.hpp sees it: LibraryCall library
/// CUSOLVER, its statuses (CUSOLVER_STATUS_INVALID_VALUE for arguments
/// refused at the call, CUSOLVER_STATUS_NOT_INITIALIZED for a handle the
/// app does not hold, CUSOLVER_STATUS_NOT_SUPPORTED for what Gleam does not
/// remote) and from_cuda().
extern const library_traits traits;

/// The spec's handle type index of cusolverDnHandle_t (its first 'handle'
/// line).
inline constexpr int32_t handle_type = 0;

/// The cusolverStatus_t an app sees when the transport failed with `x`: no
/// server or a lost session CUSOLVER_STATUS_NOT_INITIALIZED, a GPU fault of
/// the process CUSOLVER_STATUS_EXECUTION_FAILED, other runtime errors by
/// kind.
cusolverStatus_t from_cuda(cudaError_t x) noexcept;

/// The client object of a handle type that keeps nothing but its
/// library_handle (first, as library_handle_of requires).
struct plain_object {
  library_handle state;
};

} // namespace gleam::interpose::cusolver

/// The app-visible object behind a cusolverDnHandle_t.
struct cusolverDnContext {
  gleam::interpose::library_handle state;
  /// The stream of the last cusolverDnSetStream (cusolverDnGetStream
  /// answers it; null: the legacy default stream, as a new handle's).
  cudaStream_t stream = nullptr;
};

/// The 64-bit API's options (cusolverDnParams_t) and the Jacobi solvers'
/// (syevjInfo_t, gesvdjInfo_t): the server keeps the library's object.
struct cusolverDnParams : gleam::interpose::cusolver::plain_object {};
struct syevjInfo : gleam::interpose::cusolver::plain_object {};
struct gesvdjInfo : gleam::interpose::cusolver::plain_object {};

/// Iterative refinement's options (cusolverDnIRSParams_t) and results
/// (cusolverDnIRSInfos_t): the server keeps the library's object.
struct cusolverDnIRSParams : gleam::interpose::cusolver::plain_object {};
struct cusolverDnIRSInfos : gleam::interpose::cusolver::plain_object {};
