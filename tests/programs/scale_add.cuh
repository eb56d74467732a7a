// The kernel of the managed and mapped memory programs, whose host and
// device take turns on the same bytes.
#pragma once

namespace gleam_program {

/// p[i] = p[i] * mul + add for every i < n.
__global__ void scale_add(int* p, int n, int mul, int add) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    p[i] = p[i] * mul + add;
}

} // namespace gleam_program
