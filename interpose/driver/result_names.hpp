#pragma once

namespace gleam::interpose::driver {

/// The enumerator name of CUresult `x` ("CUDA_ERROR_INVALID_VALUE"), or
/// nullptr for a code CUDA 13 does not define. Static storage.
const char* result_name(int x) noexcept;

/// A one-sentence description of CUresult `x`, or nullptr. Static storage.
const char* result_text(int x) noexcept;

} // namespace gleam::interpose::driver
