#pragma once

#include <cstdint>

#include <cudnn.h>

#include "interpose/library_call.hpp"

/// The hand-written pieces of Gleam's libcudnn.so.9 that its generated
/// stubs (interpose/spec/cudnn.spec, <build>/interpose/cudnn_generated.cpp)
/// use: cuDNN's traits, the client objects behind its handles and
/// descriptors, and the client side of the spec's size helpers.
namespace gleam::interpose::cudnn {

/// cuDNN as interpose/library_call.hpp sees it: LibraryCall library CUDNN,
/// its statuses (CUDNN_STATUS_BAD_PARAM for arguments refused at the call
/// and for a handle the app does not hold, CUDNN_STATUS_NOT_SUPPORTED for
/// what Gleam cannot do), and from_cuda().
extern const library_traits traits;

/// The cudnnStatus_t an app sees when the transport failed with `x`: no
/// server or a lost session CUDNN_STATUS_NOT_INITIALIZED, a sticky GPU
/// fault of the process CUDNN_STATUS_EXECUTION_FAILED, other runtime errors
/// by kind.
cudnnStatus_t from_cuda(cudaError_t x) noexcept;

/// What 'api' names in the generated client stubs: the client's view of
/// the descriptors, for the spec's size helpers below.
struct client_view {};
inline constexpr client_view client_descriptors{};

/// Bytes of a host scaling factor for data of tensor (or filter)
/// descriptor `d`, by the data type the app set through this library:
/// 8 for CUDNN_DATA_DOUBLE, else 4 (also for a descriptor not set yet).
uint64_t cudnn_scaling_bytes(const client_view&, cudnnTensorDescriptor_t d) noexcept;
uint64_t cudnn_scaling_bytes(const client_view&, cudnnFilterDescriptor_t d) noexcept;

/// Bytes of one element of tensor descriptor `d`'s data type;
/// wire::extents::invalid_extent when it is not set or has no whole-byte
/// elements.
uint64_t cudnn_value_bytes(const client_view&, cudnnTensorDescriptor_t d) noexcept;

/// Bytes of one element of data type `t` (cuDNN's padding fills);
/// wire::extents::invalid_extent for a type without whole-byte elements.
uint64_t cudnn_type_bytes(const client_view&, cudnnDataType_t t) noexcept;

/// Bytes of one element of the data type the app set on RNN data (or
/// sequence data) descriptor `d`; wire::extents::invalid_extent when it is
/// not set.
uint64_t cudnn_value_bytes(const client_view&, cudnnRNNDataDescriptor_t d) noexcept;
uint64_t cudnn_value_bytes(const client_view&, cudnnSeqDataDescriptor_t d) noexcept;

/// Dimension `i` of tensor descriptor `d`, asked of the server (a round
/// trip: cudnnGetTensorNdDescriptor); wire::extents::invalid_extent when
/// the server refuses or `i` is out of range.
uint64_t cudnn_tensor_dim(const client_view&, cudnnTensorDescriptor_t d, int i) noexcept;

/// The number of labels of CTC loss's host label list: the sum of the
/// label lengths at `lengths`, one per batch entry of probabilities `d`
/// (its dimension 1); wire::extents::invalid_extent for a NULL array, a
/// negative length or an unknown batch.
uint64_t cudnn_label_count(const client_view&, cudnnTensorDescriptor_t d,
                           const int* lengths) noexcept;

/// The qoMaxSeqLength the app set on attention descriptor `d` (the length
/// of the attention window arrays); wire::extents::invalid_extent when it
/// is not set or negative.
uint64_t cudnn_attn_qo_length(const client_view&, cudnnAttnDescriptor_t d) noexcept;

/// Whether `d` is a live backend descriptor of type
/// CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR (the type kept at its creation).
bool cudnn_variant_pack(const client_view&, cudnnBackendDescriptor_t d) noexcept;

/// The client object of a handle type that keeps nothing but its
/// library_handle (first, as library_handle_of requires).
struct descriptor_object {
  library_handle state;
};

/// The client object of a tensor or filter descriptor: its handle and the
/// data type the app set last (-1 before any setter; the spec's
/// 'remember').
struct typed_descriptor_object {
  library_handle state;
  int data_type = -1;
};

} // namespace gleam::interpose::cudnn

/// The app-visible objects behind cuDNN's handles and descriptors (the
/// spec's 'handle' lines). Each starts with its library_handle; the
/// members after it are what 'remember' lines keep.
struct cudnnContext {
  gleam::interpose::library_handle state;
  /// The stream of the last cudnnSetStream (cudnnGetStream answers it).
  cudaStream_t stream = nullptr;
};

/// A backend descriptor (cudnnBackendDescriptor_t is a void * to the app).
struct cudnnBackendDescriptorStruct {
  gleam::interpose::library_handle state;
  /// Its cudnnBackendDescriptorType_t (set at creation).
  int type = -1;
};

struct cudnnTensorStruct : gleam::interpose::cudnn::typed_descriptor_object {};
/// RNN data and sequence data descriptors: their data type sizes the
/// padding fill of their getters.
struct cudnnRNNDataStruct : gleam::interpose::cudnn::typed_descriptor_object {};
struct cudnnSeqDataStruct : gleam::interpose::cudnn::typed_descriptor_object {};

/// An RNN descriptor: the values of the app's last
/// cudnnSetRNNDescriptor_v8 (cudnnGetRNNDescriptor_v8 answers them; zero
/// before any).
struct cudnnRNNStruct {
  gleam::interpose::library_handle state;
  cudnnRNNAlgo_t algo{};
  cudnnRNNMode_t cell_mode{};
  cudnnRNNBiasMode_t bias_mode{};
  cudnnDirectionMode_t dir_mode{};
  cudnnRNNInputMode_t input_mode{};
  cudnnDataType_t data_type{};
  cudnnDataType_t math_prec{};
  cudnnMathType_t math_type{};
  int32_t input_size = 0;
  int32_t hidden_size = 0;
  int32_t proj_size = 0;
  int32_t num_layers = 0;
  /// The app's dropout descriptor (a client object; null: none).
  cudnnDropoutDescriptor_t dropout = nullptr;
  uint32_t aux_flags = 0;
};

/// A multi-head attention descriptor: the values of the app's last
/// cudnnSetAttnDescriptor (cudnnGetAttnDescriptor answers them; zero
/// before any; qo_max_seq_length sizes the attention window arrays).
struct cudnnAttnStruct {
  gleam::interpose::library_handle state;
  unsigned attn_mode = 0;
  int heads = 0;
  double sm_scaler = 0;
  cudnnDataType_t data_type{};
  cudnnDataType_t compute_prec{};
  cudnnMathType_t math_type{};
  /// The app's dropout descriptors (client objects; null: none).
  cudnnDropoutDescriptor_t attn_dropout = nullptr;
  cudnnDropoutDescriptor_t post_dropout = nullptr;
  int q_size = 0;
  int k_size = 0;
  int v_size = 0;
  int q_proj_size = 0;
  int k_proj_size = 0;
  int v_proj_size = 0;
  int o_proj_size = 0;
  int qo_max_seq_length = -1;
  int kv_max_seq_length = 0;
  int max_batch_size = 0;
  int max_beam_size = 0;
};
struct cudnnFilterStruct : gleam::interpose::cudnn::typed_descriptor_object {};

/// The descriptors whose client objects keep nothing but their handle.
struct cudnnConvolutionStruct : gleam::interpose::cudnn::descriptor_object {};
struct cudnnActivationStruct : gleam::interpose::cudnn::descriptor_object {};
struct cudnnPoolingStruct : gleam::interpose::cudnn::descriptor_object {};
struct cudnnLRNStruct : gleam::interpose::cudnn::descriptor_object {};
struct cudnnOpTensorStruct : gleam::interpose::cudnn::descriptor_object {};
struct cudnnReduceTensorStruct : gleam::interpose::cudnn::descriptor_object {};
struct cudnnDropoutStruct : gleam::interpose::cudnn::descriptor_object {};
struct cudnnSpatialTransformerStruct : gleam::interpose::cudnn::descriptor_object {};
struct cudnnTensorTransformStruct : gleam::interpose::cudnn::descriptor_object {};
struct cudnnCTCLossStruct : gleam::interpose::cudnn::descriptor_object {};
