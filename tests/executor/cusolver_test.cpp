// cuSOLVER's LibraryCall ops in the executor. On the CPU: the generic runner
// over a fake driver (host memory as device memory, fake_device.hpp) and a
// fake cuSOLVER (tests/support/fake_cusolver.hpp) that computes real LU,
// Cholesky and symmetric eigen results, so the values that come back are
// checked; the spec's extents refuse what lies outside the session's
// memory before the library runs. On a GPU ([gpu]): the same calls against
// the vendor's library. The loader against the installed library.
#include "executor/cusolver_api.hpp"
#include "executor/executor.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "executor/cusolver_function_ids.hpp"
#include "tests/executor/fake_device.hpp"
#include "tests/executor/real_gpu.hpp"
#include "tests/support/fake_cusolver.hpp"
#include "tests/support/gpu_probe.hpp"
#include "wire/library_args.hpp"

namespace proto = gleam::proto;
namespace ids = gleam::generated::cusolver_ids;
using gleam::executor::cusolver_api;
using gleam::test::fake_cusolver;
using gleam::wire::arg_packer;

namespace {

constexpr uint64_t handle_id = 11;
constexpr uint64_t params_id = 12;

/// A 3 x 3 system A x = b with x = (1, 2, 3), column-major; A needs a row
/// exchange at the first step (its largest first-column entry is row 2).
const std::vector<double> system_a{1, 4, 2, 2, 1, 7, 3, 2, 1};
const std::vector<double> system_x{1, 2, 3};

/// b = A x of the system above.
std::vector<double> system_b() {
  std::vector<double> b(3, 0.0);
  for (size_t j = 0; j < 3; ++j)
    for (size_t i = 0; i < 3; ++i)
      b[i] += system_a[i + 3 * j] * system_x[j];
  return b;
}

/// The symmetric tridiagonal (-1, 2, -1) matrix of order 3, whose
/// eigenvalues are 2 - sqrt(2), 2 and 2 + sqrt(2).
const std::vector<double> laplacian{2, -1, 0, -1, 2, -1, 0, -1, 2};
const std::vector<double> laplacian_eigenvalues{2 - std::sqrt(2.0), 2.0, 2 + std::sqrt(2.0)};

/// cuSOLVER's LibraryCall ops on a client of an executor (Base: the fake
/// executor or a real one, with run() and alloc()).
template <class Base>
struct cusolver_calls : Base {
  /// A LibraryCall of cuSOLVER function `id` whose arguments are `args`,
  /// packed by value in order (device addresses and handle ids as
  /// uint64_t), as the generated client stubs pack them.
  template <class... Args>
  proto::OpResult call(uint32_t id, const Args&... args) {
    arg_packer p;
    (p.value(args), ...);
    return this->run([&](proto::Op& op) {
      auto* c = op.mutable_library_call();
      c->set_library(proto::LibraryCall::CUSOLVER);
      c->set_function(id);
      c->set_args(p.take());
    });
  }

  /// A call that must succeed (the server's error as the message).
  template <class... Args>
  proto::OpResult ok(uint32_t id, const Args&... args) {
    auto r = call(id, args...);
    INFO(r.error());
    REQUIRE(r.blas_status() == CUSOLVER_STATUS_SUCCESS);
    return r;
  }

  /// Host output `i` of `r` as a T.
  template <class T>
  static T output(const proto::OpResult& r, int i) {
    REQUIRE(r.library_outputs().data_size() > i);
    const auto& bytes = r.library_outputs().data(i);
    REQUIRE(bytes.size() == sizeof(T));
    T v{};
    std::memcpy(&v, bytes.data(), sizeof(v));
    return v;
  }

  /// cusolverDnCreate of handle `id` and cusolverDnCreateParams of params
  /// `params`.
  void open(uint64_t id = handle_id, uint64_t params = params_id) {
    ok(ids::cusolverDnCreate, id);
    ok(ids::cusolverDnCreateParams, params);
  }

  /// The typed getrf's workspace (elements) for an n x n double matrix at a.
  int getrf_lwork(int n, uint64_t a) {
    auto r = ok(ids::cusolverDnDgetrf_bufferSize, handle_id, n, n, a, n);
    return output<int>(r, 0);
  }

  proto::OpResult dgetrf(int n, uint64_t a, uint64_t work, uint64_t ipiv, uint64_t info) {
    return call(ids::cusolverDnDgetrf, handle_id, n, n, a, n, work, ipiv, info);
  }

  proto::OpResult dgetrs(int n, uint64_t a, uint64_t ipiv, uint64_t b, uint64_t info) {
    return call(ids::cusolverDnDgetrs, handle_id, CUBLAS_OP_N, n, 1, a, n, ipiv, b, n, info);
  }

  /// cusolverDnXsyevd_bufferSize of an n x n double matrix: (device bytes,
  /// host bytes).
  std::pair<uint64_t, uint64_t> xsyevd_sizes(int64_t n, uint64_t a, uint64_t w,
                                             uint64_t params = params_id) {
    auto r = ok(ids::cusolverDnXsyevd_bufferSize, handle_id, params,
                CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_LOWER, n, CUDA_R_64F, a, n,
                CUDA_R_64F, w, CUDA_R_64F);
    return {output<uint64_t>(r, 0), output<uint64_t>(r, 1)};
  }

  proto::OpResult xsyevd(int64_t n, uint64_t a, uint64_t w, uint64_t dev, uint64_t dev_bytes,
                         uint64_t host_bytes, uint64_t info, uint64_t params = params_id) {
    return call(ids::cusolverDnXsyevd, handle_id, params, CUSOLVER_EIG_MODE_VECTOR,
                CUBLAS_FILL_MODE_LOWER, n, CUDA_R_64F, a, n, CUDA_R_64F, w, CUDA_R_64F, dev,
                dev_bytes, host_bytes, info);
  }

  proto::OpResult dpotrf(int n, uint64_t a, uint64_t work, int lwork, uint64_t info) {
    return call(ids::cusolverDnDpotrf, handle_id, CUBLAS_FILL_MODE_LOWER, n, a, n, work, lwork,
                info);
  }
};

/// The fake device with the fake cuSOLVER attached.
struct fake_gpu : cusolver_calls<gleam::test::fake_executor> {
  cusolver_api cusolver;

  fake_gpu() {
    fake_cusolver() = gleam::test::fake_cusolver_log{};
    gleam::test::install_fake_cusolver(cusolver);
    exec->use_library(cusolver);
  }

  /// Device memory holding `values` (the fake's device memory is host
  /// memory).
  uint64_t upload(const std::vector<double>& values) {
    auto p = alloc(values.size() * sizeof(double));
    std::memcpy(at<double>(p), values.data(), values.size() * sizeof(double));
    return p;
  }

  template <class T>
  static T* at(uint64_t p) {
    return reinterpret_cast<T*>(static_cast<uintptr_t>(p));
  }

  template <class T>
  std::vector<T> download(uint64_t p, size_t count) {
    return std::vector<T>(at<T>(p), at<T>(p) + count);
  }
};

using real_gpu = cusolver_calls<gleam::test::real_client>;

/// Checks `got` against `want` element by element within `margin`.
void check_near(const std::vector<double>& got, const std::vector<double>& want,
                double margin = 1e-9) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i);
    CHECK(got[i] == Approx(want[i]).margin(margin));
  }
}

} // namespace

TEST_CASE("cuSOLVER getrf and getrs by LibraryCalls solve A x = b in the session's memory",
          "[executor][cusolver]") {
  fake_gpu g;
  g.open();
  auto a = g.upload(system_a);
  auto b = g.upload(system_b());
  auto ipiv = g.alloc(3 * sizeof(int));
  auto info = g.alloc(sizeof(int));
  *fake_gpu::at<int>(info) = -7;
  auto lwork = g.getrf_lwork(3, a);
  CHECK(lwork == gleam::test::fake_cusolver_lwork(3));
  auto work = g.alloc(static_cast<uint64_t>(lwork) * sizeof(double));
  auto factored = g.dgetrf(3, a, work, ipiv, info);
  INFO(factored.error());
  REQUIRE(factored.blas_status() == CUSOLVER_STATUS_SUCCESS);
  CHECK(*fake_gpu::at<int>(info) == 0);
  // Row 2 holds the largest entry of the first column (1-based pivots).
  CHECK(fake_gpu::at<int>(ipiv)[0] == 2);
  REQUIRE(g.dgetrs(3, a, ipiv, b, info).blas_status() == CUSOLVER_STATUS_SUCCESS);
  check_near(g.download<double>(b, 3), system_x);
  // Each computation ran on the session's stream, set on the handle first.
  REQUIRE(fake_cusolver().computed_on.size() == 2);
  CHECK(fake_cusolver().computed_on[0] == gleam::test::fake_device().streams[0]);
  CHECK(fake_cusolver().computed_on[1] == fake_cusolver().computed_on[0]);
}

TEST_CASE("cuSOLVER's 64-bit syevd gives a symmetric matrix's eigenvalues and vectors",
          "[executor][cusolver]") {
  fake_gpu g;
  g.open();
  auto a = g.upload(laplacian);
  auto w = g.alloc(3 * sizeof(double));
  auto info = g.alloc(sizeof(int));
  auto [dev_bytes, host_bytes] = g.xsyevd_sizes(3, a, w);
  CHECK(dev_bytes == gleam::test::fake_cusolver_device_bytes(3));
  CHECK(host_bytes == gleam::test::fake_cusolver_host_bytes(3));
  auto dev = g.alloc(dev_bytes);
  auto r = g.xsyevd(3, a, w, dev, dev_bytes, host_bytes, info);
  INFO(r.error());
  REQUIRE(r.blas_status() == CUSOLVER_STATUS_SUCCESS);
  check_near(g.download<double>(w, 3), laplacian_eigenvalues);
  // The host workspace is the server's own memory of the size asked for.
  CHECK(fake_cusolver().host_workspace == host_bytes);
  // A v = lambda v for the first eigenvector (in A's first column).
  auto v = g.download<double>(a, 3);
  for (size_t i = 0; i < 3; ++i) {
    double av = 0;
    for (size_t j = 0; j < 3; ++j)
      av += laplacian[i + 3 * j] * v[j];
    CHECK(av == Approx(laplacian_eigenvalues[0] * v[i]).margin(1e-9));
  }
}

TEST_CASE("cuSOLVER's 64-bit API takes NULL options (id 0) as the library's defaults and "
          "refuses options the app does not hold",
          "[executor][cusolver]") {
  fake_gpu g;
  g.open();
  auto a = g.upload(laplacian);
  auto w = g.alloc(3 * sizeof(double));
  auto info = g.alloc(sizeof(int));
  // As PyTorch's eigh: no cusolverDnParams_t at all.
  fake_cusolver().last_params = reinterpret_cast<cusolverDnParams_t>(uintptr_t{1});
  auto [dev_bytes, host_bytes] = g.xsyevd_sizes(3, a, w, 0);
  CHECK(fake_cusolver().last_params == nullptr);
  CHECK(dev_bytes == gleam::test::fake_cusolver_device_bytes(3));
  auto dev = g.alloc(dev_bytes);
  fake_cusolver().last_params = reinterpret_cast<cusolverDnParams_t>(uintptr_t{1});
  auto r = g.xsyevd(3, a, w, dev, dev_bytes, host_bytes, info, 0);
  INFO(r.error());
  REQUIRE(r.blas_status() == CUSOLVER_STATUS_SUCCESS);
  CHECK(fake_cusolver().last_params == nullptr);
  check_near(g.download<double>(w, 3), laplacian_eigenvalues);
  // Options of an id never created reach no library.
  auto computations = fake_cusolver().computations;
  auto bad = g.xsyevd(3, a, w, dev, dev_bytes, host_bytes, info, params_id + 77);
  CHECK(bad.blas_status() == CUSOLVER_STATUS_NOT_INITIALIZED);
  CHECK(fake_cusolver().computations == computations);
}

TEST_CASE("cuSOLVER's potrf factors a positive definite matrix and reports one that is not",
          "[executor][cusolver]") {
  fake_gpu g;
  g.open();
  auto a = g.upload({4, 2, 2, 3});
  auto info = g.alloc(sizeof(int));
  auto work = g.alloc(gleam::test::fake_cusolver_lwork(2) * sizeof(double));
  REQUIRE(g.dpotrf(2, a, work, gleam::test::fake_cusolver_lwork(2), info).blas_status()
          == CUSOLVER_STATUS_SUCCESS);
  CHECK(*fake_gpu::at<int>(info) == 0);
  // L = [[2, 0], [1, sqrt(2)]]; the upper triangle is left as it was.
  check_near(g.download<double>(a, 4), {2, 1, 2, std::sqrt(2.0)});
  auto indefinite = g.upload({1, 2, 2, 1});
  REQUIRE(g.dpotrf(2, indefinite, work, gleam::test::fake_cusolver_lwork(2), info).blas_status()
          == CUSOLVER_STATUS_SUCCESS);
  CHECK(*fake_gpu::at<int>(info) == 2);
}

TEST_CASE("cuSOLVER's potrfBatched factors the matrices an array of device pointers names",
          "[executor][cusolver]") {
  fake_gpu g;
  g.open();
  auto first = g.upload({4, 2, 2, 3});
  auto second = g.upload({9, 3, 3, 5});
  auto info = g.alloc(2 * sizeof(int));
  auto batch = [&](std::vector<uint64_t> matrices) {
    auto array = g.alloc(matrices.size() * sizeof(uint64_t));
    std::memcpy(fake_gpu::at<uint64_t>(array), matrices.data(), matrices.size() * 8);
    return g.call(ids::cusolverDnDpotrfBatched, handle_id, CUBLAS_FILL_MODE_LOWER, 2, array, 2,
                  info, static_cast<int>(matrices.size()));
  };
  SECTION("every matrix factored, an info each") {
    auto r = batch({first, second});
    INFO(r.error());
    REQUIRE(r.blas_status() == CUSOLVER_STATUS_SUCCESS);
    check_near(g.download<double>(first, 4), {2, 1, 2, std::sqrt(2.0)});
    check_near(g.download<double>(second, 4), {3, 1, 3, 2});
    CHECK(g.download<int>(info, 2) == std::vector<int>{0, 0});
  }
  SECTION("a pointer to a matrix smaller than n x n: refused, nothing factored") {
    auto small = g.upload({1, 2, 3});
    auto r = batch({first, small});
    CHECK(r.blas_status() == CUSOLVER_STATUS_INVALID_VALUE);
    CHECK_THAT(r.error(), Catch::Contains("Aarray[1]"));
    CHECK(g.download<double>(first, 4) == std::vector<double>{4, 2, 2, 3});
    CHECK(fake_cusolver().computations == 0);
  }
  SECTION("an array shorter than the batch") {
    auto array = g.alloc(sizeof(uint64_t));
    *fake_gpu::at<uint64_t>(array) = first;
    auto r = g.call(ids::cusolverDnDpotrfBatched, handle_id, CUBLAS_FILL_MODE_LOWER, 2, array, 2,
                    info, 2);
    CHECK(r.blas_status() == CUSOLVER_STATUS_INVALID_VALUE);
    CHECK_THAT(r.error(), Catch::Contains("Aarray:"));
    CHECK(fake_cusolver().computations == 0);
  }
}

TEST_CASE("cuSOLVER calls outside the session's memory or handles reach no library",
          "[executor][cusolver]") {
  fake_gpu g;
  g.open();
  auto info = g.alloc(sizeof(int));
  *fake_gpu::at<int>(info) = -7;
  auto ipiv = g.alloc(3 * sizeof(int));
  auto work = g.alloc(gleam::test::fake_cusolver_lwork(3) * sizeof(double));
  SECTION("a matrix smaller than n x n with its leading dimension") {
    auto a = g.upload(std::vector<double>(system_a.begin(), system_a.end() - 1));
    auto r = g.dgetrf(3, a, work, ipiv, info);
    CHECK(r.blas_status() == CUSOLVER_STATUS_INVALID_VALUE);
    CHECK_THAT(r.error(), Catch::Contains("A:"));
    CHECK(g.download<double>(a, 8) == std::vector<double>(system_a.begin(), system_a.end() - 1));
  }
  SECTION("a workspace smaller than the library's getrf_bufferSize") {
    auto a = g.upload(system_a);
    auto small = g.alloc((gleam::test::fake_cusolver_lwork(3) - 1) * sizeof(double));
    auto r = g.dgetrf(3, a, small, ipiv, info);
    CHECK(r.blas_status() == CUSOLVER_STATUS_INVALID_VALUE);
    CHECK_THAT(r.error(), Catch::Contains("Workspace"));
    CHECK(g.download<double>(a, 9) == system_a);
  }
  SECTION("pivots one short of min(m, n)") {
    auto a = g.upload(system_a);
    auto short_ipiv = g.alloc(2 * sizeof(int));
    CHECK(g.dgetrf(3, a, work, short_ipiv, info).blas_status() == CUSOLVER_STATUS_INVALID_VALUE);
  }
  SECTION("no pivots at all (NULL: an LU without pivoting) span nothing") {
    auto a = g.upload(system_a);
    CHECK(g.dgetrf(3, a, work, 0, info).blas_status() == CUSOLVER_STATUS_SUCCESS);
    CHECK(fake_cusolver().computations == 1);
  }
  SECTION("a device workspace smaller than the 64-bit call says") {
    auto a = g.upload(laplacian);
    auto w = g.alloc(3 * sizeof(double));
    auto dev = g.alloc(16);
    CHECK(g.xsyevd(3, a, w, dev, 17, 8, info).blas_status() == CUSOLVER_STATUS_INVALID_VALUE);
    CHECK(g.download<double>(a, 9) == laplacian);
  }
  SECTION("a host workspace larger than a call may use") {
    auto a = g.upload(laplacian);
    auto w = g.alloc(3 * sizeof(double));
    auto dev = g.alloc(64);
    auto r = g.xsyevd(3, a, w, dev, 64, uint64_t{1} << 40, info);
    CHECK(r.blas_status() != CUSOLVER_STATUS_SUCCESS);
    CHECK_THAT(r.error(), Catch::Contains("bufferOnHost"));
  }
  SECTION("a handle the session does not hold") {
    auto a = g.upload(system_a);
    auto r = g.call(ids::cusolverDnDgetrf, handle_id + 5, 3, 3, a, 3, work, ipiv, info);
    CHECK(r.blas_status() == CUSOLVER_STATUS_NOT_INITIALIZED);
  }
  CHECK(*fake_gpu::at<int>(info) == (fake_cusolver().computations == 0 ? -7 : 0));
  if (fake_cusolver().computations == 0)
    CHECK(fake_cusolver().computed_on.empty());
}

TEST_CASE("cuSOLVER's laswp swaps the rows its device pivots name; pivots or rows beyond the "
          "session's memory reach no library",
          "[executor][cusolver]") {
  fake_gpu g;
  g.open();
  // Rows (1, 4), (2, 5), (3, 6): row 1 with row 3, then row 2 with row 3.
  auto a = g.upload({1, 2, 3, 4, 5, 6});
  auto ipiv = g.alloc(2 * sizeof(int));
  fake_gpu::at<int>(ipiv)[0] = 3;
  fake_gpu::at<int>(ipiv)[1] = 3;
  auto laswp = [&](uint64_t matrix, int lda, int k1, int k2, uint64_t pivots, int incx) {
    return g.call(ids::cusolverDnDlaswp, handle_id, 2, matrix, lda, k1, k2, pivots, incx);
  };
  SECTION("rows exchanged as LAPACK's laswp") {
    auto r = laswp(a, 3, 1, 2, ipiv, 1);
    INFO(r.error());
    REQUIRE(r.blas_status() == CUSOLVER_STATUS_SUCCESS);
    CHECK(g.download<double>(a, 6) == std::vector<double>{3, 1, 2, 6, 4, 5});
  }
  SECTION("k2 < k1 reads no pivot: a NULL array is fine") {
    auto r = laswp(a, 3, 2, 1, 0, 1);
    INFO(r.error());
    REQUIRE(r.blas_status() == CUSOLVER_STATUS_SUCCESS);
    CHECK(g.download<double>(a, 6) == std::vector<double>{1, 2, 3, 4, 5, 6});
  }
  SECTION("a pivot array shorter than k2, incx apart") {
    auto r = laswp(a, 3, 1, 2, ipiv, 2);
    CHECK(r.blas_status() == CUSOLVER_STATUS_INVALID_VALUE);
    CHECK_THAT(r.error(), Catch::Contains("devIpiv"));
    CHECK(fake_cusolver().computations == 0);
  }
  SECTION("k1 before the first pivot") {
    CHECK(laswp(a, 3, 0, 2, ipiv, 1).blas_status() == CUSOLVER_STATUS_INVALID_VALUE);
    CHECK(fake_cusolver().computations == 0);
  }
  SECTION("a matrix shorter than lda x n (any row up to lda may be swapped)") {
    CHECK(laswp(a, 4, 1, 2, ipiv, 1).blas_status() == CUSOLVER_STATUS_INVALID_VALUE);
    CHECK(fake_cusolver().computations == 0);
  }
}

TEST_CASE("cuSOLVER's syevdx returns the eigenvalue count to the app's host memory",
          "[executor][cusolver]") {
  fake_gpu g;
  g.open();
  auto a = g.upload(laplacian);
  auto w = g.alloc(3 * sizeof(double));
  auto info = g.alloc(sizeof(int));
  // The buffer-size query's meig may be NULL (an optional host value).
  auto sized = g.ok(ids::cusolverDnDsyevdx_bufferSize, handle_id, CUSOLVER_EIG_MODE_VECTOR,
                    CUSOLVER_EIG_RANGE_I, CUBLAS_FILL_MODE_LOWER, 3, a, 3, 0.0, 0.0, 2, 3,
                    uint8_t{0}, w);
  auto lwork = fake_gpu::output<int>(sized, 0);
  CHECK(lwork == gleam::test::fake_cusolver_lwork(3));
  auto work = g.alloc(static_cast<uint64_t>(lwork) * sizeof(double));
  SECTION("range I: eigenvalues 2 and 3 of 3, their count back on the host") {
    auto r = g.call(ids::cusolverDnDsyevdx, handle_id, CUSOLVER_EIG_MODE_VECTOR,
                    CUSOLVER_EIG_RANGE_I, CUBLAS_FILL_MODE_LOWER, 3, a, 3, 0.0, 0.0, 2, 3, w,
                    work, lwork, info);
    INFO(r.error());
    REQUIRE(r.blas_status() == CUSOLVER_STATUS_SUCCESS);
    CHECK(fake_gpu::output<int>(r, 0) == 2);
    check_near(g.download<double>(w, 2), {laplacian_eigenvalues[1], laplacian_eigenvalues[2]});
  }
  SECTION("the query's meig given: it travels and comes back as it was, before lwork") {
    auto r = g.ok(ids::cusolverDnDsyevdx_bufferSize, handle_id, CUSOLVER_EIG_MODE_VECTOR,
                  CUSOLVER_EIG_RANGE_I, CUBLAS_FILL_MODE_LOWER, 3, a, 3, 0.0, 0.0, 2, 3,
                  uint8_t{1}, uint64_t{sizeof(int)}, int{-1}, w);
    REQUIRE(r.library_outputs().data_size() == 2);
    CHECK(fake_gpu::output<int>(r, 0) == -1);
    CHECK(fake_gpu::output<int>(r, 1) == lwork);
  }
  SECTION("W shorter than n: refused, whatever meig turns out to be") {
    auto short_w = g.alloc(2 * sizeof(double));
    auto r = g.call(ids::cusolverDnDsyevdx, handle_id, CUSOLVER_EIG_MODE_VECTOR,
                    CUSOLVER_EIG_RANGE_I, CUBLAS_FILL_MODE_LOWER, 3, a, 3, 0.0, 0.0, 2, 3,
                    short_w, work, lwork, info);
    CHECK(r.blas_status() == CUSOLVER_STATUS_INVALID_VALUE);
    CHECK_THAT(r.error(), Catch::Contains("W"));
    CHECK(fake_cusolver().computations == 0);
  }
}

TEST_CASE("cuSOLVER's gesvdaStridedBatched: residual norms come back to the host, or NULL "
          "reaches the library; strided outputs are checked whole",
          "[executor][cusolver]") {
  fake_gpu g;
  g.open();
  // Two 4 x 2 matrices, rank 2, strides exact.
  constexpr int m = 4, n = 2, rank = 2, batch = 2;
  constexpr long long stride_a = m * n, stride_s = rank, stride_u = m * rank, stride_v = n * rank;
  auto a = g.upload(std::vector<double>(stride_a * batch, 1.0));
  auto s = g.alloc(stride_s * batch * sizeof(double));
  auto u = g.alloc(stride_u * batch * sizeof(double));
  auto v = g.alloc(stride_v * batch * sizeof(double));
  auto info = g.alloc(batch * sizeof(int));
  auto work = g.alloc(gleam::test::fake_cusolver_lwork(n) * sizeof(double));
  auto gesvda = [&](uint64_t left, uint8_t residuals) {
    return g.call(ids::cusolverDnDgesvdaStridedBatched, handle_id, CUSOLVER_EIG_MODE_VECTOR,
                  rank, m, n, a, m, stride_a, s, stride_s, left, m, stride_u, v, n, stride_v,
                  work, gleam::test::fake_cusolver_lwork(n), info, residuals, batch);
  };
  SECTION("with h_R_nrmF") {
    auto r = gesvda(u, 1);
    INFO(r.error());
    REQUIRE(r.blas_status() == CUSOLVER_STATUS_SUCCESS);
    CHECK(fake_cusolver().residuals_given);
    REQUIRE(r.library_outputs().data_size() == 1);
    const auto& bytes = r.library_outputs().data(0);
    REQUIRE(bytes.size() == batch * sizeof(double));
    std::vector<double> norms(batch);
    std::memcpy(norms.data(), bytes.data(), bytes.size());
    CHECK(norms == std::vector<double>{0.5, 1.0});
    CHECK(g.download<double>(s, 4) == std::vector<double>{1, 2, 2, 3});
    CHECK(g.download<int>(info, 2) == std::vector<int>{0, 0});
  }
  SECTION("h_R_nrmF NULL") {
    auto r = gesvda(u, 0);
    INFO(r.error());
    REQUIRE(r.blas_status() == CUSOLVER_STATUS_SUCCESS);
    CHECK_FALSE(fake_cusolver().residuals_given);
    CHECK(r.library_outputs().data_size() == 0);
  }
  SECTION("U one element short of its last matrix") {
    auto short_u = g.alloc((stride_u * batch - 1) * sizeof(double));
    auto r = gesvda(short_u, 1);
    CHECK(r.blas_status() == CUSOLVER_STATUS_INVALID_VALUE);
    CHECK_THAT(r.error(), Catch::Contains("d_U"));
    CHECK(fake_cusolver().computations == 0);
  }
}

TEST_CASE("cuSOLVER's IRSXgesv sizes its matrices by the main precision its options were given",
          "[executor][cusolver]") {
  fake_gpu g;
  g.open();
  constexpr uint64_t irs_params = 21, irs_infos = 22;
  g.ok(ids::cusolverDnIRSParamsCreate, irs_params);
  g.ok(ids::cusolverDnIRSInfosCreate, irs_infos);
  auto a = g.upload(system_a);
  auto b = g.upload(system_b());
  auto x = g.alloc(3 * sizeof(double));
  auto info = g.alloc(sizeof(int));
  auto work = g.alloc(64);
  auto gesv = [&](uint64_t solution) {
    return g.call(ids::cusolverDnIRSXgesv, handle_id, irs_params, irs_infos, 3, 1, a, 3, b, 3,
                  solution, 3, work, uint64_t{64}, info);
  };
  SECTION("no main precision yet: no extent holds, nothing reaches the library") {
    auto r = gesv(x);
    CHECK(r.blas_status() == CUSOLVER_STATUS_INVALID_VALUE);
    CHECK_THAT(r.error(), Catch::Contains("dA"));
    CHECK(fake_cusolver().computations == 0);
  }
  SECTION("CUSOLVER_R_64F: 8-byte elements") {
    g.ok(ids::cusolverDnIRSParamsSetSolverPrecisions, irs_params, CUSOLVER_R_64F,
         CUSOLVER_R_32F);
    auto r = gesv(x);
    INFO(r.error());
    REQUIRE(r.blas_status() == CUSOLVER_STATUS_SUCCESS);
    // niters is a host result.
    CHECK(fake_gpu::output<int>(r, 0) == 0);
    check_near(g.download<double>(x, 3), system_x);
    SECTION("a solution with room for three floats only") {
      auto small = g.alloc(3 * sizeof(float));
      auto refused = gesv(small);
      CHECK(refused.blas_status() == CUSOLVER_STATUS_INVALID_VALUE);
      CHECK_THAT(refused.error(), Catch::Contains("dX"));
      CHECK(fake_cusolver().computations == 1);
    }
  }
  SECTION("a precision that is no main precision keeps the server's note as it was") {
    g.ok(ids::cusolverDnIRSParamsSetSolverPrecisions, irs_params, CUSOLVER_R_16F,
         CUSOLVER_R_16F);
    CHECK(gesv(x).blas_status() == CUSOLVER_STATUS_INVALID_VALUE);
    CHECK(fake_cusolver().computations == 0);
  }
  g.ok(ids::cusolverDnIRSParamsDestroy, irs_params);
  g.ok(ids::cusolverDnIRSInfosDestroy, irs_infos);
  CHECK(fake_cusolver().irs_params.empty());
  CHECK(fake_cusolver().irs_infos == 0);
}

TEST_CASE("cuSOLVER's reductions and refinement solvers: extents follow LAPACK's shapes, one "
          "element short is refused",
          "[executor][cusolver]") {
  fake_gpu g;
  namespace d = gleam::test::fake_cusolver_detail;
  // Entry points that only count: the extents are what is checked here.
  g.cusolver.cusolverDnDsytrd = [](cusolverDnHandle_t h, cublasFillMode_t, int, double*, int,
                                   double*, double*, double*, double*, int, int*) {
    return d::computed(h) ? CUSOLVER_STATUS_SUCCESS : CUSOLVER_STATUS_NOT_INITIALIZED;
  };
  g.cusolver.cusolverDnDormtr = [](cusolverDnHandle_t h, cublasSideMode_t, cublasFillMode_t,
                                   cublasOperation_t, int, int, double*, int, double*, double*,
                                   int, double*, int, int*) {
    return d::computed(h) ? CUSOLVER_STATUS_SUCCESS : CUSOLVER_STATUS_NOT_INITIALIZED;
  };
  g.cusolver.cusolverDnDorgbr = [](cusolverDnHandle_t h, cublasSideMode_t, int, int, int,
                                   double*, int, const double*, double*, int, int*) {
    return d::computed(h) ? CUSOLVER_STATUS_SUCCESS : CUSOLVER_STATUS_NOT_INITIALIZED;
  };
  g.cusolver.cusolverDnDDgesv = [](cusolverDnHandle_t h, int, int, double*, int, int*, double*,
                                   int, double*, int, void*, size_t, int* iter, int* info) {
    *iter = 3;
    *info = 0;
    return d::computed(h) ? CUSOLVER_STATUS_SUCCESS : CUSOLVER_STATUS_NOT_INITIALIZED;
  };
  g.open();
  auto doubles = [&](size_t count) { return g.alloc(count * sizeof(double)); };
  auto info = g.alloc(sizeof(int));
  auto work = doubles(8);
  SECTION("sytrd of order 4: d of 4, e and tau of 3") {
    auto sytrd = [&](uint64_t e, uint64_t tau) {
      return g.call(ids::cusolverDnDsytrd, handle_id, CUBLAS_FILL_MODE_LOWER, 4, doubles(16), 4,
                    doubles(4), e, tau, work, 8, info);
    };
    CHECK(sytrd(doubles(3), doubles(3)).blas_status() == CUSOLVER_STATUS_SUCCESS);
    auto r = sytrd(doubles(2), doubles(3));
    CHECK(r.blas_status() == CUSOLVER_STATUS_INVALID_VALUE);
    CHECK_THAT(r.error(), Catch::Contains("e"));
    CHECK(sytrd(doubles(3), doubles(2)).blas_status() == CUSOLVER_STATUS_INVALID_VALUE);
    CHECK(fake_cusolver().computations == 1);
  }
  SECTION("ormtr: A and tau of the order of C's side") {
    auto ormtr = [&](cublasSideMode_t side, uint64_t a, uint64_t tau) {
      return g.call(ids::cusolverDnDormtr, handle_id, side, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_T,
                    5, 2, a, 5, tau, doubles(10), 5, work, 8, info);
    };
    CHECK(ormtr(CUBLAS_SIDE_LEFT, doubles(25), doubles(4)).blas_status()
          == CUSOLVER_STATUS_SUCCESS);
    CHECK(ormtr(CUBLAS_SIDE_LEFT, doubles(25), doubles(3)).blas_status()
          == CUSOLVER_STATUS_INVALID_VALUE);
    CHECK(ormtr(CUBLAS_SIDE_LEFT, doubles(24), doubles(4)).blas_status()
          == CUSOLVER_STATUS_INVALID_VALUE);
    // From the right, C's 2 columns: A is 2 x 2 (lda 5), tau 1.
    CHECK(ormtr(CUBLAS_SIDE_RIGHT, doubles(7), doubles(1)).blas_status()
          == CUSOLVER_STATUS_SUCCESS);
    CHECK(fake_cusolver().computations == 2);
  }
  SECTION("orgbr: tau of min(m, k) for Q, min(n, k) for P**T") {
    auto orgbr = [&](cublasSideMode_t side, int m, int n, int k, uint64_t tau) {
      return g.call(ids::cusolverDnDorgbr, handle_id, side, m, n, k, doubles(m * n), m, tau, work,
                    8, info);
    };
    CHECK(orgbr(CUBLAS_SIDE_LEFT, 5, 3, 3, doubles(3)).blas_status() == CUSOLVER_STATUS_SUCCESS);
    CHECK(orgbr(CUBLAS_SIDE_LEFT, 5, 3, 3, doubles(2)).blas_status()
          == CUSOLVER_STATUS_INVALID_VALUE);
    CHECK(orgbr(CUBLAS_SIDE_RIGHT, 3, 5, 2, doubles(2)).blas_status() == CUSOLVER_STATUS_SUCCESS);
    CHECK(orgbr(CUBLAS_SIDE_RIGHT, 3, 5, 4, doubles(3)).blas_status()
          == CUSOLVER_STATUS_INVALID_VALUE);
    CHECK(fake_cusolver().computations == 2);
  }
  SECTION("DDgesv: NULL pivots span nothing; the iteration count is a host result") {
    auto gesv = [&](uint64_t dipiv, uint64_t x) {
      return g.call(ids::cusolverDnDDgesv, handle_id, 3, 1, doubles(9), 3, dipiv, doubles(3), 3,
                    x, 3, work, uint64_t{64}, info);
    };
    auto r = gesv(0, doubles(3));
    INFO(r.error());
    REQUIRE(r.blas_status() == CUSOLVER_STATUS_SUCCESS);
    CHECK(fake_gpu::output<int>(r, 0) == 3);
    CHECK(gesv(g.alloc(2 * sizeof(int)), doubles(3)).blas_status()
          == CUSOLVER_STATUS_INVALID_VALUE);
    CHECK(gesv(0, doubles(2)).blas_status() == CUSOLVER_STATUS_INVALID_VALUE);
    CHECK(fake_cusolver().computations == 1);
  }
}

TEST_CASE("cuSOLVER's version comes from the server's library; a session's end destroys its "
          "handles",
          "[executor][cusolver]") {
  {
    fake_gpu g;
    auto v = g.ok(ids::cusolverGetVersion);
    CHECK(fake_gpu::output<int>(v, 0) == 12004);
    auto major = g.ok(ids::cusolverGetProperty, MAJOR_VERSION);
    CHECK(fake_gpu::output<int>(major, 0) == 12);
    g.open();
    g.ok(ids::cusolverDnCreate, handle_id + 1);
    REQUIRE(fake_cusolver().handles.size() == 2);
    REQUIRE(fake_cusolver().params == 1);
    g.ok(ids::cusolverDnDestroyParams, params_id);
    CHECK(fake_cusolver().params == 0);
    g.exec->close_session(g.session);
    CHECK(fake_cusolver().handles.empty());
  }
}

TEST_CASE("cusolver_api loads the vendor's cuSOLVER and refuses Gleam's own",
          "[executor][cusolver]") {
  if (!std::ifstream{"/usr/local/cuda/lib64/libcusolver.so.12"}.good()) {
    WARN("no vendor libcusolver.so.12 to load; skipped");
    return;
  }
  auto api = cusolver_api::load("/usr/local/cuda/lib64");
  REQUIRE(api);
  CHECK((*api)->cusolverDnXgetrf != nullptr);
  CHECK((*api)->cusolverDnZgesvdjBatched != nullptr);
  auto own = cusolver_api::load(gleam::test::build_path("lib"));
  CHECK_FALSE(own);
}

TEST_CASE("cuSOLVER on the GPU: getrf and getrs solve A x = b, syevd and potrf give the known "
          "results, an out-of-range matrix is refused",
          "[gpu][executor][cusolver]") {
  real_gpu g;
  g.open();
  auto info = g.alloc(sizeof(int));

  // LU and solve, typed API.
  auto a = g.upload(system_a.data(), 9 * sizeof(double));
  auto b_host = system_b();
  auto b = g.upload(b_host.data(), 3 * sizeof(double));
  auto ipiv = g.alloc(3 * sizeof(int));
  auto lwork = g.getrf_lwork(3, a);
  auto work = g.alloc(static_cast<size_t>(std::max(lwork, 1)) * sizeof(double));
  auto factored = g.dgetrf(3, a, work, ipiv, info);
  INFO(factored.error());
  REQUIRE(factored.blas_status() == CUSOLVER_STATUS_SUCCESS);
  REQUIRE(g.dgetrs(3, a, ipiv, b, info).blas_status() == CUSOLVER_STATUS_SUCCESS);
  CHECK(g.download<int>(info, 1)[0] == 0);
  check_near(g.download<double>(b, 3), system_x);

  // Eigenvalues, 64-bit API.
  auto s = g.upload(laplacian.data(), 9 * sizeof(double));
  auto w = g.alloc(3 * sizeof(double));
  auto [dev_bytes, host_bytes] = g.xsyevd_sizes(3, s, w);
  auto dev = g.alloc(static_cast<size_t>(std::max<uint64_t>(dev_bytes, 1)));
  auto eig = g.xsyevd(3, s, w, dev, dev_bytes, host_bytes, info);
  INFO(eig.error());
  REQUIRE(eig.blas_status() == CUSOLVER_STATUS_SUCCESS);
  CHECK(g.download<int>(info, 1)[0] == 0);
  check_near(g.download<double>(w, 3), laplacian_eigenvalues, 1e-12);

  // Cholesky.
  std::vector<double> spd{4, 2, 2, 3};
  auto c = g.upload(spd.data(), 4 * sizeof(double));
  auto plw = g.ok(ids::cusolverDnDpotrf_bufferSize, handle_id, CUBLAS_FILL_MODE_LOWER, 2, c, 2);
  auto potrf_lwork = real_gpu::output<int>(plw, 0);
  auto pwork = g.alloc(static_cast<size_t>(std::max(potrf_lwork, 1)) * sizeof(double));
  REQUIRE(g.dpotrf(2, c, pwork, potrf_lwork, info).blas_status() == CUSOLVER_STATUS_SUCCESS);
  CHECK(g.download<int>(info, 1)[0] == 0);
  auto l = g.download<double>(c, 4);
  CHECK(l[0] == Approx(2.0));
  CHECK(l[1] == Approx(1.0));
  CHECK(l[3] == Approx(std::sqrt(2.0)));

  // A matrix one element short: refused before the library, nothing written.
  std::vector<double> eight(system_a.begin(), system_a.end() - 1);
  auto short_a = g.upload(eight.data(), 8 * sizeof(double));
  auto refused = g.dgetrf(3, short_a, work, ipiv, info);
  CHECK(refused.blas_status() == CUSOLVER_STATUS_INVALID_VALUE);
  CHECK(g.download<double>(short_a, 8) == eight);
}

TEST_CASE("cuSOLVER on the GPU: laswp, syevdx, sygvd, sytrf with Xsytrs, gesvdaStridedBatched "
          "and Xgesvdp give the known results, host results included",
          "[gpu][executor][cusolver]") {
  real_gpu g;
  g.open();
  auto info = g.alloc(sizeof(int));
  auto lwork_of = [&](const proto::OpResult& r) {
    return std::max(real_gpu::output<int>(r, 0), 1);
  };

  // laswp: rows 1 <-> 3, then 2 <-> 3.
  std::vector<double> rows{1, 2, 3, 4, 5, 6};
  auto a = g.upload(rows.data(), rows.size() * sizeof(double));
  std::vector<int> pivots{3, 3};
  auto ipiv = g.upload(pivots.data(), pivots.size() * sizeof(int));
  g.ok(ids::cusolverDnDlaswp, handle_id, 2, a, 3, 1, 2, ipiv, 1);
  CHECK(g.download<double>(a, 6) == std::vector<double>{3, 1, 2, 6, 4, 5});

  // syevdx, range I: the two largest eigenvalues, their count a host result.
  auto s = g.upload(laplacian.data(), 9 * sizeof(double));
  auto w = g.alloc(3 * sizeof(double));
  // The query's meig given (the vendor's own examples pass it): it travels
  // and comes back first, lwork second.
  auto xsized = g.ok(ids::cusolverDnDsyevdx_bufferSize, handle_id, CUSOLVER_EIG_MODE_VECTOR,
                     CUSOLVER_EIG_RANGE_I, CUBLAS_FILL_MODE_LOWER, 3, s, 3, 0.0, 0.0, 2, 3,
                     uint8_t{1}, uint64_t{sizeof(int)}, int{-1}, w);
  REQUIRE(xsized.library_outputs().data_size() == 2);
  auto xlw = std::max(real_gpu::output<int>(xsized, 1), 1);
  auto xwork = g.alloc(static_cast<size_t>(xlw) * sizeof(double));
  auto evx = g.ok(ids::cusolverDnDsyevdx, handle_id, CUSOLVER_EIG_MODE_VECTOR,
                  CUSOLVER_EIG_RANGE_I, CUBLAS_FILL_MODE_LOWER, 3, s, 3, 0.0, 0.0, 2, 3, w, xwork,
                  xlw, info);
  CHECK(real_gpu::output<int>(evx, 0) == 2);
  CHECK(g.download<int>(info, 1)[0] == 0);
  check_near(g.download<double>(w, 2), {laplacian_eigenvalues[1], laplacian_eigenvalues[2]},
             1e-12);

  // sygvd, A x = lambda B x with B = 2 I: half the eigenvalues of A.
  auto ga = g.upload(laplacian.data(), 9 * sizeof(double));
  std::vector<double> two{2, 0, 0, 0, 2, 0, 0, 0, 2};
  auto gb = g.upload(two.data(), 9 * sizeof(double));
  auto glw = lwork_of(g.ok(ids::cusolverDnDsygvd_bufferSize, handle_id, CUSOLVER_EIG_TYPE_1,
                           CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_UPPER, 3, ga, 3, gb, 3, w));
  auto gwork = g.alloc(static_cast<size_t>(glw) * sizeof(double));
  g.ok(ids::cusolverDnDsygvd, handle_id, CUSOLVER_EIG_TYPE_1, CUSOLVER_EIG_MODE_VECTOR,
       CUBLAS_FILL_MODE_UPPER, 3, ga, 3, gb, 3, w, gwork, glw, info);
  CHECK(g.download<int>(info, 1)[0] == 0);
  check_near(g.download<double>(w, 3),
             {laplacian_eigenvalues[0] / 2, laplacian_eigenvalues[1] / 2,
              laplacian_eigenvalues[2] / 2},
             1e-12);

  // sytrf (typed) and Xsytrs (64-bit): a symmetric indefinite system with
  // x = (1, 2, 3).
  std::vector<double> sym{0, 1, 2, 1, 0, 3, 2, 3, 0};
  std::vector<double> rhs{1 * 0 + 2 * 1 + 3 * 2, 1 * 1 + 2 * 0 + 3 * 3, 1 * 2 + 2 * 3 + 3 * 0};
  auto ta = g.upload(sym.data(), 9 * sizeof(double));
  auto tb = g.upload(rhs.data(), 3 * sizeof(double));
  auto tpiv = g.alloc(3 * sizeof(int));
  auto tlw = lwork_of(g.ok(ids::cusolverDnDsytrf_bufferSize, handle_id, 3, ta, 3));
  auto twork = g.alloc(static_cast<size_t>(tlw) * sizeof(double));
  g.ok(ids::cusolverDnDsytrf, handle_id, CUBLAS_FILL_MODE_LOWER, 3, ta, 3, tpiv, twork, tlw, info);
  CHECK(g.download<int>(info, 1)[0] == 0);
  auto piv32 = g.download<int>(tpiv, 3);
  std::vector<int64_t> piv64(piv32.begin(), piv32.end());
  auto tpiv64 = g.upload(piv64.data(), 3 * sizeof(int64_t));
  auto sizes = g.ok(ids::cusolverDnXsytrs_bufferSize, handle_id, CUBLAS_FILL_MODE_LOWER,
                    int64_t{3}, int64_t{1}, CUDA_R_64F, ta, int64_t{3}, tpiv64, CUDA_R_64F, tb,
                    int64_t{3});
  auto dev_bytes = real_gpu::output<uint64_t>(sizes, 0);
  auto host_bytes = real_gpu::output<uint64_t>(sizes, 1);
  auto dev = g.alloc(static_cast<size_t>(std::max<uint64_t>(dev_bytes, 1)));
  g.ok(ids::cusolverDnXsytrs, handle_id, CUBLAS_FILL_MODE_LOWER, int64_t{3}, int64_t{1},
       CUDA_R_64F, ta, int64_t{3}, tpiv64, CUDA_R_64F, tb, int64_t{3}, dev, dev_bytes,
       host_bytes, info);
  CHECK(g.download<int>(info, 1)[0] == 0);
  check_near(g.download<double>(tb, 3), system_x, 1e-12);

  // gesvdaStridedBatched: two 4 x 2 matrices with singular values (3, 2)
  // and (6, 4); the residual norms a host result.
  std::vector<double> tall{3, 0, 0, 0, 0, 2, 0, 0, 6, 0, 0, 0, 0, 4, 0, 0};
  auto va = g.upload(tall.data(), tall.size() * sizeof(double));
  auto vs = g.alloc(4 * sizeof(double));
  auto vu = g.alloc(16 * sizeof(double));
  auto vv = g.alloc(8 * sizeof(double));
  auto vinfo = g.alloc(2 * sizeof(int));
  auto vlw = lwork_of(g.ok(ids::cusolverDnDgesvdaStridedBatched_bufferSize, handle_id,
                           CUSOLVER_EIG_MODE_VECTOR, 2, 4, 2, va, 4, 8LL, vs, 2LL, vu, 4, 8LL, vv,
                           2, 4LL, 2));
  auto vwork = g.alloc(static_cast<size_t>(vlw) * sizeof(double));
  auto svd = g.ok(ids::cusolverDnDgesvdaStridedBatched, handle_id, CUSOLVER_EIG_MODE_VECTOR, 2, 4,
                  2, va, 4, 8LL, vs, 2LL, vu, 4, 8LL, vv, 2, 4LL, vwork, vlw, vinfo, uint8_t{1},
                  2);
  REQUIRE(svd.library_outputs().data_size() == 1);
  CHECK(svd.library_outputs().data(0).size() == 2 * sizeof(double));
  CHECK(g.download<int>(vinfo, 2) == std::vector<int>{0, 0});
  check_near(g.download<double>(vs, 4), {3, 2, 6, 4}, 1e-6);

  // Xgesvdp: the singular values of a 3 x 2 matrix, h_err_sigma a host result.
  std::vector<double> p{3, 0, 0, 0, 2, 0};
  auto pa = g.upload(p.data(), 6 * sizeof(double));
  auto ps = g.alloc(2 * sizeof(double));
  auto pu = g.alloc(6 * sizeof(double));
  auto pv = g.alloc(4 * sizeof(double));
  auto psizes = g.ok(ids::cusolverDnXgesvdp_bufferSize, handle_id, params_id,
                     CUSOLVER_EIG_MODE_VECTOR, 1, int64_t{3}, int64_t{2}, CUDA_R_64F, pa,
                     int64_t{3}, CUDA_R_64F, ps, CUDA_R_64F, pu, int64_t{3}, CUDA_R_64F, pv,
                     int64_t{2}, CUDA_R_64F);
  auto pdev_bytes = real_gpu::output<uint64_t>(psizes, 0);
  auto phost_bytes = real_gpu::output<uint64_t>(psizes, 1);
  auto pdev = g.alloc(static_cast<size_t>(std::max<uint64_t>(pdev_bytes, 1)));
  auto polar = g.ok(ids::cusolverDnXgesvdp, handle_id, params_id, CUSOLVER_EIG_MODE_VECTOR, 1,
                    int64_t{3}, int64_t{2}, CUDA_R_64F, pa, int64_t{3}, CUDA_R_64F, ps, CUDA_R_64F,
                    pu, int64_t{3}, CUDA_R_64F, pv, int64_t{2}, CUDA_R_64F, pdev, pdev_bytes,
                    phost_bytes, info);
  CHECK(real_gpu::output<double>(polar, 0) >= 0.0);
  CHECK(g.download<int>(info, 1)[0] == 0);
  check_near(g.download<double>(ps, 2), {3, 2}, 1e-9);
}

namespace {

/// A byte no computation leaves in an output by chance everywhere.
constexpr unsigned char sentinel = 0xA5;

/// Device memory of `elements` T, followed by `padding` more, every byte
/// the sentinel.
template <class T>
uint64_t padded(real_gpu& g, size_t elements, size_t padding = 16) {
  std::vector<unsigned char> bytes((elements + padding) * sizeof(T), sentinel);
  return g.upload(bytes.data(), bytes.size());
}

/// Whether the `padding` elements after the first `elements` at `p` still
/// hold the sentinel (the library wrote nothing past the spec's extent).
template <class T>
bool untouched_after(real_gpu& g, uint64_t p, size_t elements, size_t padding = 16) {
  auto all = g.download<unsigned char>(p, (elements + padding) * sizeof(T));
  for (size_t i = elements * sizeof(T); i < all.size(); ++i)
    if (all[i] != sentinel)
      return false;
  return true;
}

} // namespace

TEST_CASE("cuSOLVER on the GPU writes nothing past the spec's extents of the reductions, "
          "syevdx, gesvdp without vectors and larft",
          "[gpu][executor][cusolver]") {
  real_gpu g;
  g.open();
  auto info = g.alloc(sizeof(int));
  auto work = g.alloc(1 << 20);
  const int lwork = (1 << 20) / sizeof(double);
  std::vector<double> a8x5(40);
  for (size_t i = 0; i < a8x5.size(); ++i)
    a8x5[i] = std::sin(static_cast<double>(i) + 1.0);

  // gebrd of 8 x 5: D, E, TAUQ and TAUP of min(m, n) = 5 (E of LAPACK's 4).
  auto a = g.upload(a8x5.data(), a8x5.size() * sizeof(double));
  auto d = padded<double>(g, 5), e = padded<double>(g, 5), tq = padded<double>(g, 5),
       tp = padded<double>(g, 5);
  g.ok(ids::cusolverDnDgebrd, handle_id, 8, 5, a, 8, d, e, tq, tp, work, lwork, info);
  CHECK(g.download<int>(info, 1)[0] == 0);
  for (auto [p, what] : {std::pair<uint64_t, const char*>{d, "D"}, {e, "E"}, {tq, "TAUQ"},
                         {tp, "TAUP"}}) {
    INFO(what);
    CHECK(untouched_after<double>(g, p, 5));
  }

  // sytrd of order 6, both triangles: d of 6, e and tau of 5.
  for (auto uplo : {CUBLAS_FILL_MODE_LOWER, CUBLAS_FILL_MODE_UPPER}) {
    std::vector<double> sym(36);
    for (int i = 0; i < 6; ++i)
      for (int j = 0; j < 6; ++j)
        sym[i + 6 * j] = i == j ? 6.0 : 1.0 / (1 + i + j);
    auto s = g.upload(sym.data(), sym.size() * sizeof(double));
    auto sd = padded<double>(g, 6), se = padded<double>(g, 5), st = padded<double>(g, 5);
    g.ok(ids::cusolverDnDsytrd, handle_id, uplo, 6, s, 6, sd, se, st, work, lwork, info);
    CHECK(untouched_after<double>(g, sd, 6));
    CHECK(untouched_after<double>(g, se, 5));
    CHECK(untouched_after<double>(g, st, 5));
  }

  // syevdx, range I of 2..3 of order 3: W spans n, written up to meig.
  auto l = g.upload(laplacian.data(), 9 * sizeof(double));
  auto w = padded<double>(g, 3);
  g.ok(ids::cusolverDnDsyevdx, handle_id, CUSOLVER_EIG_MODE_VECTOR, CUSOLVER_EIG_RANGE_I,
       CUBLAS_FILL_MODE_LOWER, 3, l, 3, 0.0, 0.0, 2, 3, w, work, lwork, info);
  CHECK(untouched_after<double>(g, w, 3));

  // Xgesvdp without vectors: U and V span nothing and are left alone.
  auto pa = g.upload(a8x5.data(), a8x5.size() * sizeof(double));
  auto ps = padded<double>(g, 5), pu = padded<double>(g, 0, 64), pv = padded<double>(g, 0, 25);
  for (int econ : {0, 1}) {
    auto sizes = g.ok(ids::cusolverDnXgesvdp_bufferSize, handle_id, params_id,
                      CUSOLVER_EIG_MODE_NOVECTOR, econ, int64_t{8}, int64_t{5}, CUDA_R_64F, pa,
                      int64_t{8}, CUDA_R_64F, ps, CUDA_R_64F, pu, int64_t{8}, CUDA_R_64F, pv,
                      int64_t{5}, CUDA_R_64F);
    auto dev_bytes = real_gpu::output<uint64_t>(sizes, 0);
    auto host_bytes = real_gpu::output<uint64_t>(sizes, 1);
    REQUIRE(dev_bytes <= uint64_t{1} << 20);
    g.ok(ids::cusolverDnXgesvdp, handle_id, params_id, CUSOLVER_EIG_MODE_NOVECTOR, econ,
         int64_t{8}, int64_t{5}, CUDA_R_64F, pa, int64_t{8}, CUDA_R_64F, ps, CUDA_R_64F, pu,
         int64_t{8}, CUDA_R_64F, pv, int64_t{5}, CUDA_R_64F, work, dev_bytes, host_bytes, info);
    CHECK(untouched_after<double>(g, ps, 5));
    CHECK(untouched_after<double>(g, pu, 0, 64));
    CHECK(untouched_after<double>(g, pv, 0, 25));
  }

  // larft of 4 reflectors of length 10: T of 4 x 4.
  std::vector<double> v(40), tau{1.2, 1.5, 1.1, 1.7};
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = std::cos(static_cast<double>(i));
  auto dv = g.upload(v.data(), v.size() * sizeof(double));
  auto dtau = g.upload(tau.data(), tau.size() * sizeof(double));
  auto t = padded<double>(g, 16);
  auto tsizes = g.ok(ids::cusolverDnXlarft_bufferSize, handle_id, params_id,
                     CUBLAS_DIRECT_FORWARD, CUBLAS_STOREV_COLUMNWISE, int64_t{10}, int64_t{4},
                     CUDA_R_64F, dv, int64_t{10}, CUDA_R_64F, dtau, CUDA_R_64F, t, int64_t{4},
                     CUDA_R_64F);
  auto tdev = real_gpu::output<uint64_t>(tsizes, 0);
  auto thost = real_gpu::output<uint64_t>(tsizes, 1);
  REQUIRE(tdev <= uint64_t{1} << 20);
  g.ok(ids::cusolverDnXlarft, handle_id, params_id, CUBLAS_DIRECT_FORWARD,
       CUBLAS_STOREV_COLUMNWISE, int64_t{10}, int64_t{4}, CUDA_R_64F, dv, int64_t{10},
       CUDA_R_64F, dtau, CUDA_R_64F, t, int64_t{4}, CUDA_R_64F, work, tdev, thost);
  CHECK(untouched_after<double>(g, t, 16));
}
