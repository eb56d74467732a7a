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
