// The gemm family: every form becomes one BlasGemm op with the scalars by
// value and the matrices (or, for the batched forms, the device arrays of
// matrix pointers) as device addresses. The server checks every address
// against the session's allocations before the library sees it.
//
// Every form is error-code-only (blas::submit): the checks cuBLAS makes at
// the call (handle, sizes, transpose values, leading dimensions, alpha and
// beta present, and Gleam's own limits on the data and scale types) are
// made here and fail at once with the vendor's status; the op is then
// queued and the call returns CUBLAS_STATUS_SUCCESS. What only the server
// can judge (addresses against the allocations, the pointer arrays of the
// batched forms, type combinations the library refuses) arrives later as a
// deferred CUDA error (see blas::submit).
#include <algorithm>
#include <cstring>

#include "interpose/blas/common.hpp"
#include "interpose/cublas_export.hpp"

namespace blas = gleam::interpose::blas;
namespace proto = gleam::proto;

namespace {

/// One matrix argument: device address (or pointer array), element type,
/// leading dimension and batch stride in elements.
struct operand {
  const void* ptr;
  cudaDataType type;
  int64_t ld;
  long long stride;
};

/// The leading dimension cuBLAS requires of a matrix stored with `rows`
/// rows: at least max(1, rows).
bool ld_ok(int64_t ld, int64_t rows) {
  return ld >= std::max<int64_t>(1, rows);
}

/// Bytes of alpha/beta for cublas*GemmEx: the type follows the compute
/// type, complex when C is complex.
size_t scale_size(cublasComputeType_t compute, cudaDataType ctype) {
  size_t base = 0;
  switch (compute) {
    case CUBLAS_COMPUTE_16F:
    case CUBLAS_COMPUTE_16F_PEDANTIC:
      base = 2;
      break;
    case CUBLAS_COMPUTE_32F:
    case CUBLAS_COMPUTE_32F_PEDANTIC:
    case CUBLAS_COMPUTE_32F_FAST_16F:
    case CUBLAS_COMPUTE_32F_FAST_16BF:
    case CUBLAS_COMPUTE_32F_FAST_TF32:
    case CUBLAS_COMPUTE_32F_EMULATED_16BFX9:
    case CUBLAS_COMPUTE_32I:
    case CUBLAS_COMPUTE_32I_PEDANTIC:
      base = 4;
      break;
    case CUBLAS_COMPUTE_64F:
    case CUBLAS_COMPUTE_64F_PEDANTIC:
    case CUBLAS_COMPUTE_64F_EMULATED_FIXEDPOINT:
      base = 8;
      break;
  }
  return blas::is_complex(ctype) ? 2 * base : base;
}

cublasStatus_t submit(cublasHandle_t handle, proto::BlasGemm::Api api,
                      proto::BlasGemm::Form form, cublasOperation_t transa,
                      cublasOperation_t transb, int64_t m, int64_t n, int64_t k,
                      const void* alpha, operand a, operand b, const void* beta,
                      operand c, int64_t batch, int compute, int algo,
                      size_t scalar_bytes) noexcept {
  return blas::guarded([&] {
    auto* st = blas::state_of(handle);
    if (st == nullptr)
      return CUBLAS_STATUS_NOT_INITIALIZED;
    if (st->pointer_mode == CUBLAS_POINTER_MODE_DEVICE) {
      blas::report_unsupported("the gemm family in CUBLAS_POINTER_MODE_DEVICE",
                               "Gleam sends its alpha and beta by value: set the host "
                               "pointer mode around gemm calls");
      return CUBLAS_STATUS_NOT_SUPPORTED;
    }
    if (scalar_bytes == 0) {
      blas::report_unsupported("cublasGemmEx with this compute type",
                               "its scale type is unknown to Gleam");
      return CUBLAS_STATUS_NOT_SUPPORTED;
    }
    if (alpha == nullptr || beta == nullptr || m < 0 || n < 0 || k < 0 || batch < 0)
      return CUBLAS_STATUS_INVALID_VALUE;
    // CUBLAS_OP_N, _T, _C (and _CONJG, left to the library).
    auto valid_op = [](cublasOperation_t t) { return t >= CUBLAS_OP_N && t <= CUBLAS_OP_CONJG; };
    if (!valid_op(transa) || !valid_op(transb))
      return CUBLAS_STATUS_INVALID_VALUE;
    // Stored rows: op(A) is m x k, op(B) k x n, C m x n.
    if (!ld_ok(a.ld, transa == CUBLAS_OP_N ? m : k) || !ld_ok(b.ld, transb == CUBLAS_OP_N ? k : n)
        || !ld_ok(c.ld, m))
      return CUBLAS_STATUS_INVALID_VALUE;
    if (blas::element_size(a.type) == 0 || blas::element_size(b.type) == 0
        || blas::element_size(c.type) == 0) {
      blas::report_unsupported("cublasGemmEx with this data type",
                               "its element size is unknown to Gleam");
      return CUBLAS_STATUS_NOT_SUPPORTED;
    }
    proto::Op op;
    auto* g = op.mutable_blas_gemm();
    g->set_handle(st->id);
    g->set_api(api);
    g->set_form(form);
    g->set_transa(static_cast<int32_t>(transa));
    g->set_transb(static_cast<int32_t>(transb));
    g->set_m(m);
    g->set_n(n);
    g->set_k(k);
    g->set_alpha(static_cast<const char*>(alpha), scalar_bytes);
    g->set_beta(static_cast<const char*>(beta), scalar_bytes);
    g->set_a(reinterpret_cast<uintptr_t>(a.ptr));
    g->set_a_type(static_cast<int32_t>(a.type));
    g->set_lda(a.ld);
    g->set_stride_a(a.stride);
    g->set_b(reinterpret_cast<uintptr_t>(b.ptr));
    g->set_b_type(static_cast<int32_t>(b.type));
    g->set_ldb(b.ld);
    g->set_stride_b(b.stride);
    g->set_c(reinterpret_cast<uintptr_t>(c.ptr));
    g->set_c_type(static_cast<int32_t>(c.type));
    g->set_ldc(c.ld);
    g->set_stride_c(c.stride);
    g->set_batch_count(batch);
    g->set_compute_type(compute);
    g->set_algo(algo);
    return blas::submit(std::move(op));
  });
}

constexpr auto plain = proto::BlasGemm::PLAIN;
constexpr auto strided = proto::BlasGemm::STRIDED_BATCHED;
constexpr auto batched = proto::BlasGemm::BATCHED;
constexpr auto ex = proto::BlasGemm::GEMM_EX;
constexpr auto s_api = proto::BlasGemm::SGEMM;
constexpr auto d_api = proto::BlasGemm::DGEMM;
constexpr auto h_api = proto::BlasGemm::HGEMM;

} // namespace

extern "C" {

// --- typed gemm ------------------------------------------------------------

#define GLEAM_TYPED_GEMM(NAME, IDX, T, API, CT)                                      \
  GLEAM_INTERPOSE_EXPORT cublasStatus_t NAME(                                        \
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, IDX m, \
    IDX n, IDX k, const T* alpha, const T* A, IDX lda, const T* B, IDX ldb,          \
    const T* beta, T* C, IDX ldc) {                                                  \
    return submit(handle, API, plain, transa, transb, m, n, k, alpha,                \
                  operand{A, CT, lda, 0}, operand{B, CT, ldb, 0}, beta,              \
                  operand{C, CT, ldc, 0}, 1, 0, 0, sizeof(T));                       \
  }

GLEAM_TYPED_GEMM(cublasSgemm_v2, int, float, s_api, CUDA_R_32F)
GLEAM_TYPED_GEMM(cublasSgemm_v2_64, int64_t, float, s_api, CUDA_R_32F)
GLEAM_TYPED_GEMM(cublasDgemm_v2, int, double, d_api, CUDA_R_64F)
GLEAM_TYPED_GEMM(cublasDgemm_v2_64, int64_t, double, d_api, CUDA_R_64F)
GLEAM_TYPED_GEMM(cublasHgemm, int, __half, h_api, CUDA_R_16F)
GLEAM_TYPED_GEMM(cublasHgemm_64, int64_t, __half, h_api, CUDA_R_16F)
#undef GLEAM_TYPED_GEMM

#define GLEAM_TYPED_STRIDED(NAME, IDX, T, API, CT)                                    \
  GLEAM_INTERPOSE_EXPORT cublasStatus_t NAME(                                         \
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, IDX m,  \
    IDX n, IDX k, const T* alpha, const T* A, IDX lda, long long int strideA,         \
    const T* B, IDX ldb, long long int strideB, const T* beta, T* C, IDX ldc,         \
    long long int strideC, IDX batchCount) {                                          \
    return submit(handle, API, strided, transa, transb, m, n, k, alpha,               \
                  operand{A, CT, lda, strideA}, operand{B, CT, ldb, strideB}, beta,   \
                  operand{C, CT, ldc, strideC}, batchCount, 0, 0, sizeof(T));         \
  }

GLEAM_TYPED_STRIDED(cublasSgemmStridedBatched, int, float, s_api, CUDA_R_32F)
GLEAM_TYPED_STRIDED(cublasSgemmStridedBatched_64, int64_t, float, s_api, CUDA_R_32F)
GLEAM_TYPED_STRIDED(cublasDgemmStridedBatched, int, double, d_api, CUDA_R_64F)
GLEAM_TYPED_STRIDED(cublasDgemmStridedBatched_64, int64_t, double, d_api, CUDA_R_64F)
GLEAM_TYPED_STRIDED(cublasHgemmStridedBatched, int, __half, h_api, CUDA_R_16F)
GLEAM_TYPED_STRIDED(cublasHgemmStridedBatched_64, int64_t, __half, h_api, CUDA_R_16F)
#undef GLEAM_TYPED_STRIDED

#define GLEAM_TYPED_BATCHED(NAME, IDX, T, API, CT)                                    \
  GLEAM_INTERPOSE_EXPORT cublasStatus_t NAME(                                         \
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, IDX m,  \
    IDX n, IDX k, const T* alpha, const T* const Aarray[], IDX lda,                   \
    const T* const Barray[], IDX ldb, const T* beta, T* const Carray[], IDX ldc,      \
    IDX batchCount) {                                                                 \
    return submit(handle, API, batched, transa, transb, m, n, k, alpha,               \
                  operand{Aarray, CT, lda, 0}, operand{Barray, CT, ldb, 0}, beta,     \
                  operand{Carray, CT, ldc, 0}, batchCount, 0, 0, sizeof(T));          \
  }

GLEAM_TYPED_BATCHED(cublasSgemmBatched, int, float, s_api, CUDA_R_32F)
GLEAM_TYPED_BATCHED(cublasSgemmBatched_64, int64_t, float, s_api, CUDA_R_32F)
GLEAM_TYPED_BATCHED(cublasDgemmBatched, int, double, d_api, CUDA_R_64F)
GLEAM_TYPED_BATCHED(cublasDgemmBatched_64, int64_t, double, d_api, CUDA_R_64F)
GLEAM_TYPED_BATCHED(cublasHgemmBatched, int, __half, h_api, CUDA_R_16F)
GLEAM_TYPED_BATCHED(cublasHgemmBatched_64, int64_t, __half, h_api, CUDA_R_16F)
#undef GLEAM_TYPED_BATCHED

// --- GemmEx ----------------------------------------------------------------

#define GLEAM_GEMM_EX(NAME, IDX)                                                         \
  GLEAM_INTERPOSE_EXPORT cublasStatus_t NAME(                                            \
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, IDX m,     \
    IDX n, IDX k, const void* alpha, const void* A, cudaDataType Atype, IDX lda,          \
    const void* B, cudaDataType Btype, IDX ldb, const void* beta, void* C,                \
    cudaDataType Ctype, IDX ldc, cublasComputeType_t computeType, cublasGemmAlgo_t algo) { \
    return submit(handle, ex, plain, transa, transb, m, n, k, alpha,                     \
                  operand{A, Atype, lda, 0}, operand{B, Btype, ldb, 0}, beta,            \
                  operand{C, Ctype, ldc, 0}, 1, computeType, algo,                       \
                  scale_size(computeType, Ctype));                                       \
  }

GLEAM_GEMM_EX(cublasGemmEx, int)
GLEAM_GEMM_EX(cublasGemmEx_64, int64_t)
#undef GLEAM_GEMM_EX

#define GLEAM_GEMM_STRIDED_EX(NAME, IDX)                                                  \
  GLEAM_INTERPOSE_EXPORT cublasStatus_t NAME(                                             \
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, IDX m,      \
    IDX n, IDX k, const void* alpha, const void* A, cudaDataType Atype, IDX lda,           \
    long long int strideA, const void* B, cudaDataType Btype, IDX ldb,                     \
    long long int strideB, const void* beta, void* C, cudaDataType Ctype, IDX ldc,         \
    long long int strideC, IDX batchCount, cublasComputeType_t computeType,                \
    cublasGemmAlgo_t algo) {                                                               \
    return submit(handle, ex, strided, transa, transb, m, n, k, alpha,                    \
                  operand{A, Atype, lda, strideA}, operand{B, Btype, ldb, strideB}, beta, \
                  operand{C, Ctype, ldc, strideC}, batchCount, computeType, algo,         \
                  scale_size(computeType, Ctype));                                        \
  }

GLEAM_GEMM_STRIDED_EX(cublasGemmStridedBatchedEx, int)
GLEAM_GEMM_STRIDED_EX(cublasGemmStridedBatchedEx_64, int64_t)
#undef GLEAM_GEMM_STRIDED_EX

#define GLEAM_GEMM_BATCHED_EX(NAME, IDX)                                                \
  GLEAM_INTERPOSE_EXPORT cublasStatus_t NAME(                                           \
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, IDX m,    \
    IDX n, IDX k, const void* alpha, const void* const Aarray[], cudaDataType Atype,     \
    IDX lda, const void* const Barray[], cudaDataType Btype, IDX ldb, const void* beta,  \
    void* const Carray[], cudaDataType Ctype, IDX ldc, IDX batchCount,                   \
    cublasComputeType_t computeType, cublasGemmAlgo_t algo) {                            \
    return submit(handle, ex, batched, transa, transb, m, n, k, alpha,                  \
                  operand{Aarray, Atype, lda, 0}, operand{Barray, Btype, ldb, 0}, beta, \
                  operand{Carray, Ctype, ldc, 0}, batchCount, computeType, algo,        \
                  scale_size(computeType, Ctype));                                      \
  }

GLEAM_GEMM_BATCHED_EX(cublasGemmBatchedEx, int)
GLEAM_GEMM_BATCHED_EX(cublasGemmBatchedEx_64, int64_t)
#undef GLEAM_GEMM_BATCHED_EX

} // extern "C"
