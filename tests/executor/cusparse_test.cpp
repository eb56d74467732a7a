// cuSPARSE's LibraryCall ops in the executor: on the CPU, the generic
// runner over a fake driver (host memory as device memory,
// fake_device.hpp) and a fake cuSPARSE (tests/support/fake_cusparse.hpp)
// that computes real results; [gpu] cases against the vendor's library.
// Every case packs its arguments as the generated client stubs do
// (interpose/spec/cusparse.spec, parameter order).
#include "executor/cusparse_api.hpp"
#include "executor/executor.hpp"

#include <catch2/catch.hpp>

#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "executor/cusparse_function_ids.hpp"
#include "tests/executor/fake_device.hpp"
#include "tests/executor/real_gpu.hpp"
#include "tests/support/fake_cusparse.hpp"
#include "tests/support/gpu_probe.hpp"
#include "wire/library_args.hpp"

namespace proto = gleam::proto;
namespace ids = gleam::generated::cusparse_ids;
using gleam::executor::cusparse_api;
using gleam::test::fake_cusparse;
using gleam::wire::arg_packer;

namespace {

constexpr uint64_t handle_id = 11;
constexpr uint64_t a_id = 21, b_id = 22, c_id = 23, x_id = 24, y_id = 25;

/// The 3 x 4 CSR matrix of every case:
///   [1 0 2 0]
///   [0 0 3 0]
///   [4 5 0 6]
const std::vector<int> a_offsets{0, 2, 3, 6};
const std::vector<int> a_columns{0, 2, 2, 0, 1, 3};
const std::vector<float> a_values{1, 2, 3, 4, 5, 6};
/// B: 4 x 2, column-major; the product A B, column-major.
const std::vector<float> b_values{1, 2, 3, 4, 5, 6, 7, 8};
const std::vector<float> ab_values{7, 9, 38, 19, 21, 98};
/// x (4) and A x.
const std::vector<float> x_values{1, 2, 3, 4};
const std::vector<float> ax_values{7, 9, 38};

/// Where the arrays of A, B, C, x and y are, and the SpMM buffer.
struct operands {
  uint64_t offsets = 0, columns = 0, values = 0, b = 0, c = 0, x = 0, y = 0;
  /// The SpMM and SpMV buffers (0 where the library asks for none).
  uint64_t buffer = 0, vector_buffer = 0;
};

/// The packing of the generated calls, on a client with `run` and `alloc`
/// (the fake executor or a real one).
template <class Client>
struct sparse_calls {
  Client& g;

  proto::OpResult call(uint32_t id, arg_packer& args) {
    return g.run([&](proto::Op& op) {
      auto* c = op.mutable_library_call();
      c->set_library(proto::LibraryCall::CUSPARSE);
      c->set_function(id);
      c->set_args(args.take());
    });
  }

  proto::OpResult create(uint64_t id) {
    arg_packer p;
    p.value(id);
    return call(ids::cusparseCreate, p);
  }

  proto::OpResult csr(uint64_t id, int64_t rows, int64_t cols, int64_t nnz, uint64_t offsets,
                      uint64_t columns, uint64_t values) {
    arg_packer p;
    p.value(id);
    p.value(rows);
    p.value(cols);
    p.value(nnz);
    p.value(offsets);
    p.value(columns);
    p.value(values);
    p.value(CUSPARSE_INDEX_32I);
    p.value(CUSPARSE_INDEX_32I);
    p.value(CUSPARSE_INDEX_BASE_ZERO);
    p.value(CUDA_R_32F);
    return call(ids::cusparseCreateCsr, p);
  }

  proto::OpResult dense(uint64_t id, int64_t rows, int64_t cols, int64_t ld, uint64_t values) {
    arg_packer p;
    p.value(id);
    p.value(rows);
    p.value(cols);
    p.value(ld);
    p.value(values);
    p.value(CUDA_R_32F);
    p.value(CUSPARSE_ORDER_COL);
    return call(ids::cusparseCreateDnMat, p);
  }

  proto::OpResult vector(uint64_t id, int64_t size, uint64_t values) {
    arg_packer p;
    p.value(id);
    p.value(size);
    p.value(values);
    p.value(CUDA_R_32F);
    return call(ids::cusparseCreateDnVec, p);
  }

  /// SpMM_bufferSize (no buffer) or SpMM of C = A B.
  proto::OpResult spmm(bool size_only, uint64_t buffer = 0) {
    float alpha = 1.0f, beta = 0.0f;
    arg_packer p;
    p.value(handle_id);
    p.value(CUSPARSE_OPERATION_NON_TRANSPOSE);
    p.value(CUSPARSE_OPERATION_NON_TRANSPOSE);
    p.bytes(&alpha, sizeof(alpha));
    p.value(a_id);
    p.value(b_id);
    p.bytes(&beta, sizeof(beta));
    p.value(c_id);
    p.value(CUDA_R_32F);
    p.value(CUSPARSE_SPMM_ALG_DEFAULT);
    if (!size_only)
      p.value(buffer);
    return call(size_only ? ids::cusparseSpMM_bufferSize : ids::cusparseSpMM, p);
  }

  /// SpMV_bufferSize (no buffer) or SpMV of y = A x.
  proto::OpResult spmv(bool size_only, uint64_t buffer = 0) {
    float alpha = 1.0f, beta = 0.0f;
    arg_packer p;
    p.value(handle_id);
    p.value(CUSPARSE_OPERATION_NON_TRANSPOSE);
    p.bytes(&alpha, sizeof(alpha));
    p.value(a_id);
    p.value(x_id);
    p.bytes(&beta, sizeof(beta));
    p.value(y_id);
    p.value(CUDA_R_32F);
    p.value(CUSPARSE_SPMV_ALG_DEFAULT);
    if (!size_only)
      p.value(buffer);
    return call(size_only ? ids::cusparseSpMV_bufferSize : ids::cusparseSpMV, p);
  }

  proto::OpResult set_pointers(uint64_t id, uint64_t offsets, uint64_t columns, uint64_t values) {
    arg_packer p;
    p.value(id);
    p.value(offsets);
    p.value(columns);
    p.value(values);
    return call(ids::cusparseCsrSetPointers, p);
  }

  /// The size_t host output of a _bufferSize call.
  static uint64_t size_of(const proto::OpResult& r) {
    REQUIRE(r.library_outputs().data_size() == 1);
    REQUIRE(r.library_outputs().data(0).size() == sizeof(size_t));
    size_t v = 0;
    std::memcpy(&v, r.library_outputs().data(0).data(), sizeof(v));
    return v;
  }

  /// The handle, A (CSR), B, C, x and y of the example, in fresh device
  /// memory filled by `upload(bytes, n)`; the SpMM buffer as large as the
  /// server's library asks.
  template <class Upload>
  operands example(Upload upload) {
    operands o;
    o.offsets = upload(a_offsets.data(), a_offsets.size() * sizeof(int));
    o.columns = upload(a_columns.data(), a_columns.size() * sizeof(int));
    o.values = upload(a_values.data(), a_values.size() * sizeof(float));
    o.b = upload(b_values.data(), b_values.size() * sizeof(float));
    std::vector<float> zeros(6, -1.0f);
    o.c = upload(zeros.data(), 6 * sizeof(float));
    o.x = upload(x_values.data(), x_values.size() * sizeof(float));
    o.y = upload(zeros.data(), 3 * sizeof(float));
    auto h = create(handle_id);
    INFO(h.error());
    REQUIRE(h.blas_status() == CUSPARSE_STATUS_SUCCESS);
    REQUIRE(csr(a_id, 3, 4, 6, o.offsets, o.columns, o.values).blas_status() == 0);
    REQUIRE(dense(b_id, 4, 2, 4, o.b).blas_status() == 0);
    REQUIRE(dense(c_id, 3, 2, 3, o.c).blas_status() == 0);
    REQUIRE(vector(x_id, 4, o.x).blas_status() == 0);
    REQUIRE(vector(y_id, 3, o.y).blas_status() == 0);
    auto sized = spmm(true);
    INFO(sized.error());
    REQUIRE(sized.blas_status() == CUSPARSE_STATUS_SUCCESS);
    auto bytes = size_of(sized);
    o.buffer = bytes == 0 ? 0 : g.alloc(bytes);
    auto vector_sized = spmv(true);
    INFO(vector_sized.error());
    REQUIRE(vector_sized.blas_status() == CUSPARSE_STATUS_SUCCESS);
    bytes = size_of(vector_sized);
    o.vector_buffer = bytes == 0 ? 0 : g.alloc(bytes);
    return o;
  }
};

/// The fake device with the fake cuSPARSE attached.
struct fake_gpu : gleam::test::fake_executor {
  cusparse_api cusparse;
  sparse_calls<fake_gpu> calls{*this};

  fake_gpu() {
    fake_cusparse() = gleam::test::fake_cusparse_log{};
    gleam::test::install_fake_cusparse(cusparse);
    exec->use_library(cusparse);
  }

  uint64_t upload(const void* data, size_t n) {
    auto p = alloc(n);
    std::memcpy(reinterpret_cast<void*>(static_cast<uintptr_t>(p)), data, n);
    return p;
  }

  operands example() {
    return calls.example([&](const void* data, size_t n) { return upload(data, n); });
  }

  template <class T>
  static std::vector<T> read(uint64_t p, size_t n) {
    const auto* v = reinterpret_cast<const T*>(static_cast<uintptr_t>(p));
    return std::vector<T>(v, v + n);
  }
};

} // namespace

TEST_CASE("cuSPARSE SpMM and SpMV of a CSR matrix through LibraryCalls give the host product",
          "[executor][cusparse]") {
  fake_gpu g;
  auto o = g.example();
  CHECK(o.buffer != 0);
  auto r = g.calls.spmm(false, o.buffer);
  INFO(r.error());
  REQUIRE(r.blas_status() == CUSPARSE_STATUS_SUCCESS);
  CHECK(fake_cusparse().spmm == 1);
  CHECK(fake_gpu::read<float>(o.c, 6) == ab_values);
  auto v = g.calls.spmv(false, o.vector_buffer);
  INFO(v.error());
  REQUIRE(v.blas_status() == CUSPARSE_STATUS_SUCCESS);
  CHECK(fake_gpu::read<float>(o.y, 3) == ax_values);
}

TEST_CASE("cuSPARSE calls whose device arrays leave the session's allocations write nothing",
          "[executor][cusparse]") {
  fake_gpu g;
  auto o = g.example();
  auto untouched = std::vector<float>(6, -1.0f);
  SECTION("values moved by CsrSetPointers past their allocation") {
    // One value short: nnz (6) floats from the second value.
    REQUIRE(g.calls.set_pointers(a_id, o.offsets, o.columns, o.values + 4).blas_status() == 0);
    auto r = g.calls.spmm(false, o.buffer);
    CHECK(r.blas_status() == CUSPARSE_STATUS_INVALID_VALUE);
    CHECK_THAT(r.error(), Catch::Contains("sparse matrix values"));
    CHECK(fake_cusparse().spmm == 0);
    CHECK(fake_gpu::read<float>(o.c, 6) == untouched);
  }
  SECTION("a buffer smaller than the library's _bufferSize") {
    auto small = g.alloc(gleam::test::fake_cusparse_buffer - 1);
    auto r = g.calls.spmm(false, small);
    CHECK(r.blas_status() == CUSPARSE_STATUS_INVALID_VALUE);
    CHECK_THAT(r.error(), Catch::Contains("externalBuffer"));
    CHECK(fake_cusparse().spmm == 0);
    CHECK(fake_gpu::read<float>(o.c, 6) == untouched);
  }
  SECTION("a dense output freed after its descriptor was made") {
    REQUIRE(g.run([&](proto::Op& op) { op.mutable_mem_free()->set_dptr(o.c); }).status() == 0);
    auto r = g.calls.spmm(false, o.buffer);
    CHECK(r.blas_status() == CUSPARSE_STATUS_INVALID_VALUE);
    CHECK_THAT(r.error(), Catch::Contains("dense matrix values"));
    CHECK(fake_cusparse().spmm == 0);
  }
  SECTION("a dense matrix larger than its allocation is refused when it is made") {
    // 4 x 2 with leading dimension 5: 9 floats where B holds 8.
    auto r = g.calls.dense(b_id + 100, 4, 2, 5, o.b);
    CHECK(r.blas_status() == CUSPARSE_STATUS_INVALID_VALUE);
    auto live = fake_cusparse().live;
    CHECK(live == 5);
  }
  SECTION("an address that is no allocation of the session") {
    auto r = g.calls.csr(a_id + 100, 3, 4, 6, o.offsets, o.columns, 0x1000);
    CHECK(r.blas_status() == CUSPARSE_STATUS_INVALID_VALUE);
    CHECK_THAT(r.error(), Catch::Contains("csrValues"));
  }
  SECTION("a descriptor the session does not hold") {
    arg_packer p;
    p.value(uint64_t{999});
    auto r = g.calls.call(ids::cusparseDestroySpMat, p);
    CHECK(r.blas_status() == CUSPARSE_STATUS_NOT_INITIALIZED);
  }
}

TEST_CASE("cusparseXcoo2csr and cusparseXcoosortByRow through LibraryCalls",
          "[executor][cusparse]") {
  fake_gpu g;
  REQUIRE(g.calls.create(handle_id).blas_status() == CUSPARSE_STATUS_SUCCESS);
  SECTION("coosort orders by row, then column, and permutes P alongside") {
    std::vector<int> rows{2, 0, 1, 0}, cols{1, 3, 0, 1}, perm{0, 1, 2, 3};
    auto dr = g.upload(rows.data(), 16), dc = g.upload(cols.data(), 16);
    auto dp = g.upload(perm.data(), 16);
    arg_packer s;
    s.value(handle_id);
    s.value(3);
    s.value(4);
    s.value(4);
    s.value(dr);
    s.value(dc);
    auto sized = g.calls.call(ids::cusparseXcoosort_bufferSizeExt, s);
    REQUIRE(sized.blas_status() == 0);
    auto bytes = sparse_calls<fake_gpu>::size_of(sized);
    CHECK(bytes == gleam::test::fake_cusparse_buffer);
    auto buffer = g.alloc(bytes);
    auto sort = [&](uint64_t buf) {
      arg_packer p;
      p.value(handle_id);
      p.value(3);
      p.value(4);
      p.value(4);
      p.value(dr);
      p.value(dc);
      p.value(dp);
      p.value(buf);
      return g.calls.call(ids::cusparseXcoosortByRow, p);
    };
    auto short_buffer = g.alloc(bytes - 8);
    CHECK(sort(short_buffer).blas_status() == CUSPARSE_STATUS_INVALID_VALUE);
    CHECK(fake_cusparse().coosort == 0);
    REQUIRE(sort(buffer).blas_status() == CUSPARSE_STATUS_SUCCESS);
    CHECK(fake_gpu::read<int>(dr, 4) == std::vector<int>{0, 0, 1, 2});
    CHECK(fake_gpu::read<int>(dc, 4) == std::vector<int>{1, 3, 0, 1});
    CHECK(fake_gpu::read<int>(dp, 4) == std::vector<int>{3, 1, 2, 0});
  }
  SECTION("coo2csr turns sorted row indices into offsets; a short output is refused") {
    std::vector<int> rows{0, 0, 1, 2, 2, 2};
    auto dr = g.upload(rows.data(), rows.size() * sizeof(int));
    auto offsets = g.alloc(4 * sizeof(int));
    auto convert = [&](uint64_t out, int m) {
      arg_packer p;
      p.value(handle_id);
      p.value(dr);
      p.value(6);
      p.value(m);
      p.value(out);
      p.value(CUSPARSE_INDEX_BASE_ZERO);
      return g.calls.call(ids::cusparseXcoo2csr, p);
    };
    // m + 1 = 5 offsets do not fit 4.
    CHECK(convert(offsets, 4).blas_status() == CUSPARSE_STATUS_INVALID_VALUE);
    CHECK(fake_cusparse().coo2csr == 0);
    REQUIRE(convert(offsets, 3).blas_status() == CUSPARSE_STATUS_SUCCESS);
    CHECK(fake_gpu::read<int>(offsets, 4) == std::vector<int>{0, 2, 3, 6});
  }
}

TEST_CASE("a session's end destroys the cuSPARSE handles and descriptors it left",
          "[executor][cusparse]") {
  fake_gpu g;
  g.example();
  REQUIRE(fake_cusparse().handles.size() == 1);
  REQUIRE(fake_cusparse().live == 5);
  g.exec->close_session(g.session);
  CHECK(fake_cusparse().handles.empty());
  CHECK(fake_cusparse().live == 0);
}

TEST_CASE("cusparse_api loads the vendor's cuSPARSE and refuses Gleam's own",
          "[executor][cusparse]") {
  if (!std::ifstream{"/usr/local/cuda/lib64/libcusparse.so.12"}.good()) {
    WARN("no vendor libcusparse.so.12 to load; skipped");
    return;
  }
  auto api = cusparse_api::load("/usr/local/cuda/lib64");
  REQUIRE(api);
  CHECK((*api)->cusparseSpMM != nullptr);
  CHECK((*api)->cusparseXcoo2csr != nullptr);
  auto own = cusparse_api::load(gleam::test::build_path("lib"));
  CHECK_FALSE(own);
}

TEST_CASE("cuSPARSE on the GPU: SpMM of a CSR matrix equals the host product; an array outside "
          "the session's allocations is refused with nothing written",
          "[gpu][executor][cusparse]") {
  gleam::test::real_client g;
  sparse_calls<gleam::test::real_client> calls{g};
  auto o = calls.example([&](const void* data, size_t n) { return g.upload(data, n); });
  auto r = calls.spmm(false, o.buffer);
  INFO(r.error());
  REQUIRE(r.blas_status() == CUSPARSE_STATUS_SUCCESS);
  CHECK(g.download<float>(o.c, 6) == ab_values);
  auto v = calls.spmv(false, o.vector_buffer);
  INFO(v.error());
  REQUIRE(v.blas_status() == CUSPARSE_STATUS_SUCCESS);
  CHECK(g.download<float>(o.y, 3) == ax_values);
  // Values one float past their allocation's start: the last value is
  // outside it.
  std::vector<float> sentinel(6, -1.0f);
  auto c2 = g.upload(sentinel.data(), 24);
  REQUIRE(calls.dense(c_id + 100, 3, 2, 3, c2).blas_status() == 0);
  REQUIRE(calls.set_pointers(a_id, o.offsets, o.columns, o.values + 4).blas_status() == 0);
  float alpha = 1.0f, beta = 0.0f;
  arg_packer p;
  p.value(handle_id);
  p.value(CUSPARSE_OPERATION_NON_TRANSPOSE);
  p.value(CUSPARSE_OPERATION_NON_TRANSPOSE);
  p.bytes(&alpha, 4);
  p.value(a_id);
  p.value(b_id);
  p.bytes(&beta, 4);
  p.value(c_id + 100);
  p.value(CUDA_R_32F);
  p.value(CUSPARSE_SPMM_ALG_DEFAULT);
  p.value(o.buffer);
  auto refused = calls.call(ids::cusparseSpMM, p);
  CHECK(refused.blas_status() == CUSPARSE_STATUS_INVALID_VALUE);
  CHECK(g.download<float>(c2, 6) == sentinel);
}
