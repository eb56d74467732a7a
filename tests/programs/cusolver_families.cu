// cuSOLVER's further dense families through the shared library: a
// bidiagonal reduction and its Q and P**T (Dgebrd, Dorgbr); a tridiagonal
// reduction, its Q and Q applied to a matrix (Ssytrd, Sorgtr, Sormtr); the
// eigenvalues of a Hermitian matrix in an index range (Zheevdx, their count a
// host result) and of a generalized problem (Dsygvd, Chegvdx by values,
// Dsygvj); U U**T (Dlauum); a symmetric indefinite inverse (Dsytrf, Dsytri);
// row interchanges (Claswp); an approximate strided batched SVD with its
// residual norms on the host (SgesvdaStridedBatched); the 64-bit Xsyevdx,
// Xgesvdp (h_err_sigma on the host), Xlarft and Xsytrs; mixed-precision
// iterative refinement (DSgesv, IRSXgesv with its options and results,
// DDgels, the iteration counts host results). Every result's
// bytes are printed so that a local run and a run through Gleam can be
// compared byte for byte; host results are checked for sense.
#include "solver_common.cuh"

#include <algorithm>
#include <cmath>
#include <cuComplex.h>
#include <initializer_list>
#include <vector>

namespace {

/// A symmetric matrix of order n: M + M**T, plus `shift` on the diagonal.
template <class T>
std::vector<T> symmetric(int n, uint32_t seed, T shift) {
  auto m = pattern<T>(n, n, seed);
  std::vector<T> a(static_cast<size_t>(n) * n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      a[i + j * n] = m[i + j * n] + m[j + i * n] + (i == j ? shift : T{0});
  return a;
}

/// A Hermitian matrix of order n (double complex), diagonally dominant by
/// `shift`.
std::vector<cuDoubleComplex> hermitian(int n, uint32_t seed, double shift) {
  auto re = symmetric<double>(n, seed, shift);
  auto im = pattern<double>(n, n, seed + 1);
  std::vector<cuDoubleComplex> a(static_cast<size_t>(n) * n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      double skew = i == j ? 0.0 : im[i + j * n] - im[j + i * n];
      a[i + j * n] = make_cuDoubleComplex(re[i + j * n], skew);
    }
  return a;
}

int device_int(const int* p) {
  return gleam_program::to_host(p, 1)[0];
}

} // namespace

int main() {
  cusolverDnHandle_t handle;
  GLEAM_CUSOLVER_CHECK(cusolverDnCreate(&handle));
  cudaStream_t stream;
  GLEAM_PROGRAM_CHECK(cudaStreamCreate(&stream));
  GLEAM_CUSOLVER_CHECK(cusolverDnSetStream(handle, stream));
  cusolverDnParams_t params;
  GLEAM_CUSOLVER_CHECK(cusolverDnCreateParams(&params));
  int* info = scratch<int>(1);

  // Bidiagonal reduction of a 12 x 8 double matrix, then Q (12 x 8) and P**T.
  {
    const int m = 12, n = 8;
    auto a = pattern<double>(m, n, 11);
    double* da = gleam_program::to_device(a);
    double *d = scratch<double>(n), *e = scratch<double>(n), *tauq = scratch<double>(n),
           *taup = scratch<double>(n);
    int lwork = 0, lq = 0, lp = 0;
    GLEAM_CUSOLVER_CHECK(cusolverDnDgebrd_bufferSize(handle, m, n, &lwork));
    double* dq = gleam_program::to_device(a);
    double* dp = scratch<double>(n * n);
    GLEAM_CUSOLVER_CHECK(
      cusolverDnDorgbr_bufferSize(handle, CUBLAS_SIDE_LEFT, m, n, n, dq, m, tauq, &lq));
    GLEAM_CUSOLVER_CHECK(
      cusolverDnDorgbr_bufferSize(handle, CUBLAS_SIDE_RIGHT, n, n, m, dp, n, taup, &lp));
    lwork = std::max(lwork, std::max(lq, lp));
    auto* work = scratch<double>(static_cast<size_t>(lwork));
    GLEAM_CUSOLVER_CHECK(
      cusolverDnDgebrd(handle, m, n, da, m, d, e, tauq, taup, work, lwork, info));
    std::printf("dgebrd info %d\n", device_int(info));
    show("dgebrd d", gleam_program::to_host(d, n));
    show("dgebrd e", gleam_program::to_host(e, n - 1));
    GLEAM_PROGRAM_CHECK(
      cudaMemcpy(dq, da, sizeof(double) * m * n, cudaMemcpyDeviceToDevice));
    GLEAM_CUSOLVER_CHECK(cusolverDnDorgbr(handle, CUBLAS_SIDE_LEFT, m, n, n, dq, m, tauq, work,
                                          lwork, info));
    show("dorgbr q", gleam_program::to_host(dq, m * n));
    // P**T from the rows of the reduced matrix's top n x n block.
    GLEAM_PROGRAM_CHECK(cudaMemcpy2D(dp, n * sizeof(double), da, m * sizeof(double),
                                     n * sizeof(double), n, cudaMemcpyDeviceToDevice));
    GLEAM_CUSOLVER_CHECK(cusolverDnDorgbr(handle, CUBLAS_SIDE_RIGHT, n, n, m, dp, n, taup, work,
                                          lwork, info));
    std::printf("dorgbr info %d\n", device_int(info));
    show("dorgbr pt", gleam_program::to_host(dp, n * n));
    release({work, d, e, tauq, taup, da, dq, dp});
  }

  // Tridiagonal reduction of a 10 x 10 float symmetric matrix; Q; Q**T C.
  {
    const int n = 10, cols = 3;
    auto a = symmetric<float>(n, 12, 0.0f);
    float* da = gleam_program::to_device(a);
    float *d = scratch<float>(n), *e = scratch<float>(n - 1), *tau = scratch<float>(n - 1);
    auto c = pattern<float>(n, cols, 13);
    float* dc = gleam_program::to_device(c);
    int lwork = 0, lq = 0, lm = 0;
    GLEAM_CUSOLVER_CHECK(
      cusolverDnSsytrd_bufferSize(handle, CUBLAS_FILL_MODE_UPPER, n, da, n, d, e, tau, &lwork));
    GLEAM_CUSOLVER_CHECK(
      cusolverDnSormtr_bufferSize(handle, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_T,
                                  n, cols, da, n, tau, dc, n, &lm));
    GLEAM_CUSOLVER_CHECK(
      cusolverDnSorgtr_bufferSize(handle, CUBLAS_FILL_MODE_UPPER, n, da, n, tau, &lq));
    lwork = std::max(lwork, std::max(lq, lm));
    auto* work = scratch<float>(static_cast<size_t>(lwork));
    GLEAM_CUSOLVER_CHECK(cusolverDnSsytrd(handle, CUBLAS_FILL_MODE_UPPER, n, da, n, d, e, tau,
                                          work, lwork, info));
    std::printf("ssytrd info %d\n", device_int(info));
    show("ssytrd d", gleam_program::to_host(d, n));
    show("ssytrd e", gleam_program::to_host(e, n - 1));
    GLEAM_CUSOLVER_CHECK(cusolverDnSormtr(handle, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_UPPER,
                                          CUBLAS_OP_T, n, cols, da, n, tau, dc, n, work, lwork,
                                          info));
    show("sormtr qtc", gleam_program::to_host(dc, n * cols));
    GLEAM_CUSOLVER_CHECK(
      cusolverDnSorgtr(handle, CUBLAS_FILL_MODE_UPPER, n, da, n, tau, work, lwork, info));
    std::printf("sorgtr info %d\n", device_int(info));
    show("sorgtr q", gleam_program::to_host(da, n * n));
    release({work, d, e, tau, da, dc});
  }

  // Eigenvalues 3..6 of a 12 x 12 Hermitian matrix (Zheevdx, range I).
  {
    const int n = 12;
    auto a = hermitian(n, 14, 0.0);
    cuDoubleComplex* da = gleam_program::to_device(a);
    double* w = scratch<double>(n);
    int lwork = 0, meig = -1;
    GLEAM_CUSOLVER_CHECK(cusolverDnZheevdx_bufferSize(
      handle, CUSOLVER_EIG_MODE_VECTOR, CUSOLVER_EIG_RANGE_I, CUBLAS_FILL_MODE_LOWER, n, da, n,
      0.0, 0.0, 3, 6, &meig, w, &lwork));
    auto* work = scratch<cuDoubleComplex>(static_cast<size_t>(lwork));
    GLEAM_CUSOLVER_CHECK(cusolverDnZheevdx(handle, CUSOLVER_EIG_MODE_VECTOR,
                                           CUSOLVER_EIG_RANGE_I, CUBLAS_FILL_MODE_LOWER, n, da,
                                           n, 0.0, 0.0, 3, 6, &meig, w, work, lwork, info));
    std::printf("zheevdx info %d, meig %d\n", device_int(info), meig);
    GLEAM_PROGRAM_EXPECT(meig == 4, "zheevdx finds the 4 eigenvalues of range 3..6");
    show("zheevdx w", gleam_program::to_host(w, meig));
    show("zheevdx vectors", gleam_program::to_host(da, n * meig));
    release({work, w, da});
  }

  // Generalized symmetric-definite problems A x = lambda B x.
  {
    const int n = 9;
    auto a = symmetric<double>(n, 15, 0.0);
    auto b = symmetric<double>(n, 16, 2.0 * n);
    double* da = gleam_program::to_device(a);
    double* db = gleam_program::to_device(b);
    double* w = scratch<double>(n);
    int lwork = 0;
    GLEAM_CUSOLVER_CHECK(cusolverDnDsygvd_bufferSize(handle, CUSOLVER_EIG_TYPE_1,
                                                     CUSOLVER_EIG_MODE_VECTOR,
                                                     CUBLAS_FILL_MODE_LOWER, n, da, n, db, n, w,
                                                     &lwork));
    auto* work = scratch<double>(static_cast<size_t>(lwork));
    GLEAM_CUSOLVER_CHECK(cusolverDnDsygvd(handle, CUSOLVER_EIG_TYPE_1, CUSOLVER_EIG_MODE_VECTOR,
                                          CUBLAS_FILL_MODE_LOWER, n, da, n, db, n, w, work,
                                          lwork, info));
    std::printf("dsygvd info %d\n", device_int(info));
    show("dsygvd w", gleam_program::to_host(w, n));
    show("dsygvd vectors", gleam_program::to_host(da, n * n));

    // The same problem by Jacobi (sygvj), its own options object.
    syevjInfo_t jinfo;
    GLEAM_CUSOLVER_CHECK(cusolverDnCreateSyevjInfo(&jinfo));
    GLEAM_CUSOLVER_CHECK(cusolverDnXsyevjSetTolerance(jinfo, 1e-12));
    double* ja = gleam_program::to_device(a);
    double* jb = gleam_program::to_device(b);
    int jlwork = 0;
    GLEAM_CUSOLVER_CHECK(cusolverDnDsygvj_bufferSize(handle, CUSOLVER_EIG_TYPE_1,
                                                     CUSOLVER_EIG_MODE_NOVECTOR,
                                                     CUBLAS_FILL_MODE_UPPER, n, ja, n, jb, n, w,
                                                     &jlwork, jinfo));
    auto* jwork = scratch<double>(static_cast<size_t>(jlwork));
    GLEAM_CUSOLVER_CHECK(cusolverDnDsygvj(handle, CUSOLVER_EIG_TYPE_1, CUSOLVER_EIG_MODE_NOVECTOR,
                                          CUBLAS_FILL_MODE_UPPER, n, ja, n, jb, n, w, jwork,
                                          jlwork, info, jinfo));
    std::printf("dsygvj info %d\n", device_int(info));
    show("dsygvj w", gleam_program::to_host(w, n));
    GLEAM_CUSOLVER_CHECK(cusolverDnDestroySyevjInfo(jinfo));
    release({work, jwork, w, da, db, ja, jb});
  }
  {
    // Chegvdx, eigenvalues in (-1, 1].
    const int n = 8;
    auto re = symmetric<float>(n, 17, 0.0f);
    auto spd = symmetric<float>(n, 18, 2.0f * n);
    std::vector<cuComplex> a(n * n), b(n * n);
    for (int i = 0; i < n * n; ++i) {
      a[i] = make_cuComplex(re[i], 0.0f);
      b[i] = make_cuComplex(spd[i], 0.0f);
    }
    cuComplex* da = gleam_program::to_device(a);
    cuComplex* db = gleam_program::to_device(b);
    float* w = scratch<float>(n);
    int lwork = 0, meig = -1;
    GLEAM_CUSOLVER_CHECK(cusolverDnChegvdx_bufferSize(
      handle, CUSOLVER_EIG_TYPE_1, CUSOLVER_EIG_MODE_NOVECTOR, CUSOLVER_EIG_RANGE_V,
      CUBLAS_FILL_MODE_LOWER, n, da, n, db, n, -1.0f, 1.0f, 0, 0, &meig, w, &lwork));
    auto* work = scratch<cuComplex>(static_cast<size_t>(lwork));
    GLEAM_CUSOLVER_CHECK(cusolverDnChegvdx(handle, CUSOLVER_EIG_TYPE_1, CUSOLVER_EIG_MODE_NOVECTOR,
                                           CUSOLVER_EIG_RANGE_V, CUBLAS_FILL_MODE_LOWER, n, da,
                                           n, db, n, -1.0f, 1.0f, 0, 0, &meig, w, work, lwork,
                                           info));
    std::printf("chegvdx info %d, meig %d\n", device_int(info), meig);
    GLEAM_PROGRAM_EXPECT(meig >= 0 && meig <= n, "chegvdx's count is within the order");
    show("chegvdx w", gleam_program::to_host(w, meig));
    release({work, w, da, db});
  }

  // U U**T of an upper triangle (Dlauum); the inverse of a symmetric
  // indefinite matrix (Dsytrf, Dsytri).
  {
    const int n = 7;
    auto u = pattern<double>(n, n, 19);
    double* du = gleam_program::to_device(u);
    int lwork = 0;
    GLEAM_CUSOLVER_CHECK(cusolverDnDlauum_bufferSize(handle, CUBLAS_FILL_MODE_UPPER, n, du, n,
                                                     &lwork));
    auto* work = scratch<double>(static_cast<size_t>(lwork));
    GLEAM_CUSOLVER_CHECK(
      cusolverDnDlauum(handle, CUBLAS_FILL_MODE_UPPER, n, du, n, work, lwork, info));
    std::printf("dlauum info %d\n", device_int(info));
    show("dlauum a", gleam_program::to_host(du, n * n));

    auto a = symmetric<double>(n, 20, 0.0);
    double* da = gleam_program::to_device(a);
    int* ipiv = scratch<int>(n);
    int lf = 0, li = 0;
    GLEAM_CUSOLVER_CHECK(cusolverDnDsytrf_bufferSize(handle, n, da, n, &lf));
    auto* fwork = scratch<double>(static_cast<size_t>(lf));
    GLEAM_CUSOLVER_CHECK(
      cusolverDnDsytrf(handle, CUBLAS_FILL_MODE_LOWER, n, da, n, ipiv, fwork, lf, info));
    GLEAM_CUSOLVER_CHECK(
      cusolverDnDsytri_bufferSize(handle, CUBLAS_FILL_MODE_LOWER, n, da, n, ipiv, &li));
    auto* iwork = scratch<double>(static_cast<size_t>(li));
    GLEAM_CUSOLVER_CHECK(
      cusolverDnDsytri(handle, CUBLAS_FILL_MODE_LOWER, n, da, n, ipiv, iwork, li, info));
    auto inv = gleam_program::to_host(da, n * n);
    // A * inv(A) = I (inv's lower triangle holds the symmetric inverse).
    double worst = 0;
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        double s = 0;
        for (int k = 0; k < n; ++k)
          s += a[i + k * n] * (k >= j ? inv[k + j * n] : inv[j + k * n]);
        worst = std::fmax(worst, std::fabs(s - (i == j ? 1.0 : 0.0)));
      }
    std::printf("dsytri info %d, residual %s\n", device_int(info),
                worst < 1e-9 ? "small" : "LARGE");
    show("dsytri inverse", inv);
    release({work, du, fwork, iwork, ipiv, da});
  }

  // Row interchanges of a 6 x 4 complex matrix (Claswp, rows 1..3).
  {
    const int m = 6, n = 4;
    auto re = pattern<float>(m, n, 21);
    std::vector<cuComplex> a(m * n);
    for (int i = 0; i < m * n; ++i)
      a[i] = make_cuComplex(re[i], static_cast<float>(i));
    cuComplex* da = gleam_program::to_device(a);
    int* ipiv = gleam_program::to_device(std::vector<int>{6, 4, 5});
    GLEAM_CUSOLVER_CHECK(cusolverDnClaswp(handle, n, da, m, 1, 3, ipiv, 1));
    show("claswp a", gleam_program::to_host(da, m * n));
    release({ipiv, da});
  }

  // Approximate SVD of two 16 x 4 floats, rank 3 (SgesvdaStridedBatched).
  {
    const int m = 16, n = 4, rank = 3, batch = 2;
    const long long sa = m * n, ss = rank, su = m * rank, sv = n * rank;
    auto a = pattern<float>(m, n * batch, 22);
    float* da = gleam_program::to_device(a);
    float *s = scratch<float>(ss * batch), *u = scratch<float>(su * batch),
          *v = scratch<float>(sv * batch);
    int* infos = scratch<int>(batch);
    int lwork = 0;
    GLEAM_CUSOLVER_CHECK(cusolverDnSgesvdaStridedBatched_bufferSize(
      handle, CUSOLVER_EIG_MODE_VECTOR, rank, m, n, da, m, sa, s, ss, u, m, su, v, n, sv, &lwork,
      batch));
    auto* work = scratch<float>(static_cast<size_t>(lwork));
    std::vector<double> norms(batch, -1.0);
    GLEAM_CUSOLVER_CHECK(cusolverDnSgesvdaStridedBatched(
      handle, CUSOLVER_EIG_MODE_VECTOR, rank, m, n, da, m, sa, s, ss, u, m, su, v, n, sv, work,
      lwork, infos, norms.data(), batch));
    std::printf("sgesvda residual norms %s\n",
                norms[0] >= 0 && norms[1] >= 0 && norms[0] < 1 && norms[1] < 1 ? "small"
                                                                                : "LARGE");
    auto host_infos = gleam_program::to_host(infos, batch);
    gleam_program::print_ints("sgesvda info", host_infos.data(), batch, sum);
    show("sgesvda s", gleam_program::to_host(s, ss * batch));
    show("sgesvda u", gleam_program::to_host(u, su * batch));
    // Without the residual norms (NULL).
    GLEAM_CUSOLVER_CHECK(cusolverDnSgesvdaStridedBatched(
      handle, CUSOLVER_EIG_MODE_NOVECTOR, rank, m, n, da, m, sa, s, ss, u, m, su, v, n, sv, work,
      lwork, infos, nullptr, batch));
    show("sgesvda s again", gleam_program::to_host(s, ss * batch));
    release({work, infos, s, u, v, da});
  }

  // 64-bit API: Xsyevdx (range ALL), Xgesvdp, Xlarft, Xsytrf's partner Xsytrs.
  {
    const int64_t n = 10;
    auto a = symmetric<double>(static_cast<int>(n), 23, 0.0);
    double* da = gleam_program::to_device(a);
    double* w = scratch<double>(n);
    size_t dev_bytes = 0, host_bytes = 0;
    int64_t meig = -1;
    double vl = 0, vu = 0;
    GLEAM_CUSOLVER_CHECK(cusolverDnXsyevdx_bufferSize(
      handle, params, CUSOLVER_EIG_MODE_NOVECTOR, CUSOLVER_EIG_RANGE_ALL, CUBLAS_FILL_MODE_LOWER,
      n, CUDA_R_64F, da, n, &vl, &vu, 0, 0, &meig, CUDA_R_64F, w, CUDA_R_64F, &dev_bytes,
      &host_bytes));
    void* dev = scratch(dev_bytes);
    std::vector<char> host(host_bytes > 0 ? host_bytes : 1);
    GLEAM_CUSOLVER_CHECK(cusolverDnXsyevdx(
      handle, params, CUSOLVER_EIG_MODE_NOVECTOR, CUSOLVER_EIG_RANGE_ALL, CUBLAS_FILL_MODE_LOWER,
      n, CUDA_R_64F, da, n, &vl, &vu, 0, 0, &meig, CUDA_R_64F, w, CUDA_R_64F, dev, dev_bytes,
      host.data(), host_bytes, info));
    std::printf("xsyevdx info %d, meig %lld\n", device_int(info), static_cast<long long>(meig));
    GLEAM_PROGRAM_EXPECT(meig == n, "xsyevdx of range ALL finds every eigenvalue");
    show("xsyevdx w", gleam_program::to_host(w, n));
    release({dev, w, da});
  }
  {
    const int64_t m = 14, n = 6;
    auto a = pattern<double>(m, n, 24);
    double* da = gleam_program::to_device(a);
    double *s = scratch<double>(n), *u = scratch<double>(m * n), *v = scratch<double>(n * n);
    size_t dev_bytes = 0, host_bytes = 0;
    GLEAM_CUSOLVER_CHECK(cusolverDnXgesvdp_bufferSize(
      handle, params, CUSOLVER_EIG_MODE_VECTOR, 1, m, n, CUDA_R_64F, da, m, CUDA_R_64F, s,
      CUDA_R_64F, u, m, CUDA_R_64F, v, n, CUDA_R_64F, &dev_bytes, &host_bytes));
    void* dev = scratch(dev_bytes);
    std::vector<char> host(host_bytes > 0 ? host_bytes : 1);
    double err_sigma = -1;
    GLEAM_CUSOLVER_CHECK(cusolverDnXgesvdp(
      handle, params, CUSOLVER_EIG_MODE_VECTOR, 1, m, n, CUDA_R_64F, da, m, CUDA_R_64F, s,
      CUDA_R_64F, u, m, CUDA_R_64F, v, n, CUDA_R_64F, dev, dev_bytes, host.data(), host_bytes,
      info, &err_sigma));
    std::printf("xgesvdp info %d, h_err_sigma %s\n", device_int(info),
                err_sigma >= 0 && err_sigma < 1e-6 ? "small" : "LARGE");
    show("xgesvdp s", gleam_program::to_host(s, n));
    show("xgesvdp v", gleam_program::to_host(v, n * n));
    release({dev, s, u, v, da});
  }
  {
    // The triangular factor of 4 reflectors of length 12 from a QR (geqrf).
    const int64_t n = 12, k = 4;
    auto a = pattern<double>(static_cast<int>(n), static_cast<int>(k), 25);
    double* da = gleam_program::to_device(a);
    double* tau = scratch<double>(k);
    int lq = 0;
    GLEAM_CUSOLVER_CHECK(
      cusolverDnDgeqrf_bufferSize(handle, static_cast<int>(n), static_cast<int>(k), da,
                                  static_cast<int>(n), &lq));
    auto* qwork = scratch<double>(static_cast<size_t>(lq));
    GLEAM_CUSOLVER_CHECK(cusolverDnDgeqrf(handle, static_cast<int>(n), static_cast<int>(k), da,
                                          static_cast<int>(n), tau, qwork, lq, info));
    double* t = scratch<double>(k * k);
    GLEAM_PROGRAM_CHECK(cudaMemset(t, 0, sizeof(double) * k * k));
    size_t dev_bytes = 0, host_bytes = 0;
    GLEAM_CUSOLVER_CHECK(cusolverDnXlarft_bufferSize(
      handle, params, CUBLAS_DIRECT_FORWARD, CUBLAS_STOREV_COLUMNWISE, n, k, CUDA_R_64F, da, n,
      CUDA_R_64F, tau, CUDA_R_64F, t, k, CUDA_R_64F, &dev_bytes, &host_bytes));
    void* dev = scratch(dev_bytes);
    std::vector<char> host(host_bytes > 0 ? host_bytes : 1);
    GLEAM_CUSOLVER_CHECK(cusolverDnXlarft(handle, params, CUBLAS_DIRECT_FORWARD,
                                          CUBLAS_STOREV_COLUMNWISE, n, k, CUDA_R_64F, da, n,
                                          CUDA_R_64F, tau, CUDA_R_64F, t, k, CUDA_R_64F, dev,
                                          dev_bytes, host.data(), host_bytes));
    GLEAM_PROGRAM_CHECK(cudaStreamSynchronize(stream));
    show("xlarft t", gleam_program::to_host(t, k * k));
    release({dev, t, qwork, tau, da});
  }
  {
    const int n = 9, nrhs = 2;
    auto a = symmetric<double>(n, 26, 0.0);
    auto b = pattern<double>(n, nrhs, 27);
    double* da = gleam_program::to_device(a);
    double* db = gleam_program::to_device(b);
    int* ipiv = scratch<int>(n);
    int lf = 0;
    GLEAM_CUSOLVER_CHECK(cusolverDnDsytrf_bufferSize(handle, n, da, n, &lf));
    auto* fwork = scratch<double>(static_cast<size_t>(lf));
    GLEAM_CUSOLVER_CHECK(
      cusolverDnDsytrf(handle, CUBLAS_FILL_MODE_UPPER, n, da, n, ipiv, fwork, lf, info));
    auto piv = gleam_program::to_host(ipiv, n);
    int64_t* ipiv64 = gleam_program::to_device(std::vector<int64_t>(piv.begin(), piv.end()));
    size_t dev_bytes = 0, host_bytes = 0;
    GLEAM_CUSOLVER_CHECK(cusolverDnXsytrs_bufferSize(handle, CUBLAS_FILL_MODE_UPPER, n, nrhs,
                                                     CUDA_R_64F, da, n, ipiv64, CUDA_R_64F, db,
                                                     n, &dev_bytes, &host_bytes));
    void* dev = scratch(dev_bytes);
    std::vector<char> host(host_bytes > 0 ? host_bytes : 1);
    GLEAM_CUSOLVER_CHECK(cusolverDnXsytrs(handle, CUBLAS_FILL_MODE_UPPER, n, nrhs, CUDA_R_64F, da,
                                          n, ipiv64, CUDA_R_64F, db, n, dev, dev_bytes,
                                          host.data(), host_bytes, info));
    auto x = gleam_program::to_host(db, n * nrhs);
    double worst = 0;
    for (int c = 0; c < nrhs; ++c)
      for (int i = 0; i < n; ++i) {
        double s = 0;
        for (int k = 0; k < n; ++k)
          s += a[i + k * n] * x[k + c * n];
        worst = std::fmax(worst, std::fabs(s - b[i + c * n]));
      }
    std::printf("dsytrf/xsytrs info %d, residual %s\n", device_int(info),
                worst < 1e-9 ? "small" : "LARGE");
    show("xsytrs x", x);
    release({dev, fwork, ipiv, ipiv64, da, db});
  }

  // Mixed-precision iterative refinement: DSgesv (typed), IRSXgesv with
  // options and results objects, DDgels (least squares).
  {
    const int n = 32, nrhs = 2;
    auto a = symmetric<double>(n, 28, 2.0 * n);
    auto b = pattern<double>(n, nrhs, 29);
    double* da = gleam_program::to_device(a);
    double* db = gleam_program::to_device(b);
    double* dx = scratch<double>(n * nrhs);
    int* dipiv = scratch<int>(n);
    size_t lwork_bytes = 0;
    GLEAM_CUSOLVER_CHECK(cusolverDnDSgesv_bufferSize(handle, n, nrhs, da, n, dipiv, db, n, dx, n,
                                                     nullptr, &lwork_bytes));
    void* dwork = scratch(lwork_bytes);
    int iter = -100;
    GLEAM_CUSOLVER_CHECK(cusolverDnDSgesv(handle, n, nrhs, da, n, dipiv, db, n, dx, n, dwork,
                                          lwork_bytes, &iter, info));
    auto x = gleam_program::to_host(dx, n * nrhs);
    auto residual_of = [&](const std::vector<double>& sol) {
      double worst = 0;
      for (int c = 0; c < nrhs; ++c)
        for (int i = 0; i < n; ++i) {
          double s = 0;
          for (int k = 0; k < n; ++k)
            s += a[i + k * n] * sol[k + c * n];
          worst = std::fmax(worst, std::fabs(s - b[i + c * n]));
        }
      return worst;
    };
    std::printf("dsgesv info %d, iter %d, residual %s\n", device_int(info), iter,
                residual_of(x) < 1e-10 ? "small" : "LARGE");
    show("dsgesv x", x);

    cusolverDnIRSParams_t irs;
    GLEAM_CUSOLVER_CHECK(cusolverDnIRSParamsCreate(&irs));
    GLEAM_CUSOLVER_CHECK(cusolverDnIRSParamsSetSolverPrecisions(irs, CUSOLVER_R_64F,
                                                                CUSOLVER_R_32F));
    GLEAM_CUSOLVER_CHECK(
      cusolverDnIRSParamsSetRefinementSolver(irs, CUSOLVER_IRS_REFINE_CLASSICAL));
    GLEAM_CUSOLVER_CHECK(cusolverDnIRSParamsSetMaxIters(irs, 30));
    GLEAM_CUSOLVER_CHECK(cusolverDnIRSParamsSetTol(irs, 1e-12));
    int max_iters = 0;
    GLEAM_CUSOLVER_CHECK(cusolverDnIRSParamsGetMaxIters(irs, &max_iters));
    cusolverDnIRSInfos_t infos;
    GLEAM_CUSOLVER_CHECK(cusolverDnIRSInfosCreate(&infos));
    double* da2 = gleam_program::to_device(a);
    size_t xbytes = 0;
    GLEAM_CUSOLVER_CHECK(cusolverDnIRSXgesv_bufferSize(handle, irs, n, nrhs, &xbytes));
    void* xwork = scratch(xbytes);
    int niters = -100, kept_niters = -100, outer = -100;
    GLEAM_CUSOLVER_CHECK(cusolverDnIRSXgesv(handle, irs, infos, n, nrhs, da2, n, db, n, dx, n,
                                            xwork, xbytes, &niters, info));
    GLEAM_CUSOLVER_CHECK(cusolverDnIRSInfosGetNiters(infos, &kept_niters));
    GLEAM_CUSOLVER_CHECK(cusolverDnIRSInfosGetOuterNiters(infos, &outer));
    auto x2 = gleam_program::to_host(dx, n * nrhs);
    std::printf("irsxgesv info %d, niters %d (kept %d, outer %d, at most %d), residual %s\n",
                device_int(info), niters, kept_niters, outer, max_iters,
                residual_of(x2) < 1e-10 ? "small" : "LARGE");
    show("irsxgesv x", x2);
    GLEAM_CUSOLVER_CHECK(cusolverDnIRSInfosDestroy(infos));
    GLEAM_CUSOLVER_CHECK(cusolverDnIRSParamsDestroy(irs));
    release({xwork, dwork, dipiv, da, da2, db, dx});
  }
  {
    const int m = 40, n = 24, nrhs = 1;
    auto a = pattern<double>(m, n, 30);
    auto b = pattern<double>(m, nrhs, 31);
    double* da = gleam_program::to_device(a);
    double* db = gleam_program::to_device(b);
    double* dx = scratch<double>(n * nrhs);
    size_t lwork_bytes = 0;
    GLEAM_CUSOLVER_CHECK(cusolverDnDDgels_bufferSize(handle, m, n, nrhs, da, m, db, m, dx, n,
                                                     nullptr, &lwork_bytes));
    void* dwork = scratch(lwork_bytes);
    int iter = -100;
    GLEAM_CUSOLVER_CHECK(cusolverDnDDgels(handle, m, n, nrhs, da, m, db, m, dx, n, dwork,
                                          lwork_bytes, &iter, info));
    std::printf("ddgels info %d, iter %d\n", device_int(info), iter);
    show("ddgels x", gleam_program::to_host(dx, n * nrhs));
    release({dwork, da, db, dx});
  }

  GLEAM_CUSOLVER_CHECK(cusolverDnDestroyParams(params));
  GLEAM_CUSOLVER_CHECK(cusolverDnDestroy(handle));
  GLEAM_PROGRAM_CHECK(cudaStreamDestroy(stream));
  GLEAM_PROGRAM_CHECK(cudaFree(info));
  GLEAM_PROGRAM_CHECK(cudaDeviceSynchronize());
  sum.print("cusolver_families");
  return 0;
}
