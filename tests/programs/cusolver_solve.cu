// cuSOLVER's dense API through the shared library, as PyTorch's torch.linalg
// calls it: the version and properties; a handle on a (blocking) stream of the app
// (cusolverDnSetStream / GetStream) and 64-bit API parameters; a 48 x 48
// double system with 2 right-hand sides solved by the typed getrf / getrs
// and a float one by the 64-bit Xgetrf / Xgetrs; the eigenvalues of a
// symmetric matrix by syevd and, with vectors, by Xsyevd with NULL options
// (the library's defaults, as PyTorch passes them); a Cholesky
// factorization and solve (potrf / potrs) and the 64-bit Xpotrf; a QR
// factorization (geqrf, orgqr); the singular values of a tall matrix
// (gesvd); an argument the library refuses at the call. The residuals are
// checked on the host; every result's bytes are printed so that a local run
// and a run through Gleam can be compared byte for byte.
#include "solver_common.cuh"

#include <cmath>
#include <initializer_list>
#include <vector>

namespace {

/// A symmetric positive definite matrix of order n: M M^T + n I.
std::vector<double> spd(int n, uint32_t seed) {
  auto m = pattern<double>(n, n, seed);
  std::vector<double> a(static_cast<size_t>(n) * n, 0.0);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      double s = i == j ? n : 0.0;
      for (int k = 0; k < n; ++k)
        s += m[i + k * n] * m[j + k * n];
      a[i + j * n] = s;
    }
  return a;
}

/// max |A x - b| over the nrhs columns (A n x n, column-major).
template <class T>
double residual(const std::vector<T>& a, const std::vector<T>& x, const std::vector<T>& b, int n,
                int nrhs) {
  double worst = 0;
  for (int c = 0; c < nrhs; ++c)
    for (int i = 0; i < n; ++i) {
      double s = 0;
      for (int k = 0; k < n; ++k)
        s += static_cast<double>(a[i + k * n]) * x[k + c * n];
      worst = std::fmax(worst, std::fabs(s - b[i + c * n]));
    }
  return worst;
}

int device_int(const int* p) {
  return gleam_program::to_host(p, 1)[0];
}

} // namespace

int main() {
  int version = 0, major = 0, minor = 0, patch = 0;
  GLEAM_CUSOLVER_CHECK(cusolverGetVersion(&version));
  GLEAM_CUSOLVER_CHECK(cusolverGetProperty(MAJOR_VERSION, &major));
  GLEAM_CUSOLVER_CHECK(cusolverGetProperty(MINOR_VERSION, &minor));
  GLEAM_CUSOLVER_CHECK(cusolverGetProperty(PATCH_LEVEL, &patch));
  std::printf("version %d (%d.%d.%d)\n", version, major, minor, patch);
  GLEAM_PROGRAM_EXPECT(major == version / 1000, "the major version agrees with the version");

  cusolverDnHandle_t handle;
  GLEAM_CUSOLVER_CHECK(cusolverDnCreate(&handle));
  cudaStream_t stream;
  // A blocking stream: the copies back (legacy stream) wait for its work.
  GLEAM_PROGRAM_CHECK(cudaStreamCreate(&stream));
  GLEAM_CUSOLVER_CHECK(cusolverDnSetStream(handle, stream));
  cudaStream_t got = nullptr;
  GLEAM_CUSOLVER_CHECK(cusolverDnGetStream(handle, &got));
  GLEAM_PROGRAM_EXPECT(got == stream, "cusolverDnGetStream returns the stream set");
  cusolverDnParams_t params;
  GLEAM_CUSOLVER_CHECK(cusolverDnCreateParams(&params));
  int* info = nullptr;
  GLEAM_PROGRAM_CHECK(cudaMalloc(&info, sizeof(int)));

  // LU and solve, typed API: 48 x 48 doubles, 2 right-hand sides.
  {
    const int n = 48, nrhs = 2;
    auto a = pattern<double>(n, n, 1);
    auto b = pattern<double>(n, nrhs, 2);
    double* da = gleam_program::to_device(a);
    double* db = gleam_program::to_device(b);
    int* ipiv = nullptr;
    GLEAM_PROGRAM_CHECK(cudaMalloc(&ipiv, n * sizeof(int)));
    int lwork = 0;
    GLEAM_CUSOLVER_CHECK(cusolverDnDgetrf_bufferSize(handle, n, n, da, n, &lwork));
    auto* work = scratch<double>(static_cast<size_t>(lwork));
    GLEAM_CUSOLVER_CHECK(cusolverDnDgetrf(handle, n, n, da, n, work, ipiv, info));
    GLEAM_CUSOLVER_CHECK(cusolverDnDgetrs(handle, CUBLAS_OP_N, n, nrhs, da, n, ipiv, db, n, info));
    GLEAM_PROGRAM_CHECK(cudaStreamSynchronize(stream));
    auto x = gleam_program::to_host(db, n * nrhs);
    std::printf("dgetrf/dgetrs info %d, residual %s\n", device_int(info),
                residual(a, x, b, n, nrhs) < 1e-10 ? "small" : "LARGE");
    show("dgetrs x", x);
    show("dgetrf pivots", gleam_program::to_host(ipiv, n));
    release({work, ipiv, da, db});
  }

  // LU and solve, 64-bit API: 40 x 40 floats, one right-hand side.
  {
    const int64_t n = 40;
    auto a = pattern<float>(n, n, 3);
    auto b = pattern<float>(n, 1, 4);
    float* da = gleam_program::to_device(a);
    float* db = gleam_program::to_device(b);
    int64_t* ipiv = nullptr;
    GLEAM_PROGRAM_CHECK(cudaMalloc(&ipiv, n * sizeof(int64_t)));
    size_t dev_bytes = 0, host_bytes = 0;
    GLEAM_CUSOLVER_CHECK(cusolverDnXgetrf_bufferSize(handle, params, n, n, CUDA_R_32F, da, n,
                                                     CUDA_R_32F, &dev_bytes, &host_bytes));
    void* dev = scratch(dev_bytes);
    std::vector<char> host(host_bytes > 0 ? host_bytes : 1);
    GLEAM_CUSOLVER_CHECK(cusolverDnXgetrf(handle, params, n, n, CUDA_R_32F, da, n, ipiv,
                                          CUDA_R_32F, dev, dev_bytes, host.data(), host_bytes,
                                          info));
    GLEAM_CUSOLVER_CHECK(cusolverDnXgetrs(handle, params, CUBLAS_OP_N, n, 1, CUDA_R_32F, da, n,
                                          ipiv, CUDA_R_32F, db, n, info));
    GLEAM_PROGRAM_CHECK(cudaStreamSynchronize(stream));
    auto x = gleam_program::to_host(db, n);
    std::printf("xgetrf/xgetrs info %d, residual %s\n", device_int(info),
                residual(a, x, b, static_cast<int>(n), 1) < 1e-3 ? "small" : "LARGE");
    show("xgetrs x", x);
    release({dev, ipiv, da, db});
  }

  // Symmetric eigenvalues: syevd (values only) and Xsyevd (with vectors).
  {
    const int n = 32;
    auto a = spd(n, 5);
    double* da = gleam_program::to_device(a);
    double* w = nullptr;
    GLEAM_PROGRAM_CHECK(cudaMalloc(&w, n * sizeof(double)));
    int lwork = 0;
    GLEAM_CUSOLVER_CHECK(cusolverDnDsyevd_bufferSize(handle, CUSOLVER_EIG_MODE_NOVECTOR,
                                                     CUBLAS_FILL_MODE_LOWER, n, da, n, w,
                                                     &lwork));
    auto* work = scratch<double>(static_cast<size_t>(lwork));
    GLEAM_CUSOLVER_CHECK(cusolverDnDsyevd(handle, CUSOLVER_EIG_MODE_NOVECTOR,
                                          CUBLAS_FILL_MODE_LOWER, n, da, n, w, work, lwork,
                                          info));
    auto values = gleam_program::to_host(w, n);
    std::printf("dsyevd info %d\n", device_int(info));
    show("dsyevd w", values);
    double* db = gleam_program::to_device(a);
    size_t dev_bytes = 0, host_bytes = 0;
    // NULL options: the library's defaults, as PyTorch's eigh passes them.
    GLEAM_CUSOLVER_CHECK(cusolverDnXsyevd_bufferSize(
      handle, nullptr, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_UPPER, n, CUDA_R_64F, db, n,
      CUDA_R_64F, w, CUDA_R_64F, &dev_bytes, &host_bytes));
    void* dev = scratch(dev_bytes);
    std::vector<char> host(host_bytes > 0 ? host_bytes : 1);
    GLEAM_CUSOLVER_CHECK(cusolverDnXsyevd(handle, nullptr, CUSOLVER_EIG_MODE_VECTOR,
                                          CUBLAS_FILL_MODE_UPPER, n, CUDA_R_64F, db, n,
                                          CUDA_R_64F, w, CUDA_R_64F, dev, dev_bytes,
                                          host.data(), host_bytes, info));
    auto vectors = gleam_program::to_host(db, n * n);
    auto again = gleam_program::to_host(w, n);
    // A v = lambda v for the largest eigenpair.
    double worst = 0;
    for (int i = 0; i < n; ++i) {
      double s = 0;
      for (int k = 0; k < n; ++k)
        s += a[i + k * n] * vectors[k + (n - 1) * n];
      worst = std::fmax(worst, std::fabs(s - again[n - 1] * vectors[i + (n - 1) * n]));
    }
    std::printf("xsyevd info %d, eigenpair residual %s\n", device_int(info),
                worst < 1e-9 ? "small" : "LARGE");
    show("xsyevd w", again);
    show("xsyevd vectors", vectors);
    release({dev, work, w, da, db});
  }

  // Cholesky: potrf / potrs (typed) and Xpotrf (64-bit).
  {
    const int n = 24;
    auto a = spd(n, 6);
    auto b = pattern<double>(n, 1, 7);
    double* da = gleam_program::to_device(a);
    double* db = gleam_program::to_device(b);
    int lwork = 0;
    GLEAM_CUSOLVER_CHECK(
      cusolverDnDpotrf_bufferSize(handle, CUBLAS_FILL_MODE_LOWER, n, da, n, &lwork));
    auto* work = scratch<double>(static_cast<size_t>(lwork));
    GLEAM_CUSOLVER_CHECK(
      cusolverDnDpotrf(handle, CUBLAS_FILL_MODE_LOWER, n, da, n, work, lwork, info));
    GLEAM_CUSOLVER_CHECK(
      cusolverDnDpotrs(handle, CUBLAS_FILL_MODE_LOWER, n, 1, da, n, db, n, info));
    auto x = gleam_program::to_host(db, n);
    std::printf("dpotrf/dpotrs info %d, residual %s\n", device_int(info),
                residual(a, x, b, n, 1) < 1e-10 ? "small" : "LARGE");
    show("dpotrs x", x);
    double* dc = gleam_program::to_device(a);
    size_t dev_bytes = 0, host_bytes = 0;
    GLEAM_CUSOLVER_CHECK(cusolverDnXpotrf_bufferSize(handle, params, CUBLAS_FILL_MODE_UPPER, n,
                                                     CUDA_R_64F, dc, n, CUDA_R_64F, &dev_bytes,
                                                     &host_bytes));
    void* dev = scratch(dev_bytes);
    std::vector<char> host(host_bytes > 0 ? host_bytes : 1);
    GLEAM_CUSOLVER_CHECK(cusolverDnXpotrf(handle, params, CUBLAS_FILL_MODE_UPPER, n, CUDA_R_64F,
                                          dc, n, CUDA_R_64F, dev, dev_bytes, host.data(),
                                          host_bytes, info));
    std::printf("xpotrf info %d\n", device_int(info));
    show("xpotrf u", gleam_program::to_host(dc, n * n));
    release({dev, work, da, db, dc});
  }

  // QR of a 30 x 20 float matrix: geqrf, then Q by orgqr.
  {
    const int m = 30, n = 20;
    auto a = pattern<float>(m, n, 8);
    float* da = gleam_program::to_device(a);
    float* tau = nullptr;
    GLEAM_PROGRAM_CHECK(cudaMalloc(&tau, n * sizeof(float)));
    int lwork = 0, lwork_q = 0;
    GLEAM_CUSOLVER_CHECK(cusolverDnSgeqrf_bufferSize(handle, m, n, da, m, &lwork));
    GLEAM_CUSOLVER_CHECK(cusolverDnSorgqr_bufferSize(handle, m, n, n, da, m, tau, &lwork_q));
    if (lwork_q > lwork)
      lwork = lwork_q;
    auto* work = scratch<float>(static_cast<size_t>(lwork));
    GLEAM_CUSOLVER_CHECK(cusolverDnSgeqrf(handle, m, n, da, m, tau, work, lwork, info));
    show("sgeqrf r", gleam_program::to_host(da, m * n));
    GLEAM_CUSOLVER_CHECK(cusolverDnSorgqr(handle, m, n, n, da, m, tau, work, lwork, info));
    std::printf("sgeqrf/sorgqr info %d\n", device_int(info));
    show("sorgqr q", gleam_program::to_host(da, m * n));
    release({work, tau, da});
  }

  // Singular values of a 16 x 12 double matrix (gesvd, no vectors).
  {
    const int m = 16, n = 12;
    auto a = pattern<double>(m, n, 9);
    double* da = gleam_program::to_device(a);
    double* s = nullptr;
    GLEAM_PROGRAM_CHECK(cudaMalloc(&s, n * sizeof(double)));
    int lwork = 0;
    GLEAM_CUSOLVER_CHECK(cusolverDnDgesvd_bufferSize(handle, m, n, &lwork));
    auto* work = scratch<double>(static_cast<size_t>(lwork));
    GLEAM_CUSOLVER_CHECK(cusolverDnDgesvd(handle, 'N', 'N', m, n, da, m, s, nullptr, 1, nullptr,
                                          1, work, lwork, nullptr, info));
    std::printf("dgesvd info %d\n", device_int(info));
    show("dgesvd s", gleam_program::to_host(s, n));
    release({work, s, da});
  }

  // An argument the library refuses at the call.
  std::printf("dgetrf with n = -1: %d\n",
              static_cast<int>(cusolverDnDgetrf(handle, 4, -1, nullptr, 4, nullptr, nullptr,
                                                info)));

  GLEAM_CUSOLVER_CHECK(cusolverDnDestroyParams(params));
  GLEAM_CUSOLVER_CHECK(cusolverDnDestroy(handle));
  GLEAM_PROGRAM_CHECK(cudaStreamDestroy(stream));
  GLEAM_PROGRAM_CHECK(cudaFree(info));
  GLEAM_PROGRAM_CHECK(cudaDeviceSynchronize());
  sum.print("cusolver_solve");
  return 0;
}
