// cuBLAS beyond the gemm family, through the shared library on one handle:
// level 1 (axpy, scal, copy, swap, dot, nrm2, asum, amax/amin, rot, rotg,
// complex dotc and axpy), level 2 (gemv both ways, ger, symv, trmv, trsv,
// gbmv, spmv), level 3 (syrk, symm, trsm, trmm, geam, dgmm, complex gemm),
// a _64 entry point, the vector and matrix transfer helpers with strides and
// leading dimensions larger than the data, a dot product into device memory
// (CUBLAS_POINTER_MODE_DEVICE) and two calls cuBLAS refuses. Inputs are small
// integers (and halves), triangular solves divide by powers of two, so every
// result is exact and checked against the host; every value is printed so
// that a local run and a run through Gleam can be compared byte for byte.
#include "blas_common.cuh"
#include "common.cuh"

#include <cuComplex.h>
#include <cublas_v2.h>

#include <cmath>
#include <vector>



namespace {

using gleam_program::to_device;
using gleam_program::to_host;
using gleam_program::quietly;

gleam_program::checksum sum;

void print_value(float x) {
  std::printf(" %.6g", static_cast<double>(x));
}
void print_value(double x) {
  std::printf(" %.6g", x);
}
void print_value(int x) {
  std::printf(" %d", x);
}
void print_value(cuComplex x) {
  std::printf(" (%.6g,%.6g)", static_cast<double>(x.x), static_cast<double>(x.y));
}
void print_value(cuDoubleComplex x) {
  std::printf(" (%.6g,%.6g)", x.x, x.y);
}

/// Prints "`label`: v0 v1 ..." and adds the values' bytes to the checksum.
template <class T>
void show(const char* label, const std::vector<T>& v) {
  std::printf("%s:", label);
  for (const auto& x : v)
    print_value(x);
  std::printf("\n");
  sum.add(v.data(), v.size() * sizeof(T));
}

template <class T>
void show(const char* label, T x) {
  show(label, std::vector<T>{x});
}

bool same(cuComplex a, cuComplex b) {
  return a.x == b.x && a.y == b.y;
}
bool same(cuDoubleComplex a, cuDoubleComplex b) {
  return a.x == b.x && a.y == b.y;
}


/// Column-major m x n matrix with leading dimension ld, element (i, j) =
/// f(i, j); the padding rows hold `pad`.
template <class T, class F>
std::vector<T> matrix(int m, int n, int ld, F f, T pad = T{}) {
  std::vector<T> a(size_t(ld) * n, pad);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i)
      a[size_t(i) + size_t(j) * ld] = f(i, j);
  return a;
}

// --- level 1 ---------------------------------------------------------------

void level1(cublasHandle_t h) {
  const int n = 8;
  const std::vector<float> x = {3, -1, 4, -8, 5, 2, -6, 7};
  const std::vector<float> y = {2, 1, -3, 2, -1, 4, 1, -2};

  // axpy: y = 2 x + y
  auto dx = to_device(x), dy = to_device(y);
  float two = 2.0f;
  GLEAM_BLAS_CHECK(cublasSaxpy(h, n, &two, dx, 1, dy, 1));
  auto got = to_host(dy, n);
  for (int i = 0; i < n; ++i)
    GLEAM_PROGRAM_EXPECT(got[size_t(i)] == 2 * x[size_t(i)] + y[size_t(i)], "Saxpy");
  show("saxpy", got);

  // axpy through the 64-bit entry point: y = -1 x + y (back to y)
  float minus_one = -1.0f;
  GLEAM_BLAS_CHECK(cublasSaxpy_v2_64(h, int64_t{n}, &minus_one, dx, 1, dy, 1));
  got = to_host(dy, n);
  for (int i = 0; i < n; ++i)
    GLEAM_PROGRAM_EXPECT(got[size_t(i)] == x[size_t(i)] + y[size_t(i)], "Saxpy_v2_64");
  show("saxpy_64", got);

  // scal: x = -0.5 x, every other element (incx 2)
  auto ds = to_device(x);
  float half = -0.5f;
  GLEAM_BLAS_CHECK(cublasSscal(h, n / 2, &half, ds, 2));
  got = to_host(ds, n);
  for (int i = 0; i < n; ++i)
    GLEAM_PROGRAM_EXPECT(got[size_t(i)] == (i % 2 == 0 ? -0.5f * x[size_t(i)] : x[size_t(i)]),
                         "Sscal");
  show("sscal", got);

  // copy x into z, then swap z and y
  std::vector<float> zeros(n, 0.0f);
  auto dz = to_device(zeros);
  GLEAM_BLAS_CHECK(cublasScopy(h, n, dx, 1, dz, 1));
  got = to_host(dz, n);
  GLEAM_PROGRAM_EXPECT(got == x, "Scopy");
  show("scopy", got);
  auto du = to_device(y);
  GLEAM_BLAS_CHECK(cublasSswap(h, n, dz, 1, du, 1));
  auto gz = to_host(dz, n), gu = to_host(du, n);
  GLEAM_PROGRAM_EXPECT(gz == y && gu == x, "Sswap");
  show("sswap z", gz);
  show("sswap u", gu);

  // dot, in float and double
  float dot = 0;
  GLEAM_BLAS_CHECK(cublasSdot(h, n, dx, 1, dz, 1, &dot));
  float want = 0;
  for (int i = 0; i < n; ++i)
    want += x[size_t(i)] * y[size_t(i)];
  GLEAM_PROGRAM_EXPECT(dot == want, "Sdot");
  show("sdot", dot);
  std::vector<double> xd(x.begin(), x.end()), yd(y.begin(), y.end());
  auto dxd = to_device(xd), dyd = to_device(yd);
  double ddot = 0;
  GLEAM_BLAS_CHECK(cublasDdot(h, n, dxd, 1, dyd, 1, &ddot));
  GLEAM_PROGRAM_EXPECT(ddot == static_cast<double>(want), "Ddot");
  show("ddot", ddot);

  // nrm2 of (1, 2, 2, 4) is 5; asum; the 1-based index of the largest and
  // smallest magnitude
  auto dn = to_device(std::vector<float>{1, 2, 2, 4});
  float nrm = 0;
  GLEAM_BLAS_CHECK(cublasSnrm2(h, 4, dn, 1, &nrm));
  GLEAM_PROGRAM_EXPECT(std::fabs(nrm - 5.0f) < 1e-5f, "Snrm2");
  show("snrm2", nrm);
  float asum = 0;
  GLEAM_BLAS_CHECK(cublasSasum(h, n, dx, 1, &asum));
  GLEAM_PROGRAM_EXPECT(asum == 36.0f, "Sasum");
  show("sasum", asum);
  int imax = 0, imin = 0;
  GLEAM_BLAS_CHECK(cublasIsamax(h, n, dx, 1, &imax));
  GLEAM_BLAS_CHECK(cublasIsamin(h, n, dx, 1, &imin));
  GLEAM_PROGRAM_EXPECT(imax == 4 && imin == 2, "Isamax / Isamin");
  show("isamax", imax);
  show("isamin", imin);

  // rot with c = s = 0.5 (exact): x' = c x + s y, y' = c y - s x
  auto rx = to_device(x), ry = to_device(y);
  float c = 0.5f, s = 0.5f;
  GLEAM_BLAS_CHECK(cublasSrot(h, n, rx, 1, ry, 1, &c, &s));
  auto gx = to_host(rx, n), gy = to_host(ry, n);
  for (int i = 0; i < n; ++i) {
    auto xi = x[size_t(i)], yi = y[size_t(i)];
    GLEAM_PROGRAM_EXPECT(gx[size_t(i)] == c * xi + s * yi && gy[size_t(i)] == c * yi - s * xi,
                         "Srot");
  }
  show("srot x", gx);
  show("srot y", gy);

  // rotg of (3, 4): r = 5, c = 0.6, s = 0.8 (computed on the host by cuBLAS)
  float ra = 3, rb = 4, rc = 0, rs = 0;
  GLEAM_BLAS_CHECK(cublasSrotg(h, &ra, &rb, &rc, &rs));
  GLEAM_PROGRAM_EXPECT(std::fabs(ra - 5) < 1e-6f && std::fabs(rc - 0.6f) < 1e-6f
                         && std::fabs(rs - 0.8f) < 1e-6f,
                       "Srotg");
  show("srotg r z c s", std::vector<float>{ra, rb, rc, rs});

  // complex: dotc = sum conj(x_i) y_i; zaxpy y = (1 - i) x + y
  const std::vector<cuComplex> cx = {{1, 2}, {3, -1}, {0, 4}};
  const std::vector<cuComplex> cy = {{2, 1}, {-1, 3}, {5, -2}};
  auto dcx = to_device(cx), dcy = to_device(cy);
  cuComplex dotc{0, 0};
  GLEAM_BLAS_CHECK(cublasCdotc(h, 3, dcx, 1, dcy, 1, &dotc));
  cuComplex cwant{0, 0};
  for (size_t i = 0; i < cx.size(); ++i)
    cwant = cuCaddf(cwant, cuCmulf(cuConjf(cx[i]), cy[i]));
  GLEAM_PROGRAM_EXPECT(same(dotc, cwant), "Cdotc");
  show("cdotc", dotc);
  const std::vector<cuDoubleComplex> zx = {{1, 2}, {3, -1}, {0, 4}, {-2, -2}};
  const std::vector<cuDoubleComplex> zy = {{2, 1}, {-1, 3}, {5, -2}, {1, 0}};
  auto dzx = to_device(zx), dzy = to_device(zy);
  cuDoubleComplex zalpha{1, -1};
  GLEAM_BLAS_CHECK(cublasZaxpy(h, 4, &zalpha, dzx, 1, dzy, 1));
  auto gzy = to_host(dzy, zy.size());
  for (size_t i = 0; i < zy.size(); ++i)
    GLEAM_PROGRAM_EXPECT(same(gzy[i], cuCadd(cuCmul(zalpha, zx[i]), zy[i])), "Zaxpy");
  show("zaxpy", gzy);

  // dot into device memory (CUBLAS_POINTER_MODE_DEVICE), copied back
  float* dresult = nullptr;
  GLEAM_PROGRAM_CHECK(cudaMalloc(&dresult, sizeof(float)));
  GLEAM_BLAS_CHECK(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_DEVICE));
  GLEAM_BLAS_CHECK(cublasSdot(h, n, dx, 1, dz, 1, dresult));
  GLEAM_BLAS_CHECK(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST));
  auto ddev = to_host(dresult, 1);
  GLEAM_PROGRAM_EXPECT(ddev[0] == want, "Sdot into device memory");
  show("sdot device pointer mode", ddev);
}

// --- level 2 ---------------------------------------------------------------

void level2(cublasHandle_t h) {
  const int m = 4, n = 3, lda = 5;
  auto A = matrix<float>(m, n, lda, [](int i, int j) { return float((i * 3 + j * 5) % 7 - 3); },
                         99.0f);
  auto dA = to_device(A);
  const std::vector<float> xn = {1, -2, 3};
  const std::vector<float> xm = {2, 0, -1, 1};
  const std::vector<float> ym = {1, 1, -1, 2};
  const std::vector<float> yn = {-1, 2, 1};
  float alpha = 2.0f, beta = -1.0f;

  // gemv N: y = 2 A x - y (m); gemv T: y = 2 A^T x - y (n)
  auto dxn = to_device(xn), dxm = to_device(xm), dym = to_device(ym), dyn = to_device(yn);
  GLEAM_BLAS_CHECK(cublasSgemv(h, CUBLAS_OP_N, m, n, &alpha, dA, lda, dxn, 1, &beta, dym, 1));
  GLEAM_BLAS_CHECK(cublasSgemv(h, CUBLAS_OP_T, m, n, &alpha, dA, lda, dxm, 1, &beta, dyn, 1));
  auto gym = to_host(dym, m), gyn = to_host(dyn, n);
  for (int i = 0; i < m; ++i) {
    float s = 0;
    for (int j = 0; j < n; ++j)
      s += A[size_t(i + j * lda)] * xn[size_t(j)];
    GLEAM_PROGRAM_EXPECT(gym[size_t(i)] == alpha * s + beta * ym[size_t(i)], "Sgemv N");
  }
  for (int j = 0; j < n; ++j) {
    float s = 0;
    for (int i = 0; i < m; ++i)
      s += A[size_t(i + j * lda)] * xm[size_t(i)];
    GLEAM_PROGRAM_EXPECT(gyn[size_t(j)] == alpha * s + beta * yn[size_t(j)], "Sgemv T");
  }
  show("sgemv n", gym);
  show("sgemv t", gyn);

  // gemv in double: y = A x
  std::vector<double> Ad(A.begin(), A.end()), xd(xn.begin(), xn.end()), yd(m, 0.0);
  auto dAd = to_device(Ad), dxd = to_device(xd), dyd = to_device(yd);
  double one_d = 1.0, zero_d = 0.0;
  GLEAM_BLAS_CHECK(cublasDgemv(h, CUBLAS_OP_N, m, n, &one_d, dAd, lda, dxd, 1, &zero_d, dyd, 1));
  auto gyd = to_host(dyd, m);
  for (int i = 0; i < m; ++i) {
    double s = 0;
    for (int j = 0; j < n; ++j)
      s += Ad[size_t(i + j * lda)] * xd[size_t(j)];
    GLEAM_PROGRAM_EXPECT(gyd[size_t(i)] == s, "Dgemv");
  }
  show("dgemv", gyd);

  // ger: A += x y^T (padding rows untouched)
  auto dG = to_device(A);
  float one = 1.0f, zero = 0.0f;
  GLEAM_BLAS_CHECK(cublasSger(h, m, n, &one, dxm, 1, dxn, 1, dG, lda));
  auto G = to_host(dG, A.size());
  auto want = A;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i)
      want[size_t(i + j * lda)] += xm[size_t(i)] * xn[size_t(j)];
  GLEAM_PROGRAM_EXPECT(G == want, "Sger");
  show("sger", G);

  // symv, lower triangle stored; the upper one holds 99s that must be ignored
  const int s = 4;
  auto sym = [](int i, int j) { return float((i + j) % 5 - 2 + (i == j ? 3 : 0)); };
  auto S = matrix<float>(s, s, s, [&](int i, int j) { return i >= j ? sym(i, j) : 99.0f; });
  auto dS = to_device(S), dxs = to_device(xm), dys = to_device(ym);
  GLEAM_BLAS_CHECK(
    cublasSsymv(h, CUBLAS_FILL_MODE_LOWER, s, &alpha, dS, s, dxs, 1, &beta, dys, 1));
  auto gys = to_host(dys, s);
  std::vector<float> sv(s);
  for (int i = 0; i < s; ++i) {
    float acc = 0;
    for (int j = 0; j < s; ++j)
      acc += sym(std::max(i, j), std::min(i, j)) * xm[size_t(j)];
    sv[size_t(i)] = alpha * acc + beta * ym[size_t(i)];
  }
  GLEAM_PROGRAM_EXPECT(gys == sv, "Ssymv");
  show("ssymv", gys);

  // trmv: x = U x, upper, non-unit; the lower triangle holds 99s
  auto tri = [](int i, int j) { return i == j ? float(1 << (i % 3)) : float((i * 2 + j) % 5 - 2); };
  auto U = matrix<float>(s, s, s, [&](int i, int j) { return i <= j ? tri(i, j) : 99.0f; });
  auto dU = to_device(U), dtx = to_device(xm);
  GLEAM_BLAS_CHECK(cublasStrmv(h, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, s, dU,
                               s, dtx, 1));
  auto gtx = to_host(dtx, s);
  std::vector<float> tv(s, 0.0f);
  for (int i = 0; i < s; ++i)
    for (int j = i; j < s; ++j)
      tv[size_t(i)] += tri(i, j) * xm[size_t(j)];
  GLEAM_PROGRAM_EXPECT(gtx == tv, "Strmv");
  show("strmv", gtx);

  // trsv: solve L x = b, lower, non-unit, diagonal 1, 2 or 4, b = L x_true
  auto L = matrix<float>(s, s, s, [&](int i, int j) { return i >= j ? tri(i, j) : 99.0f; });
  const std::vector<float> x_true = {3, -1, 2, 5};
  std::vector<float> b(s, 0.0f);
  for (int i = 0; i < s; ++i)
    for (int j = 0; j <= i; ++j)
      b[size_t(i)] += tri(i, j) * x_true[size_t(j)];
  auto dL = to_device(L), db = to_device(b);
  GLEAM_BLAS_CHECK(cublasStrsv(h, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, s, dL,
                               s, db, 1));
  auto gb = to_host(db, s);
  GLEAM_PROGRAM_EXPECT(gb == x_true, "Strsv");
  show("strsv", gb);

  // gbmv: 5 x 4 band matrix, kl = 1, ku = 2, stored with lda 5 (> kl + ku + 1)
  const int bm = 5, bn = 4, kl = 1, ku = 2, ldab = 5;
  auto band = [](int i, int j) { return float((i * 4 + j * 3) % 7 - 3); };
  std::vector<float> AB(size_t(ldab) * bn, 0.0f);
  for (int j = 0; j < bn; ++j)
    for (int i = std::max(0, j - ku); i <= std::min(bm - 1, j + kl); ++i)
      AB[size_t(ku + i - j + j * ldab)] = band(i, j);
  const std::vector<float> bx = {1, 2, -1, 3};
  auto dAB = to_device(AB), dbx = to_device(bx), dby = to_device(std::vector<float>(bm, 0.0f));
  GLEAM_BLAS_CHECK(
    cublasSgbmv(h, CUBLAS_OP_N, bm, bn, kl, ku, &one, dAB, ldab, dbx, 1, &zero, dby, 1));
  auto gby = to_host(dby, bm);
  std::vector<float> bw(bm, 0.0f);
  for (int i = 0; i < bm; ++i)
    for (int j = std::max(0, i - kl); j <= std::min(bn - 1, i + ku); ++j)
      bw[size_t(i)] += band(i, j) * bx[size_t(j)];
  GLEAM_PROGRAM_EXPECT(gby == bw, "Sgbmv");
  show("sgbmv", gby);

  // spmv: the symmetric matrix of symv, lower triangle packed by columns
  std::vector<float> AP;
  for (int j = 0; j < s; ++j)
    for (int i = j; i < s; ++i)
      AP.push_back(sym(i, j));
  auto dAP = to_device(AP), dpy = to_device(ym);
  GLEAM_BLAS_CHECK(
    cublasSspmv(h, CUBLAS_FILL_MODE_LOWER, s, &alpha, dAP, dxs, 1, &beta, dpy, 1));
  auto gpy = to_host(dpy, s);
  GLEAM_PROGRAM_EXPECT(gpy == sv, "Sspmv");
  show("sspmv", gpy);

  // Refused at the call: lda below m, and a negative n. The vendor also
  // prints a diagnostic, silenced (see quietly).
  auto bad_lda = quietly([&] {
    return cublasSgemv(h, CUBLAS_OP_N, m, n, &one, dA, m - 1, dxn, 1, &zero, dym, 1);
  });
  auto bad_n = quietly([&] {
    return cublasSgemv(h, CUBLAS_OP_N, m, -1, &one, dA, lda, dxn, 1, &zero, dym, 1);
  });
  std::printf("sgemv lda < m: %s\n", cublasGetStatusName(bad_lda));
  std::printf("sgemv n < 0: %s\n", cublasGetStatusName(bad_n));
  // Nothing was written by the refused calls.
  auto after = to_host(dym, m);
  GLEAM_PROGRAM_EXPECT(after == gym, "refused Sgemv left y alone");
}

// --- level 3 ---------------------------------------------------------------

void level3(cublasHandle_t h) {
  float one = 1.0f, two = 2.0f, minus_one = -1.0f;
  auto f = [](int i, int j) { return float((i * 5 + j * 3) % 7 - 3); };

  // syrk: C = A A^T + 2 C, lower; the upper triangle of C (77) stays
  const int n = 4, k = 3;
  auto A = matrix<float>(n, k, n, f);
  auto C = matrix<float>(n, n, n, [](int i, int j) { return i >= j ? float(i - j) : 77.0f; });
  auto dA = to_device(A), dC = to_device(C);
  GLEAM_BLAS_CHECK(
    cublasSsyrk(h, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, n, k, &one, dA, n, &two, dC, n));
  auto gC = to_host(dC, C.size());
  auto want = C;
  for (int j = 0; j < n; ++j)
    for (int i = j; i < n; ++i) {
      float acc = 0;
      for (int p = 0; p < k; ++p)
        acc += f(i, p) * f(j, p);
      want[size_t(i + j * n)] = acc + 2 * C[size_t(i + j * n)];
    }
  GLEAM_PROGRAM_EXPECT(gC == want, "Ssyrk");
  show("ssyrk", gC);

  // symm: C = S B - C, S symmetric 3 x 3 stored lower (upper 99s ignored)
  const int m = 3, nb = 2;
  auto sym = [](int i, int j) { return float((i + 2 * j) % 4 - 1); };  // for i >= j
  auto S = matrix<float>(m, m, m, [&](int i, int j) { return i >= j ? sym(i, j) : 99.0f; });
  auto B = matrix<float>(m, nb, m, f);
  auto C2 = matrix<float>(m, nb, m, [](int i, int j) { return float(i + j); });
  auto dS = to_device(S), dB = to_device(B), dC2 = to_device(C2);
  GLEAM_BLAS_CHECK(cublasSsymm(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, m, nb, &one, dS, m,
                               dB, m, &minus_one, dC2, m));
  auto gC2 = to_host(dC2, C2.size());
  auto want2 = C2;
  for (int j = 0; j < nb; ++j)
    for (int i = 0; i < m; ++i) {
      float acc = 0;
      for (int p = 0; p < m; ++p)
        acc += sym(std::max(i, p), std::min(i, p)) * f(p, j);
      want2[size_t(i + j * m)] = acc - C2[size_t(i + j * m)];
    }
  GLEAM_PROGRAM_EXPECT(gC2 == want2, "Ssymm");
  show("ssymm", gC2);

  // trsm: solve L X = B in place, lower, non-unit, diagonal 1, 2 or 4
  const int tm = 4, tn = 2;
  auto tri = [](int i, int j) { return i == j ? float(1 << (i % 3)) : float((i + 3 * j) % 5 - 2); };
  auto L = matrix<float>(tm, tm, tm, [&](int i, int j) { return i >= j ? tri(i, j) : 99.0f; });
  auto X = matrix<float>(tm, tn, tm, f);
  std::vector<float> TB(size_t(tm) * tn, 0.0f);
  for (int j = 0; j < tn; ++j)
    for (int i = 0; i < tm; ++i)
      for (int p = 0; p <= i; ++p)
        TB[size_t(i + j * tm)] += tri(i, p) * X[size_t(p + j * tm)];
  auto dL = to_device(L), dTB = to_device(TB);
  GLEAM_BLAS_CHECK(cublasStrsm(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N,
                               CUBLAS_DIAG_NON_UNIT, tm, tn, &one, dL, tm, dTB, tm));
  auto gX = to_host(dTB, TB.size());
  GLEAM_PROGRAM_EXPECT(gX == X, "Strsm");
  show("strsm", gX);

  // trmm (out of place): C = 2 U B, upper, non-unit
  auto U = matrix<float>(tm, tm, tm, [&](int i, int j) { return i <= j ? tri(i, j) : 99.0f; });
  auto dU = to_device(U), dX = to_device(X);
  float* dTC = nullptr;
  GLEAM_PROGRAM_CHECK(cudaMalloc(&dTC, X.size() * sizeof(float)));
  GLEAM_BLAS_CHECK(cublasStrmm(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N,
                               CUBLAS_DIAG_NON_UNIT, tm, tn, &two, dU, tm, dX, tm, dTC, tm));
  auto gTC = to_host(dTC, X.size());
  std::vector<float> want3(X.size(), 0.0f);
  for (int j = 0; j < tn; ++j)
    for (int i = 0; i < tm; ++i) {
      float acc = 0;
      for (int p = i; p < tm; ++p)
        acc += tri(i, p) * X[size_t(p + j * tm)];
      want3[size_t(i + j * tm)] = 2 * acc;
    }
  GLEAM_PROGRAM_EXPECT(gTC == want3, "Strmm");
  show("strmm", gTC);

  // geam: C = 2 A^T - B, A 2 x 3 (ld 2), B and C 3 x 2 (ld 4)
  const int gm = 3, gn = 2, ldc = 4;
  auto GA = matrix<float>(gn, gm, gn, f);
  auto GB = matrix<float>(gm, gn, ldc, [](int i, int j) { return float(i * j - 1); });
  auto dGA = to_device(GA), dGB = to_device(GB);
  auto dGC = to_device(std::vector<float>(size_t(ldc) * gn, 0.0f));
  GLEAM_BLAS_CHECK(cublasSgeam(h, CUBLAS_OP_T, CUBLAS_OP_N, gm, gn, &two, dGA, gn, &minus_one,
                               dGB, ldc, dGC, ldc));
  auto gGC = to_host(dGC, size_t(ldc) * gn);
  std::vector<float> want4(size_t(ldc) * gn, 0.0f);
  for (int j = 0; j < gn; ++j)
    for (int i = 0; i < gm; ++i)
      want4[size_t(i + j * ldc)] = 2 * f(j, i) - GB[size_t(i + j * ldc)];
  GLEAM_PROGRAM_EXPECT(gGC == want4, "Sgeam");
  show("sgeam", gGC);

  // dgmm: C = A diag(x), 3 x 2
  const std::vector<float> dx = {3, -2};
  auto DA = matrix<float>(gm, gn, gm, f);
  auto dDA = to_device(DA), ddx = to_device(dx);
  auto dDC = to_device(std::vector<float>(DA.size(), 0.0f));
  GLEAM_BLAS_CHECK(cublasSdgmm(h, CUBLAS_SIDE_RIGHT, gm, gn, dDA, gm, ddx, 1, dDC, gm));
  auto gDC = to_host(dDC, DA.size());
  std::vector<float> want5(DA.size());
  for (int j = 0; j < gn; ++j)
    for (int i = 0; i < gm; ++i)
      want5[size_t(i + j * gm)] = f(i, j) * dx[size_t(j)];
  GLEAM_PROGRAM_EXPECT(gDC == want5, "Sdgmm");
  show("sdgmm", gDC);

  // complex gemm: C = (1 + i) A B, A 2 x 3, B 3 x 2
  const int cm = 2, cn = 2, ck = 3;
  auto cf = [](int i, int j) { return make_cuComplex(float((i + 2 * j) % 3 - 1), float(i - j)); };
  auto CA = matrix<cuComplex>(cm, ck, cm, cf);
  auto CB = matrix<cuComplex>(ck, cn, ck, cf);
  auto dCA = to_device(CA), dCB = to_device(CB);
  auto dCC = to_device(std::vector<cuComplex>(size_t(cm) * cn, make_cuComplex(0, 0)));
  cuComplex calpha{1, 1}, cbeta{0, 0};
  GLEAM_BLAS_CHECK(cublasCgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, cm, cn, ck, &calpha, dCA, cm, dCB, ck,
                               &cbeta, dCC, cm));
  auto gCC = to_host(dCC, size_t(cm) * cn);
  for (int j = 0; j < cn; ++j)
    for (int i = 0; i < cm; ++i) {
      cuComplex acc{0, 0};
      for (int p = 0; p < ck; ++p)
        acc = cuCaddf(acc, cuCmulf(cf(i, p), cf(p, j)));
      GLEAM_PROGRAM_EXPECT(same(gCC[size_t(i + j * cm)], cuCmulf(calpha, acc)), "Cgemm");
    }
  show("cgemm", gCC);
}

// --- transfers -------------------------------------------------------------

void transfers() {
  // SetVector from every other host element into every third device one,
  // GetVector back into every other element of a buffer of -1s.
  const int n = 5;
  std::vector<float> src(size_t(2 * n), 0.0f);
  for (int i = 0; i < n; ++i)
    src[size_t(2 * i)] = float(10 + i);
  float* dv = nullptr;
  GLEAM_PROGRAM_CHECK(cudaMalloc(&dv, size_t(3 * n) * sizeof(float)));
  GLEAM_PROGRAM_CHECK(cudaMemset(dv, 0, size_t(3 * n) * sizeof(float)));
  GLEAM_BLAS_CHECK(cublasSetVector(n, sizeof(float), src.data(), 2, dv, 3));
  auto whole = to_host(dv, size_t(3 * n));
  for (int i = 0; i < 3 * n; ++i)
    GLEAM_PROGRAM_EXPECT(whole[size_t(i)] == (i % 3 == 0 ? float(10 + i / 3) : 0.0f),
                         "cublasSetVector incx 2 incy 3");
  show("setvector device", whole);
  std::vector<float> back(size_t(2 * n), -1.0f);
  GLEAM_BLAS_CHECK(cublasGetVector(n, sizeof(float), dv, 3, back.data(), 2));
  for (int i = 0; i < 2 * n; ++i)
    GLEAM_PROGRAM_EXPECT(back[size_t(i)] == (i % 2 == 0 ? float(10 + i / 2) : -1.0f),
                         "cublasGetVector incx 3 incy 2");
  show("getvector host", back);

  // SetMatrix 3 x 4 from host lda 5 into device ldb 4; GetMatrix into host
  // ld 6 filled with -1s.
  const int rows = 3, cols = 4, lda = 5, ldb = 4, ldc = 6;
  auto A = matrix<float>(rows, cols, lda, [](int i, int j) { return float(i * 10 + j); }, -7.0f);
  float* dm = nullptr;
  GLEAM_PROGRAM_CHECK(cudaMalloc(&dm, size_t(ldb) * cols * sizeof(float)));
  GLEAM_PROGRAM_CHECK(cudaMemset(dm, 0, size_t(ldb) * cols * sizeof(float)));
  GLEAM_BLAS_CHECK(cublasSetMatrix(rows, cols, sizeof(float), A.data(), lda, dm, ldb));
  auto dev = to_host(dm, size_t(ldb) * cols);
  for (int j = 0; j < cols; ++j)
    for (int i = 0; i < ldb; ++i)
      GLEAM_PROGRAM_EXPECT(dev[size_t(i + j * ldb)] == (i < rows ? float(i * 10 + j) : 0.0f),
                           "cublasSetMatrix lda 5 ldb 4");
  show("setmatrix device", dev);
  std::vector<float> out(size_t(ldc) * cols, -1.0f);
  GLEAM_BLAS_CHECK(cublasGetMatrix(rows, cols, sizeof(float), dm, ldb, out.data(), ldc));
  for (int j = 0; j < cols; ++j)
    for (int i = 0; i < ldc; ++i)
      GLEAM_PROGRAM_EXPECT(out[size_t(i + j * ldc)] == (i < rows ? float(i * 10 + j) : -1.0f),
                           "cublasGetMatrix ldb 4 ldc 6");
  show("getmatrix host", out);
}

} // namespace

int main() {
  cublasHandle_t handle = nullptr;
  GLEAM_BLAS_CHECK(cublasCreate(&handle));
  level1(handle);
  level2(handle);
  level3(handle);
  transfers();
  GLEAM_BLAS_CHECK(cublasDestroy(handle));
  sum.print("cublas_levels");
  return 0;
}
