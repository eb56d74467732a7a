// cuBLASLt: handles, matmul descriptors, matrix layouts and preferences as
// client-side attribute maps (no network), heuristics answered by the
// server, and cublasLtMatmul as one op that carries every descriptor; the
// server materializes (and caches) the vendor objects at the call.
// cublasLtMatmul and cublasLtDestroy are error-code-only (blas::submit):
// the descriptor checks below fail at the call, the server's verdict on
// addresses and layouts arrives as a deferred CUDA error. Heuristic answers
// are kept per session: a repeated query is answered locally.
// The descriptors themselves (and those the *Init_internal functions place
// in the app's own buffer) are interpose/cublaslt/descriptors.hpp's; the
// transform, emulation and *Init_internal entry points are in
// descriptor_api.cpp. The algo-level API (cublasLtMatmulAlgo*)
// is answered by the server's library, and its answers are kept per session
// like the heuristic's; cublasLtMatrixTransform is error-code-only like
// cublasLtMatmul.
#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <new>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "interpose/blas/common.hpp"
#include "interpose/cublasLt_export.hpp"
#include "interpose/cublaslt/descriptors.hpp"
#include "interpose/cublaslt/logger.hpp"
#include "interpose/runtime.hpp"

namespace blas = gleam::interpose::blas;
namespace proto = gleam::proto;

namespace {

namespace ltlog = gleam::interpose::cublaslt;

using namespace gleam::interpose::cublaslt;

/// Resolves the handle and every descriptor of a matmul or heuristic call.
struct matmul_args {
  blas::handle_state* handle = nullptr;
  lt_object* desc = nullptr;
  lt_object* layouts[4] = {};
};

cublasStatus_t resolve(cublasLtHandle_t h, cublasLtMatmulDesc_t d, cublasLtMatrixLayout_t a,
                       cublasLtMatrixLayout_t b, cublasLtMatrixLayout_t c,
                       cublasLtMatrixLayout_t dd, matmul_args& out) {
  out.handle = blas::state_of(h);
  if (out.handle == nullptr)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  out.desc = object_of(d, lt_kind::matmul_desc);
  cublasLtMatrixLayout_t in[4] = {a, b, c, dd};
  for (int i = 0; i < 4; ++i) {
    out.layouts[i] = object_of(in[i], lt_kind::layout);
    if (out.layouts[i] == nullptr)
      return CUBLAS_STATUS_INVALID_VALUE;
  }
  if (out.desc == nullptr)
    return CUBLAS_STATUS_INVALID_VALUE;
  if (int_attribute(*out.desc, CUBLASLT_MATMUL_DESC_POINTER_MODE, 0)
      != CUBLASLT_POINTER_MODE_HOST) {
    blas::report_unsupported("cublasLtMatmul with a device pointer mode",
                             "Gleam sends alpha and beta by value: keep "
                             "CUBLASLT_POINTER_MODE_HOST");
    return CUBLAS_STATUS_NOT_SUPPORTED;
  }
  // An emulation descriptor that is not one of ours cannot be sent.
  bool bad = false;
  static_cast<void>(emulation_of(*out.desc, bad));
  if (bad)
    return CUBLAS_STATUS_INVALID_VALUE;
  return CUBLAS_STATUS_SUCCESS;
}

/// Heuristic answers by query (session, device, the query without its
/// handle); emptied when it reaches max_cached_heuristics entries.
constexpr size_t max_cached_heuristics = 4096;

std::mutex& heuristic_mutex() {
  static auto* m = new std::mutex;
  return *m;
}

std::map<std::string, proto::BlasHeuristics>& heuristic_cache() {
  static auto* c = new std::map<std::string, proto::BlasHeuristics>;
  return *c;
}

/// Answers of the algo-level queries by (session, device, the query
/// without its handle); only successes are kept (a failure may come from a
/// check of this session's state); emptied at max_cached_heuristics.
std::map<std::string, proto::BlasLtAnswer>& answer_cache() {
  static auto* c = new std::map<std::string, proto::BlasLtAnswer>;
  return *c;
}

/// The server's answer to `op`, whose content without its handle is
/// `query`: from `cache` when this session asked the same on the same
/// device before (the answer depends only on the query and the GPU), else
/// from the server (`take` reads it from the result; a success is kept,
/// bounded by max_cached_heuristics).
template <class Answer, class Take>
cublasStatus_t cached_run(std::map<std::string, Answer>& cache, proto::Op op,
                          const std::string& query, Answer& answer, Take take) {
  std::string key;
  if (gleam::interpose::connect() == cudaSuccess) {
    int device = 0;
    {
      auto& r = gleam::interpose::reg();
      std::lock_guard<std::recursive_mutex> guard{r.mutex};
      device = r.device;
    }
    key = std::to_string(gleam::interpose::session().session()) + ":" + std::to_string(device)
          + ":" + std::to_string(static_cast<int>(op.kind_case())) + ":" + query;
  }
  if (!key.empty()) {
    std::lock_guard<std::mutex> guard{heuristic_mutex()};
    if (auto i = cache.find(key); i != cache.end()) {
      answer = i->second;
      return CUBLAS_STATUS_SUCCESS;
    }
  }
  proto::OpResult r;
  auto st = blas::run(std::move(op), &r);
  if (st != CUBLAS_STATUS_SUCCESS)
    return st;
  answer = take(r);
  if (!key.empty()) {
    std::lock_guard<std::mutex> guard{heuristic_mutex()};
    if (cache.size() >= max_cached_heuristics)
      cache.clear();
    cache.emplace(std::move(key), answer);
  }
  return CUBLAS_STATUS_SUCCESS;
}

/// Runs the algo-level query `op` whose content without its handle is
/// `query`, or answers it from the session's earlier answers.
cublasStatus_t ask(proto::Op op, const std::string& query, proto::BlasLtAnswer& answer) {
  return cached_run(answer_cache(), std::move(op), query, answer,
                    [](const proto::OpResult& r) { return r.blas_lt_answer(); });
}

/// The query of an op without its handle, as the key of ask().
template <class Message>
std::string without_handle(Message m) {
  m.set_handle(0);
  return m.SerializeAsString();
}

/// Bound of sizeInBytes that an algo attribute query sends (the server's
/// bound; the largest attribute, the tile list, is a few hundred bytes).
constexpr size_t max_attribute_bytes = 65536;

/// cublasLtMatmulAlgoCapGetAttribute and ConfigGetAttribute.
cublasStatus_t algo_get(proto::BlasLtAlgoAttribute::Kind kind, const cublasLtMatmulAlgo_t* algo,
                        int32_t attr, void* buf, size_t size, size_t* written) {
  proto::Op op;
  auto* q = op.mutable_blas_lt_algo_attribute();
  q->set_kind(kind);
  if (algo != nullptr)
    q->set_algo(reinterpret_cast<const char*>(algo), sizeof(*algo));
  q->set_attr(attr);
  // A larger buffer holds no more than this: every attribute is smaller.
  auto sent = std::min(size, max_attribute_bytes);
  q->set_size(sent);
  q->set_buf_null(buf == nullptr);
  q->set_size_written_null(written == nullptr);
  auto query = q->SerializeAsString();
  proto::BlasLtAnswer answer;
  auto st = ask(std::move(op), query, answer);
  if (st != CUBLAS_STATUS_SUCCESS)
    return st;
  if (buf != nullptr && sent != 0)
    std::memcpy(buf, answer.buf().data(), std::min(answer.buf().size(), sent));
  if (written != nullptr)
    *written = static_cast<size_t>(answer.size_written());
  return CUBLAS_STATUS_SUCCESS;
}

} // namespace

extern "C" {

GLEAM_INTERPOSE_EXPORT cublasStatus_t cublasLtCreate(cublasLtHandle_t* lightHandle) {
  return logged("cublasLtCreate", [&] {
    if (lightHandle == nullptr)
      return CUBLAS_STATUS_INVALID_VALUE;
    auto* ctx = new (std::nothrow) cublasLtContext;
    if (ctx == nullptr)
      return CUBLAS_STATUS_ALLOC_FAILED;
    ctx->state.id = gleam::interpose::next_handle();
    ctx->state.lt = true;
    proto::Op op;
    op.mutable_blas_lt_create()->set_handle(ctx->state.id);
    auto s = blas::run(std::move(op));
    if (s != CUBLAS_STATUS_SUCCESS) {
      ctx->state.magic = 0;
      delete ctx;
      return s;
    }
    *lightHandle = ctx;
    return CUBLAS_STATUS_SUCCESS;
  });
}

GLEAM_INTERPOSE_EXPORT cublasStatus_t cublasLtDestroy(cublasLtHandle_t lightHandle) {
  return logged("cublasLtDestroy", [&] {
    auto* st = blas::state_of(lightHandle);
    if (st == nullptr || !st->lt)
      return CUBLAS_STATUS_NOT_INITIALIZED;
    proto::Op op;
    op.mutable_blas_lt_destroy()->set_handle(st->id);
    auto s = blas::submit(std::move(op));
    st->magic = 0;
    delete lightHandle;
    return s;
  });
}

GLEAM_INTERPOSE_EXPORT const char* cublasLtGetStatusName(cublasStatus_t status) {
  return blas::status_name(status);
}

GLEAM_INTERPOSE_EXPORT const char* cublasLtGetStatusString(cublasStatus_t status) {
  return blas::status_string(status);
}

GLEAM_INTERPOSE_EXPORT size_t cublasLtGetVersion(void) {
  return CUBLAS_VERSION;
}

GLEAM_INTERPOSE_EXPORT size_t cublasLtGetCudartVersion(void) {
  return CUDART_VERSION;
}

GLEAM_INTERPOSE_EXPORT cublasStatus_t cublasLtGetProperty(libraryPropertyType type, int* value) {
  if (value == nullptr)
    return CUBLAS_STATUS_INVALID_VALUE;
  switch (type) {
    case MAJOR_VERSION:
      *value = CUBLAS_VER_MAJOR;
      return CUBLAS_STATUS_SUCCESS;
    case MINOR_VERSION:
      *value = CUBLAS_VER_MINOR;
      return CUBLAS_STATUS_SUCCESS;
    case PATCH_LEVEL:
      *value = CUBLAS_VER_PATCH;
      return CUBLAS_STATUS_SUCCESS;
  }
  return CUBLAS_STATUS_INVALID_VALUE;
}

// --- descriptors -----------------------------------------------------------

GLEAM_INTERPOSE_EXPORT cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t* matmulDesc,
                                                               cublasComputeType_t computeType,
                                                               cudaDataType_t scaleType) {
  return logged("cublasLtMatmulDescCreate", [&] {
    auto* o = new (std::nothrow) lt_object(lt_kind::matmul_desc);
    if (o != nullptr) {
      o->compute_type = static_cast<int32_t>(computeType);
      o->scale_type = static_cast<int32_t>(scaleType);
    }
    return create(matmulDesc, o);
  });
}

GLEAM_INTERPOSE_EXPORT cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t matmulDesc) {
  return destroy(matmulDesc, lt_kind::matmul_desc);
}

GLEAM_INTERPOSE_EXPORT cublasStatus_t
cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t matmulDesc, cublasLtMatmulDescAttributes_t attr,
                               const void* buf, size_t sizeInBytes) {
  return logged("cublasLtMatmulDescSetAttribute", [&] {
    return set_attribute(matmulDesc, lt_kind::matmul_desc, attr, buf, sizeInBytes);
  });
}

GLEAM_INTERPOSE_EXPORT cublasStatus_t
cublasLtMatmulDescGetAttribute(cublasLtMatmulDesc_t matmulDesc, cublasLtMatmulDescAttributes_t attr,
                               void* buf, size_t sizeInBytes, size_t* sizeWritten) {
  return logged("cublasLtMatmulDescGetAttribute", [&] {
    return get_attribute(matmulDesc, lt_kind::matmul_desc, attr, buf, sizeInBytes, sizeWritten);
  });
}

GLEAM_INTERPOSE_EXPORT cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t* matLayout,
                                                                 cudaDataType type, uint64_t rows,
                                                                 uint64_t cols, int64_t ld) {
  return logged("cublasLtMatrixLayoutCreate", [&] {
    auto* o = new (std::nothrow) lt_object(lt_kind::layout);
    if (o != nullptr) {
      o->type = static_cast<int32_t>(type);
      o->rows = rows;
      o->cols = cols;
      o->ld = ld;
    }
    return create(matLayout, o);
  });
}

GLEAM_INTERPOSE_EXPORT cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t matLayout) {
  return destroy(matLayout, lt_kind::layout);
}

GLEAM_INTERPOSE_EXPORT cublasStatus_t
cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t matLayout,
                                 cublasLtMatrixLayoutAttribute_t attr, const void* buf,
                                 size_t sizeInBytes) {
  return logged("cublasLtMatrixLayoutSetAttribute", [&] {
    return set_attribute(matLayout, lt_kind::layout, attr, buf, sizeInBytes);
  });
}

GLEAM_INTERPOSE_EXPORT cublasStatus_t
cublasLtMatrixLayoutGetAttribute(cublasLtMatrixLayout_t matLayout,
                                 cublasLtMatrixLayoutAttribute_t attr, void* buf,
                                 size_t sizeInBytes, size_t* sizeWritten) {
  return logged("cublasLtMatrixLayoutGetAttribute", [&] {
    return get_attribute(matLayout, lt_kind::layout, attr, buf, sizeInBytes, sizeWritten);
  });
}

GLEAM_INTERPOSE_EXPORT cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t* pref) {
  return logged("cublasLtMatmulPreferenceCreate", 
    [&] { return create(pref, new (std::nothrow) lt_object(lt_kind::preference)); });
}

GLEAM_INTERPOSE_EXPORT cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t pref) {
  return destroy(pref, lt_kind::preference);
}

GLEAM_INTERPOSE_EXPORT cublasStatus_t
cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t pref,
                                     cublasLtMatmulPreferenceAttributes_t attr, const void* buf,
                                     size_t sizeInBytes) {
  return logged("cublasLtMatmulPreferenceSetAttribute", 
    [&] { return set_attribute(pref, lt_kind::preference, attr, buf, sizeInBytes); });
}

GLEAM_INTERPOSE_EXPORT cublasStatus_t
cublasLtMatmulPreferenceGetAttribute(cublasLtMatmulPreference_t pref,
                                     cublasLtMatmulPreferenceAttributes_t attr, void* buf,
                                     size_t sizeInBytes, size_t* sizeWritten) {
  return logged("cublasLtMatmulPreferenceGetAttribute", [&] {
    return get_attribute(pref, lt_kind::preference, attr, buf, sizeInBytes, sizeWritten);
  });
}

// --- heuristics and matmul -------------------------------------------------

GLEAM_INTERPOSE_EXPORT cublasStatus_t cublasLtMatmulAlgoGetHeuristic(
  cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t operationDesc, cublasLtMatrixLayout_t Adesc,
  cublasLtMatrixLayout_t Bdesc, cublasLtMatrixLayout_t Cdesc, cublasLtMatrixLayout_t Ddesc,
  cublasLtMatmulPreference_t preference, int requestedAlgoCount,
  cublasLtMatmulHeuristicResult_t heuristicResultsArray[], int* returnAlgoCount) {
  return logged("cublasLtMatmulAlgoGetHeuristic", [&] {
    matmul_args args;
    if (auto s = resolve(lightHandle, operationDesc, Adesc, Bdesc, Cdesc, Ddesc, args);
        s != CUBLAS_STATUS_SUCCESS)
      return s;
    auto* pref = object_of(preference, lt_kind::preference);
    if (pref == nullptr || requestedAlgoCount <= 0 || heuristicResultsArray == nullptr
        || returnAlgoCount == nullptr)
      return CUBLAS_STATUS_INVALID_VALUE;
    proto::Op op;
    auto* h = op.mutable_blas_lt_heuristic();
    h->set_handle(args.handle->id);
    put_desc(*args.desc, h->mutable_desc());
    put_layout(*args.layouts[0], h->mutable_a_layout());
    put_layout(*args.layouts[1], h->mutable_b_layout());
    put_layout(*args.layouts[2], h->mutable_c_layout());
    put_layout(*args.layouts[3], h->mutable_d_layout());
    put_attributes(*pref, h->mutable_preference()->mutable_attributes());
    h->set_requested(requestedAlgoCount);
    // A repeated query (every layer of every decode step asks again) is
    // answered from this session's answers.
    auto q = op.blas_lt_heuristic();
    q.set_handle(0);
    proto::BlasHeuristics answer;
    if (auto st = cached_run(heuristic_cache(), std::move(op), q.SerializeAsString(), answer,
                             [](const proto::OpResult& r) { return r.blas_heuristics(); });
        st != CUBLAS_STATUS_SUCCESS)
      return st;
    const auto& results = answer.results();
    int n = 0;
    for (const auto& bytes : results) {
      if (n >= requestedAlgoCount || bytes.size() != sizeof(cublasLtMatmulHeuristicResult_t))
        break;
      std::memcpy(&heuristicResultsArray[n++], bytes.data(), bytes.size());
    }
    *returnAlgoCount = n;
    return CUBLAS_STATUS_SUCCESS;
  });
}

GLEAM_INTERPOSE_EXPORT cublasStatus_t
cublasLtMatmul(cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t computeDesc, const void* alpha,
               const void* A, cublasLtMatrixLayout_t Adesc, const void* B,
               cublasLtMatrixLayout_t Bdesc, const void* beta, const void* C,
               cublasLtMatrixLayout_t Cdesc, void* D, cublasLtMatrixLayout_t Ddesc,
               const cublasLtMatmulAlgo_t* algo, void* workspace, size_t workspaceSizeInBytes,
               cudaStream_t stream) {
  return logged("cublasLtMatmul", [&] {
    matmul_args args;
    if (auto s = resolve(lightHandle, computeDesc, Adesc, Bdesc, Cdesc, Ddesc, args);
        s != CUBLAS_STATUS_SUCCESS)
      return s;
    auto scale = static_cast<cudaDataType>(
      int_attribute(*args.desc, CUBLASLT_MATMUL_DESC_SCALE_TYPE, args.desc->scale_type));
    auto scalar_bytes = blas::element_size(scale);
    if (scalar_bytes == 0 || alpha == nullptr || beta == nullptr)
      return CUBLAS_STATUS_INVALID_VALUE;
    proto::Op op;
    auto* m = op.mutable_blas_lt_matmul();
    m->set_handle(args.handle->id);
    put_desc(*args.desc, m->mutable_desc());
    put_layout(*args.layouts[0], m->mutable_a_layout());
    put_layout(*args.layouts[1], m->mutable_b_layout());
    put_layout(*args.layouts[2], m->mutable_c_layout());
    put_layout(*args.layouts[3], m->mutable_d_layout());
    m->set_alpha(static_cast<const char*>(alpha), scalar_bytes);
    m->set_beta(static_cast<const char*>(beta), scalar_bytes);
    m->set_a(reinterpret_cast<uintptr_t>(A));
    m->set_b(reinterpret_cast<uintptr_t>(B));
    m->set_c(reinterpret_cast<uintptr_t>(C));
    m->set_d(reinterpret_cast<uintptr_t>(D));
    if (algo != nullptr)
      m->set_algo(reinterpret_cast<const char*>(algo), sizeof(*algo));
    m->set_workspace(reinterpret_cast<uintptr_t>(workspace));
    m->set_workspace_size(workspaceSizeInBytes);
    m->set_stream(gleam::interpose::wire_stream(stream));
    return blas::submit(std::move(op));
  });
}

// --- matrix transform --------------------------------------------------------

GLEAM_INTERPOSE_EXPORT cublasStatus_t cublasLtMatrixTransform(
  cublasLtHandle_t lightHandle, cublasLtMatrixTransformDesc_t transformDesc, const void* alpha,
  const void* A, cublasLtMatrixLayout_t Adesc, const void* beta, const void* B,
  cublasLtMatrixLayout_t Bdesc, void* C, cublasLtMatrixLayout_t Cdesc, cudaStream_t stream) {
  return logged("cublasLtMatrixTransform", [&] {
    auto* handle = blas::state_of(lightHandle);
    if (handle == nullptr)
      return CUBLAS_STATUS_NOT_INITIALIZED;
    auto* d = object_of(transformDesc, lt_kind::transform_desc);
    if (d == nullptr)
      return CUBLAS_STATUS_INVALID_VALUE;
    cublasLtMatrixLayout_t in[3] = {Adesc, Bdesc, Cdesc};
    lt_object* layouts[3] = {};
    const void* matrices[3] = {A, B, C};
    for (int i = 0; i < 3; ++i) {
      if (in[i] != nullptr && (layouts[i] = object_of(in[i], lt_kind::layout)) == nullptr)
        return CUBLAS_STATUS_INVALID_VALUE;
      // cublasLt.h: "when A is not NULL, but Adesc is NULL".
      if (matrices[i] != nullptr && in[i] == nullptr)
        return CUBLAS_STATUS_INVALID_VALUE;
    }
    if (int_attribute(*d, CUBLASLT_MATRIX_TRANSFORM_DESC_POINTER_MODE, 0)
        != CUBLASLT_POINTER_MODE_HOST) {
      blas::report_unsupported("cublasLtMatrixTransform with a device pointer mode",
                               "Gleam sends alpha and beta by value: keep "
                               "CUBLASLT_POINTER_MODE_HOST");
      return CUBLAS_STATUS_NOT_SUPPORTED;
    }
    auto scale = static_cast<cudaDataType>(
      int_attribute(*d, CUBLASLT_MATRIX_TRANSFORM_DESC_SCALE_TYPE, d->scale_type));
    auto scalar_bytes = blas::element_size(scale);
    if (scalar_bytes == 0)
      return CUBLAS_STATUS_INVALID_VALUE;
    proto::Op op;
    auto* t = op.mutable_blas_lt_transform();
    t->set_handle(handle->id);
    put_transform_desc(*d, t->mutable_desc());
    if (alpha != nullptr)
      t->set_alpha(static_cast<const char*>(alpha), scalar_bytes);
    if (beta != nullptr)
      t->set_beta(static_cast<const char*>(beta), scalar_bytes);
    t->set_a(reinterpret_cast<uintptr_t>(A));
    t->set_b(reinterpret_cast<uintptr_t>(B));
    t->set_c(reinterpret_cast<uintptr_t>(C));
    if (layouts[0] != nullptr)
      put_layout(*layouts[0], t->mutable_a_layout());
    if (layouts[1] != nullptr)
      put_layout(*layouts[1], t->mutable_b_layout());
    if (layouts[2] != nullptr)
      put_layout(*layouts[2], t->mutable_c_layout());
    t->set_stream(gleam::interpose::wire_stream(stream));
    return blas::submit(std::move(op));
  });
}

// --- the algo-level API (answered by the server's library) -------------------

GLEAM_INTERPOSE_EXPORT cublasStatus_t cublasLtMatmulAlgoGetIds(
  cublasLtHandle_t lightHandle, cublasComputeType_t computeType, cudaDataType_t scaleType,
  cudaDataType_t Atype, cudaDataType_t Btype, cudaDataType_t Ctype, cudaDataType_t Dtype,
  int requestedAlgoCount, int algoIdsArray[], int* returnAlgoCount) {
  return logged("cublasLtMatmulAlgoGetIds", [&] {
    auto* handle = blas::state_of(lightHandle);
    if (handle == nullptr)
      return CUBLAS_STATUS_NOT_INITIALIZED;
    if (requestedAlgoCount <= 0)
      return CUBLAS_STATUS_INVALID_VALUE;
    proto::Op op;
    auto* q = op.mutable_blas_lt_algo_get_ids();
    q->set_handle(handle->id);
    q->set_compute_type(computeType);
    q->set_scale_type(scaleType);
    q->set_a_type(Atype);
    q->set_b_type(Btype);
    q->set_c_type(Ctype);
    q->set_d_type(Dtype);
    // The array's capacity, bounded like the server bounds it: the library
    // knows a few dozen ids, so the answer is the same.
    q->set_requested(std::min(requestedAlgoCount, 65536));
    q->set_ids_null(algoIdsArray == nullptr);
    q->set_count_null(returnAlgoCount == nullptr);
    auto query = without_handle(*q);
    proto::BlasLtAnswer answer;
    auto st = ask(std::move(op), query, answer);
    if (st != CUBLAS_STATUS_SUCCESS)
      return st;
    int n = 0;
    for (int id : answer.ids()) {
      if (n >= requestedAlgoCount || algoIdsArray == nullptr)
        break;
      algoIdsArray[n++] = id;
    }
    if (returnAlgoCount != nullptr)
      *returnAlgoCount = static_cast<int>(answer.size_written());
    return CUBLAS_STATUS_SUCCESS;
  });
}

GLEAM_INTERPOSE_EXPORT cublasStatus_t cublasLtMatmulAlgoInit(
  cublasLtHandle_t lightHandle, cublasComputeType_t computeType, cudaDataType_t scaleType,
  cudaDataType_t Atype, cudaDataType_t Btype, cudaDataType_t Ctype, cudaDataType_t Dtype,
  int algoId, cublasLtMatmulAlgo_t* algo) {
  return logged("cublasLtMatmulAlgoInit", [&] {
    auto* handle = blas::state_of(lightHandle);
    if (handle == nullptr)
      return CUBLAS_STATUS_NOT_INITIALIZED;
    proto::Op op;
    auto* q = op.mutable_blas_lt_algo_init();
    q->set_handle(handle->id);
    q->set_compute_type(computeType);
    q->set_scale_type(scaleType);
    q->set_a_type(Atype);
    q->set_b_type(Btype);
    q->set_c_type(Ctype);
    q->set_d_type(Dtype);
    q->set_algo_id(algoId);
    q->set_algo_null(algo == nullptr);
    auto query = without_handle(*q);
    proto::BlasLtAnswer answer;
    auto st = ask(std::move(op), query, answer);
    if (st != CUBLAS_STATUS_SUCCESS)
      return st;
    if (algo != nullptr && answer.algo().size() == sizeof(*algo))
      std::memcpy(algo, answer.algo().data(), sizeof(*algo));
    return CUBLAS_STATUS_SUCCESS;
  });
}

GLEAM_INTERPOSE_EXPORT cublasStatus_t cublasLtMatmulAlgoCheck(
  cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t operationDesc, cublasLtMatrixLayout_t Adesc,
  cublasLtMatrixLayout_t Bdesc, cublasLtMatrixLayout_t Cdesc, cublasLtMatrixLayout_t Ddesc,
  const cublasLtMatmulAlgo_t* algo, cublasLtMatmulHeuristicResult_t* result) {
  return logged("cublasLtMatmulAlgoCheck", [&] {
    matmul_args args;
    if (auto s = resolve(lightHandle, operationDesc, Adesc, Bdesc, Cdesc, Ddesc, args);
        s != CUBLAS_STATUS_SUCCESS)
      return s;
    proto::Op op;
    auto* q = op.mutable_blas_lt_algo_check();
    q->set_handle(args.handle->id);
    put_desc(*args.desc, q->mutable_desc());
    put_layout(*args.layouts[0], q->mutable_a_layout());
    put_layout(*args.layouts[1], q->mutable_b_layout());
    put_layout(*args.layouts[2], q->mutable_c_layout());
    put_layout(*args.layouts[3], q->mutable_d_layout());
    if (algo != nullptr)
      q->set_algo(reinterpret_cast<const char*>(algo), sizeof(*algo));
    if (result != nullptr)
      q->set_result(reinterpret_cast<const char*>(result), sizeof(*result));
    auto query = without_handle(*q);
    proto::BlasLtAnswer answer;
    auto st = ask(std::move(op), query, answer);
    if (st != CUBLAS_STATUS_SUCCESS)
      return st;
    if (result != nullptr && answer.result().size() == sizeof(*result))
      std::memcpy(result, answer.result().data(), sizeof(*result));
    return CUBLAS_STATUS_SUCCESS;
  });
}

GLEAM_INTERPOSE_EXPORT cublasStatus_t
cublasLtMatmulAlgoCapGetAttribute(const cublasLtMatmulAlgo_t* algo,
                                  cublasLtMatmulAlgoCapAttributes_t attr, void* buf,
                                  size_t sizeInBytes, size_t* sizeWritten) {
  return logged("cublasLtMatmulAlgoCapGetAttribute", [&] {
    return algo_get(proto::BlasLtAlgoAttribute::CAP_GET, algo, attr, buf, sizeInBytes,
                    sizeWritten);
  });
}

GLEAM_INTERPOSE_EXPORT cublasStatus_t
cublasLtMatmulAlgoConfigGetAttribute(const cublasLtMatmulAlgo_t* algo,
                                     cublasLtMatmulAlgoConfigAttributes_t attr, void* buf,
                                     size_t sizeInBytes, size_t* sizeWritten) {
  return logged("cublasLtMatmulAlgoConfigGetAttribute", [&] {
    return algo_get(proto::BlasLtAlgoAttribute::CONFIG_GET, algo, attr, buf, sizeInBytes,
                    sizeWritten);
  });
}

GLEAM_INTERPOSE_EXPORT cublasStatus_t
cublasLtMatmulAlgoConfigSetAttribute(cublasLtMatmulAlgo_t* algo,
                                     cublasLtMatmulAlgoConfigAttributes_t attr, const void* buf,
                                     size_t sizeInBytes) {
  return logged("cublasLtMatmulAlgoConfigSetAttribute", [&] {
    proto::Op op;
    auto* q = op.mutable_blas_lt_algo_attribute();
    q->set_kind(proto::BlasLtAlgoAttribute::CONFIG_SET);
    if (algo != nullptr)
      q->set_algo(reinterpret_cast<const char*>(algo), sizeof(*algo));
    q->set_attr(attr);
    q->set_size(sizeInBytes);
    q->set_buf_null(buf == nullptr);
    // Every config attribute is at most 4 bytes: a larger size is refused by
    // the library before it reads buf, so only up to 64 bytes are read here.
    if (buf != nullptr)
      q->set_value(static_cast<const char*>(buf), std::min<size_t>(sizeInBytes, 64));
    auto query = q->SerializeAsString();
    proto::BlasLtAnswer answer;
    auto st = ask(std::move(op), query, answer);
    if (st != CUBLAS_STATUS_SUCCESS)
      return st;
    if (algo != nullptr && answer.algo().size() == sizeof(*algo))
      std::memcpy(algo, answer.algo().data(), sizeof(*algo));
    return CUBLAS_STATUS_SUCCESS;
  });
}

// --- the heuristics cache of the session's library ---------------------------

GLEAM_INTERPOSE_EXPORT cublasStatus_t cublasLtHeuristicsCacheGetCapacity(size_t* capacity) {
  return logged("cublasLtHeuristicsCacheGetCapacity", [&] {
    if (capacity == nullptr)
      return CUBLAS_STATUS_INVALID_VALUE;
    proto::Op op;
    op.mutable_blas_lt_heuristics_cache()->set_set(false);
    proto::OpResult r;
    auto st = blas::run(std::move(op), &r);
    if (st == CUBLAS_STATUS_SUCCESS)
      *capacity = static_cast<size_t>(r.blas_lt_answer().capacity());
    return st;
  });
}

GLEAM_INTERPOSE_EXPORT cublasStatus_t cublasLtHeuristicsCacheSetCapacity(size_t capacity) {
  return logged("cublasLtHeuristicsCacheSetCapacity", [&] {
    proto::Op op;
    op.mutable_blas_lt_heuristics_cache()->set_set(true);
    op.mutable_blas_lt_heuristics_cache()->set_capacity(capacity);
    return blas::submit(std::move(op));
  });
}

} // extern "C"
