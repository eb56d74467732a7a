#include "executor/blas.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "executor/blas_runner.hpp"
#include "executor/blas_shapes.hpp"
#include "executor/library_call.hpp"
#include "executor/library_graveyard.hpp"
#include "executor/op_table.hpp"
#include "executor/session_streams.hpp"

namespace gleam::executor {

namespace {

namespace shapes = blas_shapes;

/// The CUresult that stands for a failed library status in OpResult.status
/// (the exact status is OpResult.blas_status). Never a sticky error: a
/// failed library call leaves the context usable.
CUresult cu_of(cublasStatus_t s) {
  switch (s) {
    case CUBLAS_STATUS_SUCCESS:
      return CUDA_SUCCESS;
    case CUBLAS_STATUS_NOT_INITIALIZED:
      return CUDA_ERROR_NOT_INITIALIZED;
    case CUBLAS_STATUS_ALLOC_FAILED:
      return CUDA_ERROR_OUT_OF_MEMORY;
    case CUBLAS_STATUS_INVALID_VALUE:
    case CUBLAS_STATUS_MAPPING_ERROR:
      return CUDA_ERROR_INVALID_VALUE;
    case CUBLAS_STATUS_ARCH_MISMATCH:
    case CUBLAS_STATUS_NOT_SUPPORTED:
      return CUDA_ERROR_NOT_SUPPORTED;
    default:
      return CUDA_ERROR_UNKNOWN;
  }
}

bool fits_int(int64_t v) {
  return v >= std::numeric_limits<int>::min() && v <= std::numeric_limits<int>::max();
}

/// Executes one library op; every failure sets r_ and returns.
cublasStatus_t destroy_now(blas_api& api, const blas_handle_entry& h) {
  return h.lt != nullptr ? api.cublasLtDestroy(h.lt) : api.cublasDestroy_v2(h.blas);
}

/// Destroys `h` now, or through `graves` once no capture is in progress
/// (detached from its stream and workspace first: the session's may be
/// gone by then; the legacy stream and the library's own pool instead).
cublasStatus_t destroy_handle(blas_api& api, library_graveyard* graves, const blas_handle_entry& h) {
  if (graves == nullptr)
    return destroy_now(api, h);
  auto* a = &api;
  return static_cast<cublasStatus_t>(graves->destroy(
    [a, h] { return static_cast<int32_t>(destroy_now(*a, h)); },
    [a, h] {
      if (h.blas != nullptr)
        static_cast<void>(a->cublasSetStream_v2(h.blas, nullptr));
    }));
}

} // namespace

/// The library_call_env of a generated cuBLAS call: the runner's handle,
/// stream and range checks, and its result.
class blas_call_env final : public library_call_env {
public:
  blas_call_env(blas_runner& runner, bool device_scalars)
    : library_call_env(device_scalars), runner_(runner) {
  }
  void* handle(uint64_t id) override;
  bool device(uint64_t ptr, uint64_t bytes, const char* what) override;
  void report(int status, const char* function) override;
  void malformed(const char* function) override;
  void unavailable(const char* function) override;
  bool device_array(uint64_t ptr, int64_t count, uint64_t bytes_each, const char* what) override;

protected:
  void invalid(std::string detail) override;

private:
  blas_runner& runner_;
  /// The handle of this call (handle()), whose stream device_array waits for.
  blas_handle_entry* handle_ = nullptr;
};

// --- blas_runner -------------------------------------------------------------

void blas_runner::run(const proto::Op& op) {
  using k = proto::Op::KindCase;
  switch (op.kind_case()) {
    case k::kBlasCreate:
      return create(op.blas_create().handle(), false);
    case k::kBlasLtCreate:
      return create(op.blas_lt_create().handle(), true);
    case k::kBlasDestroy:
      return destroy(op.blas_destroy().handle(), false);
    case k::kBlasLtDestroy:
      return destroy(op.blas_lt_destroy().handle(), true);
    case k::kBlasSetStream:
      return set_stream(op.blas_set_stream());
    case k::kBlasSetWorkspace:
      return set_workspace(op.blas_set_workspace());
    case k::kBlasSetMathMode:
      if (auto* h = lookup_blas(op.blas_set_math_mode().handle()))
        report(api_.cublasSetMathMode(h->blas,
                                      static_cast<cublasMath_t>(op.blas_set_math_mode().mode())),
               "cublasSetMathMode");
      return;
    case k::kBlasSetAtomicsMode:
      if (auto* h = lookup_blas(op.blas_set_atomics_mode().handle()))
        report(api_.cublasSetAtomicsMode(
                 h->blas, static_cast<cublasAtomicsMode_t>(op.blas_set_atomics_mode().mode())),
               "cublasSetAtomicsMode");
      return;
    case k::kBlasGemm:
      return gemm(op.blas_gemm());
    case k::kBlasLtMatmul:
      return lt_matmul(op.blas_lt_matmul());
    case k::kBlasLtHeuristic:
      return lt_heuristic(op.blas_lt_heuristic());
    case k::kBlasLtAlgoGetIds:
      return lt_algo_get_ids(op.blas_lt_algo_get_ids());
    case k::kBlasLtAlgoInit:
      return lt_algo_init(op.blas_lt_algo_init());
    case k::kBlasLtAlgoCheck:
      return lt_algo_check(op.blas_lt_algo_check());
    case k::kBlasLtAlgoAttribute:
      return lt_algo_attribute(op.blas_lt_algo_attribute());
    case k::kBlasLtTransform:
      return lt_transform(op.blas_lt_transform());
    case k::kBlasLtHeuristicsCache:
      return lt_heuristics_cache(op.blas_lt_heuristics_cache());
    case k::kLibraryCall:
      return library_call(op.library_call());
    default:
      return fail(CUBLAS_STATUS_INTERNAL_ERROR,
                  fmt::format("op seq {} is not a cuBLAS op", op.seq()));
  }
}

// --- results ---------------------------------------------------------------

void blas_runner::fail(cublasStatus_t st, std::string detail) {
  r_.set_blas_status(static_cast<int32_t>(st));
  r_.set_status(static_cast<int32_t>(cu_of(st)));
  r_.set_error(std::move(detail));
}

void blas_runner::invalid(std::string detail) {
  fail(CUBLAS_STATUS_INVALID_VALUE, std::move(detail));
}

bool blas_runner::report(cublasStatus_t st, const char* what) {
  if (st == CUBLAS_STATUS_SUCCESS) {
    r_.set_blas_status(0);
    return true;
  }
  auto* name = api_.cublasGetStatusName != nullptr ? api_.cublasGetStatusName(st) : "";
  fail(st, fmt::format("{} returned {} ({})", what, static_cast<int>(st), name));
  return false;
}

// --- lookups ---------------------------------------------------------------

bool blas_runner::lookup_stream(uint64_t handle, CUstream& out, bool work) {
  auto rc = work ? stream_for_work(driver_, s_, handle, &out)
                 : driver_stream(driver_, s_, handle, &out);
  if (rc == CUDA_SUCCESS)
    return true;
  invalid(fmt::format("stream handle {} is not a usable stream of this session ({})",
                      handle, static_cast<int>(rc)));
  return false;
}

blas_handle_entry* blas_runner::lookup(uint64_t id) {
  auto i = t_.handles.find(id);
  if (i != t_.handles.end())
    return &i->second;
  fail(CUBLAS_STATUS_NOT_INITIALIZED,
       fmt::format("cuBLAS handle {} is not a handle of this session (never "
                   "created, or destroyed)",
                   id));
  return nullptr;
}

blas_handle_entry* blas_runner::lookup_blas(uint64_t id) {
  auto* h = lookup(id);
  if (h != nullptr && h->blas == nullptr) {
    fail(CUBLAS_STATUS_NOT_INITIALIZED,
         fmt::format("handle {} is a cuBLASLt handle; this call needs a cuBLAS "
                     "handle from cublasCreate",
                     id));
    return nullptr;
  }
  return h;
}

bool blas_runner::lookup_lt(uint64_t id, cublasLtHandle_t& out) {
  auto* h = lookup(id);
  if (h == nullptr)
    return false;
  out = h->lt != nullptr ? h->lt : reinterpret_cast<cublasLtHandle_t>(h->blas);
  return true;
}

bool blas_runner::check_range(uint64_t ptr, uint64_t len, const char* what) {
  if (len == 0 || s_.memory.contains(ptr, len))
    return true;
  invalid(fmt::format("{}: address {:#x} + {} bytes is outside this session's "
                      "allocations; pass device memory from this process's "
                      "cudaMalloc, large enough for the matrix shape",
                      what, ptr, len));
  return false;
}

bool blas_runner::take_scalars(const std::string& alpha, const std::string& beta, scalar& a,
                               scalar& b) {
  if (alpha.empty() || alpha.size() > sizeof(a.bytes) || beta.size() != alpha.size()) {
    invalid(fmt::format("alpha/beta of {}/{} bytes: send both scalars by value, "
                        "1 to 16 bytes each",
                        alpha.size(), beta.size()));
    return false;
  }
  std::memcpy(a.bytes, alpha.data(), alpha.size());
  std::memcpy(b.bytes, beta.data(), beta.size());
  return true;
}

// --- handles ---------------------------------------------------------------

void blas_runner::create(uint64_t id, bool lt) {
  if (id == 0 || t_.handles.count(id) != 0)
    return invalid(fmt::format("handle {} is 0 or already in use in this session; "
                               "use a fresh client handle",
                               id));
  blas_handle_entry e;
  if (lt) {
    if (!report(api_.cublasLtCreate(&e.lt), "cublasLtCreate"))
      return;
  } else if (!report(api_.cublasCreate_v2(&e.blas), "cublasCreate")) {
    return;
  } else if (!bind(e, stream_handle::legacy_default, false)) {
    static_cast<void>(api_.cublasDestroy_v2(e.blas));
    return;
  }
  t_.handles.emplace(id, e);
}

void blas_runner::destroy(uint64_t id, bool lt) {
  auto* h = lookup(id);
  if (h == nullptr)
    return;
  if ((h->lt != nullptr) != lt)
    return fail(CUBLAS_STATUS_NOT_INITIALIZED,
                fmt::format("handle {} is a {} handle; destroy it with {}", id,
                            lt ? "cuBLAS" : "cuBLASLt",
                            lt ? "cublasDestroy" : "cublasLtDestroy"));
  auto entry = *h;
  t_.handles.erase(id);
  // The destruction synchronizes the device: while this session captures,
  // that invalidates its captures, as it would locally.
  if (!s_.captures.empty())
    static_cast<void>(sync_session(driver_, s_));
  report(destroy_handle(api_, s_.graves, entry), lt ? "cublasLtDestroy" : "cublasDestroy");
}

void blas_runner::set_stream(const proto::BlasSetStream& op) {
  auto* h = lookup_blas(op.handle());
  if (h != nullptr && bind(*h, op.stream(), false))
    h->stream = op.stream();
}

bool blas_runner::bind(blas_handle_entry& h, uint64_t handle, bool work) {
  CUstream stream = nullptr;
  if (!lookup_stream(handle, stream, work))
    return false;
  if (stream == h.bound)
    return true;
  if (!report(api_.cublasSetStream_v2(h.blas, stream), "cublasSetStream"))
    return false;
  h.bound = stream;
  return true;
}

void blas_runner::set_workspace(const proto::BlasSetWorkspace& op) {
  auto* h = lookup_blas(op.handle());
  if (h == nullptr || !check_range(op.workspace(), op.size(), "cublasSetWorkspace"))
    return;
  report(api_.cublasSetWorkspace_v2(h->blas, reinterpret_cast<void*>(op.workspace()),
                                    op.size()),
         "cublasSetWorkspace");
}

// --- gemm ------------------------------------------------------------------

bool blas_runner::check_pointer_arrays(const proto::BlasGemm& g, CUstream stream,
                                       const uint64_t* arrays, const uint64_t* extents) {
  uint64_t bytes = 0;
  if (__builtin_mul_overflow(static_cast<uint64_t>(g.batch_count()), uint64_t{8}, &bytes)) {
    invalid(fmt::format("batch count {} overflows", g.batch_count()));
    return false;
  }
  static const char* names[] = {"Aarray", "Barray", "Carray"};
  for (int i = 0; i < 3; ++i)
    if (!check_range(arrays[i], bytes, names[i]))
      return false;
  if (bytes == 0)
    return true;
  if (auto rc = driver_.cuStreamSynchronize(stream); rc != CUDA_SUCCESS) {
    r_.set_status(static_cast<int32_t>(rc));
    r_.set_blas_status(CUBLAS_STATUS_EXECUTION_FAILED);
    r_.set_error(fmt::format("cuStreamSynchronize before reading the pointer arrays "
                             "failed: {}",
                             driver_.describe(rc)));
    return false;
  }
  std::vector<uint64_t> ptrs(static_cast<size_t>(g.batch_count()));
  for (int i = 0; i < 3; ++i) {
    if (auto rc = driver_.cuMemcpyDtoH(ptrs.data(), static_cast<CUdeviceptr>(arrays[i]), bytes);
        rc != CUDA_SUCCESS) {
      r_.set_status(static_cast<int32_t>(rc));
      r_.set_blas_status(CUBLAS_STATUS_MAPPING_ERROR);
      r_.set_error(fmt::format("reading {} failed: {}", names[i], driver_.describe(rc)));
      return false;
    }
    for (size_t j = 0; j < ptrs.size(); ++j)
      if (!check_range(ptrs[j], extents[i],
                       fmt::format("{}[{}]", names[i], j).c_str()))
        return false;
  }
  return true;
}

template <class T, class Plain, class Plain64, class Strided, class Strided64, class Batched,
          class Batched64>
cublasStatus_t blas_runner::typed(Plain plain, Plain64 plain64, Strided strided,
                                  Strided64 strided64, Batched batched, Batched64 batched64,
                                  cublasHandle_t h, const proto::BlasGemm& g,
                                  const scalar& alpha, const scalar& beta, bool small) {
  auto ta = static_cast<cublasOperation_t>(g.transa());
  auto tb = static_cast<cublasOperation_t>(g.transb());
  auto* al = reinterpret_cast<const T*>(alpha.bytes);
  auto* be = reinterpret_cast<const T*>(beta.bytes);
  auto* A = reinterpret_cast<const T*>(g.a());
  auto* B = reinterpret_cast<const T*>(g.b());
  auto* C = reinterpret_cast<T*>(g.c());
  auto m = g.m(), n = g.n(), k = g.k(), lda = g.lda(), ldb = g.ldb(), ldc = g.ldc();
  auto batch = g.batch_count();
  auto i = [](int64_t v) { return static_cast<int>(v); };
  switch (g.form()) {
    case proto::BlasGemm::STRIDED_BATCHED:
      if (small)
        return strided(h, ta, tb, i(m), i(n), i(k), al, A, i(lda), g.stride_a(), B, i(ldb),
                       g.stride_b(), be, C, i(ldc), g.stride_c(), i(batch));
      return strided64(h, ta, tb, m, n, k, al, A, lda, g.stride_a(), B, ldb, g.stride_b(), be,
                       C, ldc, g.stride_c(), batch);
    case proto::BlasGemm::BATCHED: {
      auto* Aa = reinterpret_cast<const T* const*>(g.a());
      auto* Ba = reinterpret_cast<const T* const*>(g.b());
      auto* Ca = reinterpret_cast<T* const*>(g.c());
      if (small)
        return batched(h, ta, tb, i(m), i(n), i(k), al, Aa, i(lda), Ba, i(ldb), be, Ca,
                       i(ldc), i(batch));
      return batched64(h, ta, tb, m, n, k, al, Aa, lda, Ba, ldb, be, Ca, ldc, batch);
    }
    default:
      if (small)
        return plain(h, ta, tb, i(m), i(n), i(k), al, A, i(lda), B, i(ldb), be, C, i(ldc));
      return plain64(h, ta, tb, m, n, k, al, A, lda, B, ldb, be, C, ldc);
  }
}

cublasStatus_t blas_runner::ex(cublasHandle_t h, const proto::BlasGemm& g, const scalar& alpha,
                               const scalar& beta, bool small) {
  auto ta = static_cast<cublasOperation_t>(g.transa());
  auto tb = static_cast<cublasOperation_t>(g.transb());
  auto at = static_cast<cudaDataType>(g.a_type());
  auto bt = static_cast<cudaDataType>(g.b_type());
  auto ct = static_cast<cudaDataType>(g.c_type());
  auto compute = static_cast<cublasComputeType_t>(g.compute_type());
  auto algo = static_cast<cublasGemmAlgo_t>(g.algo());
  auto* A = reinterpret_cast<const void*>(g.a());
  auto* B = reinterpret_cast<const void*>(g.b());
  auto* C = reinterpret_cast<void*>(g.c());
  auto m = g.m(), n = g.n(), k = g.k(), lda = g.lda(), ldb = g.ldb(), ldc = g.ldc();
  auto batch = g.batch_count();
  auto i = [](int64_t v) { return static_cast<int>(v); };
  switch (g.form()) {
    case proto::BlasGemm::STRIDED_BATCHED:
      if (small)
        return api_.cublasGemmStridedBatchedEx(h, ta, tb, i(m), i(n), i(k), alpha.bytes, A, at,
                                               i(lda), g.stride_a(), B, bt, i(ldb),
                                               g.stride_b(), beta.bytes, C, ct, i(ldc),
                                               g.stride_c(), i(batch), compute, algo);
      return api_.cublasGemmStridedBatchedEx_64(h, ta, tb, m, n, k, alpha.bytes, A, at, lda,
                                                g.stride_a(), B, bt, ldb, g.stride_b(),
                                                beta.bytes, C, ct, ldc, g.stride_c(), batch,
                                                compute, algo);
    case proto::BlasGemm::BATCHED: {
      auto* Aa = reinterpret_cast<const void* const*>(g.a());
      auto* Ba = reinterpret_cast<const void* const*>(g.b());
      auto* Ca = reinterpret_cast<void* const*>(g.c());
      if (small)
        return api_.cublasGemmBatchedEx(h, ta, tb, i(m), i(n), i(k), alpha.bytes, Aa, at,
                                        i(lda), Ba, bt, i(ldb), beta.bytes, Ca, ct, i(ldc),
                                        i(batch), compute, algo);
      return api_.cublasGemmBatchedEx_64(h, ta, tb, m, n, k, alpha.bytes, Aa, at, lda, Ba, bt,
                                         ldb, beta.bytes, Ca, ct, ldc, batch, compute, algo);
    }
    default:
      if (small)
        return api_.cublasGemmEx(h, ta, tb, i(m), i(n), i(k), alpha.bytes, A, at, i(lda), B,
                                 bt, i(ldb), beta.bytes, C, ct, i(ldc), compute, algo);
      return api_.cublasGemmEx_64(h, ta, tb, m, n, k, alpha.bytes, A, at, lda, B, bt, ldb,
                                  beta.bytes, C, ct, ldc, compute, algo);
  }
}

void blas_runner::gemm(const proto::BlasGemm& g) {
  auto* h = lookup_blas(g.handle());
  if (h == nullptr)
    return;
  if (!shapes::valid_op(g.transa()) || !shapes::valid_op(g.transb()))
    return invalid(fmt::format("gemm: transa {} / transb {} is not a cublasOperation_t",
                               g.transa(), g.transb()));
  if (g.m() < 0 || g.n() < 0 || g.k() < 0 || g.batch_count() < 0)
    return invalid(fmt::format("gemm: negative size m={} n={} k={} batch={}", g.m(), g.n(),
                               g.k(), g.batch_count()));
  cudaDataType types[3];
  switch (g.api()) {
    case proto::BlasGemm::SGEMM:
      types[0] = types[1] = types[2] = CUDA_R_32F;
      break;
    case proto::BlasGemm::DGEMM:
      types[0] = types[1] = types[2] = CUDA_R_64F;
      break;
    case proto::BlasGemm::HGEMM:
      types[0] = types[1] = types[2] = CUDA_R_16F;
      break;
    default:
      types[0] = static_cast<cudaDataType>(g.a_type());
      types[1] = static_cast<cudaDataType>(g.b_type());
      types[2] = static_cast<cudaDataType>(g.c_type());
      break;
  }
  size_t elem[3];
  for (int i = 0; i < 3; ++i) {
    elem[i] = shapes::element_size(types[i]);
    if (elem[i] == 0)
      return fail(CUBLAS_STATUS_NOT_SUPPORTED,
                  fmt::format("gemm: data type {} has no byte size Gleam can check",
                              static_cast<int>(types[i])));
  }
  shapes::dims d[3] = {shapes::stored(g.transa(), g.m(), g.k()),
                       shapes::stored(g.transb(), g.k(), g.n()), {g.m(), g.n()}};
  int64_t ld[3] = {g.lda(), g.ldb(), g.ldc()};
  int64_t stride[3] = {g.stride_a(), g.stride_b(), g.stride_c()};
  uint64_t ptr[3] = {g.a(), g.b(), g.c()};
  static const char* names[] = {"A", "B", "C"};
  uint64_t extent[3];
  for (int i = 0; i < 3; ++i) {
    auto e = shapes::matrix_extent(d[i].rows, d[i].cols, ld[i], elem[i]);
    if (!e)
      return invalid(fmt::format("gemm: {} is {} x {} with leading dimension {}: the "
                                 "leading dimension must be at least the row count",
                                 names[i], d[i].rows, d[i].cols, ld[i]));
    extent[i] = *e;
  }
  switch (g.form()) {
    case proto::BlasGemm::PLAIN:
      for (int i = 0; i < 3; ++i)
        if (!check_range(ptr[i], extent[i], names[i]))
          return;
      break;
    case proto::BlasGemm::STRIDED_BATCHED:
      for (int i = 0; i < 3; ++i) {
        auto e = shapes::batched_extent(extent[i], stride[i], g.batch_count(), elem[i]);
        if (!e)
          return invalid(fmt::format("gemm: stride {} of {} over {} batches is negative or "
                                     "overflows",
                                     stride[i], names[i], g.batch_count()));
        if (!check_range(ptr[i], *e, names[i]))
          return;
      }
      break;
    case proto::BlasGemm::BATCHED:
      // The arrays are read after the handle's stream has done its work.
      if (!bind(*h, h->stream) || !check_pointer_arrays(g, h->bound, ptr, extent))
        return;
      break;
    default:
      return invalid(fmt::format("gemm: unknown form {}", static_cast<int>(g.form())));
  }
  scalar alpha;
  scalar beta;
  if (!take_scalars(g.alpha(), g.beta(), alpha, beta))
    return;
  // The gemm is work on the handle's stream: ordered by the legacy-stream
  // rule like a kernel there (a later legacy-stream copy waits for it).
  if (g.form() != proto::BlasGemm::BATCHED && !bind(*h, h->stream))
    return;
  bool small = fits_int(g.m()) && fits_int(g.n()) && fits_int(g.k()) && fits_int(g.lda())
               && fits_int(g.ldb()) && fits_int(g.ldc()) && fits_int(g.batch_count());
  cublasStatus_t st = CUBLAS_STATUS_SUCCESS;
  switch (g.api()) {
    case proto::BlasGemm::SGEMM:
      st = typed<float>(api_.cublasSgemm_v2, api_.cublasSgemm_v2_64,
                        api_.cublasSgemmStridedBatched, api_.cublasSgemmStridedBatched_64,
                        api_.cublasSgemmBatched, api_.cublasSgemmBatched_64, h->blas, g,
                        alpha, beta, small);
      break;
    case proto::BlasGemm::DGEMM:
      st = typed<double>(api_.cublasDgemm_v2, api_.cublasDgemm_v2_64,
                         api_.cublasDgemmStridedBatched, api_.cublasDgemmStridedBatched_64,
                         api_.cublasDgemmBatched, api_.cublasDgemmBatched_64, h->blas, g,
                         alpha, beta, small);
      break;
    case proto::BlasGemm::HGEMM:
      st = typed<__half>(api_.cublasHgemm, api_.cublasHgemm_64, api_.cublasHgemmStridedBatched,
                         api_.cublasHgemmStridedBatched_64, api_.cublasHgemmBatched,
                         api_.cublasHgemmBatched_64, h->blas, g, alpha, beta, small);
      break;
    default:
      st = ex(h->blas, g, alpha, beta, small);
      break;
  }
  report(st, "gemm");
}

// --- generated functions -----------------------------------------------------

void blas_runner::library_call(const proto::LibraryCall& op) {
  if (op.library() != proto::LibraryCall::CUBLAS)
    return fail(CUBLAS_STATUS_NOT_SUPPORTED,
                fmt::format("library {} is not one this server runs",
                            static_cast<int>(op.library())));
  blas_call_env env(*this, op.device_scalars());
  wire::arg_reader in(op.args());
  if (!run_generated_cublas(api_, env, op.function(), in))
    fail(CUBLAS_STATUS_NOT_SUPPORTED,
         fmt::format("cuBLAS function id {} is unknown to this server: the client was "
                     "built from another interpose/spec/cublas.spec; use one Gleam "
                     "release on both sides",
                     op.function()));
}

blas_handle_entry* blas_runner::generated_handle(uint64_t id, bool device_scalars) {
  auto* h = lookup_blas(id);
  if (h == nullptr || !bind(*h, h->stream))
    return nullptr;
  auto mode = device_scalars ? CUBLAS_POINTER_MODE_DEVICE : CUBLAS_POINTER_MODE_HOST;
  if (mode != h->pointer_mode) {
    if (!report(api_.cublasSetPointerMode_v2(h->blas, mode), "cublasSetPointerMode"))
      return nullptr;
    h->pointer_mode = mode;
  }
  return h;
}

bool blas_runner::check_device_array(CUstream stream, uint64_t ptr, int64_t count,
                                     uint64_t bytes_each, const char* what) {
  CUresult rc = CUDA_SUCCESS;
  auto checked = check_pointer_array(
    driver_, stream, ptr, count, bytes_each, what,
    [this](uint64_t p, uint64_t n, const char* w) { return check_range(p, n, w); }, &rc);
  if (checked == pointer_array_check::sync_failed || checked == pointer_array_check::read_failed) {
    r_.set_status(static_cast<int32_t>(rc));
    r_.set_blas_status(checked == pointer_array_check::sync_failed
                         ? CUBLAS_STATUS_EXECUTION_FAILED
                         : CUBLAS_STATUS_MAPPING_ERROR);
    r_.set_error(fmt::format("{} {} failed: {}",
                             checked == pointer_array_check::sync_failed
                               ? "cuStreamSynchronize before reading"
                               : "reading",
                             what, driver_.describe(rc)));
  }
  return checked == pointer_array_check::ok;
}

void* blas_call_env::handle(uint64_t id) {
  handle_ = runner_.generated_handle(id, device_scalars());
  return handle_ != nullptr ? handle_->blas : nullptr;
}

bool blas_call_env::device_array(uint64_t ptr, int64_t count, uint64_t bytes_each,
                                 const char* what) {
  return handle_ != nullptr
         && runner_.check_device_array(handle_->bound, ptr, count, bytes_each, what);
}

bool blas_call_env::device(uint64_t ptr, uint64_t bytes, const char* what) {
  return runner_.check_range(ptr, bytes, what);
}

void blas_call_env::report(int status, const char* function) {
  if (runner_.report(static_cast<cublasStatus_t>(status), function))
    take_outputs(*runner_.r_.mutable_library_outputs());
}

void blas_call_env::malformed(const char* function) {
  runner_.invalid(fmt::format("{}: the packed arguments do not match its parameters; the "
                              "client was built from another interpose/spec/cublas.spec",
                              function));
}

void blas_call_env::unavailable(const char* function) {
  runner_.fail(CUBLAS_STATUS_NOT_SUPPORTED,
               fmt::format("{} is missing from this server's cuBLAS", function));
}

void blas_call_env::invalid(std::string detail) {
  runner_.invalid(std::move(detail));
}


void run_blas(blas_api* api, driver_api& driver, session& s, const proto::Op& op,
              proto::OpResult& r) {
  if (!s.blas) {
    if (api == nullptr) {
      auto shared = blas_api::shared();
      if (!shared) {
        r.set_blas_status(CUBLAS_STATUS_NOT_INITIALIZED);
        r.set_status(CUDA_ERROR_NOT_SUPPORTED);
        r.set_error(fmt::format("this GPU server cannot run cuBLAS: {}",
                                to_string(shared.error())));
        return;
      }
      api = *shared;
    }
    s.blas = std::make_shared<blas_tables>();
    s.blas->api = api;
  }
  blas_runner{*s.blas, driver, s, r}.run(op);
}

cublasStatus_t release_blas(session& s) {
  if (!s.blas)
    return CUBLAS_STATUS_SUCCESS;
  auto& t = *s.blas;
  auto& api = *t.api;
  cublasStatus_t first = CUBLAS_STATUS_SUCCESS;
  auto note = [&first](cublasStatus_t st) {
    if (first == CUBLAS_STATUS_SUCCESS)
      first = st;
  };
  for (auto& kv : t.descs)
    note(api.cublasLtMatmulDescDestroy(kv.second));
  for (auto& kv : t.emulations)
    note(api.cublasLtEmulationDescDestroy(kv.second));
  for (auto& kv : t.layouts)
    note(api.cublasLtMatrixLayoutDestroy(kv.second));
  for (auto& kv : t.preferences)
    note(api.cublasLtMatmulPreferenceDestroy(kv.second));
  for (auto& kv : t.transforms)
    note(api.cublasLtMatrixTransformDescDestroy(kv.second));
  for (auto& kv : t.handles)
    note(destroy_handle(api, s.graves, kv.second));
  s.blas.reset();
  return first;
}

// --- registration (executor/op_table.hpp) -----------------------------------

namespace {

void run_blas_op(op_context& cx, const proto::Op& op) {
  run_blas(cx.blas, cx.api, cx.s, op, cx.r);
}

using k = proto::Op::KindCase;

constexpr op_route blas_routes[] = {
  {k::kBlasCreate, run_blas_op},        {k::kBlasDestroy, run_blas_op},
  {k::kBlasSetStream, run_blas_op},     {k::kBlasSetWorkspace, run_blas_op},
  {k::kBlasSetMathMode, run_blas_op},   {k::kBlasSetAtomicsMode, run_blas_op},
  {k::kBlasGemm, run_blas_op},          {k::kBlasLtCreate, run_blas_op},
  {k::kBlasLtDestroy, run_blas_op},     {k::kBlasLtMatmul, run_blas_op},
  {k::kBlasLtHeuristic, run_blas_op},   {k::kBlasLtAlgoGetIds, run_blas_op},
  {k::kBlasLtAlgoInit, run_blas_op},     {k::kBlasLtAlgoCheck, run_blas_op},
  {k::kBlasLtAlgoAttribute, run_blas_op}, {k::kBlasLtTransform, run_blas_op},
  {k::kBlasLtHeuristicsCache, run_blas_op},
};

} // namespace

const op_family blas_family = make_family(blas_routes);

} // namespace gleam::executor
