#pragma once

#include <cuda.h>
#include <cuda_runtime_api.h>

namespace gleam::interpose {

/// Maps a driver status (CUresult, as carried by OpResult.status) to the
/// runtime error the app sees. One table for the whole interposer; codes
/// without a runtime counterpart become cudaErrorUnknown.
cudaError_t to_cuda_error(int cu_status) noexcept;

/// The CUresult for a runtime error: the inverse of to_cuda_error (the
/// lowest CUresult where several map to `x`), CUDA_ERROR_UNKNOWN for a
/// runtime error without a driver counterpart.
int to_cu_result(cudaError_t x) noexcept;

/// The enumerator name of `x` ("cudaErrorInvalidValue"), or nullptr when `x`
/// is not a CUDA 13 runtime error code. Static storage.
const char* error_name(cudaError_t x) noexcept;

/// A one-sentence description of `x`, or nullptr for an unknown code.
/// Static storage.
const char* error_text(cudaError_t x) noexcept;

/// True for the errors CUDA documents as corrupting the context: once one
/// happens, every later call of the process returns it.
bool is_sticky(cudaError_t x) noexcept;

} // namespace gleam::interpose
