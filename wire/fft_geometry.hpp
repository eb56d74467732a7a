#pragma once

#include <cstdint>

#include "wire/library_args.hpp"

/// The shape of a cuFFT plan as the plan-making functions of Gleam's
/// libcufft.so.12 send it (cufftPlan*, cufftMakePlan*, cufftGetSize*,
/// cufftEstimate*, cufftXtMakePlanMany, cufftXtGetSizeMany): one packing
/// for all of them, so that the server both calls the vendor's function
/// with the app's arguments and knows how many bytes each later execution
/// reads and writes. Thread-safe, no CUDA calls.
namespace gleam::wire::fft {

/// cuFFT plans have 1 to 3 dimensions.
inline constexpr int max_rank = 3;

/// One plan's shape, in the vendor's terms.
struct geometry {
  int32_t rank = 0;
  int64_t n[max_rank] = {};
  /// inembed / onembed: null in the app's call (the basic layout, where the
  /// strides and distances are ignored) or rank values.
  bool in_embedded = false;
  bool out_embedded = false;
  int64_t inembed[max_rank] = {};
  int64_t onembed[max_rank] = {};
  int64_t istride = 1, idist = 0, ostride = 1, odist = 0;
  int64_t batch = 1;
  /// The transform: a cufftType (C2C, R2C, ...), or for the Xt functions
  /// 0 with the cudaDataType of input, output and execution.
  int32_t type = 0;
  int32_t input_type = 0, output_type = 0, execution_type = 0;
};

/// Appends `g` to a call's arguments; read back by read().
void pack(arg_packer& out, const geometry& g);

/// The next geometry of `in`; `ok` false (and `in` not ok) when it does
/// not unpack or its rank is not 1 to 3.
geometry read(arg_reader& in, bool* ok);

/// Bytes an execution reads from its input (`input`) or writes to its
/// output, from the start of the pointer: the last element's offset plus
/// its size. extents::invalid_extent for an impossible shape or an
/// unknown type (no allocation holds it, so the server refuses the call).
uint64_t bytes(const geometry& g, bool input) noexcept;

} // namespace gleam::wire::fft
