#pragma once

#include <cstdint>

#include "wire/library_args.hpp"

/// What Gleam's libcudnn.so.9 and the server's cuDNN runner share about
/// cuDNN (interpose/spec/cudnn.spec): the pinned indices of the spec's first
/// handle types, the element size of each backend attribute type, and the
/// size of one element of each data type. Values are those of cuDNN 9's
/// cudnn_graph.h (cudnnBackendAttributeType_t, cudnnDataType_t), kept as
/// plain integers so that neither side needs the other's headers.
/// Thread-safe, no CUDA calls.
namespace gleam::wire::cudnn {

/// The index of cudnnHandle_t among the spec's 'handle' lines.
inline constexpr int32_t handle_type = 0;

/// The index of cudnnBackendDescriptor_t among the spec's 'handle' lines.
inline constexpr int32_t backend_descriptor_type = 1;

/// The index of cudnnTensorDescriptor_t and cudnnFilterDescriptor_t among
/// the spec's 'handle' lines.
inline constexpr int32_t tensor_descriptor_type = 2;
inline constexpr int32_t filter_descriptor_type = 3;

/// The indices of the dropout, RNN, RNN data, attention and sequence data
/// descriptors among the spec's 'handle' lines.
inline constexpr int32_t dropout_descriptor_type = 10;
inline constexpr int32_t rnn_descriptor_type = 13;
inline constexpr int32_t rnn_data_descriptor_type = 14;
inline constexpr int32_t attn_descriptor_type = 16;
inline constexpr int32_t seq_data_descriptor_type = 17;

/// cudnnBackendAttributeType_t values whose elements are not plain bytes.
inline constexpr int64_t type_handle = 0;              // CUDNN_TYPE_HANDLE
inline constexpr int64_t type_void_ptr = 6;            // CUDNN_TYPE_VOID_PTR
inline constexpr int64_t type_backend_descriptor = 15; // CUDNN_TYPE_BACKEND_DESCRIPTOR

/// Bytes of one element of backend attribute type `type`
/// (cudnnBackendAttributeType_t): 8 for handles, pointers, descriptors,
/// int64 and double, 16 for a cudnnFraction_t, 1 for bool and char, 4 for
/// float, int32 and every enum; 0 for a type cuDNN 9 does not define.
constexpr uint64_t attribute_element_bytes(int64_t type) noexcept {
  switch (type) {
    case 0:  // CUDNN_TYPE_HANDLE
    case 3:  // CUDNN_TYPE_INT64
    case 5:  // CUDNN_TYPE_DOUBLE
    case 6:  // CUDNN_TYPE_VOID_PTR
    case 15: // CUDNN_TYPE_BACKEND_DESCRIPTOR
      return 8;
    case 2:  // CUDNN_TYPE_BOOLEAN (bool)
    case 24: // CUDNN_TYPE_CHAR
      return 1;
    case 26: // CUDNN_TYPE_FRACTION (two int64_t)
      return 16;
    case 1:  // CUDNN_TYPE_DATA_TYPE
    case 4:  // CUDNN_TYPE_FLOAT
    case 7:  // CUDNN_TYPE_CONVOLUTION_MODE
    case 8:  // CUDNN_TYPE_HEUR_MODE
    case 9:  // CUDNN_TYPE_KNOB_TYPE
    case 10: // CUDNN_TYPE_NAN_PROPOGATION
    case 11: // CUDNN_TYPE_NUMERICAL_NOTE
    case 12: // CUDNN_TYPE_LAYOUT_TYPE
    case 13: // CUDNN_TYPE_ATTRIB_NAME
    case 14: // CUDNN_TYPE_POINTWISE_MODE
    case 16: // CUDNN_TYPE_GENSTATS_MODE
    case 17: // CUDNN_TYPE_BN_FINALIZE_STATS_MODE
    case 18: // CUDNN_TYPE_REDUCTION_OPERATOR_TYPE
    case 19: // CUDNN_TYPE_BEHAVIOR_NOTE
    case 20: // CUDNN_TYPE_TENSOR_REORDERING_MODE
    case 21: // CUDNN_TYPE_RESAMPLE_MODE
    case 22: // CUDNN_TYPE_PADDING_MODE
    case 23: // CUDNN_TYPE_INT32
    case 25: // CUDNN_TYPE_SIGNAL_MODE
    case 27: // CUDNN_TYPE_NORM_MODE
    case 28: // CUDNN_TYPE_NORM_FWD_PHASE
    case 29: // CUDNN_TYPE_RNG_DISTRIBUTION
    case 30: // CUDNN_TYPE_MOE_GROUPED_MATMUL_MODE
      return 4;
    default:
      return 0;
  }
}

/// Bytes of one element of cudnnDataType_t `t`; 0 for the sub-byte types
/// (FP4, INT4, UINT4) and for values cuDNN 9 does not define.
constexpr uint64_t data_type_bytes(int64_t t) noexcept {
  switch (t) {
    case 3:  // CUDNN_DATA_INT8
    case 6:  // CUDNN_DATA_UINT8
    case 11: // CUDNN_DATA_BOOLEAN
    case 12: // CUDNN_DATA_FP8_E4M3
    case 13: // CUDNN_DATA_FP8_E5M2
    case 15: // CUDNN_DATA_FP8_E8M0
      return 1;
    case 2: // CUDNN_DATA_HALF
    case 9: // CUDNN_DATA_BFLOAT16
      return 2;
    case 0:  // CUDNN_DATA_FLOAT
    case 4:  // CUDNN_DATA_INT32
    case 5:  // CUDNN_DATA_INT8x4
    case 7:  // CUDNN_DATA_UINT8x4
    case 19: // CUDNN_DATA_UINT32
      return 4;
    case 1:  // CUDNN_DATA_DOUBLE
    case 10: // CUDNN_DATA_INT64
    case 20: // CUDNN_DATA_COMPLEX_FP32
      return 8;
    case 21: // CUDNN_DATA_COMPLEX_FP64
      return 16;
    case 8: // CUDNN_DATA_INT8x32
      return 32;
    default:
      return 0;
  }
}

/// The sum of the `batch` label lengths at `lengths` (CTC loss's host
/// label list); extents::invalid_extent for a NULL array, a negative
/// length or a batch that is itself invalid_extent.
inline uint64_t label_count(uint64_t batch, const int* lengths) noexcept {
  if (lengths == nullptr || batch == extents::invalid_extent)
    return extents::invalid_extent;
  uint64_t total = 0;
  for (uint64_t i = 0; i < batch; ++i) {
    if (lengths[i] < 0)
      return extents::invalid_extent;
    total += static_cast<uint64_t>(lengths[i]);
  }
  return total;
}

/// Bytes of a host scaling factor (alpha, beta) for data of cudnnDataType_t
/// `t`: a double for CUDNN_DATA_DOUBLE, a float for every other type.
constexpr uint64_t scaling_bytes(int64_t t) noexcept {
  return t == 1 ? 8 : 4;
}

} // namespace gleam::wire::cudnn
