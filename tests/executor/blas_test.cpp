// cuBLAS ops in the executor. CPU: the shape arithmetic, and the op
// validation over a fake driver (host memory as device memory) and a fake
// cuBLAS that computes SGEMM on the host and counts every call. [gpu]: the
// same ops on the real GPU with the vendor's libcublas.so.13.
#include "executor/blas.hpp"
#include "executor/blas_shapes.hpp"
#include "executor/executor.hpp"

#include <catch2/catch.hpp>

#include "tests/executor/fake_device.hpp"
#include "tests/executor/real_gpu.hpp"
#include <cuda_fp16.h>

#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <set>
#include <vector>

#include "executor/cublas_function_ids.hpp"
#include "tests/support/gpu_probe.hpp"
#include "wire/library_args.hpp"

namespace proto = gleam::proto;
namespace shapes = gleam::executor::blas_shapes;
using gleam::executor::blas_api;
using gleam::executor::driver_api;
using gleam::executor::executor;

// --- shapes -----------------------------------------------------------------

TEST_CASE("matrix extents follow rows, columns and leading dimension", "[executor][blas]") {
  CHECK(shapes::matrix_extent(4, 3, 4, 4) == uint64_t{48});
  // The last column needs only `rows` elements, not `ld`.
  CHECK(shapes::matrix_extent(4, 3, 10, 4) == uint64_t{(2 * 10 + 4) * 4});
  CHECK(shapes::matrix_extent(0, 3, 1, 4) == uint64_t{0});
  CHECK(shapes::matrix_extent(4, 0, 4, 8) == uint64_t{0});
  CHECK_FALSE(shapes::matrix_extent(4, 3, 3, 4));  // ld < rows
  CHECK_FALSE(shapes::matrix_extent(-1, 3, 4, 4));
  CHECK_FALSE(shapes::matrix_extent(1, int64_t{1} << 62, int64_t{1} << 62, 8));  // overflow
  CHECK(shapes::batched_extent(48, 12, 3, 4) == uint64_t{2 * 12 * 4 + 48});
  CHECK(shapes::batched_extent(48, 0, 5, 4) == uint64_t{48});
  CHECK(shapes::batched_extent(48, 12, 0, 4) == uint64_t{0});
  CHECK_FALSE(shapes::batched_extent(48, -12, 3, 4));
  CHECK(shapes::stored(0, 5, 7).rows == 5);
  CHECK(shapes::stored(1, 5, 7).rows == 7);
  CHECK(shapes::element_size(CUDA_R_16BF) == 2);
  CHECK(shapes::element_size(CUDA_C_64F) == 16);
  CHECK(shapes::element_size(CUDA_R_4I) == 0);
}

// --- a fake GPU and a fake cuBLAS --------------------------------------------

namespace {

void* host(CUdeviceptr p) {
  return reinterpret_cast<void*>(static_cast<uintptr_t>(p));
}

/// What the fake library saw.
struct fake_calls {
  int creates = 0;
  int destroys = 0;
  int gemms = 0;
  int gemm_ex = 0;
  int batched = 0;
  int lt_matmuls = 0;
  /// Generated functions the fake implements, and the pointer mode the
  /// handle was last put in.
  int axpys = 0;
  int dots = 0;
  int gemvs = 0;
  cublasPointerMode_t pointer_mode = CUBLAS_POINTER_MODE_HOST;
  int gemv_batches = 0;
  int qr_batches = 0;
  int desc_creates = 0;
  int desc_destroys = 0;
  int layout_creates = 0;
  int layout_destroys = 0;
  int transforms = 0;
  int emulation_creates = 0;
  int emulation_destroys = 0;
  /// The strategy set on the last emulation descriptor, and the emulation
  /// descriptor last set on a matmul descriptor.
  int32_t emulation_strategy = -1;
  void* desc_emulation = nullptr;
  int transform_creates = 0;
  int transform_destroys = 0;
  /// The last transform descriptor attribute TRANSA set, and the capacity.
  int32_t transa = 0;
  size_t heuristics_capacity = 8192;
  CUstream last_stream = nullptr;
  int set_streams = 0;
  std::set<void*> live;
};

fake_calls& calls() {
  static fake_calls c;
  return c;
}

void* fake_object() {
  auto* p = std::malloc(8);
  calls().live.insert(p);
  return p;
}

cublasStatus_t drop(void* p) {
  if (calls().live.erase(p) == 0)
    return CUBLAS_STATUS_INVALID_VALUE;
  std::free(p);
  return CUBLAS_STATUS_SUCCESS;
}

/// Column-major C = alpha * op(A) * op(B) + beta * C on the host.
void host_sgemm(cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, float alpha,
                const float* A, int lda, const float* B, int ldb, float beta, float* C, int ldc) {
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      float sum = 0;
      for (int p = 0; p < k; ++p) {
        float a = ta == CUBLAS_OP_N ? A[i + p * lda] : A[p + i * lda];
        float b = tb == CUBLAS_OP_N ? B[p + j * ldb] : B[j + p * ldb];
        sum += a * b;
      }
      C[i + j * ldc] = alpha * sum + beta * C[i + j * ldc];
    }
}

void install_fake_blas(blas_api& api) {
  api.cublasCreate_v2 = [](cublasHandle_t* h) {
    ++calls().creates;
    *h = static_cast<cublasHandle_t>(fake_object());
    return CUBLAS_STATUS_SUCCESS;
  };
  api.cublasDestroy_v2 = [](cublasHandle_t h) {
    ++calls().destroys;
    return drop(h);
  };
  api.cublasLtCreate = [](cublasLtHandle_t* h) {
    ++calls().creates;
    *h = static_cast<cublasLtHandle_t>(fake_object());
    return CUBLAS_STATUS_SUCCESS;
  };
  api.cublasLtDestroy = [](cublasLtHandle_t h) {
    ++calls().destroys;
    return drop(h);
  };
  api.cublasSetStream_v2 = [](cublasHandle_t, cudaStream_t s) {
    calls().last_stream = s;
    ++calls().set_streams;
    return CUBLAS_STATUS_SUCCESS;
  };
  api.cublasSetWorkspace_v2 = [](cublasHandle_t, void*, size_t) { return CUBLAS_STATUS_SUCCESS; };
  api.cublasSetPointerMode_v2 = [](cublasHandle_t, cublasPointerMode_t m) {
    calls().pointer_mode = m;
    return CUBLAS_STATUS_SUCCESS;
  };
  api.cublasSaxpy_v2 = [](cublasHandle_t, int n, const float* alpha, const float* x, int incx,
                          float* y, int incy) {
    ++calls().axpys;
    for (int i = 0; i < n; ++i)
      y[i * incy] += *alpha * x[i * incx];
    return CUBLAS_STATUS_SUCCESS;
  };
  api.cublasSdot_v2 = [](cublasHandle_t, int n, const float* x, int incx, const float* y,
                         int incy, float* result) {
    ++calls().dots;
    float sum = 0;
    for (int i = 0; i < n; ++i)
      sum += x[i * incx] * y[i * incy];
    *result = sum;
    return CUBLAS_STATUS_SUCCESS;
  };
  api.cublasSgemvBatched = [](cublasHandle_t, cublasOperation_t, int m, int n,
                              const float* alpha, const float* const A[], int lda,
                              const float* const x[], int incx, const float* beta,
                              float* const y[], int incy, int batch) {
    ++calls().gemv_batches;
    for (int b = 0; b < batch; ++b)
      for (int i = 0; i < m; ++i) {
        float sum = 0;
        for (int j = 0; j < n; ++j)
          sum += A[b][i + j * lda] * x[b][j * incx];
        y[b][i * incy] = *alpha * sum + *beta * y[b][i * incy];
      }
    return CUBLAS_STATUS_SUCCESS;
  };
  api.cublasSgeqrfBatched = [](cublasHandle_t, int, int, float* const[], int, float* const[],
                               int* info, int) {
    ++calls().qr_batches;
    *info = -7;
    return CUBLAS_STATUS_SUCCESS;
  };
  api.cublasSgemv_v2 = [](cublasHandle_t, cublasOperation_t t, int m, int n, const float* alpha,
                          const float* A, int lda, const float* x, int incx, const float* beta,
                          float* y, int incy) {
    ++calls().gemvs;
    int rows = t == CUBLAS_OP_N ? m : n, cols = t == CUBLAS_OP_N ? n : m;
    for (int i = 0; i < rows; ++i) {
      float sum = 0;
      for (int j = 0; j < cols; ++j)
        sum += (t == CUBLAS_OP_N ? A[i + j * lda] : A[j + i * lda]) * x[j * incx];
      y[i * incy] = *alpha * sum + *beta * y[i * incy];
    }
    return CUBLAS_STATUS_SUCCESS;
  };
  api.cublasSetMathMode = [](cublasHandle_t, cublasMath_t) { return CUBLAS_STATUS_SUCCESS; };
  api.cublasSgemm_v2 = [](cublasHandle_t, cublasOperation_t ta, cublasOperation_t tb, int m,
                          int n, int k, const float* alpha, const float* A, int lda,
                          const float* B, int ldb, const float* beta, float* C, int ldc) {
    ++calls().gemms;
    host_sgemm(ta, tb, m, n, k, *alpha, A, lda, B, ldb, *beta, C, ldc);
    return CUBLAS_STATUS_SUCCESS;
  };
  api.cublasSgemmStridedBatched = [](cublasHandle_t, cublasOperation_t ta, cublasOperation_t tb,
                                     int m, int n, int k, const float* alpha, const float* A,
                                     int lda, long long sa, const float* B, int ldb,
                                     long long sb, const float* beta, float* C, int ldc,
                                     long long sc, int batch) {
    ++calls().gemms;
    for (int i = 0; i < batch; ++i)
      host_sgemm(ta, tb, m, n, k, *alpha, A + i * sa, lda, B + i * sb, ldb, *beta, C + i * sc,
                 ldc);
    return CUBLAS_STATUS_SUCCESS;
  };
  api.cublasSgemmBatched = [](cublasHandle_t, cublasOperation_t ta, cublasOperation_t tb, int m,
                              int n, int k, const float* alpha, const float* const Aa[], int lda,
                              const float* const Ba[], int ldb, const float* beta,
                              float* const Ca[], int ldc, int batch) {
    ++calls().batched;
    for (int i = 0; i < batch; ++i)
      host_sgemm(ta, tb, m, n, k, *alpha, Aa[i], lda, Ba[i], ldb, *beta, Ca[i], ldc);
    return CUBLAS_STATUS_SUCCESS;
  };
  api.cublasGemmEx = [](cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                        const void*, const void*, cudaDataType, int, const void*, cudaDataType,
                        int, const void*, void*, cudaDataType, int, cublasComputeType_t,
                        cublasGemmAlgo_t) {
    ++calls().gemm_ex;
    return CUBLAS_STATUS_SUCCESS;
  };
  api.cublasLtMatmulDescCreate = [](cublasLtMatmulDesc_t* d, cublasComputeType_t, cudaDataType_t) {
    ++calls().desc_creates;
    *d = static_cast<cublasLtMatmulDesc_t>(fake_object());
    return CUBLAS_STATUS_SUCCESS;
  };
  api.cublasLtMatmulDescDestroy = [](cublasLtMatmulDesc_t d) {
    ++calls().desc_destroys;
    return drop(d);
  };
  api.cublasLtMatmulDescSetAttribute = [](cublasLtMatmulDesc_t, cublasLtMatmulDescAttributes_t attr,
                                          const void* buf, size_t n) {
    if (attr == CUBLASLT_MATMUL_DESC_EMULATION_DESCRIPTOR && n == sizeof(void*))
      std::memcpy(&calls().desc_emulation, buf, sizeof(void*));
    return CUBLAS_STATUS_SUCCESS;
  };
  api.cublasLtEmulationDescCreate = [](cublasLtEmulationDesc_t* e) {
    ++calls().emulation_creates;
    *e = static_cast<cublasLtEmulationDesc_t>(fake_object());
    return CUBLAS_STATUS_SUCCESS;
  };
  api.cublasLtEmulationDescDestroy = [](cublasLtEmulationDesc_t e) {
    ++calls().emulation_destroys;
    return drop(e);
  };
  api.cublasLtEmulationDescSetAttribute = [](cublasLtEmulationDesc_t,
                                             cublasLtEmulationDescAttributes_t attr,
                                             const void* buf, size_t n) {
    if (attr == CUBLASLT_EMULATION_DESC_STRATEGY && n == sizeof(int32_t))
      std::memcpy(&calls().emulation_strategy, buf, sizeof(int32_t));
    return CUBLAS_STATUS_SUCCESS;
  };
  api.cublasLtMatrixLayoutCreate = [](cublasLtMatrixLayout_t* l, cudaDataType, uint64_t,
                                      uint64_t, int64_t) {
    ++calls().layout_creates;
    *l = static_cast<cublasLtMatrixLayout_t>(fake_object());
    return CUBLAS_STATUS_SUCCESS;
  };
  api.cublasLtMatrixLayoutDestroy = [](cublasLtMatrixLayout_t l) {
    ++calls().layout_destroys;
    return drop(l);
  };
  api.cublasLtMatrixLayoutSetAttribute = [](cublasLtMatrixLayout_t,
                                            cublasLtMatrixLayoutAttribute_t, const void*,
                                            size_t) { return CUBLAS_STATUS_SUCCESS; };
  api.cublasLtMatmulPreferenceCreate = [](cublasLtMatmulPreference_t* p) {
    *p = static_cast<cublasLtMatmulPreference_t>(fake_object());
    return CUBLAS_STATUS_SUCCESS;
  };
  api.cublasLtMatmulPreferenceDestroy = [](cublasLtMatmulPreference_t p) { return drop(p); };
  api.cublasLtMatmulPreferenceSetAttribute = [](cublasLtMatmulPreference_t,
                                                cublasLtMatmulPreferenceAttributes_t, const void*,
                                                size_t) { return CUBLAS_STATUS_SUCCESS; };
  api.cublasLtMatmulAlgoGetHeuristic =
    [](cublasLtHandle_t, cublasLtMatmulDesc_t, cublasLtMatrixLayout_t, cublasLtMatrixLayout_t,
       cublasLtMatrixLayout_t, cublasLtMatrixLayout_t, cublasLtMatmulPreference_t, int requested,
       cublasLtMatmulHeuristicResult_t* out, int* count) {
      *count = requested < 2 ? requested : 2;
      for (int i = 0; i < *count; ++i) {
        std::memset(&out[i], 0, sizeof(out[i]));
        out[i].algo.data[0] = 0xa160 + static_cast<uint64_t>(i);
        out[i].workspaceSize = 1024;
      }
      return CUBLAS_STATUS_SUCCESS;
    };
  // Transform: C = alpha * A + beta * B over float column-major layouts
  // (the fake ignores the layouts' other attributes and the transposes).
  api.cublasLtMatrixTransformDescCreate = [](cublasLtMatrixTransformDesc_t* d, cudaDataType) {
    ++calls().transform_creates;
    *d = static_cast<cublasLtMatrixTransformDesc_t>(fake_object());
    return CUBLAS_STATUS_SUCCESS;
  };
  api.cublasLtMatrixTransformDescDestroy = [](cublasLtMatrixTransformDesc_t d) {
    ++calls().transform_destroys;
    return drop(d);
  };
  api.cublasLtMatrixTransformDescSetAttribute =
    [](cublasLtMatrixTransformDesc_t, cublasLtMatrixTransformDescAttributes_t attr,
       const void* buf, size_t n) {
      if (n != sizeof(int32_t))
        return CUBLAS_STATUS_INVALID_VALUE;
      if (attr == CUBLASLT_MATRIX_TRANSFORM_DESC_TRANSA)
        std::memcpy(&calls().transa, buf, sizeof(int32_t));
      return CUBLAS_STATUS_SUCCESS;
    };
  api.cublasLtMatrixTransform = [](cublasLtHandle_t, cublasLtMatrixTransformDesc_t,
                                   const void* alpha, const void* A, cublasLtMatrixLayout_t,
                                   const void* beta, const void* B, cublasLtMatrixLayout_t,
                                   void* C, cublasLtMatrixLayout_t, cudaStream_t) {
    ++calls().transforms;
    // The tests' matrices are 2 x 3.
    auto* c = static_cast<float*>(C);
    for (int i = 0; i < 6; ++i)
      c[i] = (A != nullptr ? *static_cast<const float*>(alpha) * static_cast<const float*>(A)[i]
                           : 0.0f)
             + (B != nullptr ? *static_cast<const float*>(beta) * static_cast<const float*>(B)[i]
                             : 0.0f);
    return CUBLAS_STATUS_SUCCESS;
  };
  // The algo-level API: ids 3, 7, 11; an algo holds its id in data[0] and
  // its tile in data[1]; id 99 is not supported.
  api.cublasLtMatmulAlgoGetIds = [](cublasLtHandle_t, cublasComputeType_t, cudaDataType_t,
                                    cudaDataType_t, cudaDataType_t, cudaDataType_t,
                                    cudaDataType_t, int requested, int* ids, int* count) {
    if (requested <= 0 || ids == nullptr || count == nullptr)
      return CUBLAS_STATUS_INVALID_VALUE;
    const int known[] = {3, 7, 11};
    *count = requested < 3 ? requested : 3;
    for (int i = 0; i < *count; ++i)
      ids[i] = known[i];
    return CUBLAS_STATUS_SUCCESS;
  };
  api.cublasLtMatmulAlgoInit = [](cublasLtHandle_t, cublasComputeType_t, cudaDataType_t,
                                  cudaDataType_t, cudaDataType_t, cudaDataType_t, cudaDataType_t,
                                  int id, cublasLtMatmulAlgo_t* algo) {
    if (algo == nullptr)
      return CUBLAS_STATUS_INVALID_VALUE;
    if (id == 99)
      return CUBLAS_STATUS_NOT_SUPPORTED;
    std::memset(algo, 0, sizeof(*algo));
    algo->data[0] = static_cast<uint64_t>(id);
    return CUBLAS_STATUS_SUCCESS;
  };
  api.cublasLtMatmulAlgoCheck = [](cublasLtHandle_t, cublasLtMatmulDesc_t, cublasLtMatrixLayout_t,
                                   cublasLtMatrixLayout_t, cublasLtMatrixLayout_t,
                                   cublasLtMatrixLayout_t, const cublasLtMatmulAlgo_t* algo,
                                   cublasLtMatmulHeuristicResult_t* result) {
    if (algo == nullptr || result == nullptr)
      return CUBLAS_STATUS_INVALID_VALUE;
    result->workspaceSize = algo->data[0] * 10;
    result->state = CUBLAS_STATUS_SUCCESS;
    result->wavesCount = 0.5f;
    return CUBLAS_STATUS_SUCCESS;
  };
  api.cublasLtMatmulAlgoCapGetAttribute = [](const cublasLtMatmulAlgo_t* algo,
                                             cublasLtMatmulAlgoCapAttributes_t attr, void* buf,
                                             size_t size, size_t* written) {
    if (algo == nullptr || attr != CUBLASLT_ALGO_CAP_TILE_IDS)
      return CUBLAS_STATUS_INVALID_VALUE;
    const uint32_t tiles[] = {1, 2, static_cast<uint32_t>(algo->data[0])};
    if (size == 0) {
      if (written == nullptr)
        return CUBLAS_STATUS_INVALID_VALUE;
      *written = sizeof(tiles);
      return CUBLAS_STATUS_SUCCESS;
    }
    if (buf == nullptr || size < sizeof(tiles))
      return CUBLAS_STATUS_INVALID_VALUE;
    std::memcpy(buf, tiles, sizeof(tiles));
    if (written != nullptr)
      *written = sizeof(tiles);
    return CUBLAS_STATUS_SUCCESS;
  };
  api.cublasLtMatmulAlgoConfigSetAttribute = [](cublasLtMatmulAlgo_t* algo,
                                                cublasLtMatmulAlgoConfigAttributes_t attr,
                                                const void* buf, size_t size) {
    if (algo == nullptr || buf == nullptr || attr != CUBLASLT_ALGO_CONFIG_TILE_ID
        || size != sizeof(uint32_t))
      return CUBLAS_STATUS_INVALID_VALUE;
    uint32_t tile = 0;
    std::memcpy(&tile, buf, sizeof(tile));
    algo->data[1] = tile;
    return CUBLAS_STATUS_SUCCESS;
  };
  api.cublasLtMatmulAlgoConfigGetAttribute = [](const cublasLtMatmulAlgo_t* algo,
                                                cublasLtMatmulAlgoConfigAttributes_t attr,
                                                void* buf, size_t size, size_t* written) {
    if (algo == nullptr || attr != CUBLASLT_ALGO_CONFIG_TILE_ID)
      return CUBLAS_STATUS_INVALID_VALUE;
    if (size == 0 && written == nullptr)
      return CUBLAS_STATUS_INVALID_VALUE;
    if (size != 0 && (buf == nullptr || size != sizeof(uint32_t)))
      return CUBLAS_STATUS_INVALID_VALUE;
    auto tile = static_cast<uint32_t>(algo->data[1]);
    if (size != 0)
      std::memcpy(buf, &tile, sizeof(tile));
    if (written != nullptr)
      *written = sizeof(tile);
    return CUBLAS_STATUS_SUCCESS;
  };
  api.cublasLtHeuristicsCacheGetCapacity = [](size_t* capacity) {
    if (capacity == nullptr)
      return CUBLAS_STATUS_INVALID_VALUE;
    *capacity = calls().heuristics_capacity;
    return CUBLAS_STATUS_SUCCESS;
  };
  api.cublasLtHeuristicsCacheSetCapacity = [](size_t capacity) {
    calls().heuristics_capacity = capacity;
    return CUBLAS_STATUS_SUCCESS;
  };
  api.cublasLtMatmul = [](cublasLtHandle_t, cublasLtMatmulDesc_t, const void*, const void*,
                          cublasLtMatrixLayout_t, const void*, cublasLtMatrixLayout_t, const void*,
                          const void*, cublasLtMatrixLayout_t, void*, cublasLtMatrixLayout_t,
                          const cublasLtMatmulAlgo_t* algo, void*, size_t, cudaStream_t) {
    ++calls().lt_matmuls;
    return algo != nullptr && algo->data[0] == 0xa160 ? CUBLAS_STATUS_SUCCESS
                                                      : CUBLAS_STATUS_INVALID_VALUE;
  };
}

/// The fake device with the fake cuBLAS attached.
struct fake_gpu : gleam::test::fake_executor {
  blas_api blas;

  fake_gpu() {
    calls() = fake_calls{};
    install_fake_blas(blas);
    exec->use_blas(blas);
  }

  float* floats(uint64_t dptr) {
    return static_cast<float*>(host(dptr));
  }
};

std::string bytes_of(float v) {
  return std::string(reinterpret_cast<const char*>(&v), sizeof(v));
}

/// An SGEMM op C(m x n) = A(m x k) * B(k x n), all column-major and dense.
void sgemm_op(proto::Op& op, uint64_t handle, int m, int n, int k, uint64_t a, uint64_t b,
              uint64_t c) {
  auto* g = op.mutable_blas_gemm();
  g->set_handle(handle);
  g->set_api(proto::BlasGemm::SGEMM);
  g->set_m(m);
  g->set_n(n);
  g->set_k(k);
  g->set_alpha(bytes_of(1.0f));
  g->set_beta(bytes_of(0.0f));
  g->set_a(a);
  g->set_lda(m);
  g->set_b(b);
  g->set_ldb(k);
  g->set_c(c);
  g->set_ldc(m);
  g->set_batch_count(1);
}

constexpr uint64_t handle_id = 77;

} // namespace

TEST_CASE("an SGEMM op computes on the handle's stream", "[executor][blas]") {
  fake_gpu g;
  CHECK(g.run([](proto::Op& op) { op.mutable_blas_create()->set_handle(handle_id); })
          .blas_status()
        == CUBLAS_STATUS_SUCCESS);
  CHECK(calls().creates == 1);
  REQUIRE(g.run([](proto::Op& op) { op.mutable_stream_create()->set_stream(9); }).status() == 0);
  auto set = g.run([](proto::Op& op) {
    op.mutable_blas_set_stream()->set_handle(handle_id);
    op.mutable_blas_set_stream()->set_stream(9);
  });
  CHECK(set.blas_status() == CUBLAS_STATUS_SUCCESS);
  // The handle works on stream 9's driver stream (created last; the first
  // is the session's stand-in of the legacy stream, the handle's stream
  // from its creation).
  REQUIRE(gleam::test::fake_device().streams.size() == 2);
  CHECK(calls().last_stream == gleam::test::fake_device().streams.back());

  auto a = g.alloc(6 * 4), b = g.alloc(6 * 4), c = g.alloc(4 * 4);
  // A = [1 2 3; 4 5 6] (2 x 3), B = [1 0; 0 1; 1 1] (3 x 2), column-major.
  float av[] = {1, 4, 2, 5, 3, 6}, bv[] = {1, 0, 1, 0, 1, 1};
  std::memcpy(g.floats(a), av, sizeof(av));
  std::memcpy(g.floats(b), bv, sizeof(bv));
  auto r = g.run([&](proto::Op& op) { sgemm_op(op, handle_id, 2, 2, 3, a, b, c); });
  CHECK(r.status() == CUDA_SUCCESS);
  CHECK(r.blas_status() == CUBLAS_STATUS_SUCCESS);
  CHECK(calls().gemms == 1);
  std::vector<float> cv(g.floats(c), g.floats(c) + 4);
  CHECK(cv == std::vector<float>{4, 10, 5, 11});
}

TEST_CASE("a gemm on a blocking stream is ordered before later legacy-stream work",
          "[executor][blas]") {
  // CUDA's legacy stream waits for every blocking stream: a cudaMemcpy
  // after a gemm on a cudaStreamCreate stream reads the gemm's result. The
  // session's streams are non-blocking driver streams, so the executor must
  // make the legacy stand-in wait for the gemm with an event.
  fake_gpu g;
  REQUIRE(g.run([](proto::Op& op) { op.mutable_blas_create()->set_handle(handle_id); })
            .blas_status()
          == CUBLAS_STATUS_SUCCESS);
  REQUIRE(gleam::test::fake_device().streams.size() == 1);
  auto legacy = gleam::test::fake_device().streams[0];
  // Without cublasSetStream the handle works on the session's legacy
  // stand-in, never on the context's legacy stream (null).
  CHECK(calls().last_stream == legacy);
  REQUIRE(g.run([](proto::Op& op) { op.mutable_stream_create()->set_stream(9); }).status() == 0);
  auto blocking = gleam::test::fake_device().streams.back();
  REQUIRE(g.run([](proto::Op& op) {
             op.mutable_blas_set_stream()->set_handle(handle_id);
             op.mutable_blas_set_stream()->set_stream(9);
           }).blas_status()
          == CUBLAS_STATUS_SUCCESS);
  auto a = g.alloc(6 * 4), b = g.alloc(6 * 4), c = g.alloc(4 * 4);
  auto read_back = [&] {
    return g.run([&](proto::Op& op) {
      op.mutable_memcpy_dtoh()->set_src(c);
      op.mutable_memcpy_dtoh()->set_size(16);
    });
  };
  REQUIRE(read_back().status() == CUDA_SUCCESS); // the legacy stream is up to date
  gleam::test::fake_device().records.clear();
  gleam::test::fake_device().waits.clear();
  REQUIRE(g.run([&](proto::Op& op) { sgemm_op(op, handle_id, 2, 2, 3, a, b, c); })
            .blas_status()
          == CUBLAS_STATUS_SUCCESS);
  REQUIRE(read_back().status() == CUDA_SUCCESS);
  // After the gemm: an event recorded on the gemm's stream, and the legacy
  // stand-in waiting for that very event before the copy.
  bool ordered = false;
  for (const auto& [event, stream] : gleam::test::fake_device().records)
    if (stream == blocking)
      for (const auto& w : gleam::test::fake_device().waits)
        ordered |= w.first == legacy && w.second == event;
  CHECK(ordered);
  // Binding the handle once per stream: a gemm calls no cublasSetStream
  // (which would reset a workspace the app set).
  auto set_streams = calls().set_streams;
  REQUIRE(g.run([&](proto::Op& op) { sgemm_op(op, handle_id, 2, 2, 3, a, b, c); })
            .blas_status()
          == CUBLAS_STATUS_SUCCESS);
  CHECK(calls().set_streams == set_streams);
}

TEST_CASE("a gemm whose matrices leave the session's memory launches nothing",
          "[executor][blas]") {
  fake_gpu g;
  REQUIRE(g.run([](proto::Op& op) { op.mutable_blas_create()->set_handle(handle_id); })
            .blas_status()
          == 0);
  auto a = g.alloc(6 * 4), b = g.alloc(6 * 4), c = g.alloc(3 * 4);  // C one float short
  std::vector<float> before(g.floats(c), g.floats(c) + 3);
  auto r = g.run([&](proto::Op& op) { sgemm_op(op, handle_id, 2, 2, 3, a, b, c); });
  CHECK(r.blas_status() == CUBLAS_STATUS_INVALID_VALUE);
  CHECK(r.status() == CUDA_ERROR_INVALID_VALUE);
  CHECK(r.error().find("C: address") != std::string::npos);
  CHECK(calls().gemms == 0);
  CHECK(std::vector<float>(g.floats(c), g.floats(c) + 3) == before);

  // A leading dimension below the row count is refused like cuBLAS does.
  auto c2 = g.alloc(4 * 4);
  r = g.run([&](proto::Op& op) {
    sgemm_op(op, handle_id, 2, 2, 3, a, b, c2);
    op.mutable_blas_gemm()->set_lda(1);
  });
  CHECK(r.blas_status() == CUBLAS_STATUS_INVALID_VALUE);
  // A pointer that is no allocation at all.
  r = g.run([&](proto::Op& op) { sgemm_op(op, handle_id, 2, 2, 3, 0x10, b, c2); });
  CHECK(r.blas_status() == CUBLAS_STATUS_INVALID_VALUE);
  // An unknown handle.
  r = g.run([&](proto::Op& op) { sgemm_op(op, handle_id + 1, 2, 2, 3, a, b, c2); });
  CHECK(r.blas_status() == CUBLAS_STATUS_NOT_INITIALIZED);
  // Strided batched: two batches of C do not fit in one C.
  r = g.run([&](proto::Op& op) {
    sgemm_op(op, handle_id, 2, 2, 3, a, b, c2);
    auto* m = op.mutable_blas_gemm();
    m->set_form(proto::BlasGemm::STRIDED_BATCHED);
    m->set_batch_count(2);
    m->set_stride_c(4);
  });
  CHECK(r.blas_status() == CUBLAS_STATUS_INVALID_VALUE);
  CHECK(calls().gemms == 0);
  // A GemmEx with fp16 inputs: 2-byte elements, so the same buffers fit.
  r = g.run([&](proto::Op& op) {
    sgemm_op(op, handle_id, 2, 2, 3, a, b, c2);
    auto* m = op.mutable_blas_gemm();
    m->set_api(proto::BlasGemm::GEMM_EX);
    m->set_a_type(CUDA_R_16F);
    m->set_b_type(CUDA_R_16F);
    m->set_c_type(CUDA_R_32F);
    m->set_compute_type(CUBLAS_COMPUTE_32F);
  });
  CHECK(r.blas_status() == CUBLAS_STATUS_SUCCESS);
  CHECK(calls().gemm_ex == 1);
}

TEST_CASE("batched gemm checks every matrix its pointer arrays name", "[executor][blas]") {
  fake_gpu g;
  REQUIRE(g.run([](proto::Op& op) { op.mutable_blas_create()->set_handle(handle_id); })
            .blas_status()
          == 0);
  auto a = g.alloc(2 * 6 * 4), b = g.alloc(2 * 6 * 4), c = g.alloc(2 * 4 * 4);
  auto aa = g.alloc(16), ba = g.alloc(16), ca = g.alloc(16);
  float av[] = {1, 4, 2, 5, 3, 6, 2, 8, 4, 10, 6, 12}, bv[] = {1, 0, 1, 0, 1, 1, 1, 0, 1, 0, 1, 1};
  std::memcpy(g.floats(a), av, sizeof(av));
  std::memcpy(g.floats(b), bv, sizeof(bv));
  uint64_t ap[] = {a, a + 24}, bp[] = {b, b + 24}, cp[] = {c, c + 16};
  std::memcpy(host(aa), ap, 16);
  std::memcpy(host(ba), bp, 16);
  std::memcpy(host(ca), cp, 16);
  auto batched = [&](proto::Op& op) {
    sgemm_op(op, handle_id, 2, 2, 3, aa, ba, ca);
    op.mutable_blas_gemm()->set_form(proto::BlasGemm::BATCHED);
    op.mutable_blas_gemm()->set_batch_count(2);
  };
  auto r = g.run(batched);
  CHECK(r.blas_status() == CUBLAS_STATUS_SUCCESS);
  CHECK(calls().batched == 1);
  std::vector<float> cv(g.floats(c), g.floats(c) + 8);
  CHECK(cv == std::vector<float>{4, 10, 5, 11, 8, 20, 10, 22});

  // The second C now points 4 bytes before the end of C's allocation.
  cp[1] = c + 2 * 16 - 4;
  std::memcpy(host(ca), cp, 16);
  r = g.run(batched);
  CHECK(r.blas_status() == CUBLAS_STATUS_INVALID_VALUE);
  CHECK(r.error().find("Carray[1]") != std::string::npos);
  CHECK(calls().batched == 1);
}

namespace {

void lt_layout(proto::BlasLtLayout* l, uint64_t rows, uint64_t cols) {
  l->set_type(CUDA_R_32F);
  l->set_rows(rows);
  l->set_cols(cols);
  l->set_ld(static_cast<int64_t>(rows));
}

void lt_matmul_op(proto::Op& op, uint64_t a, uint64_t b, uint64_t c, const std::string& algo) {
  auto* m = op.mutable_blas_lt_matmul();
  m->set_handle(handle_id);
  m->mutable_desc()->set_compute_type(CUBLAS_COMPUTE_32F);
  m->mutable_desc()->set_scale_type(CUDA_R_32F);
  lt_layout(m->mutable_a_layout(), 2, 3);
  lt_layout(m->mutable_b_layout(), 3, 2);
  lt_layout(m->mutable_c_layout(), 2, 2);
  lt_layout(m->mutable_d_layout(), 2, 2);
  m->set_alpha(bytes_of(1.0f));
  m->set_beta(bytes_of(0.0f));
  m->set_a(a);
  m->set_b(b);
  m->set_c(c);
  m->set_d(c);
  m->set_algo(algo);
}

} // namespace

/// Capture entry points over the fake driver's one stream: begins, ends
/// and answers its status (calls().capturing).
void install_fake_capture(driver_api& api) {
  static bool capturing = false;
  capturing = false;
  api.cuThreadExchangeStreamCaptureMode = [](CUstreamCaptureMode*) { return CUDA_SUCCESS; };
  api.cuStreamBeginCapture = [](CUstream, CUstreamCaptureMode) {
    capturing = true;
    return CUDA_SUCCESS;
  };
  api.cuStreamEndCapture = [](CUstream, CUgraph* g) {
    capturing = false;
    *g = reinterpret_cast<CUgraph>(uintptr_t{0x9000});
    return CUDA_SUCCESS;
  };
  api.cuStreamIsCapturing = [](CUstream, CUstreamCaptureStatus* st) {
    *st = capturing ? CU_STREAM_CAPTURE_STATUS_ACTIVE : CU_STREAM_CAPTURE_STATUS_NONE;
    return CUDA_SUCCESS;
  };
  api.cuStreamGetCaptureInfo = [](CUstream, CUstreamCaptureStatus* st, cuuint64_t* id,
                                  CUgraph*, const CUgraphNode**, const CUgraphEdgeData**,
                                  size_t*) {
    *st = capturing ? CU_STREAM_CAPTURE_STATUS_ACTIVE : CU_STREAM_CAPTURE_STATUS_NONE;
    *id = 1;
    return CUDA_SUCCESS;
  };
  api.cuGraphDestroy = [](CUgraph) { return CUDA_SUCCESS; };
}

TEST_CASE("cuBLAS handles are destroyed only when no session captures (the destruction "
          "synchronizes the device)",
          "[executor][blas]") {
  fake_gpu g;
  install_fake_capture(g.driver);
  // A second session of the same GPU captures on a stream of its own.
  proto::OpenSession req;
  req.set_client_id("cpu:2");
  auto opened = g.exec->open_session(req);
  REQUIRE(opened);
  uint64_t seq = 0;
  auto other = [&](const std::function<void(proto::Op&)>& fill) {
    proto::OpBatch batch;
    batch.set_session(opened->session());
    batch.set_session_secret(opened->secret());
    auto* op = batch.add_ops();
    op->set_seq(++seq);
    fill(*op);
    auto reply = g.exec->execute(batch);
    REQUIRE(reply.results_size() == 1);
    return reply.results(0);
  };
  auto begin = [&] {
    REQUIRE(other([&](proto::Op& op) {
              auto* b = op.mutable_stream_begin_capture();
              b->set_stream(0x5000);
              b->set_graph(0x6000 + seq);
            }).status()
            == CUDA_SUCCESS);
  };
  auto end = [&] {
    REQUIRE(other([&](proto::Op& op) {
              op.mutable_stream_end_capture()->set_stream(0x5000);
              op.mutable_stream_end_capture()->set_graph(0x7000 + seq);
            }).status()
            == CUDA_SUCCESS);
  };
  REQUIRE(other([](proto::Op& op) { op.mutable_stream_create()->set_stream(0x5000); }).status()
          == CUDA_SUCCESS);
  REQUIRE(g.run([](proto::Op& op) { op.mutable_blas_create()->set_handle(handle_id); })
            .blas_status()
          == CUBLAS_STATUS_SUCCESS);
  REQUIRE(g.run([](proto::Op& op) { op.mutable_blas_lt_create()->set_handle(handle_id + 1); })
            .blas_status()
          == CUBLAS_STATUS_SUCCESS);
  begin();

  auto destroyed = g.run([](proto::Op& op) { op.mutable_blas_destroy()->set_handle(handle_id); });
  CHECK(destroyed.blas_status() == CUBLAS_STATUS_SUCCESS);
  CHECK(calls().destroys == 0);
  // Gone for the session all the same.
  auto a = g.alloc(16), b = g.alloc(16), c = g.alloc(16);
  auto use = g.run([&](proto::Op& op) { sgemm_op(op, handle_id, 2, 2, 2, a, b, c); });
  CHECK(use.blas_status() == CUBLAS_STATUS_NOT_INITIALIZED);
  CHECK(calls().gemms == 0);
  // The capture ends: the parked handle goes with that batch.
  end();
  CHECK(calls().destroys == 1);

  // A session that ends during another's capture leaves its handles
  // parked until the capture is over.
  begin();
  g.exec->close_session(g.session);
  CHECK(calls().destroys == 1);
  end();
  CHECK(calls().destroys == 2);
  CHECK(calls().live.empty());
}

TEST_CASE("cuBLASLt: heuristic results pass through, descriptors are cached by content",
          "[executor][blas]") {
  fake_gpu g;
  // A cuBLAS handle serves as a cuBLASLt handle, as the vendor allows.
  REQUIRE(g.run([](proto::Op& op) { op.mutable_blas_create()->set_handle(handle_id); })
            .blas_status()
          == 0);
  auto h = g.run([](proto::Op& op) {
    auto* m = op.mutable_blas_lt_heuristic();
    m->set_handle(handle_id);
    m->mutable_desc()->set_compute_type(CUBLAS_COMPUTE_32F);
    m->mutable_desc()->set_scale_type(CUDA_R_32F);
    lt_layout(m->mutable_a_layout(), 2, 3);
    lt_layout(m->mutable_b_layout(), 3, 2);
    lt_layout(m->mutable_c_layout(), 2, 2);
    lt_layout(m->mutable_d_layout(), 2, 2);
    m->set_requested(8);
  });
  REQUIRE(h.blas_status() == CUBLAS_STATUS_SUCCESS);
  REQUIRE(h.blas_heuristics().results_size() == 2);
  const auto& first = h.blas_heuristics().results(0);
  REQUIRE(first.size() == sizeof(cublasLtMatmulHeuristicResult_t));
  cublasLtMatmulHeuristicResult_t res;
  std::memcpy(&res, first.data(), sizeof(res));
  CHECK(res.algo.data[0] == 0xa160);
  CHECK(res.workspaceSize == 1024);
  // Layouts A and B differ; C and D are equal: three layout objects.
  CHECK(calls().layout_creates == 3);
  CHECK(calls().desc_creates == 1);

  auto a = g.alloc(24), b = g.alloc(24), c = g.alloc(16);
  auto algo = std::string(reinterpret_cast<const char*>(&res.algo), sizeof(res.algo));
  auto r = g.run([&](proto::Op& op) { lt_matmul_op(op, a, b, c, algo); });
  CHECK(r.blas_status() == CUBLAS_STATUS_SUCCESS);
  CHECK(calls().lt_matmuls == 1);
  // Same content: nothing new is created.
  CHECK(calls().desc_creates == 1);
  CHECK(calls().layout_creates == 3);

  // D one element short of its layout.
  auto small = g.alloc(12);
  r = g.run([&](proto::Op& op) {
    lt_matmul_op(op, a, b, c, algo);
    op.mutable_blas_lt_matmul()->set_d(small);
  });
  CHECK(r.blas_status() == CUBLAS_STATUS_INVALID_VALUE);
  // A bias pointer outside the session's memory.
  r = g.run([&](proto::Op& op) {
    lt_matmul_op(op, a, b, c, algo);
    auto* attr = op.mutable_blas_lt_matmul()->mutable_desc()->add_attributes();
    attr->set_id(CUBLASLT_MATMUL_DESC_BIAS_POINTER);
    uint64_t bias = 0x1234;
    attr->set_value(std::string(reinterpret_cast<const char*>(&bias), sizeof(bias)));
  });
  CHECK(r.blas_status() == CUBLAS_STATUS_INVALID_VALUE);
  // Device pointer mode: alpha/beta would be device addresses.
  r = g.run([&](proto::Op& op) {
    lt_matmul_op(op, a, b, c, algo);
    auto* attr = op.mutable_blas_lt_matmul()->mutable_desc()->add_attributes();
    attr->set_id(CUBLASLT_MATMUL_DESC_POINTER_MODE);
    int32_t mode = CUBLASLT_POINTER_MODE_DEVICE;
    attr->set_value(std::string(reinterpret_cast<const char*>(&mode), sizeof(mode)));
  });
  CHECK(r.blas_status() == CUBLAS_STATUS_NOT_SUPPORTED);
  // A workspace larger than its allocation.
  r = g.run([&](proto::Op& op) {
    lt_matmul_op(op, a, b, c, algo);
    op.mutable_blas_lt_matmul()->set_workspace(small);
    op.mutable_blas_lt_matmul()->set_workspace_size(1024);
  });
  CHECK(r.blas_status() == CUBLAS_STATUS_INVALID_VALUE);
  CHECK(calls().lt_matmuls == 1);

  // Closing the session destroys every library object it made.
  g.exec->close_session(g.session);
  CHECK(calls().live.empty());
  CHECK(calls().destroys == 1);
  CHECK(calls().desc_destroys == calls().desc_creates);
  CHECK(calls().layout_destroys == calls().layout_creates);
}

namespace {

/// A cublasLtMatrixTransform op C = alpha * A + beta * B over 2 x 3 float
/// matrices in column order.
void lt_transform_op(proto::Op& op, uint64_t a, uint64_t b, uint64_t c, float alpha, float beta) {
  auto* t = op.mutable_blas_lt_transform();
  t->set_handle(handle_id);
  t->mutable_desc()->set_scale_type(CUDA_R_32F);
  t->set_alpha(bytes_of(alpha));
  t->set_beta(bytes_of(beta));
  t->set_a(a);
  t->set_b(b);
  t->set_c(c);
  lt_layout(t->mutable_a_layout(), 2, 3);
  lt_layout(t->mutable_b_layout(), 2, 3);
  lt_layout(t->mutable_c_layout(), 2, 3);
}

template <class T>
void add_attribute(google::protobuf::RepeatedPtrField<proto::BlasLtAttribute>* attrs, int32_t id,
                   T value) {
  auto* a = attrs->Add();
  a->set_id(id);
  a->set_value(std::string(reinterpret_cast<const char*>(&value), sizeof(value)));
}

} // namespace

TEST_CASE("cuBLASLt matrix transform: every operand checked from its layout before the library "
          "runs",
          "[executor][blas]") {
  fake_gpu g;
  REQUIRE(g.run([](proto::Op& op) { op.mutable_blas_lt_create()->set_handle(handle_id); })
            .blas_status()
          == 0);
  auto a = g.alloc(24), b = g.alloc(24), c = g.alloc(24);
  for (int i = 0; i < 6; ++i) {
    g.floats(a)[i] = static_cast<float>(i);
    g.floats(b)[i] = 10.0f * static_cast<float>(i);
  }
  auto r = g.run([&](proto::Op& op) {
    lt_transform_op(op, a, b, c, 2.0f, 1.0f);
    add_attribute(op.mutable_blas_lt_transform()->mutable_desc()->mutable_attributes(),
                  CUBLASLT_MATRIX_TRANSFORM_DESC_TRANSA, int32_t{CUBLAS_OP_T});
  });
  INFO(r.error());
  REQUIRE(r.blas_status() == CUBLAS_STATUS_SUCCESS);
  CHECK(calls().transforms == 1);
  CHECK(calls().transa == CUBLAS_OP_T);
  CHECK(std::vector<float>(g.floats(c), g.floats(c) + 6)
        == std::vector<float>{0, 12, 24, 36, 48, 60});
  // B is not read where beta is zero: it may be NULL.
  r = g.run([&](proto::Op& op) {
    lt_transform_op(op, a, 0, c, 1.0f, 0.0f);
    op.mutable_blas_lt_transform()->clear_b_layout();
  });
  CHECK(r.blas_status() == CUBLAS_STATUS_SUCCESS);
  CHECK(calls().transforms == 2);
  CHECK(std::vector<float>(g.floats(c), g.floats(c) + 6)
        == std::vector<float>{0, 1, 2, 3, 4, 5});

  auto refused = [&](const std::function<void(proto::Op&)>& change, cublasStatus_t expected) {
    auto before = calls().transforms;
    auto res = g.run([&](proto::Op& op) {
      lt_transform_op(op, a, b, c, 1.0f, 1.0f);
      change(op);
    });
    INFO(res.error());
    CHECK(res.blas_status() == expected);
    CHECK(calls().transforms == before);
  };
  // C one element short of its layout.
  auto small = g.alloc(20);
  refused([&](proto::Op& op) { op.mutable_blas_lt_transform()->set_c(small); },
          CUBLAS_STATUS_INVALID_VALUE);
  // A batch of two reaches past A's allocation.
  refused(
    [&](proto::Op& op) {
      auto* attrs = op.mutable_blas_lt_transform()->mutable_a_layout()->mutable_attributes();
      add_attribute(attrs, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, int32_t{2});
      add_attribute(attrs, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, int64_t{6});
    },
    CUBLAS_STATUS_INVALID_VALUE);
  // A given without its layout; A NULL while alpha scales it.
  refused([&](proto::Op& op) { op.mutable_blas_lt_transform()->clear_a_layout(); },
          CUBLAS_STATUS_INVALID_VALUE);
  refused([&](proto::Op& op) { op.mutable_blas_lt_transform()->set_a(0); },
          CUBLAS_STATUS_INVALID_VALUE);
  // An address outside the session's memory.
  refused([&](proto::Op& op) { op.mutable_blas_lt_transform()->set_b(0x1234); },
          CUBLAS_STATUS_INVALID_VALUE);
  // Device pointer mode: alpha and beta would be device addresses.
  refused(
    [&](proto::Op& op) {
      add_attribute(op.mutable_blas_lt_transform()->mutable_desc()->mutable_attributes(),
                    CUBLASLT_MATRIX_TRANSFORM_DESC_POINTER_MODE,
                    int32_t{CUBLASLT_POINTER_MODE_DEVICE});
    },
    CUBLAS_STATUS_NOT_SUPPORTED);
  // COL32: a 2 x 3 matrix spans 32 columns of its 2 rows, 256 bytes.
  auto tiled = g.alloc(256), tiled_short = g.alloc(252);
  auto col32 = [&](uint64_t dst) {
    return g.run([&](proto::Op& op) {
      lt_transform_op(op, a, 0, dst, 1.0f, 0.0f);
      op.mutable_blas_lt_transform()->clear_b_layout();
      auto* l = op.mutable_blas_lt_transform()->mutable_c_layout();
      l->set_ld(64);
      add_attribute(l->mutable_attributes(), CUBLASLT_MATRIX_LAYOUT_ORDER,
                    int32_t{CUBLASLT_ORDER_COL32});
    });
  };
  CHECK(col32(tiled).blas_status() == CUBLAS_STATUS_SUCCESS);
  CHECK(col32(tiled_short).blas_status() == CUBLAS_STATUS_INVALID_VALUE);
  CHECK(calls().transforms == 3);
  // One descriptor object for equal content.
  CHECK(calls().transform_creates == 2);
  g.exec->close_session(g.session);
  CHECK(calls().transform_destroys == calls().transform_creates);
  CHECK(calls().live.empty());
}

TEST_CASE("cuBLASLt: an emulation descriptor travels by value and lives with its matmul "
          "descriptor",
          "[executor][blas]") {
  fake_gpu g;
  REQUIRE(g.run([](proto::Op& op) { op.mutable_blas_create()->set_handle(handle_id); })
            .blas_status()
          == 0);
  auto h = g.run([](proto::Op& op) {
    auto* m = op.mutable_blas_lt_heuristic();
    m->set_handle(handle_id);
    m->mutable_desc()->set_compute_type(CUBLAS_COMPUTE_32F);
    m->mutable_desc()->set_scale_type(CUDA_R_32F);
    lt_layout(m->mutable_a_layout(), 2, 3);
    lt_layout(m->mutable_b_layout(), 3, 2);
    lt_layout(m->mutable_c_layout(), 2, 2);
    lt_layout(m->mutable_d_layout(), 2, 2);
    m->set_requested(1);
  });
  REQUIRE(h.blas_status() == CUBLAS_STATUS_SUCCESS);
  cublasLtMatmulHeuristicResult_t res;
  std::memcpy(&res, h.blas_heuristics().results(0).data(), sizeof(res));
  auto algo = std::string(reinterpret_cast<const char*>(&res.algo), sizeof(res.algo));
  auto a = g.alloc(24), b = g.alloc(24), c = g.alloc(16), bits = g.alloc(4);
  auto with_emulation = [&](proto::Op& op, uint64_t counter) {
    lt_matmul_op(op, a, b, c, algo);
    auto* e = op.mutable_blas_lt_matmul()->mutable_desc()->mutable_emulation();
    add_attribute(e->mutable_attributes(), CUBLASLT_EMULATION_DESC_STRATEGY,
                  int32_t{CUBLAS_EMULATION_STRATEGY_EAGER});
    add_attribute(e->mutable_attributes(),
                  CUBLASLT_EMULATION_DESC_FIXEDPOINT_MANTISSA_BIT_COUNT_POINTER, counter);
  };
  auto r = g.run([&](proto::Op& op) { with_emulation(op, bits); });
  INFO(r.error());
  REQUIRE(r.blas_status() == CUBLAS_STATUS_SUCCESS);
  CHECK(calls().emulation_creates == 1);
  CHECK(calls().emulation_strategy == CUBLAS_EMULATION_STRATEGY_EAGER);
  CHECK(calls().desc_emulation != nullptr);
  CHECK(calls().live.count(calls().desc_emulation) == 1);
  // The same descriptor again: nothing new is made.
  r = g.run([&](proto::Op& op) { with_emulation(op, bits); });
  CHECK(r.blas_status() == CUBLAS_STATUS_SUCCESS);
  CHECK(calls().emulation_creates == 1);
  CHECK(calls().lt_matmuls == 2);
  // The mantissa bit counter outside the session's memory.
  r = g.run([&](proto::Op& op) { with_emulation(op, 0x1234); });
  CHECK(r.blas_status() == CUBLAS_STATUS_INVALID_VALUE);
  // A raw pointer in the attribute list would be followed in the server.
  r = g.run([&](proto::Op& op) {
    lt_matmul_op(op, a, b, c, algo);
    add_attribute(op.mutable_blas_lt_matmul()->mutable_desc()->mutable_attributes(),
                  CUBLASLT_MATMUL_DESC_EMULATION_DESCRIPTOR, uint64_t{0x7fff0000});
  });
  CHECK(r.blas_status() == CUBLAS_STATUS_INVALID_VALUE);
  CHECK(calls().lt_matmuls == 2);
  g.exec->close_session(g.session);
  CHECK(calls().emulation_destroys == calls().emulation_creates);
  CHECK(calls().live.empty());
}

TEST_CASE("cuBLASLt layout extents of the tiled orders and of planar complex matrices",
          "[executor][blas]") {
  fake_gpu g;
  REQUIRE(g.run([](proto::Op& op) { op.mutable_blas_lt_create()->set_handle(handle_id); })
            .blas_status()
          == 0);
  auto a = g.alloc(24);
  // C (2 x 3) in layout `order` of `type`, plane offset `plane`, at an
  // allocation of `bytes`: the transform's status.
  auto status = [&](int32_t order, cudaDataType type, int64_t plane, uint64_t bytes) {
    auto c = g.alloc(bytes);
    auto r = g.run([&](proto::Op& op) {
      lt_transform_op(op, a, 0, c, 1.0f, 0.0f);
      op.mutable_blas_lt_transform()->clear_b_layout();
      auto* l = op.mutable_blas_lt_transform()->mutable_c_layout();
      l->set_type(type);
      add_attribute(l->mutable_attributes(), CUBLASLT_MATRIX_LAYOUT_ORDER, order);
      if (plane != 0)
        add_attribute(l->mutable_attributes(), CUBLASLT_MATRIX_LAYOUT_PLANE_OFFSET, plane);
    });
    INFO(r.error());
    return r.blas_status();
  };
  // COL4_4R2_8C: 32 columns of 8 rows; COL32_2R_4R4: 32 columns of 32 rows.
  CHECK(status(CUBLASLT_ORDER_COL4_4R2_8C, CUDA_R_8I, 0, 256) == CUBLAS_STATUS_SUCCESS);
  CHECK(status(CUBLASLT_ORDER_COL4_4R2_8C, CUDA_R_8I, 0, 255) == CUBLAS_STATUS_INVALID_VALUE);
  CHECK(status(CUBLASLT_ORDER_COL32_2R_4R4, CUDA_R_8I, 0, 1024) == CUBLAS_STATUS_SUCCESS);
  CHECK(status(CUBLASLT_ORDER_COL32_2R_4R4, CUDA_R_8I, 0, 1023) == CUBLAS_STATUS_INVALID_VALUE);
  // Planar complex: 2 x 3 real parts (4 bytes each), the imaginary plane
  // 64 bytes after the real one.
  CHECK(status(CUBLASLT_ORDER_COL, CUDA_C_32F, 64, 88) == CUBLAS_STATUS_SUCCESS);
  CHECK(status(CUBLASLT_ORDER_COL, CUDA_C_32F, 64, 87) == CUBLAS_STATUS_INVALID_VALUE);
  // Interleaved complex: 8 bytes an element.
  CHECK(status(CUBLASLT_ORDER_COL, CUDA_C_32F, 0, 48) == CUBLAS_STATUS_SUCCESS);
  CHECK(status(CUBLASLT_ORDER_COL, CUDA_C_32F, 0, 47) == CUBLAS_STATUS_INVALID_VALUE);
  // An order Gleam does not know cannot be checked.
  CHECK(status(77, CUDA_R_32F, 0, 4096) == CUBLAS_STATUS_NOT_SUPPORTED);
  CHECK(calls().transforms == 4);
}

TEST_CASE("cuBLASLt algo queries reach the library with the app's arguments",
          "[executor][blas]") {
  fake_gpu g;
  REQUIRE(g.run([](proto::Op& op) { op.mutable_blas_lt_create()->set_handle(handle_id); })
            .blas_status()
          == 0);
  auto ids = g.run([](proto::Op& op) {
    auto* q = op.mutable_blas_lt_algo_get_ids();
    q->set_handle(handle_id);
    q->set_requested(2);
  });
  REQUIRE(ids.blas_status() == CUBLAS_STATUS_SUCCESS);
  CHECK(std::vector<int>(ids.blas_lt_answer().ids().begin(), ids.blas_lt_answer().ids().end())
        == std::vector<int>{3, 7});
  CHECK(ids.blas_lt_answer().size_written() == 2);
  // A NULL array reaches the library as NULL.
  ids = g.run([](proto::Op& op) {
    auto* q = op.mutable_blas_lt_algo_get_ids();
    q->set_handle(handle_id);
    q->set_requested(2);
    q->set_ids_null(true);
  });
  CHECK(ids.blas_status() == CUBLAS_STATUS_INVALID_VALUE);
  // An unknown handle.
  ids = g.run([](proto::Op& op) {
    op.mutable_blas_lt_algo_get_ids()->set_handle(handle_id + 1);
    op.mutable_blas_lt_algo_get_ids()->set_requested(2);
  });
  CHECK(ids.blas_status() == CUBLAS_STATUS_NOT_INITIALIZED);

  auto init = [&](int id) {
    return g.run([&](proto::Op& op) {
      op.mutable_blas_lt_algo_init()->set_handle(handle_id);
      op.mutable_blas_lt_algo_init()->set_algo_id(id);
    });
  };
  CHECK(init(99).blas_status() == CUBLAS_STATUS_NOT_SUPPORTED);
  auto made = init(7);
  REQUIRE(made.blas_status() == CUBLAS_STATUS_SUCCESS);
  REQUIRE(made.blas_lt_answer().algo().size() == sizeof(cublasLtMatmulAlgo_t));
  cublasLtMatmulAlgo_t algo;
  std::memcpy(&algo, made.blas_lt_answer().algo().data(), sizeof(algo));
  CHECK(algo.data[0] == 7);
  auto algo_bytes = made.blas_lt_answer().algo();

  // Capabilities: the size first, then the list.
  auto cap = g.run([&](proto::Op& op) {
    auto* q = op.mutable_blas_lt_algo_attribute();
    q->set_kind(proto::BlasLtAlgoAttribute::CAP_GET);
    q->set_algo(algo_bytes);
    q->set_attr(CUBLASLT_ALGO_CAP_TILE_IDS);
    q->set_buf_null(true);
  });
  REQUIRE(cap.blas_status() == CUBLAS_STATUS_SUCCESS);
  CHECK(cap.blas_lt_answer().size_written() == 12);
  cap = g.run([&](proto::Op& op) {
    auto* q = op.mutable_blas_lt_algo_attribute();
    q->set_kind(proto::BlasLtAlgoAttribute::CAP_GET);
    q->set_algo(algo_bytes);
    q->set_attr(CUBLASLT_ALGO_CAP_TILE_IDS);
    q->set_size(64);
    q->set_size_written_null(true);
  });
  REQUIRE(cap.blas_status() == CUBLAS_STATUS_SUCCESS);
  REQUIRE(cap.blas_lt_answer().buf().size() == 12);
  uint32_t tiles[3];
  std::memcpy(tiles, cap.blas_lt_answer().buf().data(), sizeof(tiles));
  CHECK(tiles[2] == 7);
  // sizeInBytes 0 with sizeWritten NULL is the library's to refuse.
  cap = g.run([&](proto::Op& op) {
    auto* q = op.mutable_blas_lt_algo_attribute();
    q->set_kind(proto::BlasLtAlgoAttribute::CAP_GET);
    q->set_algo(algo_bytes);
    q->set_attr(CUBLASLT_ALGO_CAP_TILE_IDS);
    q->set_size_written_null(true);
  });
  CHECK(cap.blas_status() == CUBLAS_STATUS_INVALID_VALUE);

  // Config: set a tile, read it back from the returned algo.
  uint32_t tile = 5;
  auto set = g.run([&](proto::Op& op) {
    auto* q = op.mutable_blas_lt_algo_attribute();
    q->set_kind(proto::BlasLtAlgoAttribute::CONFIG_SET);
    q->set_algo(algo_bytes);
    q->set_attr(CUBLASLT_ALGO_CONFIG_TILE_ID);
    q->set_size(sizeof(tile));
    q->set_value(std::string(reinterpret_cast<const char*>(&tile), sizeof(tile)));
  });
  REQUIRE(set.blas_status() == CUBLAS_STATUS_SUCCESS);
  auto tiled = set.blas_lt_answer().algo();
  auto get = g.run([&](proto::Op& op) {
    auto* q = op.mutable_blas_lt_algo_attribute();
    q->set_kind(proto::BlasLtAlgoAttribute::CONFIG_GET);
    q->set_algo(tiled);
    q->set_attr(CUBLASLT_ALGO_CONFIG_TILE_ID);
    q->set_size(sizeof(uint32_t));
  });
  REQUIRE(get.blas_status() == CUBLAS_STATUS_SUCCESS);
  REQUIRE(get.blas_lt_answer().buf().size() == sizeof(uint32_t));
  uint32_t back = 0;
  std::memcpy(&back, get.blas_lt_answer().buf().data(), sizeof(back));
  CHECK(back == 5);
  // A wrong size is the library's to refuse; an algo of the wrong size is ours.
  set = g.run([&](proto::Op& op) {
    auto* q = op.mutable_blas_lt_algo_attribute();
    q->set_kind(proto::BlasLtAlgoAttribute::CONFIG_SET);
    q->set_algo(algo_bytes);
    q->set_attr(CUBLASLT_ALGO_CONFIG_TILE_ID);
    q->set_size(8);
    q->set_value(std::string(8, '\0'));
  });
  CHECK(set.blas_status() == CUBLAS_STATUS_INVALID_VALUE);
  set = g.run([&](proto::Op& op) {
    auto* q = op.mutable_blas_lt_algo_attribute();
    q->set_kind(proto::BlasLtAlgoAttribute::CONFIG_GET);
    q->set_algo("short");
    q->set_size(4);
  });
  CHECK(set.blas_status() == CUBLAS_STATUS_INVALID_VALUE);

  // Check: the result keeps the app's algo field, the rest is the library's.
  cublasLtMatmulHeuristicResult_t before;
  std::memset(&before, 0, sizeof(before));
  before.algo.data[5] = 0x5a5a;
  auto check = g.run([&](proto::Op& op) {
    auto* q = op.mutable_blas_lt_algo_check();
    q->set_handle(handle_id);
    q->mutable_desc()->set_compute_type(CUBLAS_COMPUTE_32F);
    q->mutable_desc()->set_scale_type(CUDA_R_32F);
    lt_layout(q->mutable_a_layout(), 2, 3);
    lt_layout(q->mutable_b_layout(), 3, 2);
    lt_layout(q->mutable_c_layout(), 2, 2);
    lt_layout(q->mutable_d_layout(), 2, 2);
    q->set_algo(algo_bytes);
    q->set_result(std::string(reinterpret_cast<const char*>(&before), sizeof(before)));
  });
  REQUIRE(check.blas_status() == CUBLAS_STATUS_SUCCESS);
  cublasLtMatmulHeuristicResult_t after;
  REQUIRE(check.blas_lt_answer().result().size() == sizeof(after));
  std::memcpy(&after, check.blas_lt_answer().result().data(), sizeof(after));
  CHECK(after.workspaceSize == 70);
  CHECK(after.wavesCount == 0.5f);
  CHECK(after.algo.data[5] == 0x5a5a);

  // The heuristics cache capacity of the session's library.
  CHECK(g.run([](proto::Op& op) {
           op.mutable_blas_lt_heuristics_cache()->set_set(true);
           op.mutable_blas_lt_heuristics_cache()->set_capacity(17);
         }).blas_status()
        == CUBLAS_STATUS_SUCCESS);
  auto capacity = g.run([](proto::Op& op) { op.mutable_blas_lt_heuristics_cache(); });
  REQUIRE(capacity.blas_status() == CUBLAS_STATUS_SUCCESS);
  CHECK(capacity.blas_lt_answer().capacity() == 17);
}

// --- on the real GPU --------------------------------------------------------

namespace {

using gleam::test::real_client;

} // namespace

TEST_CASE("SGEMM and GemmEx (fp16 in, fp32 compute) on the GPU give exact values",
          "[gpu][executor][blas]") {
  real_client c;
  auto created = c.run([](proto::Op& op) { op.mutable_blas_create()->set_handle(handle_id); });
  INFO(created.error());
  REQUIRE(created.blas_status() == CUBLAS_STATUS_SUCCESS);
  // Small integers: every product and sum is exact in fp16 and fp32.
  const int m = 16, n = 8, k = 32;
  std::vector<float> a(m * k), b(k * n), zero(m * n, 0.0f);
  for (int i = 0; i < m * k; ++i)
    a[static_cast<size_t>(i)] = static_cast<float>(i % 7 - 3);
  for (int i = 0; i < k * n; ++i)
    b[static_cast<size_t>(i)] = static_cast<float>(i % 5 - 2);
  std::vector<float> expect(m * n, 0.0f);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j)
      for (int p = 0; p < k; ++p)
        expect[static_cast<size_t>(i + j * m)] +=
          a[static_cast<size_t>(i + p * m)] * b[static_cast<size_t>(p + j * k)];
  auto da = c.upload(a.data(), a.size() * 4);
  auto db = c.upload(b.data(), b.size() * 4);
  auto dc = c.upload(zero.data(), zero.size() * 4);
  auto r = c.run([&](proto::Op& op) { sgemm_op(op, handle_id, m, n, k, da, db, dc); });
  INFO(r.error());
  REQUIRE(r.blas_status() == CUBLAS_STATUS_SUCCESS);
  CHECK(c.download<float>(dc, expect.size()) == expect);

  std::vector<__half> ah(a.size()), bh(b.size());
  for (size_t i = 0; i < a.size(); ++i)
    ah[i] = __float2half(a[i]);
  for (size_t i = 0; i < b.size(); ++i)
    bh[i] = __float2half(b[i]);
  auto dah = c.upload(ah.data(), ah.size() * 2);
  auto dbh = c.upload(bh.data(), bh.size() * 2);
  auto dc2 = c.upload(zero.data(), zero.size() * 4);
  r = c.run([&](proto::Op& op) {
    sgemm_op(op, handle_id, m, n, k, dah, dbh, dc2);
    auto* g = op.mutable_blas_gemm();
    g->set_api(proto::BlasGemm::GEMM_EX);
    g->set_a_type(CUDA_R_16F);
    g->set_b_type(CUDA_R_16F);
    g->set_c_type(CUDA_R_32F);
    g->set_compute_type(CUBLAS_COMPUTE_32F);
    g->set_algo(CUBLAS_GEMM_DEFAULT);
  });
  INFO(r.error());
  REQUIRE(r.blas_status() == CUBLAS_STATUS_SUCCESS);
  CHECK(c.download<float>(dc2, expect.size()) == expect);

  // C short by one element: refused, C untouched.
  auto short_c = c.upload(zero.data(), (zero.size() - 1) * 4);
  r = c.run([&](proto::Op& op) { sgemm_op(op, handle_id, m, n, k, da, db, short_c); });
  CHECK(r.blas_status() == CUBLAS_STATUS_INVALID_VALUE);
  CHECK(c.download<float>(short_c, zero.size() - 1) == std::vector<float>(zero.size() - 1, 0.0f));
}

TEST_CASE("cuBLASLt heuristic and matmul on the GPU", "[gpu][executor][blas]") {
  real_client c;
  REQUIRE(c.run([](proto::Op& op) { op.mutable_blas_lt_create()->set_handle(handle_id); })
            .blas_status()
          == CUBLAS_STATUS_SUCCESS);
  float av[] = {1, 4, 2, 5, 3, 6}, bv[] = {1, 0, 1, 0, 1, 1}, cv[] = {0, 0, 0, 0};
  auto a = c.upload(av, sizeof(av)), b = c.upload(bv, sizeof(bv)), d = c.upload(cv, sizeof(cv));
  auto h = c.run([](proto::Op& op) {
    auto* m = op.mutable_blas_lt_heuristic();
    m->set_handle(handle_id);
    m->mutable_desc()->set_compute_type(CUBLAS_COMPUTE_32F);
    m->mutable_desc()->set_scale_type(CUDA_R_32F);
    lt_layout(m->mutable_a_layout(), 2, 3);
    lt_layout(m->mutable_b_layout(), 3, 2);
    lt_layout(m->mutable_c_layout(), 2, 2);
    lt_layout(m->mutable_d_layout(), 2, 2);
    m->set_requested(4);
  });
  INFO(h.error());
  REQUIRE(h.blas_status() == CUBLAS_STATUS_SUCCESS);
  REQUIRE(h.blas_heuristics().results_size() >= 1);
  cublasLtMatmulHeuristicResult_t res;
  std::memcpy(&res, h.blas_heuristics().results(0).data(), sizeof(res));
  CHECK(res.state == CUBLAS_STATUS_SUCCESS);
  auto algo = std::string(reinterpret_cast<const char*>(&res.algo), sizeof(res.algo));
  uint64_t ws = 0;
  if (res.workspaceSize > 0) {
    std::vector<char> zeros(res.workspaceSize);
    ws = c.upload(zeros.data(), zeros.size());
  }
  auto r = c.run([&](proto::Op& op) {
    lt_matmul_op(op, a, b, d, algo);
    op.mutable_blas_lt_matmul()->set_workspace(ws);
    op.mutable_blas_lt_matmul()->set_workspace_size(res.workspaceSize);
  });
  INFO(r.error());
  REQUIRE(r.blas_status() == CUBLAS_STATUS_SUCCESS);
  CHECK(c.download<float>(d, 4) == std::vector<float>{4, 10, 5, 11});
}

namespace {

/// A cuBLASLt matrix of the [gpu] comparisons: its layout and its bytes.
struct lt_matrix {
  cudaDataType type = CUDA_R_32F;
  uint64_t rows = 0;
  uint64_t cols = 0;
  int64_t ld = 0;
  int32_t order = CUBLASLT_ORDER_COL;
  int32_t batch = 1;
  int64_t stride = 0;
  size_t bytes = 0;

  void put(proto::BlasLtLayout* l) const {
    l->set_type(type);
    l->set_rows(rows);
    l->set_cols(cols);
    l->set_ld(ld);
    add_attribute(l->mutable_attributes(), CUBLASLT_MATRIX_LAYOUT_ORDER, order);
    add_attribute(l->mutable_attributes(), CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, batch);
    add_attribute(l->mutable_attributes(), CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, stride);
  }

  cublasLtMatrixLayout_t make(blas_api& api) const {
    cublasLtMatrixLayout_t l = nullptr;
    REQUIRE(api.cublasLtMatrixLayoutCreate(&l, type, rows, cols, ld) == CUBLAS_STATUS_SUCCESS);
    REQUIRE(api.cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_ORDER, &order,
                                                 sizeof(order))
            == CUBLAS_STATUS_SUCCESS);
    REQUIRE(api.cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch,
                                                 sizeof(batch))
            == CUBLAS_STATUS_SUCCESS);
    REQUIRE(api.cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                                 &stride, sizeof(stride))
            == CUBLAS_STATUS_SUCCESS);
    return l;
  }
};

/// The vendor's cuBLASLt called directly in this process, on the primary
/// context of GPU 0 (the reference the executor's answers must equal).
struct local_lt {
  std::unique_ptr<driver_api> driver;
  std::unique_ptr<blas_api> api;
  CUcontext ctx = nullptr;
  cublasLtHandle_t handle = nullptr;

  local_lt() {
    auto d = driver_api::load();
    REQUIRE(d);
    driver = std::move(*d);
    auto a = blas_api::load("/usr/local/cuda/lib64");
    INFO((a ? std::string{} : caf::to_string(a.error())));
    REQUIRE(a);
    api = std::move(*a);
    CUdevice dev = 0;
    REQUIRE(driver->cuInit(0) == CUDA_SUCCESS);
    REQUIRE(driver->cuDeviceGet(&dev, 0) == CUDA_SUCCESS);
    REQUIRE(driver->cuDevicePrimaryCtxRetain(&ctx, dev) == CUDA_SUCCESS);
    current();
    REQUIRE(api->cublasLtCreate(&handle) == CUBLAS_STATUS_SUCCESS);
  }

  ~local_lt() {
    current();
    static_cast<void>(api->cublasLtDestroy(handle));
  }

  local_lt(const local_lt&) = delete;
  local_lt& operator=(const local_lt&) = delete;

  /// Makes the primary context current (the executor may have changed it).
  void current() {
    REQUIRE(driver->cuCtxSetCurrent(ctx) == CUDA_SUCCESS);
  }

  CUdeviceptr upload(const std::vector<char>& bytes) {
    current();
    CUdeviceptr p = 0;
    REQUIRE(driver->cuMemAlloc(&p, bytes.size()) == CUDA_SUCCESS);
    REQUIRE(driver->cuMemcpyHtoD(p, bytes.data(), bytes.size()) == CUDA_SUCCESS);
    return p;
  }

  std::vector<char> download(CUdeviceptr p, size_t n) {
    current();
    std::vector<char> out(n);
    REQUIRE(driver->cuCtxSynchronize() == CUDA_SUCCESS);
    REQUIRE(driver->cuMemcpyDtoH(out.data(), p, n) == CUDA_SUCCESS);
    static_cast<void>(driver->cuMemFree(p));
    return out;
  }
};

/// `n` bytes of a repeatable pattern (small integers for float types).
std::vector<char> pattern(cudaDataType type, size_t n, int seed) {
  std::vector<char> out(n);
  if (type == CUDA_R_32F) {
    for (size_t i = 0; i < n / 4; ++i) {
      float v = static_cast<float>((static_cast<int>(i) * 7 + seed) % 23 - 11);
      std::memcpy(&out[i * 4], &v, 4);
    }
  } else {
    for (size_t i = 0; i < n; ++i)
      out[i] = static_cast<char>((static_cast<int>(i) * 5 + seed) % 51 - 25);
  }
  return out;
}

/// One transform C = alpha * op(A) + beta * op(B) run through the executor
/// and directly; returns both results' bytes.
std::pair<std::vector<char>, std::vector<char>>
transform_both(local_lt& local, cudaDataType scale_type, int32_t transa, float alpha,
               const lt_matrix& a, float beta, const lt_matrix* b, const lt_matrix& c) {
  auto a_bytes = pattern(a.type, a.bytes, 1);
  auto b_bytes = b != nullptr ? pattern(b->type, b->bytes, 2) : std::vector<char>{};
  std::vector<char> c_zero(c.bytes, 0);

  real_client rc;
  REQUIRE(rc.run([](proto::Op& op) { op.mutable_blas_lt_create()->set_handle(handle_id); })
            .blas_status()
          == CUBLAS_STATUS_SUCCESS);
  auto da = rc.upload(a_bytes.data(), a_bytes.size());
  auto db = b != nullptr ? rc.upload(b_bytes.data(), b_bytes.size()) : 0;
  auto dc = rc.upload(c_zero.data(), c_zero.size());
  auto r = rc.run([&](proto::Op& op) {
    auto* t = op.mutable_blas_lt_transform();
    t->set_handle(handle_id);
    t->mutable_desc()->set_scale_type(scale_type);
    add_attribute(t->mutable_desc()->mutable_attributes(), CUBLASLT_MATRIX_TRANSFORM_DESC_TRANSA,
                  transa);
    t->set_alpha(bytes_of(alpha));
    t->set_beta(bytes_of(beta));
    t->set_a(da);
    a.put(t->mutable_a_layout());
    if (b != nullptr) {
      t->set_b(db);
      b->put(t->mutable_b_layout());
    }
    t->set_c(dc);
    c.put(t->mutable_c_layout());
  });
  INFO(r.error());
  REQUIRE(r.blas_status() == CUBLAS_STATUS_SUCCESS);
  auto remote = rc.download<char>(dc, c.bytes);

  local.current();
  auto& api = *local.api;
  cublasLtMatrixTransformDesc_t desc = nullptr;
  REQUIRE(api.cublasLtMatrixTransformDescCreate(&desc, scale_type) == CUBLAS_STATUS_SUCCESS);
  REQUIRE(api.cublasLtMatrixTransformDescSetAttribute(desc, CUBLASLT_MATRIX_TRANSFORM_DESC_TRANSA,
                                                      &transa, sizeof(transa))
          == CUBLAS_STATUS_SUCCESS);
  auto la = a.make(api);
  cublasLtMatrixLayout_t lb = b != nullptr ? b->make(api) : nullptr;
  auto lc = c.make(api);
  auto pa = local.upload(a_bytes);
  CUdeviceptr pb = b != nullptr ? local.upload(b_bytes) : 0;
  auto pc = local.upload(c_zero);
  REQUIRE(api.cublasLtMatrixTransform(local.handle, desc, &alpha, reinterpret_cast<void*>(pa), la,
                                      &beta, reinterpret_cast<void*>(pb), lb,
                                      reinterpret_cast<void*>(pc), lc, nullptr)
          == CUBLAS_STATUS_SUCCESS);
  auto direct = local.download(pc, c.bytes);
  static_cast<void>(local.driver->cuMemFree(pa));
  if (pb != 0)
    static_cast<void>(local.driver->cuMemFree(pb));
  static_cast<void>(api.cublasLtMatrixLayoutDestroy(la));
  if (lb != nullptr)
    static_cast<void>(api.cublasLtMatrixLayoutDestroy(lb));
  static_cast<void>(api.cublasLtMatrixLayoutDestroy(lc));
  static_cast<void>(api.cublasLtMatrixTransformDescDestroy(desc));
  return {remote, direct};
}

} // namespace

TEST_CASE("cuBLASLt matrix transform through the executor gives the vendor's bytes",
          "[gpu][executor][blas]") {
  local_lt local;
  const uint64_t m = 37, n = 45;
  SECTION("float, column order to row order") {
    lt_matrix a{CUDA_R_32F, m, n, static_cast<int64_t>(m), CUBLASLT_ORDER_COL, 1, 0, m * n * 4};
    lt_matrix c{CUDA_R_32F, m, n, static_cast<int64_t>(n), CUBLASLT_ORDER_ROW, 1, 0, m * n * 4};
    auto [remote, direct] = transform_both(local, CUDA_R_32F, CUBLAS_OP_N, 1.0f, a, 0.0f, nullptr, c);
    CHECK(remote == direct);
  }
  SECTION("float, C = 2 A^T - B, padded leading dimensions") {
    lt_matrix a{CUDA_R_32F, m, n, 40, CUBLASLT_ORDER_COL, 1, 0, 40 * n * 4};
    lt_matrix b{CUDA_R_32F, n, m, 48, CUBLASLT_ORDER_COL, 1, 0, 48 * m * 4};
    lt_matrix c{CUDA_R_32F, n, m, 48, CUBLASLT_ORDER_COL, 1, 0, 48 * m * 4};
    auto [remote, direct] = transform_both(local, CUDA_R_32F, CUBLAS_OP_T, 2.0f, a, -1.0f, &b, c);
    CHECK(remote == direct);
  }
  SECTION("int8, column order to COL32 (the IMMA layout)") {
    lt_matrix a{CUDA_R_8I, m, n, static_cast<int64_t>(m), CUBLASLT_ORDER_COL, 1, 0, m * n};
    // Two groups of 32 columns, each 32 * rows bytes.
    lt_matrix c{CUDA_R_8I, m, n, static_cast<int64_t>(32 * m), CUBLASLT_ORDER_COL32, 1, 0,
                2 * 32 * m};
    auto [remote, direct] = transform_both(local, CUDA_R_32F, CUBLAS_OP_N, 1.0f, a, 0.0f, nullptr, c);
    CHECK(remote == direct);
  }
  SECTION("float, a strided batch of three") {
    auto stride = static_cast<int64_t>(m * n + 5);
    auto bytes = static_cast<size_t>(stride * 2 + static_cast<int64_t>(m * n)) * 4;
    lt_matrix a{CUDA_R_32F, m, n, static_cast<int64_t>(m), CUBLASLT_ORDER_COL, 3, stride, bytes};
    lt_matrix c{CUDA_R_32F, m, n, static_cast<int64_t>(n), CUBLASLT_ORDER_ROW, 3, stride, bytes};
    auto [remote, direct] = transform_both(local, CUDA_R_32F, CUBLAS_OP_N, 3.0f, a, 0.0f, nullptr, c);
    CHECK(remote == direct);
  }
}

TEST_CASE("cuBLASLt algo enumeration, capabilities, config and check through the executor give "
          "the vendor's answers",
          "[gpu][executor][blas]") {
  local_lt local;
  real_client rc;
  REQUIRE(rc.run([](proto::Op& op) { op.mutable_blas_lt_create()->set_handle(handle_id); })
            .blas_status()
          == CUBLAS_STATUS_SUCCESS);
  auto& api = *local.api;
  const auto f32 = CUDA_R_32F;
  auto ids_op = rc.run([&](proto::Op& op) {
    auto* q = op.mutable_blas_lt_algo_get_ids();
    q->set_handle(handle_id);
    q->set_compute_type(CUBLAS_COMPUTE_32F);
    q->set_scale_type(f32);
    q->set_a_type(f32);
    q->set_b_type(f32);
    q->set_c_type(f32);
    q->set_d_type(f32);
    q->set_requested(128);
  });
  INFO(ids_op.error());
  REQUIRE(ids_op.blas_status() == CUBLAS_STATUS_SUCCESS);
  std::vector<int> remote_ids(ids_op.blas_lt_answer().ids().begin(),
                              ids_op.blas_lt_answer().ids().end());
  local.current();
  std::vector<int> local_ids(128);
  int count = 0;
  REQUIRE(api.cublasLtMatmulAlgoGetIds(local.handle, CUBLAS_COMPUTE_32F, f32, f32, f32, f32, f32,
                                       128, local_ids.data(), &count)
          == CUBLAS_STATUS_SUCCESS);
  local_ids.resize(static_cast<size_t>(count));
  CHECK(remote_ids == local_ids);
  CHECK(ids_op.blas_lt_answer().size_written() == static_cast<uint64_t>(count));
  REQUIRE_FALSE(local_ids.empty());

  // A 64 x 64 x 64 float matmul for AlgoCheck.
  cublasLtMatmulDesc_t desc = nullptr;
  REQUIRE(api.cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, f32) == CUBLAS_STATUS_SUCCESS);
  cublasLtMatrixLayout_t layout = nullptr;
  REQUIRE(api.cublasLtMatrixLayoutCreate(&layout, f32, 64, 64, 64) == CUBLAS_STATUS_SUCCESS);

  auto as_bytes = [](const auto& v) {
    return std::string(reinterpret_cast<const char*>(&v), sizeof(v));
  };
  for (size_t i = 0; i < local_ids.size() && i < 8; ++i) {
    int id = local_ids[i];
    INFO("algo id " << id);
    auto init = rc.run([&](proto::Op& op) {
      auto* q = op.mutable_blas_lt_algo_init();
      q->set_handle(handle_id);
      q->set_compute_type(CUBLAS_COMPUTE_32F);
      q->set_scale_type(f32);
      q->set_a_type(f32);
      q->set_b_type(f32);
      q->set_c_type(f32);
      q->set_d_type(f32);
      q->set_algo_id(id);
    });
    local.current();
    cublasLtMatmulAlgo_t algo;
    std::memset(&algo, 0, sizeof(algo));
    auto st = api.cublasLtMatmulAlgoInit(local.handle, CUBLAS_COMPUTE_32F, f32, f32, f32, f32, f32,
                                         id, &algo);
    REQUIRE(init.blas_status() == st);
    if (st != CUBLAS_STATUS_SUCCESS)
      continue;
    CHECK(init.blas_lt_answer().algo() == as_bytes(algo));

    // Every capability: the size asked first, then the value.
    for (int attr = CUBLASLT_ALGO_CAP_SPLITK_SUPPORT;
         attr <= CUBLASLT_ALGO_CAP_FLOATING_POINT_EMULATION_SUPPORT; ++attr) {
      INFO("capability " << attr);
      local.current();
      size_t need = 0;
      auto lst = api.cublasLtMatmulAlgoCapGetAttribute(
        &algo, static_cast<cublasLtMatmulAlgoCapAttributes_t>(attr), nullptr, 0, &need);
      auto size_q = rc.run([&](proto::Op& op) {
        auto* q = op.mutable_blas_lt_algo_attribute();
        q->set_kind(proto::BlasLtAlgoAttribute::CAP_GET);
        q->set_algo(as_bytes(algo));
        q->set_attr(attr);
        q->set_buf_null(true);
      });
      REQUIRE(size_q.blas_status() == lst);
      if (lst != CUBLAS_STATUS_SUCCESS)
        continue;
      CHECK(size_q.blas_lt_answer().size_written() == need);
      std::vector<char> value(need);
      size_t written = 0;
      local.current();
      REQUIRE(api.cublasLtMatmulAlgoCapGetAttribute(
                &algo, static_cast<cublasLtMatmulAlgoCapAttributes_t>(attr), value.data(), need,
                &written)
              == CUBLAS_STATUS_SUCCESS);
      auto value_q = rc.run([&](proto::Op& op) {
        auto* q = op.mutable_blas_lt_algo_attribute();
        q->set_kind(proto::BlasLtAlgoAttribute::CAP_GET);
        q->set_algo(as_bytes(algo));
        q->set_attr(attr);
        q->set_size(need);
      });
      REQUIRE(value_q.blas_status() == CUBLAS_STATUS_SUCCESS);
      CHECK(value_q.blas_lt_answer().buf() == std::string(value.data(), written));
    }

    // Config: split-K of 1 set both ways, every config attribute read back.
    int32_t splitk = 1;
    auto set_q = rc.run([&](proto::Op& op) {
      auto* q = op.mutable_blas_lt_algo_attribute();
      q->set_kind(proto::BlasLtAlgoAttribute::CONFIG_SET);
      q->set_algo(as_bytes(algo));
      q->set_attr(CUBLASLT_ALGO_CONFIG_SPLITK_NUM);
      q->set_size(sizeof(splitk));
      q->set_value(as_bytes(splitk));
    });
    local.current();
    auto set_st = api.cublasLtMatmulAlgoConfigSetAttribute(&algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM,
                                                           &splitk, sizeof(splitk));
    REQUIRE(set_q.blas_status() == set_st);
    if (set_st == CUBLAS_STATUS_SUCCESS)
      CHECK(set_q.blas_lt_answer().algo() == as_bytes(algo));
    for (int attr = CUBLASLT_ALGO_CONFIG_ID; attr <= CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID; ++attr) {
      INFO("config " << attr);
      size_t need = 0;
      local.current();
      auto lst = api.cublasLtMatmulAlgoConfigGetAttribute(
        &algo, static_cast<cublasLtMatmulAlgoConfigAttributes_t>(attr), nullptr, 0, &need);
      if (lst != CUBLAS_STATUS_SUCCESS)
        continue;
      std::vector<char> value(need);
      size_t written = 0;
      REQUIRE(api.cublasLtMatmulAlgoConfigGetAttribute(
                &algo, static_cast<cublasLtMatmulAlgoConfigAttributes_t>(attr), value.data(),
                need, &written)
              == CUBLAS_STATUS_SUCCESS);
      auto get_q = rc.run([&](proto::Op& op) {
        auto* q = op.mutable_blas_lt_algo_attribute();
        q->set_kind(proto::BlasLtAlgoAttribute::CONFIG_GET);
        q->set_algo(as_bytes(algo));
        q->set_attr(attr);
        q->set_size(need);
      });
      REQUIRE(get_q.blas_status() == CUBLAS_STATUS_SUCCESS);
      CHECK(get_q.blas_lt_answer().buf() == std::string(value.data(), written));
    }

    // Check against a 64 x 64 x 64 float matmul.
    cublasLtMatmulHeuristicResult_t result;
    std::memset(&result, 0, sizeof(result));
    auto check_q = rc.run([&](proto::Op& op) {
      auto* q = op.mutable_blas_lt_algo_check();
      q->set_handle(handle_id);
      q->mutable_desc()->set_compute_type(CUBLAS_COMPUTE_32F);
      q->mutable_desc()->set_scale_type(f32);
      for (auto* l : {q->mutable_a_layout(), q->mutable_b_layout(), q->mutable_c_layout(),
                      q->mutable_d_layout()})
        lt_layout(l, 64, 64);
      q->set_algo(as_bytes(algo));
      q->set_result(as_bytes(result));
    });
    local.current();
    auto check_st = api.cublasLtMatmulAlgoCheck(local.handle, desc, layout, layout, layout, layout,
                                                &algo, &result);
    REQUIRE(check_q.blas_status() == check_st);
    if (check_st == CUBLAS_STATUS_SUCCESS)
      CHECK(check_q.blas_lt_answer().result() == as_bytes(result));
  }
  local.current();
  static_cast<void>(api.cublasLtMatrixLayoutDestroy(layout));
  static_cast<void>(api.cublasLtMatmulDescDestroy(desc));

  // The heuristics cache capacity the library reports, and a change of it.
  size_t capacity = 0;
  REQUIRE(api.cublasLtHeuristicsCacheGetCapacity(&capacity) == CUBLAS_STATUS_SUCCESS);
  auto cap_q = rc.run([](proto::Op& op) { op.mutable_blas_lt_heuristics_cache(); });
  REQUIRE(cap_q.blas_status() == CUBLAS_STATUS_SUCCESS);
  CHECK(cap_q.blas_lt_answer().capacity() == capacity);
}

TEST_CASE("cuBLASLt matmul with an emulation descriptor on the GPU", "[gpu][executor][blas]") {
  real_client c;
  REQUIRE(c.run([](proto::Op& op) { op.mutable_blas_lt_create()->set_handle(handle_id); })
            .blas_status()
          == CUBLAS_STATUS_SUCCESS);
  float av[] = {1, 4, 2, 5, 3, 6}, bv[] = {1, 0, 1, 0, 1, 1}, cv[] = {0, 0, 0, 0};
  int32_t minus_two = -2;
  auto a = c.upload(av, sizeof(av)), b = c.upload(bv, sizeof(bv)), d = c.upload(cv, sizeof(cv));
  auto bits = c.upload(&minus_two, sizeof(minus_two));
  auto r = c.run([&](proto::Op& op) {
    lt_matmul_op(op, a, b, d, std::string{});
    auto* e = op.mutable_blas_lt_matmul()->mutable_desc()->mutable_emulation();
    add_attribute(e->mutable_attributes(), CUBLASLT_EMULATION_DESC_STRATEGY,
                  int32_t{CUBLAS_EMULATION_STRATEGY_EAGER});
    add_attribute(e->mutable_attributes(),
                  CUBLASLT_EMULATION_DESC_FIXEDPOINT_MANTISSA_BIT_COUNT_POINTER, bits);
  });
  INFO(r.error());
  REQUIRE(r.blas_status() == CUBLAS_STATUS_SUCCESS);
  CHECK(c.download<float>(d, 4) == std::vector<float>{4, 10, 5, 11});
  // What the library wrote at the mantissa bit counter (-1: no emulation
  // used; untouched: -2), for the record.
  WARN("mantissa bits retained: " << c.download<int32_t>(bits, 1)[0]);
}

TEST_CASE("blas_api loads the vendor's cuBLAS and refuses Gleam's own", "[executor][blas]") {
  std::string ignored;
  auto own = blas_api::load(gleam::test::build_path("lib"));
  REQUIRE_FALSE(own);
  auto why = caf::to_string(own.error());
  INFO(why);
  CHECK(why.find("Gleam's interposer") != std::string::npos);
  auto missing = blas_api::load("/nonexistent");
  REQUIRE_FALSE(missing);
  CHECK(caf::to_string(missing.error()).find("GLEAM_CUBLAS_DIR") != std::string::npos);
  if (gleam::test::run_command("test -e /usr/local/cuda/lib64/libcublas.so.13", ignored) != 0) {
    WARN("no vendor cuBLAS in /usr/local/cuda/lib64; the loading half is skipped");
    return;
  }
  auto vendor = blas_api::load("/usr/local/cuda/lib64");
  INFO((vendor ? std::string{} : caf::to_string(vendor.error())));
  REQUIRE(vendor);
  CHECK((*vendor)->cublasGemmEx != nullptr);
  CHECK((*vendor)->cublasGemmBatchedEx_64 != nullptr);
  CHECK((*vendor)->cublasLtMatmul != nullptr);
  CHECK(std::string{(*vendor)->cublasGetStatusName(CUBLAS_STATUS_INVALID_VALUE)}
        == "CUBLAS_STATUS_INVALID_VALUE");
}

// --- generated functions (LibraryCall) -----------------------------------------

namespace {

namespace ids = gleam::generated::cublas_ids;

/// A LibraryCall op of cuBLAS function `id` with `args` packed.
void library_op(proto::Op& op, uint32_t id, gleam::wire::arg_packer& args,
                bool device_scalars = false) {
  auto* c = op.mutable_library_call();
  c->set_library(proto::LibraryCall::CUBLAS);
  c->set_function(id);
  c->set_args(args.take());
  c->set_device_scalars(device_scalars);
}

/// Packs cublasSaxpy_v2(handle, n, &alpha, x, 1, y, 1) as the stub does.
gleam::wire::arg_packer saxpy_args(int n, float alpha, uint64_t x, uint64_t y) {
  gleam::wire::arg_packer p;
  p.value(handle_id);
  p.value(n);
  p.bytes(&alpha, sizeof(alpha));
  p.value(x);
  p.value(1);
  p.value(y);
  p.value(1);
  return p;
}

/// Packs cublasSdot_v2(handle, 4, x, 1, y, 1, result) up to the result,
/// which travels only in device pointer mode (the caller appends it).
gleam::wire::arg_packer sdot_args(uint64_t x, uint64_t y) {
  gleam::wire::arg_packer p;
  p.value(handle_id);
  p.value(4);
  p.value(x);
  p.value(1);
  p.value(y);
  p.value(1);
  return p;
}

} // namespace

TEST_CASE("a generated cuBLAS call computes on the session's memory", "[executor][blas]") {
  fake_gpu g;
  REQUIRE(g.run([](proto::Op& op) { op.mutable_blas_create()->set_handle(handle_id); })
            .blas_status()
          == CUBLAS_STATUS_SUCCESS);
  auto x = g.alloc(4 * 4), y = g.alloc(4 * 4);
  float xv[] = {1, 2, 3, 4}, yv[] = {10, 20, 30, 40};
  std::memcpy(g.floats(x), xv, sizeof(xv));
  std::memcpy(g.floats(y), yv, sizeof(yv));

  SECTION("axpy: y = 2x + y, no outputs") {
    auto args = saxpy_args(4, 2.0f, x, y);
    auto r = g.run([&](proto::Op& op) { library_op(op, ids::cublasSaxpy_v2, args); });
    CHECK(r.status() == CUDA_SUCCESS);
    CHECK(r.blas_status() == CUBLAS_STATUS_SUCCESS);
    CHECK(r.library_outputs().data_size() == 0);
    CHECK(calls().axpys == 1);
    std::vector<float> out(g.floats(y), g.floats(y) + 4);
    CHECK(out == std::vector<float>{12, 24, 36, 48});
  }
  SECTION("a vector past its allocation is refused before the library sees it") {
    // n = 5 with inc 1 spans 20 bytes of a 16-byte allocation.
    auto args = saxpy_args(5, 2.0f, x, y);
    auto r = g.run([&](proto::Op& op) { library_op(op, ids::cublasSaxpy_v2, args); });
    CHECK(r.blas_status() == CUBLAS_STATUS_INVALID_VALUE);
    CHECK_THAT(r.error(), Catch::Contains("outside this session's allocations"));
    CHECK(calls().axpys == 0);
    CHECK(g.floats(y)[0] == 10);
  }
  SECTION("dot in host pointer mode: the result comes back as a host output") {
    auto p = sdot_args(x, y);
    auto r = g.run([&](proto::Op& op) { library_op(op, ids::cublasSdot_v2, p); });
    REQUIRE(r.blas_status() == CUBLAS_STATUS_SUCCESS);
    REQUIRE(r.library_outputs().data_size() == 1);
    float dot = 0;
    REQUIRE(r.library_outputs().data(0).size() == sizeof(dot));
    std::memcpy(&dot, r.library_outputs().data(0).data(), sizeof(dot));
    CHECK(dot == 300);
    CHECK(calls().pointer_mode == CUBLAS_POINTER_MODE_HOST);
  }
  SECTION("dot in device pointer mode writes device memory, checked like any operand") {
    auto result = g.alloc(4);
    auto p = sdot_args(x, y);
    p.value(result);
    auto r = g.run([&](proto::Op& op) { library_op(op, ids::cublasSdot_v2, p, true); });
    REQUIRE(r.blas_status() == CUBLAS_STATUS_SUCCESS);
    CHECK(r.library_outputs().data_size() == 0);
    CHECK(*g.floats(result) == 300);
    CHECK(calls().pointer_mode == CUBLAS_POINTER_MODE_DEVICE);
    // A result address outside the allocations is refused.
    auto bad = sdot_args(x, y);
    bad.value(result + 4);
    auto refused = g.run([&](proto::Op& op) { library_op(op, ids::cublasSdot_v2, bad, true); });
    CHECK(refused.blas_status() == CUBLAS_STATUS_INVALID_VALUE);
    CHECK(calls().dots == 1);
  }
  SECTION("gemv takes x's length from the transpose") {
    // A is 2 x 4 (lda 2): op(A) = A^T needs x of length m = 2; y of 4.
    auto a = g.alloc(8 * 4), x2 = g.alloc(2 * 4);
    float av[] = {1, 0, 0, 1, 1, 1, 2, 0};
    std::memcpy(g.floats(a), av, sizeof(av));
    float xv2[] = {3, 5};
    std::memcpy(g.floats(x2), xv2, sizeof(xv2));
    auto gemv = [&](cublasOperation_t t, uint64_t xp, uint64_t yp) {
      gleam::wire::arg_packer p;
      float one = 1, zero = 0;
      p.value(handle_id);
      p.value(t);
      p.value(2);
      p.value(4);
      p.bytes(&one, 4);
      p.value(a);
      p.value(2);
      p.value(xp);
      p.value(1);
      p.bytes(&zero, 4);
      p.value(yp);
      p.value(1);
      return g.run([&](proto::Op& op) { library_op(op, ids::cublasSgemv_v2, p); });
    };
    auto r = gemv(CUBLAS_OP_T, x2, y);
    REQUIRE(r.blas_status() == CUBLAS_STATUS_SUCCESS);
    std::vector<float> out(g.floats(y), g.floats(y) + 4);
    CHECK(out == std::vector<float>{3, 5, 8, 6});
    // Without the transpose x needs n = 4 elements: the 2-element x is refused.
    CHECK(gemv(CUBLAS_OP_N, x2, y).blas_status() == CUBLAS_STATUS_INVALID_VALUE);
    CHECK(calls().gemvs == 1);
  }
  SECTION("arguments that do not unpack, and ids no function has, are refused") {
    auto args = saxpy_args(4, 2.0f, x, y);
    auto packed = args.take();
    gleam::wire::arg_packer shortened;
    auto r = g.run([&](proto::Op& op) {
      library_op(op, ids::cublasSaxpy_v2, shortened);
      op.mutable_library_call()->set_args(packed.substr(0, packed.size() - 1));
    });
    CHECK(r.blas_status() == CUBLAS_STATUS_INVALID_VALUE);
    CHECK_THAT(r.error(), Catch::Contains("packed arguments"));
    // The host scalar's count says more bytes than arrived.
    auto lying = g.run([&](proto::Op& op) {
      library_op(op, ids::cublasSaxpy_v2, shortened);
      auto bytes = packed;
      bytes[12] = static_cast<char>(0x40);
      op.mutable_library_call()->set_args(bytes);
    });
    CHECK(lying.blas_status() == CUBLAS_STATUS_INVALID_VALUE);
    auto unknown = g.run([&](proto::Op& op) { library_op(op, 999999, shortened); });
    CHECK(unknown.blas_status() == CUBLAS_STATUS_NOT_SUPPORTED);
    CHECK_THAT(unknown.error(), Catch::Contains("unknown to this server"));
    CHECK(calls().axpys == 0);
  }
  SECTION("a handle the session never created is NOT_INITIALIZED") {
    auto args = saxpy_args(4, 2.0f, x, y);
    auto packed = args.take();
    uint64_t other = handle_id + 1;
    std::memcpy(packed.data(), &other, sizeof(other));
    auto r = g.run([&](proto::Op& op) {
      gleam::wire::arg_packer none;
      library_op(op, ids::cublasSaxpy_v2, none);
      op.mutable_library_call()->set_args(packed);
    });
    CHECK(r.blas_status() == CUBLAS_STATUS_NOT_INITIALIZED);
    CHECK(calls().axpys == 0);
  }
}

TEST_CASE("extent arithmetic saturates instead of wrapping", "[executor][blas]") {
  using namespace gleam::wire::extents;
  CHECK(vec(4, 1) == 4);
  CHECK(vec(4, -3) == 10);
  CHECK(vec(0, 1) == 0);
  CHECK(vec(-5, 1) == 0);
  CHECK(mat(3, 2, 5) == 8);
  CHECK(mat(3, 2, 2) == invalid_extent);
  CHECK(mat(0, 2, 0) == 0);
  CHECK(packed(4) == 10);
  CHECK(packed(5) == 15);
  CHECK(strided(8, 10, 3) == 28);
  CHECK(strided(8, -1, 3) == invalid_extent);
  CHECK(strided(8, -1, 1) == invalid_extent);
  CHECK(mul(uint64_t{1} << 40, uint64_t{1} << 30) == invalid_extent);
  CHECK(mul(invalid_extent, 0) == invalid_extent);
  CHECK(vec(int64_t{1} << 62, 8) == invalid_extent);
  CHECK(type_size(CUDA_C_64F) == 16);
  CHECK(type_size(CUDA_R_4I) == invalid_extent);
  CHECK(mul(vec(3, 1), type_size(12345)) == invalid_extent);
}

TEST_CASE("generated calls over device arrays of pointers check every matrix they name",
          "[executor][blas]") {
  fake_gpu g;
  REQUIRE(g.run([](proto::Op& op) { op.mutable_blas_create()->set_handle(handle_id); })
            .blas_status()
          == CUBLAS_STATUS_SUCCESS);
  // Two batches of y = A x with A 2 x 2 (identity, then 2 * identity).
  auto a = g.alloc(8 * 4), x = g.alloc(4 * 4), y = g.alloc(4 * 4), arrays = g.alloc(6 * 8);
  float av[] = {1, 0, 0, 1, 2, 0, 0, 2}, xv[] = {3, 4, 5, 6};
  std::memcpy(g.floats(a), av, sizeof(av));
  std::memcpy(g.floats(x), xv, sizeof(xv));
  auto* ptrs = static_cast<uint64_t*>(host(arrays));
  uint64_t values[] = {a, a + 16, x, x + 8, y, y + 8};
  std::memcpy(ptrs, values, sizeof(values));
  auto gemv = [&]() {
    gleam::wire::arg_packer p;
    float one = 1, zero = 0;
    p.value(handle_id);
    p.value(CUBLAS_OP_N);
    p.value(2);
    p.value(2);
    p.bytes(&one, 4);
    p.value(arrays);
    p.value(2);
    p.value(arrays + 16);
    p.value(1);
    p.bytes(&zero, 4);
    p.value(arrays + 32);
    p.value(1);
    p.value(2);
    return g.run([&](proto::Op& op) { library_op(op, ids::cublasSgemvBatched, p); });
  };
  auto r = gemv();
  REQUIRE(r.blas_status() == CUBLAS_STATUS_SUCCESS);
  std::vector<float> out(g.floats(y), g.floats(y) + 4);
  CHECK(out == std::vector<float>{3, 4, 10, 12});
  // The second y points 4 bytes before the end of y's allocation: refused,
  // and the library never runs.
  ptrs[5] = y + 12;
  auto refused = gemv();
  CHECK(refused.blas_status() == CUBLAS_STATUS_INVALID_VALUE);
  CHECK_THAT(refused.error(), Catch::Contains("yarray[1]"));
  CHECK(calls().gemv_batches == 1);
  // A host result of a batched routine comes back whatever the pointer mode.
  ptrs[5] = y + 8;
  gleam::wire::arg_packer qr;
  qr.value(handle_id);
  qr.value(2);
  qr.value(2);
  qr.value(arrays);
  qr.value(2);
  qr.value(arrays + 32);
  qr.value(1);
  auto info = g.run([&](proto::Op& op) { library_op(op, ids::cublasSgeqrfBatched, qr, true); });
  REQUIRE(info.blas_status() == CUBLAS_STATUS_SUCCESS);
  REQUIRE(info.library_outputs().data_size() == 1);
  int value = 0;
  std::memcpy(&value, info.library_outputs().data(0).data(), sizeof(value));
  CHECK(value == -7);
  CHECK(calls().qr_batches == 1);
}
