#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <cuda.h>

namespace gleam::executor {

/// Largest module image, in bytes, that ModuleLoad accepts.
constexpr uint64_t max_module_image_bytes = uint64_t{1} << 30;

/// Why an op is refused before it reaches the driver: the CUresult a local
/// driver gives for it and the message for the user.
struct op_refusal {
  /// CUDA_ERROR_INVALID_VALUE, CUDA_ERROR_INVALID_IMAGE, ...
  CUresult rc = CUDA_ERROR_INVALID_VALUE;
  /// What was wrong, with the values, and what to do.
  std::string detail;
};

/// Checks that cuModuleLoadData can read `image` without reading past its
/// end: cuModuleLoadData takes no size and trusts the image's own headers, so
/// a fatbin or ELF whose headers point outside the bytes received would make
/// the driver read the server's memory. A fatbin (magic 0xba55ed50) must
/// parse with all its entries inside the bytes; a 64-bit ELF must have its
/// program headers, section headers and every section's bytes inside; any
/// other image is PTX text, which the driver reads up to the NUL that
/// std::string keeps after the bytes (pass the driver a std::string's
/// bytes). Pure; thread-safe.
[[nodiscard]] std::optional<op_refusal> check_module_image(std::string_view image);

} // namespace gleam::executor
