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
