#include "executor/cudnn_api.hpp"

#include <dlfcn.h>

#include <mutex>
#include <utility>

#include "executor/blas_api.hpp"
#include "executor/error.hpp"
#include "executor/vendor_library.hpp"
#include "wire/cudnn_backend.hpp"

namespace gleam::executor {

cudnn_api::~cudnn_api() {
  if (lib_ != nullptr)
    ::dlclose(lib_);
}

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
#undef X
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

} // namespace gleam::executor
