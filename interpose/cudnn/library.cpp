// cuDNN's traits for the generated stubs, the client side of the spec's
// size helpers, and the functions answered from the client: status names,
// the handle's stream, and the server library's versions (asked once per
// process: cudnnGetVersion's LibraryCall, executor/cudnn_manual.cpp).
#include "interpose/cudnn/library.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <mutex>

#include "actors/proto/ops.pb.h"
#include "interpose/cudnn_export.hpp"
#include "interpose/cudnn_function_ids.hpp"
#include "interpose/error_map.hpp"
#include "wire/cudnn_backend.hpp"
#include "wire/library_args.hpp"

namespace gleam::interpose::cudnn {

cudnnStatus_t from_cuda(cudaError_t x) noexcept {
  switch (x) {
    case cudaSuccess:
      return CUDNN_STATUS_SUCCESS;
    case cudaErrorNoDevice:
    case cudaErrorInitializationError:
    case cudaErrorInsufficientDriver:
    case cudaErrorDevicesUnavailable:
      return CUDNN_STATUS_NOT_INITIALIZED;
    case cudaErrorMemoryAllocation:
      return CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;
    case cudaErrorInvalidValue:
    case cudaErrorInvalidResourceHandle:
      return CUDNN_STATUS_BAD_PARAM;
    case cudaErrorNotSupported:
      return CUDNN_STATUS_NOT_SUPPORTED;
    default:
      // A GPU fault of the process, or a failure of the runtime underneath.
      return is_sticky(x) ? CUDNN_STATUS_EXECUTION_FAILED : CUDNN_STATUS_EXECUTION_FAILED_CUDART;
  }
}

const library_traits traits{
  proto::LibraryCall::CUDNN,
  "cuDNN",
  CUDNN_STATUS_SUCCESS,
  CUDNN_STATUS_BAD_PARAM,
  CUDNN_STATUS_BAD_PARAM,
  CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED,
  CUDNN_STATUS_NOT_SUPPORTED,
  CUDNN_STATUS_INTERNAL_ERROR,
  [](cudaError_t x) noexcept { return static_cast<int32_t>(from_cuda(x)); },
};

namespace {

/// The data type the app set on descriptor `d` of spec handle type `type`
/// (a typed_descriptor_object); -1 when unknown.
int data_type_of(const void* d, int32_t type) noexcept {
  if (library_handle_of(d, traits, type) == nullptr)
    return -1;
  return static_cast<const typed_descriptor_object*>(d)->data_type;
}

} // namespace

uint64_t cudnn_scaling_bytes(const client_view&, cudnnTensorDescriptor_t d) noexcept {
  return wire::cudnn::scaling_bytes(
    data_type_of(d, wire::cudnn::tensor_descriptor_type));
}

uint64_t cudnn_scaling_bytes(const client_view&, cudnnFilterDescriptor_t d) noexcept {
  return wire::cudnn::scaling_bytes(
    data_type_of(d, wire::cudnn::filter_descriptor_type));
}

uint64_t cudnn_value_bytes(const client_view&, cudnnTensorDescriptor_t d) noexcept {
  auto bytes = wire::cudnn::data_type_bytes(
    data_type_of(d, wire::cudnn::tensor_descriptor_type));
  return bytes == 0 ? wire::extents::invalid_extent : bytes;
}

uint64_t cudnn_type_bytes(const client_view&, cudnnDataType_t t) noexcept {
  auto bytes = wire::cudnn::data_type_bytes(t);
  return bytes == 0 ? wire::extents::invalid_extent : bytes;
}

uint64_t cudnn_value_bytes(const client_view& v, cudnnRNNDataDescriptor_t d) noexcept {
  return cudnn_type_bytes(
    v, static_cast<cudnnDataType_t>(data_type_of(d, wire::cudnn::rnn_data_descriptor_type)));
}

uint64_t cudnn_value_bytes(const client_view& v, cudnnSeqDataDescriptor_t d) noexcept {
  return cudnn_type_bytes(
    v, static_cast<cudnnDataType_t>(data_type_of(d, wire::cudnn::seq_data_descriptor_type)));
}

uint64_t cudnn_tensor_dim(const client_view&, cudnnTensorDescriptor_t d, int i) noexcept {
  cudnnDataType_t type{};
  int dims = 0;
  int dim[CUDNN_DIM_MAX] = {};
  int stride[CUDNN_DIM_MAX] = {};
  if (i < 0 || i >= CUDNN_DIM_MAX
      || cudnnGetTensorNdDescriptor(d, CUDNN_DIM_MAX, &type, &dims, dim, stride)
           != CUDNN_STATUS_SUCCESS
      || i >= dims || dim[i] < 0)
    return wire::extents::invalid_extent;
  return static_cast<uint64_t>(dim[i]);
}

uint64_t cudnn_label_count(const client_view& v, cudnnTensorDescriptor_t d,
                           const int* lengths) noexcept {
  return wire::cudnn::label_count(cudnn_tensor_dim(v, d, 1), lengths);
}

uint64_t cudnn_attn_qo_length(const client_view&, cudnnAttnDescriptor_t d) noexcept {
  if (library_handle_of(d, traits, wire::cudnn::attn_descriptor_type) == nullptr
      || d->qo_max_seq_length < 0)
    return wire::extents::invalid_extent;
  return static_cast<uint64_t>(d->qo_max_seq_length);
}

bool cudnn_variant_pack(const client_view&, cudnnBackendDescriptor_t d) noexcept {
  return library_handle_of(d, traits, wire::cudnn::backend_descriptor_type) != nullptr
         && static_cast<const cudnnBackendDescriptorStruct*>(d)->type
              == CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR;
}

namespace {

/// Writes `value` to `out` unless the app passed NULL there.
template <class T, class U>
void put(T* out, const U& value) noexcept {
  if (out != nullptr)
    *out = static_cast<T>(value);
}

/// The server library's versions, as cudnnGetVersion's call returns them.
struct versions {
  size_t version = 0;
  size_t cudart = 0;
  size_t max_device = 0;
};

/// The server library's versions, asked once per process (a failed
/// question is asked again at the next call); the status of the question.
cudnnStatus_t server_versions(versions* out) noexcept {
  static std::mutex mutex;
  static versions known;
  static bool have = false;
  return static_cast<cudnnStatus_t>(library_guarded(traits, [&]() -> int {
    std::lock_guard<std::mutex> guard{mutex};
    if (!have) {
      size_t values[3] = {};
      library_call call(traits, generated::cudnn_ids::cudnnGetVersion, "cudnnGetVersion");
      if (auto st = call.host_output(values, sizeof(values)); st != CUDNN_STATUS_SUCCESS)
        return st;
      if (auto st = call.finish(true); st != CUDNN_STATUS_SUCCESS)
        return st;
      known = {values[0], values[1], values[2]};
      have = true;
    }
    *out = known;
    return CUDNN_STATUS_SUCCESS;
  }));
}

} // namespace

} // namespace gleam::interpose::cudnn

namespace cudnn = gleam::interpose::cudnn;

extern "C" {

GLEAM_INTERPOSE_EXPORT size_t cudnnGetVersion() {
  cudnn::versions v;
  return cudnn::server_versions(&v) == CUDNN_STATUS_SUCCESS ? v.version : 0;
}

GLEAM_INTERPOSE_EXPORT size_t cudnnGetCudartVersion() {
  cudnn::versions v;
  return cudnn::server_versions(&v) == CUDNN_STATUS_SUCCESS ? v.cudart : 0;
}

GLEAM_INTERPOSE_EXPORT size_t cudnnGetMaxDeviceVersion() {
  cudnn::versions v;
  return cudnn::server_versions(&v) == CUDNN_STATUS_SUCCESS ? v.max_device : 0;
}

GLEAM_INTERPOSE_EXPORT cudnnStatus_t cudnnGetProperty(libraryPropertyType type, int* value) {
  if (value == nullptr)
    return CUDNN_STATUS_BAD_PARAM;
  if (type != MAJOR_VERSION && type != MINOR_VERSION && type != PATCH_LEVEL)
    return CUDNN_STATUS_BAD_PARAM;
  cudnn::versions v;
  if (auto st = cudnn::server_versions(&v); st != CUDNN_STATUS_SUCCESS)
    return st;
  // cuDNN 9 numbers its versions major * 10000 + minor * 100 + patch.
  switch (type) {
    case MAJOR_VERSION:
      *value = static_cast<int>(v.version / 10000);
      break;
    case MINOR_VERSION:
      *value = static_cast<int>(v.version / 100 % 100);
      break;
    default:
      *value = static_cast<int>(v.version % 100);
      break;
  }
  return CUDNN_STATUS_SUCCESS;
}

GLEAM_INTERPOSE_EXPORT cudnnStatus_t cudnnGetStream(cudnnHandle_t handle, cudaStream_t* streamId) {
  if (gleam::interpose::library_handle_of(handle, cudnn::traits, gleam::wire::cudnn::handle_type)
      == nullptr)
    return CUDNN_STATUS_BAD_PARAM;
  if (streamId == nullptr)
    return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
  *streamId = handle->stream;
  return CUDNN_STATUS_SUCCESS;
}

GLEAM_INTERPOSE_EXPORT cudnnStatus_t
cudnnGetRNNDescriptor_v8(cudnnRNNDescriptor_t rnnDesc, cudnnRNNAlgo_t* algo,
                         cudnnRNNMode_t* cellMode, cudnnRNNBiasMode_t* biasMode,
                         cudnnDirectionMode_t* dirMode, cudnnRNNInputMode_t* inputMode,
                         cudnnDataType_t* dataType, cudnnDataType_t* mathPrec,
                         cudnnMathType_t* mathType, int32_t* inputSize, int32_t* hiddenSize,
                         int32_t* projSize, int32_t* numLayers,
                         cudnnDropoutDescriptor_t* dropoutDesc, uint32_t* auxFlags) {
  // The values of the app's last set (cudnn.spec): a NULL output is not
  // written, as the vendor's getter.
  if (gleam::interpose::library_handle_of(rnnDesc, cudnn::traits,
                                          gleam::wire::cudnn::rnn_descriptor_type)
      == nullptr)
    return CUDNN_STATUS_BAD_PARAM;
  const auto& d = *rnnDesc;
  cudnn::put(algo, d.algo);
  cudnn::put(cellMode, d.cell_mode);
  cudnn::put(biasMode, d.bias_mode);
  cudnn::put(dirMode, d.dir_mode);
  cudnn::put(inputMode, d.input_mode);
  cudnn::put(dataType, d.data_type);
  cudnn::put(mathPrec, d.math_prec);
  cudnn::put(mathType, d.math_type);
  cudnn::put(inputSize, d.input_size);
  cudnn::put(hiddenSize, d.hidden_size);
  cudnn::put(projSize, d.proj_size);
  cudnn::put(numLayers, d.num_layers);
  cudnn::put(dropoutDesc, d.dropout);
  cudnn::put(auxFlags, d.aux_flags);
  return CUDNN_STATUS_SUCCESS;
}

GLEAM_INTERPOSE_EXPORT cudnnStatus_t
cudnnGetAttnDescriptor(cudnnAttnDescriptor_t attnDesc, unsigned* attnMode, int* nHeads,
                       double* smScaler, cudnnDataType_t* dataType, cudnnDataType_t* computePrec,
                       cudnnMathType_t* mathType, cudnnDropoutDescriptor_t* attnDropoutDesc,
                       cudnnDropoutDescriptor_t* postDropoutDesc, int* qSize, int* kSize,
                       int* vSize, int* qProjSize, int* kProjSize, int* vProjSize, int* oProjSize,
                       int* qoMaxSeqLength, int* kvMaxSeqLength, int* maxBatchSize,
                       int* maxBeamSize) {
  if (gleam::interpose::library_handle_of(attnDesc, cudnn::traits,
                                          gleam::wire::cudnn::attn_descriptor_type)
      == nullptr)
    return CUDNN_STATUS_BAD_PARAM;
  const auto& d = *attnDesc;
  cudnn::put(attnMode, d.attn_mode);
  cudnn::put(nHeads, d.heads);
  cudnn::put(smScaler, d.sm_scaler);
  cudnn::put(dataType, d.data_type);
  cudnn::put(computePrec, d.compute_prec);
  cudnn::put(mathType, d.math_type);
  cudnn::put(attnDropoutDesc, d.attn_dropout);
  cudnn::put(postDropoutDesc, d.post_dropout);
  cudnn::put(qSize, d.q_size);
  cudnn::put(kSize, d.k_size);
  cudnn::put(vSize, d.v_size);
  cudnn::put(qProjSize, d.q_proj_size);
  cudnn::put(kProjSize, d.k_proj_size);
  cudnn::put(vProjSize, d.v_proj_size);
  cudnn::put(oProjSize, d.o_proj_size);
  cudnn::put(qoMaxSeqLength, std::max(d.qo_max_seq_length, 0));
  cudnn::put(kvMaxSeqLength, d.kv_max_seq_length);
  cudnn::put(maxBatchSize, d.max_batch_size);
  cudnn::put(maxBeamSize, d.max_beam_size);
  return CUDNN_STATUS_SUCCESS;
}

GLEAM_INTERPOSE_EXPORT void cudnnGetLastErrorString(char* message, size_t max_size) {
  if (message == nullptr || max_size == 0)
    return;
  // The server library's messages are short; its answer is at most 64 KiB.
  auto bytes = std::min<size_t>(max_size, size_t{64} << 10);
  auto st = gleam::interpose::library_guarded(cudnn::traits, [&]() -> int {
    gleam::interpose::library_call call(cudnn::traits,
                                        gleam::generated::cudnn_ids::cudnnGetLastErrorString,
                                        "cudnnGetLastErrorString");
    call.value(static_cast<uint64_t>(bytes));
    if (auto s = call.host_output(message, bytes); s != CUDNN_STATUS_SUCCESS)
      return s;
    return call.finish(true);
  });
  if (st != CUDNN_STATUS_SUCCESS)
    std::snprintf(message, bytes, "gleam: the server's last cuDNN error could not be read (%s)",
                  cudnnGetErrorString(static_cast<cudnnStatus_t>(st)));
  message[bytes - 1] = '\0';
}

GLEAM_INTERPOSE_EXPORT const char* cudnnGetErrorString(cudnnStatus_t status) {
  switch (status) {
#define GLEAM_CUDNN_STATUS(name) \
  case name:                     \
    return #name;
    GLEAM_CUDNN_STATUS(CUDNN_STATUS_SUCCESS)
    GLEAM_CUDNN_STATUS(CUDNN_STATUS_NOT_INITIALIZED)
    GLEAM_CUDNN_STATUS(CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH)
    GLEAM_CUDNN_STATUS(CUDNN_STATUS_SERIALIZATION_VERSION_MISMATCH)
    GLEAM_CUDNN_STATUS(CUDNN_STATUS_DEPRECATED)
    GLEAM_CUDNN_STATUS(CUDNN_STATUS_LICENSE_ERROR)
    GLEAM_CUDNN_STATUS(CUDNN_STATUS_RUNTIME_IN_PROGRESS)
    GLEAM_CUDNN_STATUS(CUDNN_STATUS_RUNTIME_FP_OVERFLOW)
    GLEAM_CUDNN_STATUS(CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED)
    GLEAM_CUDNN_STATUS(CUDNN_STATUS_BAD_PARAM)
    GLEAM_CUDNN_STATUS(CUDNN_STATUS_BAD_PARAM_NULL_POINTER)
    GLEAM_CUDNN_STATUS(CUDNN_STATUS_BAD_PARAM_MISALIGNED_POINTER)
    GLEAM_CUDNN_STATUS(CUDNN_STATUS_BAD_PARAM_NOT_FINALIZED)
    GLEAM_CUDNN_STATUS(CUDNN_STATUS_BAD_PARAM_OUT_OF_BOUND)
    GLEAM_CUDNN_STATUS(CUDNN_STATUS_BAD_PARAM_SIZE_INSUFFICIENT)
    GLEAM_CUDNN_STATUS(CUDNN_STATUS_BAD_PARAM_STREAM_MISMATCH)
    GLEAM_CUDNN_STATUS(CUDNN_STATUS_BAD_PARAM_SHAPE_MISMATCH)
    GLEAM_CUDNN_STATUS(CUDNN_STATUS_BAD_PARAM_DUPLICATED_ENTRIES)
    GLEAM_CUDNN_STATUS(CUDNN_STATUS_BAD_PARAM_ATTRIBUTE_TYPE)
    GLEAM_CUDNN_STATUS(CUDNN_STATUS_BAD_PARAM_CUDA_GRAPH_MISMATCH)
    GLEAM_CUDNN_STATUS(CUDNN_STATUS_BAD_PARAM_DESCRIPTOR_TYPE)
    GLEAM_CUDNN_STATUS(CUDNN_STATUS_NOT_SUPPORTED)
    GLEAM_CUDNN_STATUS(CUDNN_STATUS_NOT_SUPPORTED_GRAPH_PATTERN)
    GLEAM_CUDNN_STATUS(CUDNN_STATUS_NOT_SUPPORTED_SHAPE)
    GLEAM_CUDNN_STATUS(CUDNN_STATUS_NOT_SUPPORTED_DATA_TYPE)
    GLEAM_CUDNN_STATUS(CUDNN_STATUS_NOT_SUPPORTED_LAYOUT)
    GLEAM_CUDNN_STATUS(CUDNN_STATUS_NOT_SUPPORTED_INCOMPATIBLE_CUDA_DRIVER)
    GLEAM_CUDNN_STATUS(CUDNN_STATUS_NOT_SUPPORTED_INCOMPATIBLE_CUDART)
    GLEAM_CUDNN_STATUS(CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH)
    GLEAM_CUDNN_STATUS(CUDNN_STATUS_NOT_SUPPORTED_RUNTIME_PREREQUISITE_MISSING)
    GLEAM_CUDNN_STATUS(CUDNN_STATUS_NOT_SUPPORTED_SUBLIBRARY_UNAVAILABLE)
    GLEAM_CUDNN_STATUS(CUDNN_STATUS_NOT_SUPPORTED_SHARED_MEMORY_INSUFFICIENT)
    GLEAM_CUDNN_STATUS(CUDNN_STATUS_NOT_SUPPORTED_PADDING)
    GLEAM_CUDNN_STATUS(CUDNN_STATUS_NOT_SUPPORTED_BAD_LAUNCH_PARAM)
    GLEAM_CUDNN_STATUS(CUDNN_STATUS_NOT_SUPPORTED_CUDA_GRAPH_NATIVE_API)
    GLEAM_CUDNN_STATUS(CUDNN_STATUS_NOT_SUPPORTED_INVALID_DYNAMIC_SHAPE)
    GLEAM_CUDNN_STATUS(CUDNN_STATUS_INTERNAL_ERROR)
    GLEAM_CUDNN_STATUS(CUDNN_STATUS_INTERNAL_ERROR_COMPILATION_FAILED)
    GLEAM_CUDNN_STATUS(CUDNN_STATUS_INTERNAL_ERROR_UNEXPECTED_VALUE)
    GLEAM_CUDNN_STATUS(CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED)
    GLEAM_CUDNN_STATUS(CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED)
    GLEAM_CUDNN_STATUS(CUDNN_STATUS_INTERNAL_ERROR_BAD_LAUNCH_PARAM)
    GLEAM_CUDNN_STATUS(CUDNN_STATUS_INTERNAL_ERROR_TEXTURE_CREATION_FAILED)
    GLEAM_CUDNN_STATUS(CUDNN_STATUS_EXECUTION_FAILED)
    GLEAM_CUDNN_STATUS(CUDNN_STATUS_EXECUTION_FAILED_CUDA_DRIVER)
    GLEAM_CUDNN_STATUS(CUDNN_STATUS_EXECUTION_FAILED_CUBLAS)
    GLEAM_CUDNN_STATUS(CUDNN_STATUS_EXECUTION_FAILED_CUDART)
    GLEAM_CUDNN_STATUS(CUDNN_STATUS_EXECUTION_FAILED_CURAND)
#undef GLEAM_CUDNN_STATUS
    default:
      break;
  }
  // The vendor's answer for a value it does not know.
  return "CUDNN_UNKNOWN_STATUS";
}

} // extern "C"
