#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <caf/expected.hpp>
#include <cudnn.h>

#include "actors/proto/ops.pb.h"
#include "executor/library_call.hpp"
#include "wire/library_args.hpp"

namespace gleam::executor {

/// The vendor's cuDNN 9 (libcudnn.so.9), loaded at run time like cuBLAS and
/// cuRAND (executor/vendor_library.hpp): dlopen by explicit path and dlsym
/// of each function of interpose/spec/cudnn.spec that travels as a
/// LibraryCall (generated ones and the manual ones with an id), plus the
/// version queries the server answers with, by the exact names the cuDNN
/// headers declare. No gleam binary links cuDNN; the vendor's libcudnn.so.9
/// loads its own sub-libraries.
///
/// Members are plain function pointers named after the library functions.
/// A default-constructed cudnn_api has every pointer null; tests may fill
/// in their own. A function this cuDNN lacks stays null (its calls fail
/// with CUDNN_STATUS_NOT_SUPPORTED). Thread safety: the pointers never
/// change after load().
class cudnn_api {
public:
  /// The LibraryCall.library this api serves (executor::use_library).
  static constexpr auto library = proto::LibraryCall::CUDNN;

#define X(name) decltype(&::name) name = nullptr;
#include "executor/cudnn_generated_api.inc"
  // Answered with cudnnGetVersion's call (executor/cudnn_backend.cpp).
  X(cudnnGetCudartVersion)
  X(cudnnGetMaxDeviceVersion)
  // The attention window length of cudnn_attn_qo_length (the app's own
  // getter is answered by the client).
  X(cudnnGetAttnDescriptor)
#undef X

  /// Every entry point null, no library held.
  cudnn_api() = default;

  cudnn_api(const cudnn_api&) = delete;
  cudnn_api& operator=(const cudnn_api&) = delete;

  /// Closes the library (if load() opened it).
  ~cudnn_api();

  /// Opens libcudnn.so.9 from `dir` (empty: the first of
  /// $GLEAM_CUDNN_DIR, /usr/local/cuda/lib64, /usr/local/cuda-13/lib64
  /// that has it; never Gleam's own) and resolves every entry point.
  /// Error: no_vendor_library when it cannot be opened or is Gleam's;
  /// missing_symbol when it has none of the functions (not cuDNN).
  [[nodiscard]] static caf::expected<std::unique_ptr<cudnn_api>>
  load(const std::string& dir = {});

  /// The process's instance, loaded by the first call (thread-safe); the
  /// error of that load on every call when it failed.
  [[nodiscard]] static caf::expected<cudnn_api*> shared();

private:
  void* lib_ = nullptr;
};

/// The size helpers of cudnn.spec's extents, on the server: asked of the
/// session's (vendor) descriptor `d` through `api`. Bytes a tensor or
/// filter spans (cudnnGetTensorSizeInBytes / cudnnGetFilterSizeInBytes; 0
/// for a null descriptor), of a host scaling factor for its data (8 for
/// CUDNN_DATA_DOUBLE, else 4) and of one element of its data type. A query
/// the library refuses, or one it lacks, gives wire::extents::invalid_extent,
/// which no allocation or host parameter matches.
uint64_t cudnn_tensor_bytes(cudnn_api& api, cudnnTensorDescriptor_t d) noexcept;
uint64_t cudnn_filter_bytes(cudnn_api& api, cudnnFilterDescriptor_t d) noexcept;
uint64_t cudnn_scaling_bytes(cudnn_api& api, cudnnTensorDescriptor_t d) noexcept;
uint64_t cudnn_scaling_bytes(cudnn_api& api, cudnnFilterDescriptor_t d) noexcept;
uint64_t cudnn_value_bytes(cudnn_api& api, cudnnTensorDescriptor_t d) noexcept;

/// The size helpers of the RNN, CTC, attention, spatial transformer and
/// im2col extents (cudnn.spec), asked of the session's descriptors the
/// same way; invalid_extent where the library refuses the query.
///   cudnn_type_bytes      one element of data type t (a padding fill)
///   cudnn_value_bytes     one element of an RNN data / sequence data
///                         descriptor's data type
///   cudnn_tensor_dim      dimension i of tensor d (elements)
///   cudnn_rnn_data_bytes  maxSeqLength x batchSize x vectorSize elements
///                         (packed: the sum of the sequence lengths x
///                         vectorSize)
///   cudnn_rnn_batch       batchSize (the device sequence length array)
///   cudnn_seq_data_bytes  the product of the four dimensions, in elements
///                         of its data type
///   cudnn_seq_batch       batch x beam (its device sequence length arrays)
///   cudnn_attn_qo_length  qoMaxSeqLength (the attention window arrays)
///   cudnn_grid_bytes      a sampling grid n x h x w x 2 of tensor d's
///                         shape and type, or of the spatial transformer's
///                         last set dimensions (cudnn_note_spatial_transformer)
///   cudnn_theta_bytes     n x 2 x 3 affine parameters of the transformer
///   cudnn_im2col_bytes    cudnnIm2Col's column matrix: n x outputs' spatial
///                         size rows of c x the filter's spatial size
///   cudnn_bias_bytes      cudnnReorderFilterAndBias's bias: k floats
uint64_t cudnn_type_bytes(cudnn_api& api, cudnnDataType_t t) noexcept;
uint64_t cudnn_value_bytes(cudnn_api& api, cudnnRNNDataDescriptor_t d) noexcept;
uint64_t cudnn_value_bytes(cudnn_api& api, cudnnSeqDataDescriptor_t d) noexcept;
uint64_t cudnn_tensor_dim(cudnn_api& api, cudnnTensorDescriptor_t d, int i) noexcept;
uint64_t cudnn_rnn_data_bytes(cudnn_api& api, cudnnRNNDataDescriptor_t d) noexcept;
uint64_t cudnn_rnn_batch(cudnn_api& api, cudnnRNNDataDescriptor_t d) noexcept;
uint64_t cudnn_seq_data_bytes(cudnn_api& api, cudnnSeqDataDescriptor_t d) noexcept;
uint64_t cudnn_seq_batch(cudnn_api& api, cudnnSeqDataDescriptor_t d) noexcept;
uint64_t cudnn_attn_qo_length(cudnn_api& api, cudnnAttnDescriptor_t d) noexcept;
uint64_t cudnn_grid_bytes(cudnn_api& api, cudnnTensorDescriptor_t d) noexcept;
uint64_t cudnn_grid_bytes(cudnn_api& api, cudnnSpatialTransformerDescriptor_t d) noexcept;
uint64_t cudnn_theta_bytes(cudnn_api& api, cudnnSpatialTransformerDescriptor_t d) noexcept;
uint64_t cudnn_im2col_bytes(cudnn_api& api, cudnnTensorDescriptor_t x, cudnnFilterDescriptor_t w,
                            cudnnConvolutionDescriptor_t conv) noexcept;
uint64_t cudnn_bias_bytes(cudnn_api& api, cudnnFilterDescriptor_t w) noexcept;

/// The sum of the label lengths at `lengths` (host memory that arrived
/// whole: one int per batch entry of probabilities `d`); invalid_extent
/// for a negative length or an unknown batch.
uint64_t cudnn_label_count(cudnn_api& api, cudnnTensorDescriptor_t d,
                           const void* lengths) noexcept;

/// Keeps the data type and dimensions (n, c, h, w) that spatial
/// transformer `d` was set to, or forgets `d` (`dims` 0): cuDNN has no
/// getter for them, and its grid generator's extents need them. Called by
/// cudnn_api::load()'s wrappers of cudnnSetSpatialTransformerNdDescriptor
/// and cudnnDestroySpatialTransformerDescriptor (and by fakes). Thread-safe.
void cudnn_note_spatial_transformer(const void* d, cudnnDataType_t type, int dims,
                                    const int* dim) noexcept;

/// Runs generated cuDNN function `function` (its spec id) with the
/// arguments in `in`; false when no generated function has that id.
/// Generated from interpose/spec/cudnn.spec (cudnn_library_calls.cpp).
bool run_generated_cudnn(cudnn_api& api, library_call_env& env, uint32_t function,
                         wire::arg_reader& in);

/// Runs the hand-written server side of the manual cuDNN functions with an
/// id (executor/cudnn_backend.cpp): the versions, the last error message,
/// cudnnBackendSetAttribute / GetAttribute (elements mapped between client
/// ids and the session's descriptors and handles) and cudnnBackendExecute
/// (every pointer of the variant pack checked against the session's
/// allocations first); false when `function` is none of them.
bool run_manual_cudnn(cudnn_api& api, library_call_env& env, uint32_t function,
                      wire::arg_reader& in);

} // namespace gleam::executor
