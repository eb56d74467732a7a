#pragma once

// A fake cuSOLVER for the CPU tests (tests/executor/cusolver_test.cpp): real
// double-precision results computed on the memory the library would use
// (the fake device's memory is host memory): LU with partial pivoting
// (getrf) and its solve (getrs), Cholesky (potrf, one matrix or a batch of
// them by an array of pointers), and the eigenvalues and
// eigenvectors of symmetric matrices by cyclic Jacobi rotations (syevd), in
// the typed API (cusolverDnD*) and the 64-bit API (cusolverDnX*, CUDA_R_64F
// only); handles, parameter objects, streams and the version; every call
// logged. Header-only: the entry points are plain function pointers over
// one process-wide log. Not thread-safe.

#include <cusolverDn.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "executor/cusolver_api.hpp"

namespace gleam::test {

/// What the fake saw.
struct fake_cusolver_log {
  /// Live handles and the stream each is on.
  std::map<cusolverDnHandle_t, cudaStream_t> handles;
  /// Live cusolverDnParams_t objects.
  int params = 0;
  uintptr_t next = 0x1000;
  /// Computations (getrf, getrs, potrf, syevd of either API) that ran.
  int computations = 0;
  /// The stream of the handle at each computation, in order.
  std::vector<cudaStream_t> computed_on;
  /// Bytes of host workspace the 64-bit API's last computation was given,
  /// and whether that memory was there (every byte writable).
  size_t host_workspace = 0;
  /// The cusolverDnParams_t the 64-bit API's last call was given (NULL: the
  /// library's default options).
  cusolverDnParams_t last_params = nullptr;
  /// Whether the last gesvdaStridedBatched was given h_R_nrmF (host
  /// memory) rather than NULL.
  bool residuals_given = false;
  /// Live iterative-refinement options and results (cusolverDnIRSParams_t,
  /// cusolverDnIRSInfos_t), and each options object's main precision (0:
  /// none set).
  std::map<cusolverDnIRSParams_t, int> irs_params;
  int irs_infos = 0;
};

inline fake_cusolver_log& fake_cusolver() {
  static fake_cusolver_log log;
  return log;
}

/// The fake's workspace of the typed getrf / potrf / syevd of order n
/// (elements), and the 64-bit API's device and host workspaces (bytes).
inline int fake_cusolver_lwork(int n) {
  return n * n + 3;
}
inline size_t fake_cusolver_device_bytes(int64_t n) {
  return static_cast<size_t>(n) * 8 + 16;
}
inline size_t fake_cusolver_host_bytes(int64_t n) {
  return static_cast<size_t>(n) + 5;
}

/// The computations themselves, on column-major matrices (element (i, j)
/// of a matrix with leading dimension ld at a[i + j * ld]).
namespace fake_cusolver_math {

/// LU factorization with partial pivoting of the m x n matrix `a`: L (unit
/// diagonal, below) and U (on and above) in place, 1-based pivots in
/// `ipiv` (null: none written) as LAPACK's getrf. The first zero pivot's
/// 1-based index, 0 when there is none.
template <class Pivot>
int getrf(int64_t m, int64_t n, double* a, int64_t ld, Pivot* ipiv) {
  int info = 0;
  for (int64_t k = 0; k < std::min(m, n); ++k) {
    int64_t p = k;
    for (int64_t i = k + 1; i < m; ++i)
      if (std::fabs(a[i + k * ld]) > std::fabs(a[p + k * ld]))
        p = i;
    if (ipiv != nullptr)
      ipiv[k] = static_cast<Pivot>(p + 1);
    if (a[p + k * ld] == 0.0) {
      if (info == 0)
        info = static_cast<int>(k + 1);
      continue;
    }
    if (p != k)
      for (int64_t j = 0; j < n; ++j)
        std::swap(a[k + j * ld], a[p + j * ld]);
    for (int64_t i = k + 1; i < m; ++i)
      a[i + k * ld] /= a[k + k * ld];
    for (int64_t j = k + 1; j < n; ++j)
      for (int64_t i = k + 1; i < m; ++i)
        a[i + j * ld] -= a[i + k * ld] * a[k + j * ld];
  }
  return info;
}

/// Solves A X = B (nrhs columns of B, overwritten by X) with the factors
/// and pivots of getrf.
template <class Pivot>
void getrs(int64_t n, int64_t nrhs, const double* lu, int64_t lda, const Pivot* ipiv, double* b,
           int64_t ldb) {
  for (int64_t c = 0; c < nrhs; ++c) {
    double* x = b + c * ldb;
    for (int64_t k = 0; k < n; ++k)
      std::swap(x[k], x[static_cast<int64_t>(ipiv[k]) - 1]);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t k = 0; k < i; ++k)
        x[i] -= lu[i + k * lda] * x[k];
    for (int64_t i = n - 1; i >= 0; --i) {
      for (int64_t k = i + 1; k < n; ++k)
        x[i] -= lu[i + k * lda] * x[k];
      x[i] /= lu[i + i * lda];
    }
  }
}

/// Cholesky factorization of the symmetric positive definite matrix in the
/// `lower` (else upper) triangle of `a`: L (or U = L^T) in that triangle.
/// The order of the first minor that is not positive definite, 0 when none.
inline int potrf(bool lower, int64_t n, double* a, int64_t ld) {
  // Element (i, j) of L, i >= j: stored at (i, j) for lower, at (j, i) for upper.
  auto l = [&](int64_t i, int64_t j) -> double& {
    return lower ? a[i + j * ld] : a[j + i * ld];
  };
  for (int64_t j = 0; j < n; ++j) {
    double d = l(j, j);
    for (int64_t k = 0; k < j; ++k)
      d -= l(j, k) * l(j, k);
    if (d <= 0.0)
      return static_cast<int>(j + 1);
    l(j, j) = std::sqrt(d);
    for (int64_t i = j + 1; i < n; ++i) {
      double s = l(i, j);
      for (int64_t k = 0; k < j; ++k)
        s -= l(i, k) * l(j, k);
      l(i, j) = s / l(j, j);
    }
  }
  return 0;
}

/// Eigenvalues (ascending, into w) of the symmetric matrix in the `lower`
/// (else upper) triangle of `a`, and with `vectors` the orthonormal
/// eigenvectors in the columns of `a`, by cyclic Jacobi rotations.
inline void syevd(bool vectors, bool lower, int64_t n, double* a, int64_t ld, double* w) {
  auto N = static_cast<size_t>(n);
  std::vector<double> s(N * N), v(N * N, 0.0);
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < n; ++i) {
      bool stored = lower ? i >= j : i <= j;
      s[static_cast<size_t>(i + j * n)] = stored ? a[i + j * ld] : a[j + i * ld];
    }
  for (size_t i = 0; i < N; ++i)
    v[i + i * N] = 1.0;
  auto at = [&](std::vector<double>& m, size_t i, size_t j) -> double& { return m[i + j * N]; };
  for (int sweep = 0; sweep < 100; ++sweep) {
    double off = 0.0;
    for (size_t j = 0; j < N; ++j)
      for (size_t i = 0; i < N; ++i)
        if (i != j)
          off += at(s, i, j) * at(s, i, j);
    if (off < 1e-30)
      break;
    for (size_t p = 0; p < N; ++p)
      for (size_t q = p + 1; q < N; ++q) {
        if (at(s, p, q) == 0.0)
          continue;
        double theta = (at(s, q, q) - at(s, p, p)) / (2.0 * at(s, p, q));
        double t = (theta >= 0 ? 1.0 : -1.0) / (std::fabs(theta) + std::sqrt(theta * theta + 1));
        double c = 1.0 / std::sqrt(t * t + 1), sn = t * c;
        for (size_t k = 0; k < N; ++k) {
          double kp = at(s, k, p), kq = at(s, k, q);
          at(s, k, p) = c * kp - sn * kq;
          at(s, k, q) = sn * kp + c * kq;
        }
        for (size_t k = 0; k < N; ++k) {
          double pk = at(s, p, k), qk = at(s, q, k);
          at(s, p, k) = c * pk - sn * qk;
          at(s, q, k) = sn * pk + c * qk;
        }
        for (size_t k = 0; k < N; ++k) {
          double kp = at(v, k, p), kq = at(v, k, q);
          at(v, k, p) = c * kp - sn * kq;
          at(v, k, q) = sn * kp + c * kq;
        }
      }
  }
  std::vector<size_t> order(N);
  for (size_t i = 0; i < N; ++i)
    order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](size_t x, size_t y) { return at(s, x, x) < at(s, y, y); });
  for (size_t i = 0; i < N; ++i) {
    w[i] = at(s, order[i], order[i]);
    if (vectors)
      for (size_t k = 0; k < N; ++k)
        a[static_cast<int64_t>(k) + static_cast<int64_t>(i) * ld] = at(v, k, order[i]);
  }
}

/// LAPACK's laswp: for k = k1..k2 (1-based, incx apart in ipiv; from the
/// far end when incx < 0), row k of the n columns of `a` and row ipiv[k]
/// exchanged.
inline void laswp(int64_t n, double* a, int64_t ld, int64_t k1, int64_t k2, const int* ipiv,
                  int64_t incx) {
  if (k2 < k1)
    return;
  int64_t step = incx < 0 ? -incx : incx;
  for (int64_t t = 0; t <= k2 - k1; ++t) {
    int64_t k = incx > 0 ? k1 + t : k2 - t;
    int64_t p = ipiv[(incx > 0 ? t : k2 - k1 - t) * step] - 1;
    for (int64_t j = 0; j < n; ++j)
      std::swap(a[k - 1 + j * ld], a[p + j * ld]);
  }
}

} // namespace fake_cusolver_math

namespace fake_cusolver_detail {

/// Counts a computation on `h`; false for a handle the fake did not make.
inline bool computed(cusolverDnHandle_t h) {
  auto i = fake_cusolver().handles.find(h);
  if (i == fake_cusolver().handles.end())
    return false;
  ++fake_cusolver().computations;
  fake_cusolver().computed_on.push_back(i->second);
  return true;
}

/// The 64-bit API's workspace sizes of order n.
inline cusolverStatus_t sizes(int64_t n, size_t* device, size_t* host) {
  *device = fake_cusolver_device_bytes(n);
  *host = fake_cusolver_host_bytes(n);
  return CUSOLVER_STATUS_SUCCESS;
}

/// The start of a 64-bit computation: CUDA_R_64F only, on a handle of the
/// fake (counted), its host workspace (if any) recorded with every byte
/// written (a short buffer would be caught by the sanitizers). Success when
/// the computation may run.
inline cusolverStatus_t x_start(cusolverDnHandle_t h, cudaDataType type, void* host = nullptr,
                                size_t bytes = 0) {
  if (type != CUDA_R_64F)
    return CUSOLVER_STATUS_NOT_SUPPORTED;
  if (!computed(h))
    return CUSOLVER_STATUS_NOT_INITIALIZED;
  if (host != nullptr) {
    fake_cusolver().host_workspace = bytes;
    std::fill_n(static_cast<unsigned char*>(host), bytes, static_cast<unsigned char>(0xab));
  }
  return CUSOLVER_STATUS_SUCCESS;
}

} // namespace fake_cusolver_detail

/// Fills `api` with the fake: handles (create, destroy, set stream),
/// cusolverDnParams_t objects, cusolverGetVersion (12004) and
/// cusolverGetProperty, the double-precision typed getrf, getrs, potrf,
/// potrfBatched and syevd (and their buffer sizes), laswp, syevdx (the
/// eigenvalues il..iu of range I, all of range ALL; their count a host
/// result), iterative refinement's options and results and IRSXgesv (an
/// LU solve of CUSOLVER_R_64F systems, 0 iterations), gesvdaStridedBatched
/// (singular values b + 1 + j of matrix b, info 0 and residual norms
/// 0.5 (b + 1): markers, not an SVD), and the
/// 64-bit Xgetrf, Xgetrs, Xpotrf and Xsyevd on CUDA_R_64F. Everything else
/// stays null: missing from this library.
inline void install_fake_cusolver(executor::cusolver_api& api) {
  namespace d = fake_cusolver_detail;
  namespace m = fake_cusolver_math;
  api.cusolverDnCreate = [](cusolverDnHandle_t* h) {
    *h = reinterpret_cast<cusolverDnHandle_t>(fake_cusolver().next++);
    fake_cusolver().handles[*h] = nullptr;
    return CUSOLVER_STATUS_SUCCESS;
  };
  api.cusolverDnDestroy = [](cusolverDnHandle_t h) {
    return fake_cusolver().handles.erase(h) != 0 ? CUSOLVER_STATUS_SUCCESS
                                                 : CUSOLVER_STATUS_NOT_INITIALIZED;
  };
  api.cusolverDnSetStream = [](cusolverDnHandle_t h, cudaStream_t s) {
    auto i = fake_cusolver().handles.find(h);
    if (i == fake_cusolver().handles.end())
      return CUSOLVER_STATUS_NOT_INITIALIZED;
    i->second = s;
    return CUSOLVER_STATUS_SUCCESS;
  };
  api.cusolverDnCreateParams = [](cusolverDnParams_t* p) {
    *p = reinterpret_cast<cusolverDnParams_t>(fake_cusolver().next++);
    ++fake_cusolver().params;
    return CUSOLVER_STATUS_SUCCESS;
  };
  api.cusolverDnDestroyParams = [](cusolverDnParams_t) {
    --fake_cusolver().params;
    return CUSOLVER_STATUS_SUCCESS;
  };
  api.cusolverGetVersion = [](int* v) {
    *v = 12004;
    return CUSOLVER_STATUS_SUCCESS;
  };
  api.cusolverGetProperty = [](libraryPropertyType type, int* v) {
    *v = type == MAJOR_VERSION ? 12 : type == MINOR_VERSION ? 0 : 4;
    return CUSOLVER_STATUS_SUCCESS;
  };
  api.cusolverDnDgetrf_bufferSize = [](cusolverDnHandle_t h, int, int n, double*, int,
                                       int* lwork) {
    if (fake_cusolver().handles.count(h) == 0)
      return CUSOLVER_STATUS_NOT_INITIALIZED;
    *lwork = fake_cusolver_lwork(n);
    return CUSOLVER_STATUS_SUCCESS;
  };
  api.cusolverDnDgetrf = [](cusolverDnHandle_t h, int rows, int n, double* a, int lda, double*,
                            int* ipiv, int* info) {
    if (!d::computed(h))
      return CUSOLVER_STATUS_NOT_INITIALIZED;
    *info = m::getrf(rows, n, a, lda, ipiv);
    return CUSOLVER_STATUS_SUCCESS;
  };
  api.cusolverDnDgetrs = [](cusolverDnHandle_t h, cublasOperation_t, int n, int nrhs,
                            const double* a, int lda, const int* ipiv, double* b, int ldb,
                            int* info) {
    if (!d::computed(h))
      return CUSOLVER_STATUS_NOT_INITIALIZED;
    m::getrs(n, nrhs, a, lda, ipiv, b, ldb);
    *info = 0;
    return CUSOLVER_STATUS_SUCCESS;
  };
  api.cusolverDnDpotrf_bufferSize = [](cusolverDnHandle_t, cublasFillMode_t, int n, double*,
                                       int, int* lwork) {
    *lwork = fake_cusolver_lwork(n);
    return CUSOLVER_STATUS_SUCCESS;
  };
  api.cusolverDnDpotrf = [](cusolverDnHandle_t h, cublasFillMode_t uplo, int n, double* a,
                            int lda, double*, int, int* info) {
    if (!d::computed(h))
      return CUSOLVER_STATUS_NOT_INITIALIZED;
    *info = m::potrf(uplo == CUBLAS_FILL_MODE_LOWER, n, a, lda);
    return CUSOLVER_STATUS_SUCCESS;
  };
  api.cusolverDnDpotrfBatched = [](cusolverDnHandle_t h, cublasFillMode_t uplo, int n,
                                   double** arrays, int lda, int* info, int batch) {
    if (!d::computed(h))
      return CUSOLVER_STATUS_NOT_INITIALIZED;
    for (int i = 0; i < batch; ++i)
      info[i] = m::potrf(uplo == CUBLAS_FILL_MODE_LOWER, n, arrays[i], lda);
    return CUSOLVER_STATUS_SUCCESS;
  };
  api.cusolverDnDsyevd_bufferSize = [](cusolverDnHandle_t, cusolverEigMode_t,
                                       cublasFillMode_t, int n, const double*, int,
                                       const double*, int* lwork) {
    *lwork = fake_cusolver_lwork(n);
    return CUSOLVER_STATUS_SUCCESS;
  };
  api.cusolverDnDsyevd = [](cusolverDnHandle_t h, cusolverEigMode_t jobz, cublasFillMode_t uplo,
                            int n, double* a, int lda, double* w, double*, int, int* info) {
    if (!d::computed(h))
      return CUSOLVER_STATUS_NOT_INITIALIZED;
    m::syevd(jobz == CUSOLVER_EIG_MODE_VECTOR, uplo == CUBLAS_FILL_MODE_LOWER, n, a, lda, w);
    *info = 0;
    return CUSOLVER_STATUS_SUCCESS;
  };
  api.cusolverDnXgetrf_bufferSize = [](cusolverDnHandle_t, cusolverDnParams_t, int64_t,
                                       int64_t n, cudaDataType, const void*, int64_t,
                                       cudaDataType, size_t* device, size_t* host) {
    return d::sizes(n, device, host);
  };
  api.cusolverDnXgetrf = [](cusolverDnHandle_t h, cusolverDnParams_t, int64_t rows, int64_t n,
                            cudaDataType type, void* a, int64_t lda, int64_t* ipiv, cudaDataType,
                            void*, size_t, void* host, size_t host_bytes, int* info) {
    if (auto st = d::x_start(h, type, host, host_bytes); st != CUSOLVER_STATUS_SUCCESS)
      return st;
    *info = m::getrf(rows, n, static_cast<double*>(a), lda, ipiv);
    return CUSOLVER_STATUS_SUCCESS;
  };
  api.cusolverDnXgetrs = [](cusolverDnHandle_t h, cusolverDnParams_t, cublasOperation_t,
                            int64_t n, int64_t nrhs, cudaDataType type, const void* a,
                            int64_t lda, const int64_t* ipiv, cudaDataType, void* b, int64_t ldb,
                            int* info) {
    if (auto st = d::x_start(h, type); st != CUSOLVER_STATUS_SUCCESS)
      return st;
    m::getrs(n, nrhs, static_cast<const double*>(a), lda, ipiv, static_cast<double*>(b), ldb);
    *info = 0;
    return CUSOLVER_STATUS_SUCCESS;
  };
  api.cusolverDnXpotrf_bufferSize = [](cusolverDnHandle_t, cusolverDnParams_t, cublasFillMode_t,
                                       int64_t n, cudaDataType, const void*, int64_t,
                                       cudaDataType, size_t* device, size_t* host) {
    return d::sizes(n, device, host);
  };
  api.cusolverDnXpotrf = [](cusolverDnHandle_t h, cusolverDnParams_t, cublasFillMode_t uplo,
                            int64_t n, cudaDataType type, void* a, int64_t lda, cudaDataType,
                            void*, size_t, void* host, size_t host_bytes, int* info) {
    if (auto st = d::x_start(h, type, host, host_bytes); st != CUSOLVER_STATUS_SUCCESS)
      return st;
    *info = m::potrf(uplo == CUBLAS_FILL_MODE_LOWER, n, static_cast<double*>(a), lda);
    return CUSOLVER_STATUS_SUCCESS;
  };
  api.cusolverDnXsyevd_bufferSize = [](cusolverDnHandle_t, cusolverDnParams_t params,
                                       cusolverEigMode_t, cublasFillMode_t, int64_t n,
                                       cudaDataType, const void*, int64_t, cudaDataType,
                                       const void*, cudaDataType, size_t* device,
                                       size_t* host) {
    fake_cusolver().last_params = params;
    return d::sizes(n, device, host);
  };
  api.cusolverDnXsyevd = [](cusolverDnHandle_t h, cusolverDnParams_t params,
                            cusolverEigMode_t jobz,
                            cublasFillMode_t uplo, int64_t n, cudaDataType type, void* a,
                            int64_t lda, cudaDataType, void* w, cudaDataType, void*, size_t,
                            void* host, size_t host_bytes, int* info) {
    fake_cusolver().last_params = params;
    if (auto st = d::x_start(h, type, host, host_bytes); st != CUSOLVER_STATUS_SUCCESS)
      return st;
    m::syevd(jobz == CUSOLVER_EIG_MODE_VECTOR, uplo == CUBLAS_FILL_MODE_LOWER, n,
             static_cast<double*>(a), lda, static_cast<double*>(w));
    *info = 0;
    return CUSOLVER_STATUS_SUCCESS;
  };
  api.cusolverDnDlaswp = [](cusolverDnHandle_t h, int n, double* a, int lda, int k1, int k2,
                            const int* ipiv, int incx) {
    if (!d::computed(h))
      return CUSOLVER_STATUS_NOT_INITIALIZED;
    m::laswp(n, a, lda, k1, k2, ipiv, incx);
    return CUSOLVER_STATUS_SUCCESS;
  };
  api.cusolverDnDsyevdx_bufferSize = [](cusolverDnHandle_t, cusolverEigMode_t,
                                        cusolverEigRange_t, cublasFillMode_t, int n,
                                        const double*, int, double, double, int, int, int*,
                                        const double*, int* lwork) {
    *lwork = fake_cusolver_lwork(n);
    return CUSOLVER_STATUS_SUCCESS;
  };
  api.cusolverDnDsyevdx = [](cusolverDnHandle_t h, cusolverEigMode_t jobz,
                             cusolverEigRange_t range, cublasFillMode_t uplo, int n, double* a,
                             int lda, double, double, int il, int iu, int* meig, double* w,
                             double*, int, int* info) {
    if (range == CUSOLVER_EIG_RANGE_V)
      return CUSOLVER_STATUS_NOT_SUPPORTED;
    if (!d::computed(h))
      return CUSOLVER_STATUS_NOT_INITIALIZED;
    m::syevd(jobz == CUSOLVER_EIG_MODE_VECTOR, uplo == CUBLAS_FILL_MODE_LOWER, n, a, lda, w);
    int first = range == CUSOLVER_EIG_RANGE_I ? il - 1 : 0;
    *meig = range == CUSOLVER_EIG_RANGE_I ? iu - il + 1 : n;
    for (int k = 0; k < *meig; ++k) {
      w[k] = w[first + k];
      for (int i = 0; jobz == CUSOLVER_EIG_MODE_VECTOR && i < n; ++i)
        a[i + k * lda] = a[i + (first + k) * lda];
    }
    *info = 0;
    return CUSOLVER_STATUS_SUCCESS;
  };
  api.cusolverDnDgesvdaStridedBatched_bufferSize =
    [](cusolverDnHandle_t, cusolverEigMode_t, int, int, int n, const double*, int, long long,
       const double*, long long, const double*, int, long long, const double*, int, long long,
       int* lwork, int) {
      *lwork = fake_cusolver_lwork(n);
      return CUSOLVER_STATUS_SUCCESS;
    };
  api.cusolverDnDgesvdaStridedBatched =
    [](cusolverDnHandle_t h, cusolverEigMode_t, int rank, int, int, const double*, int,
       long long, double* s, long long stride_s, double*, int, long long, double*, int,
       long long, double*, int, int* info, double* residuals, int batch) {
      if (!d::computed(h))
        return CUSOLVER_STATUS_NOT_INITIALIZED;
      fake_cusolver().residuals_given = residuals != nullptr;
      for (int b = 0; b < batch; ++b) {
        for (int j = 0; j < rank; ++j)
          s[b * stride_s + j] = b + 1 + j;
        info[b] = 0;
        if (residuals != nullptr)
          residuals[b] = 0.5 * (b + 1);
      }
      return CUSOLVER_STATUS_SUCCESS;
    };
  api.cusolverDnIRSParamsCreate = [](cusolverDnIRSParams_t* p) {
    *p = reinterpret_cast<cusolverDnIRSParams_t>(fake_cusolver().next++);
    fake_cusolver().irs_params[*p] = 0;
    return CUSOLVER_STATUS_SUCCESS;
  };
  api.cusolverDnIRSParamsDestroy = [](cusolverDnIRSParams_t p) {
    return fake_cusolver().irs_params.erase(p) != 0 ? CUSOLVER_STATUS_SUCCESS
                                                    : CUSOLVER_STATUS_IRS_PARAMS_NOT_INITIALIZED;
  };
  api.cusolverDnIRSParamsSetSolverPrecisions = [](cusolverDnIRSParams_t p,
                                                  cusolverPrecType_t main, cusolverPrecType_t) {
    auto i = fake_cusolver().irs_params.find(p);
    if (i == fake_cusolver().irs_params.end())
      return CUSOLVER_STATUS_IRS_PARAMS_NOT_INITIALIZED;
    i->second = main;
    return CUSOLVER_STATUS_SUCCESS;
  };
  api.cusolverDnIRSInfosCreate = [](cusolverDnIRSInfos_t* infos) {
    *infos = reinterpret_cast<cusolverDnIRSInfos_t>(fake_cusolver().next++);
    ++fake_cusolver().irs_infos;
    return CUSOLVER_STATUS_SUCCESS;
  };
  api.cusolverDnIRSInfosDestroy = [](cusolverDnIRSInfos_t) {
    --fake_cusolver().irs_infos;
    return CUSOLVER_STATUS_SUCCESS;
  };
  api.cusolverDnIRSXgesv = [](cusolverDnHandle_t h, cusolverDnIRSParams_t p, cusolverDnIRSInfos_t,
                              int n, int nrhs, void* a, int lda, void* b, int ldb, void* x, int ldx,
                              void*, size_t, int* niters, int* info) {
    auto i = fake_cusolver().irs_params.find(p);
    if (i == fake_cusolver().irs_params.end() || i->second == 0)
      return CUSOLVER_STATUS_IRS_PARAMS_NOT_INITIALIZED;
    if (i->second != CUSOLVER_R_64F)
      return CUSOLVER_STATUS_NOT_SUPPORTED;
    if (!d::computed(h))
      return CUSOLVER_STATUS_NOT_INITIALIZED;
    std::vector<int> ipiv(static_cast<size_t>(n));
    *info = m::getrf(n, n, static_cast<double*>(a), lda, ipiv.data());
    for (int c = 0; c < nrhs; ++c)
      for (int r = 0; r < n; ++r)
        static_cast<double*>(x)[r + c * ldx] = static_cast<double*>(b)[r + c * ldb];
    m::getrs(n, nrhs, static_cast<const double*>(a), lda, ipiv.data(), static_cast<double*>(x),
             ldx);
    *niters = 0;
    return CUSOLVER_STATUS_SUCCESS;
  };
}

} // namespace gleam::test
