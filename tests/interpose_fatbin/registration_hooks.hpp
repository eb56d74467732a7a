#pragma once

#include <string>
#include <vector>

namespace gleam::test {

/// What the nvcc-built host object linked into this test registered at
/// static initialization, as seen by our own __cudaRegister* entry points.
struct registrations {
  /// Wrappers passed to __cudaRegisterFatBinary, in call order.
  std::vector<const void*> wrappers;
  /// Device names passed to __cudaRegisterFunction.
  std::vector<std::string> functions;
  /// Device names passed to __cudaRegisterVar.
  std::vector<std::string> variables;
  /// Number of __cudaRegisterFatBinaryEnd calls.
  int ends = 0;
};

/// The registrations recorded so far. Written only during static
/// initialization; read-only afterwards.
const registrations& recorded_registrations();

} // namespace gleam::test
