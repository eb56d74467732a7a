#include "wire/fft_geometry.hpp"

#include <cufft.h>

namespace gleam::wire::fft {

void pack(arg_packer& out, const geometry& g) {
  out.value(g.rank);
  for (int i = 0; i < max_rank; ++i)
    out.value(g.n[i]);
  out.value(static_cast<uint8_t>(g.in_embedded));
  out.value(static_cast<uint8_t>(g.out_embedded));
  for (int i = 0; i < max_rank; ++i)
    out.value(g.inembed[i]);
  for (int i = 0; i < max_rank; ++i)
    out.value(g.onembed[i]);
  out.value(g.istride);
  out.value(g.idist);
  out.value(g.ostride);
  out.value(g.odist);
  out.value(g.batch);
  out.value(g.type);
  out.value(g.input_type);
  out.value(g.output_type);
  out.value(g.execution_type);
}

geometry read(arg_reader& in, bool* ok) {
  geometry g;
  g.rank = in.value<int32_t>();
  for (int i = 0; i < max_rank; ++i)
    g.n[i] = in.value<int64_t>();
  g.in_embedded = in.value<uint8_t>() != 0;
  g.out_embedded = in.value<uint8_t>() != 0;
  for (int i = 0; i < max_rank; ++i)
    g.inembed[i] = in.value<int64_t>();
  for (int i = 0; i < max_rank; ++i)
    g.onembed[i] = in.value<int64_t>();
  g.istride = in.value<int64_t>();
  g.idist = in.value<int64_t>();
  g.ostride = in.value<int64_t>();
  g.odist = in.value<int64_t>();
  g.batch = in.value<int64_t>();
  g.type = in.value<int32_t>();
  g.input_type = in.value<int32_t>();
  g.output_type = in.value<int32_t>();
  g.execution_type = in.value<int32_t>();
  *ok = in.ok() && g.rank >= 1 && g.rank <= max_rank;
  return g;
}

namespace {

/// Element sizes of a cufftType's input and output; false when unknown.
bool type_sizes(int32_t type, uint64_t* in, uint64_t* out) {
  switch (type) {
    case CUFFT_C2C:
      *in = *out = 8;
      return true;
    case CUFFT_Z2Z:
      *in = *out = 16;
      return true;
    case CUFFT_R2C:
      *in = 4, *out = 8;
      return true;
    case CUFFT_C2R:
      *in = 8, *out = 4;
      return true;
    case CUFFT_D2Z:
      *in = 8, *out = 16;
      return true;
    case CUFFT_Z2D:
      *in = 16, *out = 8;
      return true;
    default:
      return false;
  }
}

/// True for the complex cudaDataTypes cuFFT takes.
bool complex_type(int32_t t) {
  switch (t) {
    case CUDA_C_16F:
    case CUDA_C_16BF:
    case CUDA_C_32F:
    case CUDA_C_64F:
      return true;
    default:
      return false;
  }
}

} // namespace

uint64_t bytes(const geometry& g, bool input) noexcept {
  using extents::add;
  using extents::invalid_extent;
  using extents::mul;
  uint64_t in_size = 0, out_size = 0;
  bool real_in = false, real_out = false;
  if (g.type != 0) {
    if (!type_sizes(g.type, &in_size, &out_size))
      return invalid_extent;
    real_in = g.type == CUFFT_R2C || g.type == CUFFT_D2Z;
    real_out = g.type == CUFFT_C2R || g.type == CUFFT_Z2D;
  } else {
    in_size = extents::type_size(g.input_type);
    out_size = extents::type_size(g.output_type);
    if (in_size == invalid_extent || out_size == invalid_extent)
      return invalid_extent;
    real_in = !complex_type(g.input_type) && complex_type(g.output_type);
    real_out = complex_type(g.input_type) && !complex_type(g.output_type);
  }
  if (g.rank < 1 || g.rank > max_rank || g.batch <= 0)
    return invalid_extent;
  // The side's logical dimensions: the complex side of a real transform
  // holds n/2 + 1 values in its last dimension (Hermitian symmetry).
  int64_t d[max_rank];
  for (int i = 0; i < g.rank; ++i) {
    if (g.n[i] <= 0)
      return invalid_extent;
    d[i] = g.n[i];
  }
  bool half = input ? real_out : real_in;
  if (half)
    d[g.rank - 1] = d[g.rank - 1] / 2 + 1;
  uint64_t element = input ? in_size : out_size;
  bool embedded = input ? g.in_embedded : g.out_embedded;
  if (!embedded) {
    // The basic layout: contiguous transforms, one after the other.
    uint64_t one = 1;
    for (int i = 0; i < g.rank; ++i)
      one = mul(one, static_cast<uint64_t>(d[i]));
    return mul(mul(one, static_cast<uint64_t>(g.batch)), element);
  }
  // The advanced layout: element (b, x0..) at b * dist + stride *
  // ((x0 * embed[1] + x1) * embed[2] + x2); the last one decides.
  const int64_t* embed = input ? g.inembed : g.onembed;
  int64_t stride = input ? g.istride : g.ostride;
  int64_t dist = input ? g.idist : g.odist;
  if (stride <= 0 || dist < 0)
    return invalid_extent;
  uint64_t last = 0;
  for (int i = 0; i < g.rank; ++i) {
    if (i > 0) {
      if (embed[i] < d[i])
        return invalid_extent;
      last = mul(last, static_cast<uint64_t>(embed[i]));
    }
    last = add(last, static_cast<uint64_t>(d[i] - 1));
  }
  uint64_t end = add(mul(static_cast<uint64_t>(g.batch - 1), static_cast<uint64_t>(dist)),
                     mul(last, static_cast<uint64_t>(stride)));
  return mul(add(end, 1), element);
}

} // namespace gleam::wire::fft
