#pragma once

#include <cstdint>
#include <functional>

#include "actors/proto/ops.pb.h"

namespace gleam::test {

/// The fake server's memory: the host bytes behind device range [p, p + n)
/// (null when not backed), `known` false when the range is not inside one
/// allocation.
using fake_memory = std::function<char*(uint64_t p, uint64_t n, bool* known)>;

/// Runs a LibraryCall on the fake server through the generated server code
/// (executor/library_call.hpp). cuBLAS: over a fake cuBLAS that computes
/// cublasSaxpy_v2, cublasSdot_v2 and cublasSgemv_v2 on the host bytes (any
/// other function: CUBLAS_STATUS_NOT_SUPPORTED, "missing from this
/// server's cuBLAS"); every handle id is accepted. cuRAND: fake_curand_call;
/// cuDNN: fake_cudnn_call.
/// Address checks are the generated ones against `memory`.
void fake_library_call(const fake_memory& memory, const proto::LibraryCall& op,
                       proto::OpResult& r);

/// A cuRAND LibraryCall over the fake cuRAND of tests/support/fake_curand.hpp
/// (fake_generic_calls.cpp): generators (device and host) whose i-th value
/// from their offset is seed * 1000 + offset + i (curandGenerate; / 4096
/// for GenerateUniform; mean + stddev * it for GenerateNormal, which
/// refuses an odd count with CURAND_STATUS_LENGTH_NOT_MULTIPLE), Poisson
/// distributions, the version 10400 and the 32-bit scramble constants
/// (i * 7); anything else is missing (CURAND_STATUS_ARCH_MISMATCH). Handles
/// are kept by client id (one session at a time); outputs of a call with
/// `hold` are kept for fake_library_output_read.
void fake_curand_call(const fake_memory& memory, const proto::LibraryCall& op,
                      proto::OpResult& r);

/// A cuDNN LibraryCall over the fake cuDNN of tests/support/fake_cudnn.hpp
/// (fake_generic_calls.cpp): handles, tensor descriptors, batch-normalization
/// inference computed on the fake server's memory, backend descriptors
/// that keep their attributes' bytes (refusing descriptor elements that are
/// not live descriptors of the fake), a heuristic that fills two engine
/// configurations, a plan workspace of 256 bytes; anything else is missing
/// (CUDNN_STATUS_NOT_SUPPORTED). Handles are kept by client id, as for
/// cuRAND.
void fake_cudnn_call(const fake_memory& memory, const proto::LibraryCall& op,
                     proto::OpResult& r);

/// A LibraryOutputRead of outputs fake_curand_call or fake_cudnn_call kept.
void fake_library_output_read(const proto::LibraryOutputRead& op, proto::OpResult& r);

} // namespace gleam::test
