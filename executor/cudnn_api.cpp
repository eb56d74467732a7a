#include "executor/cudnn_api.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <array>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "executor/blas_api.hpp"
#include "executor/error.hpp"
#include "executor/vendor_library.hpp"
#include "wire/cudnn_backend.hpp"

namespace gleam::executor {

cudnn_api::~cudnn_api() {
  if (lib_ != nullptr)
    ::dlclose(lib_);
}

namespace {

/// The vendor's spatial transformer setter and destructor, which load()
/// wraps so that the dimensions of each descriptor are known
/// (cudnn_note_spatial_transformer). Set once per process; every load()
/// opens the same library.
decltype(&::cudnnSetSpatialTransformerNdDescriptor) vendor_set_transformer = nullptr;
decltype(&::cudnnDestroySpatialTransformerDescriptor) vendor_destroy_transformer = nullptr;

cudnnStatus_t set_transformer(cudnnSpatialTransformerDescriptor_t d, cudnnSamplerType_t sampler,
                              cudnnDataType_t type, int dims, const int dim[]) {
  auto st = vendor_set_transformer(d, sampler, type, dims, dim);
  if (st == CUDNN_STATUS_SUCCESS)
    cudnn_note_spatial_transformer(d, type, dims, dim);
  return st;
}

cudnnStatus_t destroy_transformer(cudnnSpatialTransformerDescriptor_t d) {
  cudnn_note_spatial_transformer(d, CUDNN_DATA_FLOAT, 0, nullptr);
  return vendor_destroy_transformer(d);
}

} // namespace

caf::expected<std::unique_ptr<cudnn_api>> cudnn_api::load(const std::string& dir) {
  // cuDNN's engines open cuBLASLt and cuBLAS by SONAME. The vendor's, found
  // by explicit path and loaded RTLD_GLOBAL first, then answer them, never
  // a library of the same name that Gleam's bundle holds. Without them
  // cuDNN still runs the engines that need neither.
  static_cast<void>(blas_api::shared());
  auto lib = open_vendor_library(dir, {"libcudnn.so.9", "GLEAM_CUDNN_DIR", "cuDNN 9"});
  if (!lib)
    return std::move(lib.error());
  auto api = std::make_unique<cudnn_api>();
  api->lib_ = *lib;
  bool any = false;
#define X(name)                                                                  \
  api->name = reinterpret_cast<decltype(&::name)>(::dlsym(api->lib_, #name));    \
  any = any || api->name != nullptr;
#include "executor/cudnn_generated_api.inc"
  X(cudnnGetCudartVersion)
  X(cudnnGetMaxDeviceVersion)
  X(cudnnGetAttnDescriptor)
#undef X
  if (api->cudnnSetSpatialTransformerNdDescriptor != nullptr
      && api->cudnnDestroySpatialTransformerDescriptor != nullptr) {
    static std::once_flag wrapped;
    std::call_once(wrapped, [&] {
      vendor_set_transformer = api->cudnnSetSpatialTransformerNdDescriptor;
      vendor_destroy_transformer = api->cudnnDestroySpatialTransformerDescriptor;
    });
    api->cudnnSetSpatialTransformerNdDescriptor = set_transformer;
    api->cudnnDestroySpatialTransformerDescriptor = destroy_transformer;
  }
  if (!any)
    return make_error(error_code::missing_symbol,
                      "the loaded libcudnn.so.9 defines none of cuDNN's functions: install "
                      "cuDNN 9 for CUDA 13 (PyTorch's nvidia-cudnn wheel has it; point "
                      "GLEAM_CUDNN_DIR at its lib directory)");
  return api;
}

caf::expected<cudnn_api*> cudnn_api::shared() {
  static std::once_flag once;
  static caf::expected<std::unique_ptr<cudnn_api>>* loaded = nullptr;
  std::call_once(once, [] {
    loaded = new caf::expected<std::unique_ptr<cudnn_api>>(load());
  });
  if (!*loaded)
    return loaded->error();
  return loaded->value().get();
}

namespace {

using wire::extents::invalid_extent;
using wire::extents::mul;

/// The data type of tensor `d` (cudnnGetTensorNdDescriptor); -1 when the
/// library refuses or lacks the query.
int tensor_type(cudnn_api& api, cudnnTensorDescriptor_t d) noexcept {
  if (d == nullptr || api.cudnnGetTensorNdDescriptor == nullptr)
    return -1;
  cudnnDataType_t type{};
  int dims = 0;
  int dim[CUDNN_DIM_MAX] = {};
  int stride[CUDNN_DIM_MAX] = {};
  if (api.cudnnGetTensorNdDescriptor(d, CUDNN_DIM_MAX, &type, &dims, dim, stride)
      != CUDNN_STATUS_SUCCESS)
    return -1;
  return static_cast<int>(type);
}

/// The data type of filter `d` (cudnnGetFilterNdDescriptor); -1 likewise.
int filter_type(cudnn_api& api, cudnnFilterDescriptor_t d) noexcept {
  if (d == nullptr || api.cudnnGetFilterNdDescriptor == nullptr)
    return -1;
  cudnnDataType_t type{};
  cudnnTensorFormat_t format{};
  int dims = 0;
  int dim[CUDNN_DIM_MAX] = {};
  if (api.cudnnGetFilterNdDescriptor(d, CUDNN_DIM_MAX, &type, &format, &dims, dim)
      != CUDNN_STATUS_SUCCESS)
    return -1;
  return static_cast<int>(type);
}

} // namespace

uint64_t cudnn_tensor_bytes(cudnn_api& api, cudnnTensorDescriptor_t d) noexcept {
  if (d == nullptr)
    return 0;
  size_t bytes = 0;
  if (api.cudnnGetTensorSizeInBytes == nullptr
      || api.cudnnGetTensorSizeInBytes(d, &bytes) != CUDNN_STATUS_SUCCESS)
    return invalid_extent;
  return bytes;
}

uint64_t cudnn_filter_bytes(cudnn_api& api, cudnnFilterDescriptor_t d) noexcept {
  if (d == nullptr)
    return 0;
  size_t bytes = 0;
  if (api.cudnnGetFilterSizeInBytes == nullptr
      || api.cudnnGetFilterSizeInBytes(d, &bytes) != CUDNN_STATUS_SUCCESS)
    return invalid_extent;
  return bytes;
}

uint64_t cudnn_scaling_bytes(cudnn_api& api, cudnnTensorDescriptor_t d) noexcept {
  auto t = tensor_type(api, d);
  return t < 0 ? invalid_extent : wire::cudnn::scaling_bytes(t);
}

uint64_t cudnn_scaling_bytes(cudnn_api& api, cudnnFilterDescriptor_t d) noexcept {
  auto t = filter_type(api, d);
  return t < 0 ? invalid_extent : wire::cudnn::scaling_bytes(t);
}

uint64_t cudnn_value_bytes(cudnn_api& api, cudnnTensorDescriptor_t d) noexcept {
  auto bytes = wire::cudnn::data_type_bytes(tensor_type(api, d));
  return bytes == 0 ? invalid_extent : bytes;
}

namespace {

/// The data type and n, c, h, w of each spatial transformer descriptor.
struct transformer_shape {
  cudnnDataType_t type = CUDNN_DATA_FLOAT;
  std::array<uint64_t, 4> dim{};
};

std::mutex transformers_mutex;
std::map<const void*, transformer_shape>& transformers() {
  static std::map<const void*, transformer_shape> known;
  return known;
}

/// The element bytes of `type`; invalid_extent when it has no whole bytes.
uint64_t element_bytes(int type) noexcept {
  auto bytes = wire::cudnn::data_type_bytes(type);
  return bytes == 0 ? invalid_extent : bytes;
}

/// What the library says of RNN data descriptor `d`; false when it refuses.
struct rnn_data_shape {
  cudnnDataType_t type{};
  cudnnRNNDataLayout_t layout{};
  int max_seq = 0;
  int batch = 0;
  int vector = 0;
  /// The sequence lengths (only when asked for).
  std::vector<int> lengths;
};

/// The shape of `d`; with its sequence lengths when `lengths`.
bool rnn_data_of(cudnn_api& api, cudnnRNNDataDescriptor_t d, rnn_data_shape* out,
                 bool lengths = false) noexcept {
  if (d == nullptr || api.cudnnGetRNNDataDescriptor == nullptr)
    return false;
  double fill[2] = {};
  int length = 0;
  if (api.cudnnGetRNNDataDescriptor(d, &out->type, &out->layout, &out->max_seq, &out->batch,
                                    &out->vector, 1, &length, fill)
        != CUDNN_STATUS_SUCCESS
      || out->max_seq < 0 || out->batch < 0 || out->vector < 0)
    return false;
  if (!lengths)
    return true;
  out->lengths.assign(static_cast<size_t>(out->batch), 0);
  return out->batch == 0
         || api.cudnnGetRNNDataDescriptor(d, &out->type, &out->layout, &out->max_seq,
                                          &out->batch, &out->vector, out->batch,
                                          out->lengths.data(), fill)
              == CUDNN_STATUS_SUCCESS;
}

/// Whether `dims` dimensions (1 to CUDNN_DIM_MAX) at `dim` are none
/// negative.
bool shape_ok(int dims, const int* dim) noexcept {
  if (dims <= 0 || dims > CUDNN_DIM_MAX)
    return false;
  for (int i = 0; i < dims; ++i)
    if (dim[i] < 0)
      return false;
  return true;
}

/// The data type and the four dimensions of sequence data descriptor `d`.
bool seq_data_of(cudnn_api& api, cudnnSeqDataDescriptor_t d, cudnnDataType_t* type,
                 int dim[CUDNN_SEQDATA_DIM_COUNT]) noexcept {
  if (d == nullptr || api.cudnnGetSeqDataDescriptor == nullptr)
    return false;
  int dims = 0;
  cudnnSeqDataAxis_t axes[CUDNN_SEQDATA_DIM_COUNT] = {};
  size_t lengths = 0;
  int length = 0;
  double fill[2] = {};
  return api.cudnnGetSeqDataDescriptor(d, type, &dims, CUDNN_SEQDATA_DIM_COUNT, dim, axes,
                                       &lengths, 1, &length, fill)
           == CUDNN_STATUS_SUCCESS
         && dims == CUDNN_SEQDATA_DIM_COUNT && shape_ok(dims, dim);
}

/// The dimensions of tensor `d` (at most CUDNN_DIM_MAX) and its data type.
bool tensor_of(cudnn_api& api, cudnnTensorDescriptor_t d, int* dims, int dim[CUDNN_DIM_MAX],
               cudnnDataType_t* type) noexcept {
  if (d == nullptr || api.cudnnGetTensorNdDescriptor == nullptr)
    return false;
  int stride[CUDNN_DIM_MAX] = {};
  return api.cudnnGetTensorNdDescriptor(d, CUDNN_DIM_MAX, type, dims, dim, stride)
           == CUDNN_STATUS_SUCCESS
         && shape_ok(*dims, dim);
}

/// The dimensions of filter `d` and its data type.
bool filter_of(cudnn_api& api, cudnnFilterDescriptor_t d, int* dims, int dim[CUDNN_DIM_MAX],
               cudnnDataType_t* type) noexcept {
  if (d == nullptr || api.cudnnGetFilterNdDescriptor == nullptr)
    return false;
  cudnnTensorFormat_t format{};
  return api.cudnnGetFilterNdDescriptor(d, CUDNN_DIM_MAX, type, &format, dims, dim)
           == CUDNN_STATUS_SUCCESS
         && shape_ok(*dims, dim);
}

} // namespace

void cudnn_note_spatial_transformer(const void* d, cudnnDataType_t type, int dims,
                                    const int* dim) noexcept {
  std::lock_guard<std::mutex> guard{transformers_mutex};
  if (dims != 4 || dim == nullptr) {
    // Only 4-d transformers exist in cuDNN; anything else is forgotten.
    transformers().erase(d);
    return;
  }
  transformer_shape shape;
  shape.type = type;
  for (int i = 0; i < 4; ++i)
    shape.dim[static_cast<size_t>(i)] = dim[i] < 0 ? invalid_extent : static_cast<uint64_t>(dim[i]);
  transformers()[d] = shape;
}

uint64_t cudnn_type_bytes(cudnn_api&, cudnnDataType_t t) noexcept {
  return element_bytes(t);
}

uint64_t cudnn_value_bytes(cudnn_api& api, cudnnRNNDataDescriptor_t d) noexcept {
  rnn_data_shape s;
  return rnn_data_of(api, d, &s) ? element_bytes(s.type) : invalid_extent;
}

uint64_t cudnn_value_bytes(cudnn_api& api, cudnnSeqDataDescriptor_t d) noexcept {
  cudnnDataType_t type{};
  int dim[CUDNN_SEQDATA_DIM_COUNT] = {};
  return seq_data_of(api, d, &type, dim) ? element_bytes(type) : invalid_extent;
}

uint64_t cudnn_tensor_dim(cudnn_api& api, cudnnTensorDescriptor_t d, int i) noexcept {
  int dims = 0;
  int dim[CUDNN_DIM_MAX] = {};
  cudnnDataType_t type{};
  if (!tensor_of(api, d, &dims, dim, &type) || i < 0 || i >= dims)
    return invalid_extent;
  return static_cast<uint64_t>(dim[i]);
}

uint64_t cudnn_rnn_data_bytes(cudnn_api& api, cudnnRNNDataDescriptor_t d) noexcept {
  rnn_data_shape s;
  if (!rnn_data_of(api, d, &s, true))
    return invalid_extent;
  // Packed data holds each sequence's steps only; the unpacked layouts
  // pad every sequence to maxSeqLength.
  uint64_t steps = mul(static_cast<uint64_t>(s.max_seq), static_cast<uint64_t>(s.batch));
  if (s.layout == CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED) {
    steps = 0;
    for (int n : s.lengths) {
      if (n < 0)
        return invalid_extent;
      steps += static_cast<uint64_t>(std::min(n, s.max_seq));
    }
  }
  return mul(mul(steps, static_cast<uint64_t>(s.vector)), element_bytes(s.type));
}

uint64_t cudnn_rnn_batch(cudnn_api& api, cudnnRNNDataDescriptor_t d) noexcept {
  rnn_data_shape s;
  return rnn_data_of(api, d, &s) ? static_cast<uint64_t>(s.batch) : invalid_extent;
}

uint64_t cudnn_seq_data_bytes(cudnn_api& api, cudnnSeqDataDescriptor_t d) noexcept {
  cudnnDataType_t type{};
  int dim[CUDNN_SEQDATA_DIM_COUNT] = {};
  if (!seq_data_of(api, d, &type, dim))
    return invalid_extent;
  uint64_t n = element_bytes(type);
  for (int i = 0; i < CUDNN_SEQDATA_DIM_COUNT; ++i)
    n = mul(n, static_cast<uint64_t>(dim[i]));
  return n;
}

uint64_t cudnn_seq_batch(cudnn_api& api, cudnnSeqDataDescriptor_t d) noexcept {
  cudnnDataType_t type{};
  int dim[CUDNN_SEQDATA_DIM_COUNT] = {};
  if (!seq_data_of(api, d, &type, dim))
    return invalid_extent;
  return mul(static_cast<uint64_t>(dim[CUDNN_SEQDATA_BATCH_DIM]),
             static_cast<uint64_t>(dim[CUDNN_SEQDATA_BEAM_DIM]));
}

uint64_t cudnn_attn_qo_length(cudnn_api& api, cudnnAttnDescriptor_t d) noexcept {
  if (d == nullptr || api.cudnnGetAttnDescriptor == nullptr)
    return invalid_extent;
  unsigned mode = 0;
  int heads = 0, sizes[7] = {}, qo = -1, kv = 0, batch = 0, beam = 0;
  double scaler = 0;
  cudnnDataType_t type{}, precision{};
  cudnnMathType_t math{};
  cudnnDropoutDescriptor_t attn_dropout = nullptr, post_dropout = nullptr;
  if (api.cudnnGetAttnDescriptor(d, &mode, &heads, &scaler, &type, &precision, &math,
                                 &attn_dropout, &post_dropout, &sizes[0], &sizes[1], &sizes[2],
                                 &sizes[3], &sizes[4], &sizes[5], &sizes[6], &qo, &kv, &batch,
                                 &beam)
        != CUDNN_STATUS_SUCCESS
      || qo < 0)
    return invalid_extent;
  return static_cast<uint64_t>(qo);
}

uint64_t cudnn_grid_bytes(cudnn_api& api, cudnnTensorDescriptor_t d) noexcept {
  int dims = 0;
  int dim[CUDNN_DIM_MAX] = {};
  cudnnDataType_t type{};
  if (!tensor_of(api, d, &dims, dim, &type) || dims != 4)
    return invalid_extent;
  return mul(mul(mul(mul(static_cast<uint64_t>(dim[0]), static_cast<uint64_t>(dim[2])),
                     static_cast<uint64_t>(dim[3])),
                 2),
             element_bytes(type));
}

uint64_t cudnn_grid_bytes(cudnn_api&, cudnnSpatialTransformerDescriptor_t d) noexcept {
  std::lock_guard<std::mutex> guard{transformers_mutex};
  auto i = transformers().find(d);
  if (i == transformers().end())
    return invalid_extent;
  const auto& s = i->second;
  return mul(mul(mul(mul(s.dim[0], s.dim[2]), s.dim[3]), 2), element_bytes(s.type));
}

uint64_t cudnn_theta_bytes(cudnn_api&, cudnnSpatialTransformerDescriptor_t d) noexcept {
  std::lock_guard<std::mutex> guard{transformers_mutex};
  auto i = transformers().find(d);
  if (i == transformers().end())
    return invalid_extent;
  return mul(mul(i->second.dim[0], 6), element_bytes(i->second.type));
}

uint64_t cudnn_im2col_bytes(cudnn_api& api, cudnnTensorDescriptor_t x, cudnnFilterDescriptor_t w,
                            cudnnConvolutionDescriptor_t conv) noexcept {
  int xdims = 0, wdims = 0;
  int xdim[CUDNN_DIM_MAX] = {}, wdim[CUDNN_DIM_MAX] = {}, ydim[CUDNN_DIM_MAX] = {};
  cudnnDataType_t type{}, wtype{};
  if (!tensor_of(api, x, &xdims, xdim, &type) || !filter_of(api, w, &wdims, wdim, &wtype)
      || xdims != wdims || xdims < 3 || conv == nullptr
      || api.cudnnGetConvolutionNdForwardOutputDim == nullptr
      || api.cudnnGetConvolutionNdForwardOutputDim(conv, x, w, xdims, ydim)
           != CUDNN_STATUS_SUCCESS)
    return invalid_extent;
  // Rows: n times the output's spatial size; columns: c times the
  // filter's spatial size.
  uint64_t rows = static_cast<uint64_t>(xdim[0]);
  uint64_t cols = static_cast<uint64_t>(xdim[1]);
  for (int i = 2; i < xdims; ++i) {
    if (ydim[i] < 0)
      return invalid_extent;
    rows = mul(rows, static_cast<uint64_t>(ydim[i]));
    cols = mul(cols, static_cast<uint64_t>(wdim[i]));
  }
  return mul(mul(rows, cols), element_bytes(type));
}

uint64_t cudnn_label_count(cudnn_api& api, cudnnTensorDescriptor_t d,
                           const void* lengths) noexcept {
  return wire::cudnn::label_count(cudnn_tensor_dim(api, d, 1), static_cast<const int*>(lengths));
}

uint64_t cudnn_bias_bytes(cudnn_api& api, cudnnFilterDescriptor_t w) noexcept {
  int dims = 0;
  int dim[CUDNN_DIM_MAX] = {};
  cudnnDataType_t type{};
  if (!filter_of(api, w, &dims, dim, &type))
    return invalid_extent;
  return mul(static_cast<uint64_t>(dim[0]), sizeof(float));
}

} // namespace gleam::executor
