// cuBLASLt: handles, matmul descriptors, matrix layouts and preferences as
// client-side attribute maps (no network), heuristics answered by the
// server, and cublasLtMatmul as one op that carries every descriptor; the
// server materializes (and caches) the vendor objects at the call.
// cublasLtMatmul and cublasLtDestroy are error-code-only (blas::submit):
// the descriptor checks below fail at the call, the server's verdict on
// addresses and layouts arrives as a deferred CUDA error. Heuristic answers
// are kept per session: a repeated query is answered locally.
#include <cstring>
#include <map>
#include <mutex>
#include <new>
#include <string>

#include "interpose/blas/common.hpp"
#include "interpose/cublasLt_export.hpp"
#include "interpose/runtime.hpp"

namespace blas = gleam::interpose::blas;
namespace proto = gleam::proto;

namespace {

enum class lt_kind : uint32_t { matmul_desc = 1, layout, preference };

/// Marks a live descriptor ("GLMBLTD\0"); differs from blas::handle_magic, so
/// a handle passed for a descriptor is refused.
constexpr uint64_t descriptor_magic = 0x0044544c424d4c47ull;

/// One descriptor: the Create parameters and every attribute the app set,
/// by attribute id, as the bytes it passed.
struct lt_object {
  uint64_t magic = descriptor_magic;
  lt_kind kind;
  std::map<int32_t, std::string> attributes;
  // matmul_desc
  int32_t compute_type = 0;
  int32_t scale_type = 0;
  // layout
  int32_t type = 0;
  uint64_t rows = 0;
  uint64_t cols = 0;
  int64_t ld = 0;

  explicit lt_object(lt_kind k) : kind(k) {
  }
};

lt_object* object_of(const void* p, lt_kind k) {
  if (p == nullptr)
    return nullptr;
  auto* o = static_cast<lt_object*>(const_cast<void*>(p));
  return o->magic == descriptor_magic && o->kind == k ? o : nullptr;
}

template <class Handle>
cublasStatus_t create(Handle* out, lt_object* o) {
  if (out == nullptr) {
    delete o;
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  if (o == nullptr)
    return CUBLAS_STATUS_ALLOC_FAILED;
  *out = reinterpret_cast<Handle>(o);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t destroy(const void* p, lt_kind k) {
  // Destroying a null descriptor is a no-op for the vendor as well.
  if (p == nullptr)
    return CUBLAS_STATUS_SUCCESS;
  auto* o = object_of(p, k);
  if (o == nullptr)
    return CUBLAS_STATUS_INVALID_VALUE;
  o->magic = 0;
  delete o;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t set_attribute(const void* p, lt_kind k, int32_t attr, const void* buf,
                             size_t size) {
  auto* o = object_of(p, k);
  if (o == nullptr || buf == nullptr || size == 0 || size > 64)
    return CUBLAS_STATUS_INVALID_VALUE;
  o->attributes[attr].assign(static_cast<const char*>(buf), size);
  return CUBLAS_STATUS_SUCCESS;
}

/// The value of an attribute the app did not set: the Create parameters
/// or cuBLASLt's documented defaults; empty when unknown.
std::string default_value(const lt_object& o, int32_t attr) {
  auto bytes = [](auto v) {
    return std::string(reinterpret_cast<const char*>(&v), sizeof(v));
  };
  switch (o.kind) {
    case lt_kind::matmul_desc:
      if (attr == CUBLASLT_MATMUL_DESC_COMPUTE_TYPE)
        return bytes(o.compute_type);
      if (attr == CUBLASLT_MATMUL_DESC_SCALE_TYPE)
        return bytes(o.scale_type);
      if (attr == CUBLASLT_MATMUL_DESC_EPILOGUE)
        return bytes(uint32_t{CUBLASLT_EPILOGUE_DEFAULT});
      if (attr == CUBLASLT_MATMUL_DESC_POINTER_MODE || attr == CUBLASLT_MATMUL_DESC_TRANSA
          || attr == CUBLASLT_MATMUL_DESC_TRANSB || attr == CUBLASLT_MATMUL_DESC_TRANSC)
        return bytes(int32_t{0});
      if (attr == CUBLASLT_MATMUL_DESC_BIAS_POINTER)
        return bytes(uint64_t{0});
      return {};
    case lt_kind::layout:
      if (attr == CUBLASLT_MATRIX_LAYOUT_TYPE)
        return bytes(uint32_t(o.type));
      if (attr == CUBLASLT_MATRIX_LAYOUT_ORDER)
        return bytes(int32_t{CUBLASLT_ORDER_COL});
      if (attr == CUBLASLT_MATRIX_LAYOUT_ROWS)
        return bytes(o.rows);
      if (attr == CUBLASLT_MATRIX_LAYOUT_COLS)
        return bytes(o.cols);
      if (attr == CUBLASLT_MATRIX_LAYOUT_LD)
        return bytes(o.ld);
      if (attr == CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT)
        return bytes(int32_t{1});
      if (attr == CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET)
        return bytes(int64_t{0});
      return {};
    case lt_kind::preference:
      if (attr == CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES)
        return bytes(uint64_t{0});
      if (attr == CUBLASLT_MATMUL_PREF_SEARCH_MODE)
        return bytes(uint32_t{0});
      return {};
  }
  return {};
}

cublasStatus_t get_attribute(const void* p, lt_kind k, int32_t attr, void* buf, size_t size,
                             size_t* written) {
  auto* o = object_of(p, k);
  if (o == nullptr)
    return CUBLAS_STATUS_INVALID_VALUE;
  auto i = o->attributes.find(attr);
  auto value = i != o->attributes.end() ? i->second : default_value(*o, attr);
  if (value.empty())
    return CUBLAS_STATUS_INVALID_VALUE;
  if (size == 0 && written != nullptr) {
    *written = value.size();
    return CUBLAS_STATUS_SUCCESS;
  }
  if (buf == nullptr || size < value.size())
    return CUBLAS_STATUS_INVALID_VALUE;
  std::memcpy(buf, value.data(), value.size());
  if (written != nullptr)
    *written = value.size();
  return CUBLAS_STATUS_SUCCESS;
}

void put_attributes(const lt_object& o,
                    google::protobuf::RepeatedPtrField<proto::BlasLtAttribute>* out) {
  for (const auto& [id, value] : o.attributes) {
    auto* a = out->Add();
    a->set_id(id);
    a->set_value(value);
  }
}

void put_desc(const lt_object& o, proto::BlasLtMatmulDesc* out) {
  out->set_compute_type(o.compute_type);
  out->set_scale_type(o.scale_type);
  put_attributes(o, out->mutable_attributes());
}

void put_layout(const lt_object& o, proto::BlasLtLayout* out) {
  out->set_type(o.type);
  out->set_rows(o.rows);
  out->set_cols(o.cols);
  out->set_ld(o.ld);
  put_attributes(o, out->mutable_attributes());
}

/// An int32 attribute of `o` as set by the app, or `fallback`.
int32_t int_attribute(const lt_object& o, int32_t attr, int32_t fallback) {
  auto i = o.attributes.find(attr);
  if (i == o.attributes.end() || i->second.size() < sizeof(int32_t))
    return fallback;
  int32_t v = 0;
  std::memcpy(&v, i->second.data(), sizeof(v));
  return v;
}

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
  if (out.desc->attributes.count(CUBLASLT_MATMUL_DESC_EMULATION_DESCRIPTOR) != 0) {
    blas::report_unsupported("CUBLASLT_MATMUL_DESC_EMULATION_DESCRIPTOR",
                             "it points to a host object that Gleam cannot forward");
    return CUBLAS_STATUS_NOT_SUPPORTED;
  }
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

} // namespace

extern "C" {

GLEAM_INTERPOSE_EXPORT cublasStatus_t cublasLtCreate(cublasLtHandle_t* lightHandle) {
  return blas::guarded([&] {
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
  return blas::guarded([&] {
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
  return blas::guarded([&] {
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
  return blas::guarded([&] {
    return set_attribute(matmulDesc, lt_kind::matmul_desc, attr, buf, sizeInBytes);
  });
}

GLEAM_INTERPOSE_EXPORT cublasStatus_t
cublasLtMatmulDescGetAttribute(cublasLtMatmulDesc_t matmulDesc, cublasLtMatmulDescAttributes_t attr,
                               void* buf, size_t sizeInBytes, size_t* sizeWritten) {
  return blas::guarded([&] {
    return get_attribute(matmulDesc, lt_kind::matmul_desc, attr, buf, sizeInBytes, sizeWritten);
  });
}

GLEAM_INTERPOSE_EXPORT cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t* matLayout,
                                                                 cudaDataType type, uint64_t rows,
                                                                 uint64_t cols, int64_t ld) {
  return blas::guarded([&] {
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
  return blas::guarded([&] {
    return set_attribute(matLayout, lt_kind::layout, attr, buf, sizeInBytes);
  });
}

GLEAM_INTERPOSE_EXPORT cublasStatus_t
cublasLtMatrixLayoutGetAttribute(cublasLtMatrixLayout_t matLayout,
                                 cublasLtMatrixLayoutAttribute_t attr, void* buf,
                                 size_t sizeInBytes, size_t* sizeWritten) {
  return blas::guarded([&] {
    return get_attribute(matLayout, lt_kind::layout, attr, buf, sizeInBytes, sizeWritten);
  });
}

GLEAM_INTERPOSE_EXPORT cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t* pref) {
  return blas::guarded(
    [&] { return create(pref, new (std::nothrow) lt_object(lt_kind::preference)); });
}

GLEAM_INTERPOSE_EXPORT cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t pref) {
  return destroy(pref, lt_kind::preference);
}

GLEAM_INTERPOSE_EXPORT cublasStatus_t
cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t pref,
                                     cublasLtMatmulPreferenceAttributes_t attr, const void* buf,
                                     size_t sizeInBytes) {
  return blas::guarded(
    [&] { return set_attribute(pref, lt_kind::preference, attr, buf, sizeInBytes); });
}

GLEAM_INTERPOSE_EXPORT cublasStatus_t
cublasLtMatmulPreferenceGetAttribute(cublasLtMatmulPreference_t pref,
                                     cublasLtMatmulPreferenceAttributes_t attr, void* buf,
                                     size_t sizeInBytes, size_t* sizeWritten) {
  return blas::guarded([&] {
    return get_attribute(pref, lt_kind::preference, attr, buf, sizeInBytes, sizeWritten);
  });
}

// --- heuristics and matmul -------------------------------------------------

GLEAM_INTERPOSE_EXPORT cublasStatus_t cublasLtMatmulAlgoGetHeuristic(
  cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t operationDesc, cublasLtMatrixLayout_t Adesc,
  cublasLtMatrixLayout_t Bdesc, cublasLtMatrixLayout_t Cdesc, cublasLtMatrixLayout_t Ddesc,
  cublasLtMatmulPreference_t preference, int requestedAlgoCount,
  cublasLtMatmulHeuristicResult_t heuristicResultsArray[], int* returnAlgoCount) {
  return blas::guarded([&] {
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
    // The answer depends only on the query and the GPU: a repeated query
    // (every layer of every decode step asks again) is answered from the
    // answers of this session.
    std::string key;
    if (gleam::interpose::connect() == cudaSuccess) {
      auto q = op.blas_lt_heuristic();
      q.set_handle(0);
      int device = 0;
      {
        auto& r = gleam::interpose::reg();
        std::lock_guard<std::recursive_mutex> guard{r.mutex};
        device = r.device;
      }
      key = std::to_string(gleam::interpose::session().session()) + ":"
            + std::to_string(device) + ":" + q.SerializeAsString();
    }
    proto::BlasHeuristics answer;
    bool cached = false;
    {
      std::lock_guard<std::mutex> guard{heuristic_mutex()};
      auto& cache = heuristic_cache();
      if (auto i = cache.find(key); !key.empty() && i != cache.end()) {
        answer = i->second;
        cached = true;
      }
    }
    if (!cached) {
      proto::OpResult r;
      auto s = blas::run(std::move(op), &r);
      if (s != CUBLAS_STATUS_SUCCESS)
        return s;
      answer = r.blas_heuristics();
      if (!key.empty()) {
        std::lock_guard<std::mutex> guard{heuristic_mutex()};
        auto& cache = heuristic_cache();
        if (cache.size() >= max_cached_heuristics)
          cache.clear();
        cache.emplace(std::move(key), answer);
      }
    }
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
  return blas::guarded([&] {
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

} // extern "C"
