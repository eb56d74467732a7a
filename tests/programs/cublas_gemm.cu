// cuBLAS and cuBLASLt through their shared libraries: SGEMM, HGEMM, GemmEx
// with fp16 inputs and fp32 compute, strided-batched and pointer-array
// batched gemm, and a cuBLASLt matmul with a bias epilogue from the
// heuristic's first algorithm. Inputs are small integers, so every result
// is exact and checked against the host; a random fp32 SGEMM adds bytes
// that must be identical between runs of the same library on the same GPU.
#include "blas_common.cuh"
#include "common.cuh"

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_fp16.h>

#include <vector>



namespace {

using gleam_program::to_device;
using gleam_program::to_host;

/// Column-major C = alpha * op(A) * op(B) + beta * C on the host, in double.
void host_gemm(bool ta, bool tb, int m, int n, int k, double alpha, const std::vector<float>& A,
               int lda, const std::vector<float>& B, int ldb, double beta, std::vector<float>& C,
               int ldc, size_t offa = 0, size_t offb = 0, size_t offc = 0) {
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double s = 0;
      for (int p = 0; p < k; ++p) {
        double a = ta ? A[offa + p + i * lda] : A[offa + i + p * lda];
        double b = tb ? B[offb + j + p * ldb] : B[offb + p + j * ldb];
        s += a * b;
      }
      auto& c = C[offc + i + j * ldc];
      c = static_cast<float>(alpha * s + beta * c);
    }
}

std::vector<float> small_ints(size_t n, uint32_t seed, int range) {
  std::vector<float> v(n);
  for (auto& x : v)
    x = static_cast<float>(static_cast<int>(gleam_program::next_random(seed) % range) - range / 2);
  return v;
}

} // namespace

int main() {
  gleam_program::checksum sum;
  cublasHandle_t handle = nullptr;
  GLEAM_BLAS_CHECK(cublasCreate(&handle));
  cudaStream_t stream = nullptr;
  GLEAM_PROGRAM_CHECK(cudaStreamCreate(&stream));
  GLEAM_BLAS_CHECK(cublasSetStream(handle, stream));
  cudaStream_t back = nullptr;
  GLEAM_BLAS_CHECK(cublasGetStream(handle, &back));
  GLEAM_PROGRAM_EXPECT(back == stream, "cublasGetStream");
  GLEAM_BLAS_CHECK(cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH));
  cublasMath_t math;
  GLEAM_BLAS_CHECK(cublasGetMathMode(handle, &math));
  std::printf("math mode %d\n", static_cast<int>(math));

  // --- SGEMM, C = 1.5 A B^T + 0.5 C, exact -----------------------------------
  const int m = 64, n = 48, k = 80;
  auto A = small_ints(size_t(m) * k, 1, 9);
  auto Bt = small_ints(size_t(n) * k, 2, 9);  // n x k, used transposed
  auto C = small_ints(size_t(m) * n, 3, 9);
  auto dA = to_device(A), dB = to_device(Bt), dC = to_device(C);
  float alpha = 1.5f, beta = 0.5f;
  GLEAM_BLAS_CHECK(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_T, m, n, k, &alpha, dA, m, dB, n,
                               &beta, dC, m));
  host_gemm(false, true, m, n, k, alpha, A, m, Bt, n, beta, C, m);
  auto got = to_host(dC, C.size());
  GLEAM_PROGRAM_EXPECT(got == C, "SGEMM");
  sum.add(got.data(), got.size() * sizeof(float));
  std::printf("sgemm %dx%dx%d: ok, C[5]=%.1f\n", m, n, k, got[5]);

  // --- GemmEx: fp16 inputs, fp32 output and compute ----------------------------
  std::vector<__half> Ah(A.size()), Bh(Bt.size());
  for (size_t i = 0; i < A.size(); ++i)
    Ah[i] = __float2half(A[i]);
  for (size_t i = 0; i < Bt.size(); ++i)
    Bh[i] = __float2half(Bt[i]);
  auto dAh = to_device(Ah), dBh = to_device(Bh);
  std::vector<float> C2(size_t(m) * n, 0.0f);
  auto dC2 = to_device(C2);
  float one = 1.0f, zero = 0.0f;
  GLEAM_BLAS_CHECK(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_T, m, n, k, &one, dAh, CUDA_R_16F,
                                m, dBh, CUDA_R_16F, n, &zero, dC2, CUDA_R_32F, m,
                                CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  host_gemm(false, true, m, n, k, 1, A, m, Bt, n, 0, C2, m);
  got = to_host(dC2, C2.size());
  GLEAM_PROGRAM_EXPECT(got == C2, "GemmEx fp16 -> fp32");
  sum.add(got.data(), got.size() * sizeof(float));
  std::printf("gemm_ex f16/f32: ok\n");

  // --- HGEMM: fp16 throughout (values stay small integers) --------------------
  const int hm = 16, hn = 16, hk = 8;
  auto Ha = small_ints(size_t(hm) * hk, 4, 5), Hb = small_ints(size_t(hk) * hn, 5, 5);
  std::vector<__half> ha(Ha.size()), hb(Hb.size()), hc(size_t(hm) * hn, __float2half(0.0f));
  for (size_t i = 0; i < Ha.size(); ++i)
    ha[i] = __float2half(Ha[i]);
  for (size_t i = 0; i < Hb.size(); ++i)
    hb[i] = __float2half(Hb[i]);
  auto dha = to_device(ha), dhb = to_device(hb), dhc = to_device(hc);
  __half hone = __float2half(1.0f), hzero = __float2half(0.0f);
  GLEAM_BLAS_CHECK(cublasHgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, hm, hn, hk, &hone, dha, hm, dhb,
                               hk, &hzero, dhc, hm));
  std::vector<float> Hc(size_t(hm) * hn, 0.0f);
  host_gemm(false, false, hm, hn, hk, 1, Ha, hm, Hb, hk, 0, Hc, hm);
  auto hgot = to_host(dhc, hc.size());
  for (size_t i = 0; i < Hc.size(); ++i)
    GLEAM_PROGRAM_EXPECT(__half2float(hgot[i]) == Hc[i], "HGEMM");
  sum.add(hgot.data(), hgot.size() * sizeof(__half));
  std::printf("hgemm: ok\n");

  // --- strided batched SGEMM ------------------------------------------------
  const int batch = 3, bm = 12, bn = 10, bk = 7;
  const long long sa = bm * bk + 5, sb = bk * bn, sc = bm * bn + 3;
  auto SA = small_ints(size_t(sa) * batch, 6, 7), SB = small_ints(size_t(sb) * batch, 7, 7);
  std::vector<float> SC(size_t(sc) * batch, 0.0f);
  auto dSA = to_device(SA), dSB = to_device(SB), dSC = to_device(SC);
  GLEAM_BLAS_CHECK(cublasSgemmStridedBatched(handle, CUBLAS_OP_N, CUBLAS_OP_N, bm, bn, bk, &one,
                                             dSA, bm, sa, dSB, bk, sb, &zero, dSC, bm, sc,
                                             batch));
  for (int i = 0; i < batch; ++i)
    host_gemm(false, false, bm, bn, bk, 1, SA, bm, SB, bk, 0, SC, bm, size_t(i) * sa,
              size_t(i) * sb, size_t(i) * sc);
  got = to_host(dSC, SC.size());
  GLEAM_PROGRAM_EXPECT(got == SC, "SgemmStridedBatched");
  sum.add(got.data(), got.size() * sizeof(float));
  std::printf("sgemm strided batched x%d: ok\n", batch);

  // --- GemmBatchedEx with device pointer arrays ------------------------------
  std::vector<const float*> pa(batch), pb(batch);
  std::vector<float*> pc(batch);
  std::vector<float> BC(size_t(sc) * batch, 0.0f);
  auto dBC = to_device(BC);
  for (int i = 0; i < batch; ++i) {
    pa[size_t(i)] = dSA + size_t(i) * sa;
    pb[size_t(i)] = dSB + size_t(i) * sb;
    pc[size_t(i)] = dBC + size_t(i) * sc;
  }
  auto dpa = to_device(pa), dpb = to_device(pb);
  auto dpc = to_device(pc);
  GLEAM_BLAS_CHECK(cublasGemmBatchedEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, bm, bn, bk, &one,
                                       reinterpret_cast<const void* const*>(dpa), CUDA_R_32F, bm,
                                       reinterpret_cast<const void* const*>(dpb), CUDA_R_32F, bk,
                                       &zero, reinterpret_cast<void* const*>(dpc), CUDA_R_32F,
                                       bm, batch, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  got = to_host(dBC, BC.size());
  GLEAM_PROGRAM_EXPECT(got == SC, "GemmBatchedEx");
  std::printf("gemm batched ex x%d: ok\n", batch);

  // --- random fp32 SGEMM: bytes must match between identical runs -------------
  const int rm = 96, rn = 64, rk = 128;
  std::vector<float> RA(size_t(rm) * rk), RB(size_t(rk) * rn);
  uint32_t state = 99;
  for (auto& x : RA)
    x = static_cast<float>(gleam_program::next_random(state) % 20001) / 10000.0f - 1.0f;
  for (auto& x : RB)
    x = static_cast<float>(gleam_program::next_random(state) % 20001) / 10000.0f - 1.0f;
  auto dRA = to_device(RA), dRB = to_device(RB);
  float* dRC = nullptr;
  GLEAM_PROGRAM_CHECK(cudaMalloc(&dRC, size_t(rm) * rn * sizeof(float)));
  GLEAM_BLAS_CHECK(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, rm, rn, rk, &one, dRA, rm, dRB,
                               rk, &zero, dRC, rm));
  got = to_host(dRC, size_t(rm) * rn);
  std::vector<float> RC(size_t(rm) * rn, 0.0f);
  host_gemm(false, false, rm, rn, rk, 1, RA, rm, RB, rk, 0, RC, rm);
  for (size_t i = 0; i < RC.size(); ++i)
    GLEAM_PROGRAM_EXPECT(got[i] - RC[i] < 1e-3f && RC[i] - got[i] < 1e-3f, "random SGEMM");
  sum.add(got.data(), got.size() * sizeof(float));
  std::printf("sgemm random %dx%dx%d: ok\n", rm, rn, rk);

  // --- an invalid leading dimension is refused --------------------------------
  // (The vendor's diagnostic for it is silenced: gleam_program::quietly.)
  auto bad = gleam_program::quietly([&] {
    return cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, dA, m - 1, dB, k, &zero,
                       dC, m);
  });
  std::printf("sgemm lda < m: %s\n", cublasGetStatusName(bad));

  // --- cuBLASLt: D = A^T B + bias, heuristic's first algorithm ----------------
  cublasLtHandle_t lt = nullptr;
  GLEAM_BLAS_CHECK(cublasLtCreate(&lt));
  const int lm = 32, ln = 24, lk = 40;
  auto LA = small_ints(size_t(lk) * lm, 8, 7);  // k x m, used transposed
  auto LB = small_ints(size_t(lk) * ln, 9, 7);
  auto bias = small_ints(size_t(lm), 10, 9);
  std::vector<float> LD(size_t(lm) * ln, 0.0f);
  auto dLA = to_device(LA), dLB = to_device(LB), dbias = to_device(bias), dLD = to_device(LD);
  cublasLtMatmulDesc_t desc = nullptr;
  GLEAM_BLAS_CHECK(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  cublasOperation_t opT = CUBLAS_OP_T;
  GLEAM_BLAS_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &opT,
                                                  sizeof(opT)));
  cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_BIAS;
  GLEAM_BLAS_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue,
                                                  sizeof(epilogue)));
  const float* bias_ptr = dbias;
  GLEAM_BLAS_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                                                  &bias_ptr, sizeof(bias_ptr)));
  cublasLtMatrixLayout_t la = nullptr, lb = nullptr, ld = nullptr;
  GLEAM_BLAS_CHECK(cublasLtMatrixLayoutCreate(&la, CUDA_R_32F, lk, lm, lk));
  GLEAM_BLAS_CHECK(cublasLtMatrixLayoutCreate(&lb, CUDA_R_32F, lk, ln, lk));
  GLEAM_BLAS_CHECK(cublasLtMatrixLayoutCreate(&ld, CUDA_R_32F, lm, ln, lm));
  cublasLtMatmulPreference_t pref = nullptr;
  GLEAM_BLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
  size_t ws_size = size_t{4} << 20;
  GLEAM_BLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(
    pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws_size, sizeof(ws_size)));
  cublasLtMatmulHeuristicResult_t heuristic = {};
  int found = 0;
  GLEAM_BLAS_CHECK(cublasLtMatmulAlgoGetHeuristic(lt, desc, la, lb, ld, ld, pref, 1, &heuristic,
                                                  &found));
  GLEAM_PROGRAM_EXPECT(found == 1, "cublasLtMatmulAlgoGetHeuristic found an algorithm");
  void* ws = nullptr;
  GLEAM_PROGRAM_CHECK(cudaMalloc(&ws, ws_size));
  GLEAM_BLAS_CHECK(cublasLtMatmul(lt, desc, &one, dLA, la, dLB, lb, &zero, dLD, ld, dLD, ld,
                                  &heuristic.algo, ws, ws_size, stream));
  GLEAM_PROGRAM_CHECK(cudaStreamSynchronize(stream));
  host_gemm(true, false, lm, ln, lk, 1, LA, lk, LB, lk, 0, LD, lm);
  for (int j = 0; j < ln; ++j)
    for (int i = 0; i < lm; ++i)
      LD[size_t(i) + size_t(j) * lm] += bias[size_t(i)];
  got = to_host(dLD, LD.size());
  GLEAM_PROGRAM_EXPECT(got == LD, "cublasLtMatmul with bias");
  sum.add(got.data(), got.size() * sizeof(float));
  std::printf("lt matmul + bias %dx%dx%d: ok\n", lm, ln, lk);

  // A cuBLAS handle serves as a cuBLASLt handle (PyTorch relies on it).
  std::vector<float> LD2(LD.size(), 0.0f);
  auto dLD2 = to_device(LD2);
  GLEAM_BLAS_CHECK(cublasLtMatmul(reinterpret_cast<cublasLtHandle_t>(handle), desc, &one, dLA, la,
                                  dLB, lb, &zero, dLD2, ld, dLD2, ld, &heuristic.algo, ws,
                                  ws_size, stream));
  got = to_host(dLD2, LD2.size());
  GLEAM_PROGRAM_EXPECT(got == LD, "cublasLtMatmul on a cuBLAS handle");
  std::printf("lt matmul on a cublas handle: ok\n");

  GLEAM_BLAS_CHECK(cublasLtMatmulPreferenceDestroy(pref));
  GLEAM_BLAS_CHECK(cublasLtMatrixLayoutDestroy(la));
  GLEAM_BLAS_CHECK(cublasLtMatrixLayoutDestroy(lb));
  GLEAM_BLAS_CHECK(cublasLtMatrixLayoutDestroy(ld));
  GLEAM_BLAS_CHECK(cublasLtMatmulDescDestroy(desc));
  GLEAM_BLAS_CHECK(cublasLtDestroy(lt));
  GLEAM_BLAS_CHECK(cublasDestroy(handle));
  GLEAM_PROGRAM_CHECK(cudaStreamDestroy(stream));
  sum.print("cublas_gemm");
  return 0;
}
