// cuSPARSE through the shared library, the calls PyTorch's sparse
// operations make: a handle on a stream of the app, a COO matrix sorted
// (cusparseXcoosortByRow, with its permutation) and turned into CSR
// (cusparseXcoo2csr), the generic API's CSR descriptor times a dense
// matrix (SpMM, column- and row-major, with beta) and times a dense vector
// (SpMV), a strided batch of two CSR matrices times two dense matrices,
// descriptor queries, and the status names. Every value is printed (as
// exact hex words) so that a local run and a run through Gleam can be
// compared byte for byte; cuSPARSE's default algorithms are deterministic
// for a given input on one GPU.
#include "common.cuh"

#include <cusparse.h>

#include <vector>

#define GLEAM_CUSPARSE_CHECK(call)                                                \
  do {                                                                            \
    cusparseStatus_t gleam_cusparse_status_ = (call);                             \
    if (gleam_cusparse_status_ != CUSPARSE_STATUS_SUCCESS) {                      \
      std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,   \
                   cusparseGetErrorName(gleam_cusparse_status_));                 \
      std::exit(1);                                                               \
    }                                                                             \
  } while (false)

namespace {

gleam_program::checksum sum;

/// Prints `v` under `label` as hex words and adds it to the checksum.
template <class T>
void show(const char* label, const std::vector<T>& v) {
  sum.add(v.data(), v.size() * sizeof(T));
  const auto* b = reinterpret_cast<const unsigned char*>(v.data());
  std::printf("%s:", label);
  for (size_t i = 0; i + 4 <= v.size() * sizeof(T); i += 4) {
    uint32_t w;
    std::memcpy(&w, b + i, 4);
    std::printf(" %08x", w);
  }
  std::printf("\n");
}

/// A buffer of `bytes` (null for none).
void* buffer_of(size_t bytes) {
  void* p = nullptr;
  if (bytes > 0)
    GLEAM_PROGRAM_CHECK(cudaMalloc(&p, bytes));
  return p;
}

} // namespace

int main() {
  cusparseHandle_t handle;
  GLEAM_CUSPARSE_CHECK(cusparseCreate(&handle));
  cudaStream_t stream;
  GLEAM_PROGRAM_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  GLEAM_CUSPARSE_CHECK(cusparseSetStream(handle, stream));
  cudaStream_t got = nullptr;
  GLEAM_CUSPARSE_CHECK(cusparseGetStream(handle, &got));
  GLEAM_PROGRAM_EXPECT(got == stream, "cusparseGetStream answers the stream set");
  int version = 0;
  GLEAM_CUSPARSE_CHECK(cusparseGetVersion(handle, &version));
  std::printf("version major %d\n", version / 1000);

  // A 64 x 48 matrix of 300 entries in COO, unsorted: (row, column) pairs
  // from a xorshift sequence, values i / 8 - 10.
  const int rows = 64, cols = 48, nnz = 300;
  std::vector<int> coo_rows(nnz), coo_cols(nnz), perm(nnz);
  std::vector<float> coo_vals(nnz);
  uint32_t seed = 7;
  for (int i = 0; i < nnz; ++i) {
    coo_rows[i] = static_cast<int>(gleam_program::next_random(seed) % rows);
    coo_cols[i] = static_cast<int>(gleam_program::next_random(seed) % cols);
    coo_vals[i] = static_cast<float>(i) / 8.0f - 10.0f;
    perm[i] = i;
  }
  auto* d_rows = gleam_program::to_device(coo_rows);
  auto* d_cols = gleam_program::to_device(coo_cols);
  auto* d_perm = gleam_program::to_device(perm);
  size_t sort_bytes = 0;
  GLEAM_CUSPARSE_CHECK(
    cusparseXcoosort_bufferSizeExt(handle, rows, cols, nnz, d_rows, d_cols, &sort_bytes));
  void* sort_buffer = buffer_of(sort_bytes);
  GLEAM_CUSPARSE_CHECK(
    cusparseXcoosortByRow(handle, rows, cols, nnz, d_rows, d_cols, d_perm, sort_buffer));
  auto sorted_perm = gleam_program::to_host(d_perm, nnz);
  gleam_program::print_ints("permutation head", sorted_perm.data(), 16, sum);
  // The values follow the permutation (cusparseGather is not in the path
  // PyTorch takes: it permutes with its own kernels).
  std::vector<float> vals(nnz);
  for (int i = 0; i < nnz; ++i)
    vals[i] = coo_vals[sorted_perm[i]];
  auto* d_vals = gleam_program::to_device(vals);
  int* d_offsets = nullptr;
  GLEAM_PROGRAM_CHECK(cudaMalloc(&d_offsets, (rows + 1) * sizeof(int)));
  GLEAM_CUSPARSE_CHECK(
    cusparseXcoo2csr(handle, d_rows, nnz, rows, d_offsets, CUSPARSE_INDEX_BASE_ZERO));
  auto offsets = gleam_program::to_host(d_offsets, rows + 1);
  gleam_program::print_ints("csr offsets", offsets.data(), rows + 1, sum);

  cusparseSpMatDescr_t a;
  GLEAM_CUSPARSE_CHECK(cusparseCreateCsr(&a, rows, cols, nnz, d_offsets, d_cols, d_vals,
                                         CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                         CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
  int64_t r = 0, c = 0, n = 0;
  GLEAM_CUSPARSE_CHECK(cusparseSpMatGetSize(a, &r, &c, &n));
  std::printf("size %lld x %lld, %lld entries\n", static_cast<long long>(r),
              static_cast<long long>(c), static_cast<long long>(n));

  // SpMM: C (64 x 5) = 1.5 A B + 0.5 C, column-major and row-major.
  const int k = 5;
  std::vector<float> b(cols * k), c0(rows * k);
  for (size_t i = 0; i < b.size(); ++i)
    b[i] = static_cast<float>(gleam_program::next_random(seed) % 17) - 8.0f;
  for (size_t i = 0; i < c0.size(); ++i)
    c0[i] = static_cast<float>(i % 7);
  float alpha = 1.5f, beta = 0.5f;
  for (auto order : {CUSPARSE_ORDER_COL, CUSPARSE_ORDER_ROW}) {
    auto* d_b = gleam_program::to_device(b);
    auto* d_c = gleam_program::to_device(c0);
    bool col = order == CUSPARSE_ORDER_COL;
    cusparseDnMatDescr_t mb, mc;
    GLEAM_CUSPARSE_CHECK(cusparseCreateDnMat(&mb, cols, k, col ? cols : k, d_b, CUDA_R_32F, order));
    GLEAM_CUSPARSE_CHECK(cusparseCreateDnMat(&mc, rows, k, col ? rows : k, d_c, CUDA_R_32F, order));
    size_t bytes = 0;
    GLEAM_CUSPARSE_CHECK(cusparseSpMM_bufferSize(
      handle, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, a, mb,
      &beta, mc, CUDA_R_32F, CUSPARSE_SPMM_ALG_DEFAULT, &bytes));
    void* buf = buffer_of(bytes);
    GLEAM_CUSPARSE_CHECK(cusparseSpMM(handle, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                      CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, a, mb, &beta, mc,
                                      CUDA_R_32F, CUSPARSE_SPMM_ALG_DEFAULT, buf));
    show(col ? "spmm col" : "spmm row", gleam_program::to_host(d_c, c0.size()));
    GLEAM_CUSPARSE_CHECK(cusparseDestroyDnMat(mb));
    GLEAM_CUSPARSE_CHECK(cusparseDestroyDnMat(mc));
    GLEAM_PROGRAM_CHECK(cudaFree(buf));
    GLEAM_PROGRAM_CHECK(cudaFree(d_b));
    GLEAM_PROGRAM_CHECK(cudaFree(d_c));
  }

  // SpMV: y = A x.
  {
    std::vector<float> x(cols), y(rows, 0.0f);
    for (int i = 0; i < cols; ++i)
      x[i] = static_cast<float>(i % 5) - 2.0f;
    auto* d_x = gleam_program::to_device(x);
    auto* d_y = gleam_program::to_device(y);
    cusparseDnVecDescr_t vx, vy;
    GLEAM_CUSPARSE_CHECK(cusparseCreateDnVec(&vx, cols, d_x, CUDA_R_32F));
    GLEAM_CUSPARSE_CHECK(cusparseCreateDnVec(&vy, rows, d_y, CUDA_R_32F));
    float one = 1.0f, zero = 0.0f;
    size_t bytes = 0;
    GLEAM_CUSPARSE_CHECK(cusparseSpMV_bufferSize(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &one,
                                                 a, vx, &zero, vy, CUDA_R_32F,
                                                 CUSPARSE_SPMV_CSR_ALG1, &bytes));
    void* buf = buffer_of(bytes);
    GLEAM_CUSPARSE_CHECK(cusparseSpMV(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, a, vx,
                                      &zero, vy, CUDA_R_32F, CUSPARSE_SPMV_CSR_ALG1, buf));
    show("spmv", gleam_program::to_host(d_y, rows));
    GLEAM_CUSPARSE_CHECK(cusparseDestroyDnVec(vx));
    GLEAM_CUSPARSE_CHECK(cusparseDestroyDnVec(vy));
    GLEAM_PROGRAM_CHECK(cudaFree(buf));
    GLEAM_PROGRAM_CHECK(cudaFree(d_x));
    GLEAM_PROGRAM_CHECK(cudaFree(d_y));
  }

  // A strided batch of two 3 x 4 CSR matrices (the second's values
  // doubled) times two 4 x 2 dense matrices, as PyTorch's batched sparse
  // products do.
  {
    std::vector<int> off{0, 2, 3, 6, 0, 2, 3, 6}, ind{0, 2, 2, 0, 1, 3, 0, 2, 2, 0, 1, 3};
    std::vector<float> val{1, 2, 3, 4, 5, 6, 2, 4, 6, 8, 10, 12};
    std::vector<float> bb(16), cc(12, 0.0f);
    for (int i = 0; i < 16; ++i)
      bb[i] = static_cast<float>(i + 1);
    auto *d_off = gleam_program::to_device(off), *d_ind = gleam_program::to_device(ind);
    auto *d_val = gleam_program::to_device(val), *d_bb = gleam_program::to_device(bb);
    auto* d_cc = gleam_program::to_device(cc);
    cusparseSpMatDescr_t m;
    GLEAM_CUSPARSE_CHECK(cusparseCreateCsr(&m, 3, 4, 6, d_off, d_ind, d_val, CUSPARSE_INDEX_32I,
                                           CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO,
                                           CUDA_R_32F));
    GLEAM_CUSPARSE_CHECK(cusparseCsrSetStridedBatch(m, 2, 4, 6));
    cusparseDnMatDescr_t mb, mc;
    GLEAM_CUSPARSE_CHECK(cusparseCreateDnMat(&mb, 4, 2, 4, d_bb, CUDA_R_32F, CUSPARSE_ORDER_COL));
    GLEAM_CUSPARSE_CHECK(cusparseDnMatSetStridedBatch(mb, 2, 8));
    GLEAM_CUSPARSE_CHECK(cusparseCreateDnMat(&mc, 3, 2, 3, d_cc, CUDA_R_32F, CUSPARSE_ORDER_COL));
    GLEAM_CUSPARSE_CHECK(cusparseDnMatSetStridedBatch(mc, 2, 6));
    float one = 1.0f, zero = 0.0f;
    size_t bytes = 0;
    GLEAM_CUSPARSE_CHECK(cusparseSpMM_bufferSize(
      handle, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, m, mb,
      &zero, mc, CUDA_R_32F, CUSPARSE_SPMM_ALG_DEFAULT, &bytes));
    void* buf = buffer_of(bytes);
    GLEAM_CUSPARSE_CHECK(cusparseSpMM(handle, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                      CUSPARSE_OPERATION_NON_TRANSPOSE, &one, m, mb, &zero, mc,
                                      CUDA_R_32F, CUSPARSE_SPMM_ALG_DEFAULT, buf));
    auto out = gleam_program::to_host(d_cc, 12);
    show("batched spmm", out);
    // Exact in float: the first product is [7 9 38 | 19 21 98].
    GLEAM_PROGRAM_EXPECT(out[0] == 7.0f && out[2] == 38.0f && out[5] == 98.0f,
                         "the first batched product");
    GLEAM_CUSPARSE_CHECK(cusparseDestroySpMat(m));
    GLEAM_CUSPARSE_CHECK(cusparseDestroyDnMat(mb));
    GLEAM_CUSPARSE_CHECK(cusparseDestroyDnMat(mc));
    GLEAM_PROGRAM_CHECK(cudaFree(buf));
  }

  // What the library refuses at the call, and the status names.
  // The vendor's library also prints its own complaint: silenced.
  cusparseSpMatDescr_t bad = nullptr;
  auto st = gleam_program::quietly([&] {
    return cusparseCreateCsr(&bad, -1, 4, 0, nullptr, nullptr, nullptr, CUSPARSE_INDEX_32I,
                             CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F);
  });
  std::printf("negative rows -> %s\n", cusparseGetErrorName(st));
  sum.add_value(static_cast<int>(st));

  GLEAM_CUSPARSE_CHECK(cusparseDestroySpMat(a));
  GLEAM_CUSPARSE_CHECK(cusparseDestroy(handle));
  GLEAM_PROGRAM_CHECK(cudaStreamDestroy(stream));
  GLEAM_PROGRAM_CHECK(cudaDeviceSynchronize());
  sum.print("cusparse_spmm");
  return 0;
}
