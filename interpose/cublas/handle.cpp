// cuBLAS handles and their settings, versions and status strings. Settings
// that change what the library computes travel to the server (stream,
// workspace, math mode, atomics mode) as error-code-only ops
// (blas::submit), like cublasDestroy: the client copy is updated at the
// call and the getters answer from it. cublasCreate waits for its answer.
#include <new>

#include "interpose/blas/common.hpp"
#include "interpose/cublas_export.hpp"
#include "interpose/runtime.hpp"

using gleam::interpose::blas::guarded;
using gleam::interpose::blas::handle_state;
using gleam::interpose::blas::state_of;
namespace blas = gleam::interpose::blas;
namespace proto = gleam::proto;

extern "C" {

GLEAM_INTERPOSE_EXPORT cublasStatus_t cublasCreate_v2(cublasHandle_t* handle) {
  return guarded([&] {
    if (handle == nullptr)
      return CUBLAS_STATUS_INVALID_VALUE;
    auto* ctx = new (std::nothrow) cublasContext;
    if (ctx == nullptr)
      return CUBLAS_STATUS_ALLOC_FAILED;
    ctx->state.id = gleam::interpose::next_handle();
    proto::Op op;
    op.mutable_blas_create()->set_handle(ctx->state.id);
    auto s = blas::run(std::move(op));
    if (s != CUBLAS_STATUS_SUCCESS) {
      ctx->state.magic = 0;
      delete ctx;
      return s;
    }
    *handle = ctx;
    return CUBLAS_STATUS_SUCCESS;
  });
}

GLEAM_INTERPOSE_EXPORT cublasStatus_t cublasDestroy_v2(cublasHandle_t handle) {
  return guarded([&] {
    auto* st = state_of(handle);
    if (st == nullptr || st->lt)
      return CUBLAS_STATUS_NOT_INITIALIZED;
    proto::Op op;
    op.mutable_blas_destroy()->set_handle(st->id);
    auto s = blas::submit(std::move(op));
    st->magic = 0;
    delete handle;
    return s;
  });
}

GLEAM_INTERPOSE_EXPORT cublasStatus_t cublasGetVersion_v2(cublasHandle_t, int* version) {
  if (version == nullptr)
    return CUBLAS_STATUS_INVALID_VALUE;
  *version = CUBLAS_VERSION;
  return CUBLAS_STATUS_SUCCESS;
}

GLEAM_INTERPOSE_EXPORT cublasStatus_t cublasGetProperty(libraryPropertyType type, int* value) {
  if (value == nullptr)
    return CUBLAS_STATUS_INVALID_VALUE;
  switch (type) {
    case MAJOR_VERSION:
      *value = CUBLAS_VER_MAJOR;
      return CUBLAS_STATUS_SUCCESS;
    case MINOR_VERSION:
      *value = CUBLAS_VER_MINOR;
      return CUBLAS_STATUS_SUCCESS;
    case PATCH_LEVEL:
      *value = CUBLAS_VER_PATCH;
      return CUBLAS_STATUS_SUCCESS;
  }
  return CUBLAS_STATUS_INVALID_VALUE;
}

GLEAM_INTERPOSE_EXPORT size_t cublasGetCudartVersion(void) {
  return CUDART_VERSION;
}

GLEAM_INTERPOSE_EXPORT const char* cublasGetStatusName(cublasStatus_t status) {
  return blas::status_name(status);
}

GLEAM_INTERPOSE_EXPORT const char* cublasGetStatusString(cublasStatus_t status) {
  return blas::status_string(status);
}

GLEAM_INTERPOSE_EXPORT cublasStatus_t cublasSetStream_v2(cublasHandle_t handle,
                                                         cudaStream_t streamId) {
  return guarded([&] {
    auto* st = state_of(handle);
    if (st == nullptr)
      return CUBLAS_STATUS_NOT_INITIALIZED;
    proto::Op op;
    auto* m = op.mutable_blas_set_stream();
    m->set_handle(st->id);
    m->set_stream(gleam::interpose::wire_stream(streamId));
    auto s = blas::submit(std::move(op));
    if (s == CUBLAS_STATUS_SUCCESS) {
      st->stream = streamId;
      // Like the vendor: a new stream drops a workspace set by the app.
      st->workspace = nullptr;
      st->workspace_size = 0;
    }
    return s;
  });
}

GLEAM_INTERPOSE_EXPORT cublasStatus_t cublasGetStream_v2(cublasHandle_t handle,
                                                         cudaStream_t* streamId) {
  auto* st = state_of(handle);
  if (st == nullptr)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  if (streamId == nullptr)
    return CUBLAS_STATUS_INVALID_VALUE;
  *streamId = st->stream;
  return CUBLAS_STATUS_SUCCESS;
}

GLEAM_INTERPOSE_EXPORT cublasStatus_t cublasSetWorkspace_v2(cublasHandle_t handle,
                                                            void* workspace,
                                                            size_t workspaceSizeInBytes) {
  return guarded([&] {
    auto* st = state_of(handle);
    if (st == nullptr)
      return CUBLAS_STATUS_NOT_INITIALIZED;
    // The vendor wants a workspace aligned to 256 bytes; a range that runs
    // past one of our allocations fails here too, not later.
    if (reinterpret_cast<uintptr_t>(workspace) % 256 != 0
        || !gleam::interpose::fits_allocation(workspace, workspaceSizeInBytes))
      return CUBLAS_STATUS_INVALID_VALUE;
    proto::Op op;
    auto* m = op.mutable_blas_set_workspace();
    m->set_handle(st->id);
    m->set_workspace(reinterpret_cast<uintptr_t>(workspace));
    m->set_size(workspaceSizeInBytes);
    auto s = blas::submit(std::move(op));
    if (s == CUBLAS_STATUS_SUCCESS) {
      st->workspace = workspace;
      st->workspace_size = workspaceSizeInBytes;
    }
    return s;
  });
}

GLEAM_INTERPOSE_EXPORT cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode) {
  return guarded([&] {
    auto* st = state_of(handle);
    if (st == nullptr)
      return CUBLAS_STATUS_NOT_INITIALIZED;
    proto::Op op;
    auto* m = op.mutable_blas_set_math_mode();
    m->set_handle(st->id);
    m->set_mode(static_cast<int32_t>(mode));
    auto s = blas::submit(std::move(op));
    if (s == CUBLAS_STATUS_SUCCESS)
      st->math_mode = mode;
    return s;
  });
}

GLEAM_INTERPOSE_EXPORT cublasStatus_t cublasGetMathMode(cublasHandle_t handle, cublasMath_t* mode) {
  auto* st = state_of(handle);
  if (st == nullptr)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  if (mode == nullptr)
    return CUBLAS_STATUS_INVALID_VALUE;
  *mode = st->math_mode;
  return CUBLAS_STATUS_SUCCESS;
}

GLEAM_INTERPOSE_EXPORT cublasStatus_t cublasSetPointerMode_v2(cublasHandle_t handle,
                                                              cublasPointerMode_t mode) {
  auto* st = state_of(handle);
  if (st == nullptr)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  // The mode travels with each call that has scalars (generated calls);
  // the gemm family refuses the device mode at the call.
  if (mode != CUBLAS_POINTER_MODE_HOST && mode != CUBLAS_POINTER_MODE_DEVICE)
    return CUBLAS_STATUS_INVALID_VALUE;
  st->pointer_mode = mode;
  return CUBLAS_STATUS_SUCCESS;
}

GLEAM_INTERPOSE_EXPORT cublasStatus_t cublasGetPointerMode_v2(cublasHandle_t handle,
                                                              cublasPointerMode_t* mode) {
  auto* st = state_of(handle);
  if (st == nullptr)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  if (mode == nullptr)
    return CUBLAS_STATUS_INVALID_VALUE;
  *mode = st->pointer_mode;
  return CUBLAS_STATUS_SUCCESS;
}

GLEAM_INTERPOSE_EXPORT cublasStatus_t cublasSetAtomicsMode(cublasHandle_t handle,
                                                           cublasAtomicsMode_t mode) {
  return guarded([&] {
    auto* st = state_of(handle);
    if (st == nullptr)
      return CUBLAS_STATUS_NOT_INITIALIZED;
    proto::Op op;
    auto* m = op.mutable_blas_set_atomics_mode();
    m->set_handle(st->id);
    m->set_mode(static_cast<int32_t>(mode));
    auto s = blas::submit(std::move(op));
    if (s == CUBLAS_STATUS_SUCCESS)
      st->atomics_mode = mode;
    return s;
  });
}

GLEAM_INTERPOSE_EXPORT cublasStatus_t cublasGetAtomicsMode(cublasHandle_t handle,
                                                           cublasAtomicsMode_t* mode) {
  auto* st = state_of(handle);
  if (st == nullptr)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  if (mode == nullptr)
    return CUBLAS_STATUS_INVALID_VALUE;
  *mode = st->atomics_mode;
  return CUBLAS_STATUS_SUCCESS;
}

} // extern "C"
