#pragma once

#include <memory>
#include <string>

#include <caf/expected.hpp>
#include <cublasLt.h>
#include <cublas_api.h>

namespace gleam::executor {

/// Every cuBLAS entry point the executor calls, named as cublas_api.h
/// declares them (the _v2 and _64 ABIs of cuBLAS 13); cublasGemmEx,
/// cublasGemmStridedBatchedEx and cublasGemmBatchedEx are declared by hand
/// in blas_api (the header overloads them).
#define GLEAM_EXECUTOR_CUBLAS_FUNCTIONS(X)                                    \
  X(cublasCreate_v2)                                                           \
  X(cublasDestroy_v2)                                                          \
  X(cublasSetStream_v2)                                                        \
  X(cublasSetWorkspace_v2)                                                     \
  X(cublasSetMathMode)                                                         \
  X(cublasSetAtomicsMode)                                                      \
  X(cublasSetPointerMode_v2)                                                   \
  X(cublasGetStatusName)                                                       \
  X(cublasSgemm_v2)                                                            \
  X(cublasSgemm_v2_64)                                                         \
  X(cublasDgemm_v2)                                                            \
  X(cublasDgemm_v2_64)                                                         \
  X(cublasHgemm)                                                               \
  X(cublasHgemm_64)                                                            \
  X(cublasGemmEx_64)                                                           \
  X(cublasSgemmStridedBatched)                                                 \
  X(cublasSgemmStridedBatched_64)                                              \
  X(cublasDgemmStridedBatched)                                                 \
  X(cublasDgemmStridedBatched_64)                                              \
  X(cublasHgemmStridedBatched)                                                 \
  X(cublasHgemmStridedBatched_64)                                              \
  X(cublasGemmStridedBatchedEx_64)                                             \
  X(cublasSgemmBatched)                                                        \
  X(cublasSgemmBatched_64)                                                     \
  X(cublasDgemmBatched)                                                        \
  X(cublasDgemmBatched_64)                                                     \
  X(cublasHgemmBatched)                                                        \
  X(cublasHgemmBatched_64)                                                     \
  X(cublasGemmBatchedEx_64)

/// Every cuBLASLt entry point the executor calls, named as cublasLt.h
/// declares them.
#define GLEAM_EXECUTOR_CUBLASLT_FUNCTIONS(X)                                  \
  X(cublasLtCreate)                                                            \
  X(cublasLtDestroy)                                                           \
  X(cublasLtMatmulDescCreate)                                                  \
  X(cublasLtMatmulDescDestroy)                                                 \
  X(cublasLtMatmulDescSetAttribute)                                            \
  X(cublasLtMatrixLayoutCreate)                                                \
  X(cublasLtMatrixLayoutDestroy)                                               \
  X(cublasLtMatrixLayoutSetAttribute)                                          \
  X(cublasLtMatmulPreferenceCreate)                                            \
  X(cublasLtMatmulPreferenceDestroy)                                           \
  X(cublasLtMatmulPreferenceSetAttribute)                                      \
  X(cublasLtMatmulAlgoGetHeuristic)                                            \
  X(cublasLtMatmul)                                                            \
  X(cublasLtMatmulAlgoGetIds)                                                  \
  X(cublasLtMatmulAlgoInit)                                                    \
  X(cublasLtMatmulAlgoCheck)                                                   \
  X(cublasLtMatmulAlgoCapGetAttribute)                                         \
  X(cublasLtMatmulAlgoConfigGetAttribute)                                      \
  X(cublasLtMatmulAlgoConfigSetAttribute)                                      \
  X(cublasLtMatrixTransformDescCreate)                                         \
  X(cublasLtMatrixTransformDescDestroy)                                        \
  X(cublasLtMatrixTransformDescSetAttribute)                                   \
  X(cublasLtMatrixTransform)                                                   \
  X(cublasLtHeuristicsCacheGetCapacity)                                        \
  X(cublasLtHeuristicsCacheSetCapacity)                                        \
  X(cublasLtEmulationDescCreate)                                               \
  X(cublasLtEmulationDescDestroy)                                              \
  X(cublasLtEmulationDescSetAttribute)

/// The vendor's cuBLAS and cuBLASLt, loaded at run time like the driver
/// (executor/driver_api.hpp): dlopen of libcublasLt.so.13 and
/// libcublas.so.13 and dlsym of each entry point by the exact name its
/// header declares. No gleam binary links cuBLAS.
///
/// Members are plain function pointers named after the library functions.
/// A default-constructed blas_api has every pointer null; tests may fill in
/// their own. Thread safety: the pointers never change after load().
class blas_api {
public:
#define GLEAM_EXECUTOR_BLAS_MEMBER(name) decltype(&::name) name = nullptr;
  GLEAM_EXECUTOR_CUBLAS_FUNCTIONS(GLEAM_EXECUTOR_BLAS_MEMBER)
  GLEAM_EXECUTOR_CUBLASLT_FUNCTIONS(GLEAM_EXECUTOR_BLAS_MEMBER)
  // The generated functions of interpose/spec/cublas.spec (X(name) lines
  // written by generate.py into the build directory).
#define X GLEAM_EXECUTOR_BLAS_MEMBER
#include "executor/cublas_generated_api.inc"
#undef X
#undef GLEAM_EXECUTOR_BLAS_MEMBER
  // The header overloads these three (a C++ inline form that takes a
  // cudaDataType compute type): the members name the C entry points.
  cublasStatus_t (*cublasGemmEx)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int,
                                 int, const void*, const void*, cudaDataType, int, const void*,
                                 cudaDataType, int, const void*, void*, cudaDataType, int,
                                 cublasComputeType_t, cublasGemmAlgo_t) = nullptr;
  cublasStatus_t (*cublasGemmStridedBatchedEx)(
    cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*,
    const void*, cudaDataType, int, long long int, const void*, cudaDataType, int,
    long long int, const void*, void*, cudaDataType, int, long long int, int,
    cublasComputeType_t, cublasGemmAlgo_t) = nullptr;
  cublasStatus_t (*cublasGemmBatchedEx)(cublasHandle_t, cublasOperation_t, cublasOperation_t,
                                        int, int, int, const void*, const void* const[],
                                        cudaDataType, int, const void* const[], cudaDataType,
                                        int, const void*, void* const[], cudaDataType, int, int,
                                        cublasComputeType_t, cublasGemmAlgo_t) = nullptr;

  /// Every entry point null, no library held.
  blas_api() = default;

  blas_api(const blas_api&) = delete;
  blas_api& operator=(const blas_api&) = delete;

  /// Closes the library handles (if load() opened them).
  ~blas_api();

  /// Opens the vendor libraries from `dir` (a directory; empty: the first of
  /// $GLEAM_CUBLAS_DIR, /usr/local/cuda/lib64, /usr/local/cuda-13/lib64 that
  /// has them; never through the plain SONAME) and resolves every entry
  /// point. Refuses Gleam's own interposer libraries (a directory holding
  /// libgleam_interpose.so, or a library that defines Gleam's runtime): a
  /// server must not forward to itself. Errors: no_blas_library when a
  /// library cannot be opened or is Gleam's, missing_symbol when an entry
  /// point is absent (cuBLAS older than 13).
  [[nodiscard]] static caf::expected<std::unique_ptr<blas_api>> load(const std::string& dir = {});

  /// The process's instance, loaded by the first call (thread-safe); the
  /// error of that load on every call when it failed.
  [[nodiscard]] static caf::expected<blas_api*> shared();

private:
  void* blas_ = nullptr;
  void* lt_ = nullptr;
};

} // namespace gleam::executor
