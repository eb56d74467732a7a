// The cuBLASLt part of blas_runner (executor/blas_runner.hpp): the
// session's descriptor, layout and preference caches keyed by content, the
// extent of each matrix from its layout, and the heuristic and matmul ops.

#include "executor/blas_runner.hpp"

#include <cstring>
#include <limits>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "executor/blas_shapes.hpp"

namespace gleam::executor {

namespace {

namespace shapes = blas_shapes;

/// An attribute value, copied to aligned storage for the library.
struct attribute_value {
  alignas(16) unsigned char bytes[64] = {};
  size_t size = 0;
};

template <class T>
std::optional<T> attribute_as(const google::protobuf::RepeatedPtrField<proto::BlasLtAttribute>& attrs,
                              int32_t id) {
  for (const auto& a : attrs)
    if (a.id() == id && a.value().size() == sizeof(T)) {
      T v;
      std::memcpy(&v, a.value().data(), sizeof(T));
      return v;
    }
  return std::nullopt;
}

/// Matmul descriptor attributes whose value is a device address.
bool is_pointer_attribute(int32_t id) {
  switch (id) {
    case CUBLASLT_MATMUL_DESC_BIAS_POINTER:
    case CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER:
    case CUBLASLT_MATMUL_DESC_A_SCALE_POINTER:
    case CUBLASLT_MATMUL_DESC_B_SCALE_POINTER:
    case CUBLASLT_MATMUL_DESC_C_SCALE_POINTER:
    case CUBLASLT_MATMUL_DESC_D_SCALE_POINTER:
    case CUBLASLT_MATMUL_DESC_AMAX_D_POINTER:
    case CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_SCALE_POINTER:
    case CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_AMAX_POINTER:
    case CUBLASLT_MATMUL_DESC_D_OUT_SCALE_POINTER:
      return true;
    default:
      return false;
  }
}

} // namespace

// --- cuBLASLt --------------------------------------------------------------

template <class Map, class Destroy>
void blas_runner::make_room(Map& cache, size_t needed, Destroy destroy) {
  if (cache.size() + needed <= blas_tables::max_cached)
    return;
  for (auto& kv : cache)
    static_cast<void>(destroy(kv.second));
  cache.clear();
}

void blas_runner::make_room_for_call() {
  make_room(t_.descs, 1, api_.cublasLtMatmulDescDestroy);
  make_room(t_.layouts, 4, api_.cublasLtMatrixLayoutDestroy);
  make_room(t_.preferences, 1, api_.cublasLtMatmulPreferenceDestroy);
}

bool blas_runner::apply_attributes(
  const google::protobuf::RepeatedPtrField<proto::BlasLtAttribute>& attrs, const char* what,
  cublasStatus_t (*set)(void*, int32_t, const void*, size_t, blas_api&), void* object) {
  for (const auto& a : attrs) {
    attribute_value v;
    if (a.value().empty() || a.value().size() > sizeof(v.bytes)) {
      invalid(fmt::format("{} attribute {}: {} bytes (1 to 64 expected)", what, a.id(),
                          a.value().size()));
      return false;
    }
    std::memcpy(v.bytes, a.value().data(), a.value().size());
    auto st = set(object, a.id(), v.bytes, a.value().size(), api_);
    if (st != CUBLAS_STATUS_SUCCESS) {
      fail(st, fmt::format("{} attribute {} was refused by cuBLASLt ({})", what, a.id(),
                           static_cast<int>(st)));
      return false;
    }
  }
  return true;
}

cublasLtMatmulDesc_t blas_runner::desc(const proto::BlasLtMatmulDesc& d) {
  auto key = d.SerializeAsString();
  if (auto i = t_.descs.find(key); i != t_.descs.end())
    return i->second;
  cublasLtMatmulDesc_t x = nullptr;
  if (!report(api_.cublasLtMatmulDescCreate(&x, static_cast<cublasComputeType_t>(d.compute_type()),
                                            static_cast<cudaDataType>(d.scale_type())),
              "cublasLtMatmulDescCreate"))
    return nullptr;
  auto set = [](void* o, int32_t id, const void* buf, size_t n, blas_api& api) {
    return api.cublasLtMatmulDescSetAttribute(static_cast<cublasLtMatmulDesc_t>(o),
                                              static_cast<cublasLtMatmulDescAttributes_t>(id),
                                              buf, n);
  };
  if (!apply_attributes(d.attributes(), "matmul descriptor", set, x)) {
    static_cast<void>(api_.cublasLtMatmulDescDestroy(x));
    return nullptr;
  }
  t_.descs.emplace(std::move(key), x);
  return x;
}

cublasLtMatrixLayout_t blas_runner::layout(const proto::BlasLtLayout& l) {
  auto key = l.SerializeAsString();
  if (auto i = t_.layouts.find(key); i != t_.layouts.end())
    return i->second;
  cublasLtMatrixLayout_t x = nullptr;
  if (!report(api_.cublasLtMatrixLayoutCreate(&x, static_cast<cudaDataType>(l.type()), l.rows(),
                                              l.cols(), l.ld()),
              "cublasLtMatrixLayoutCreate"))
    return nullptr;
  auto set = [](void* o, int32_t id, const void* buf, size_t n, blas_api& api) {
    return api.cublasLtMatrixLayoutSetAttribute(static_cast<cublasLtMatrixLayout_t>(o),
                                                static_cast<cublasLtMatrixLayoutAttribute_t>(id),
                                                buf, n);
  };
  if (!apply_attributes(l.attributes(), "matrix layout", set, x)) {
    static_cast<void>(api_.cublasLtMatrixLayoutDestroy(x));
    return nullptr;
  }
  t_.layouts.emplace(std::move(key), x);
  return x;
}

cublasLtMatmulPreference_t blas_runner::preference(const proto::BlasLtPreference& p) {
  auto key = p.SerializeAsString();
  if (auto i = t_.preferences.find(key); i != t_.preferences.end())
    return i->second;
  cublasLtMatmulPreference_t x = nullptr;
  if (!report(api_.cublasLtMatmulPreferenceCreate(&x), "cublasLtMatmulPreferenceCreate"))
    return nullptr;
  auto set = [](void* o, int32_t id, const void* buf, size_t n, blas_api& api) {
    return api.cublasLtMatmulPreferenceSetAttribute(
      static_cast<cublasLtMatmulPreference_t>(o),
      static_cast<cublasLtMatmulPreferenceAttributes_t>(id), buf, n);
  };
  if (!apply_attributes(p.attributes(), "matmul preference", set, x)) {
    static_cast<void>(api_.cublasLtMatmulPreferenceDestroy(x));
    return nullptr;
  }
  t_.preferences.emplace(std::move(key), x);
  return x;
}

std::optional<uint64_t> blas_runner::layout_extent(const proto::BlasLtLayout& l, const char* what) {
  const auto& attrs = l.attributes();
  auto type = static_cast<cudaDataType>(
    attribute_as<uint32_t>(attrs, CUBLASLT_MATRIX_LAYOUT_TYPE).value_or(uint32_t(l.type())));
  auto rows = attribute_as<uint64_t>(attrs, CUBLASLT_MATRIX_LAYOUT_ROWS).value_or(l.rows());
  auto cols = attribute_as<uint64_t>(attrs, CUBLASLT_MATRIX_LAYOUT_COLS).value_or(l.cols());
  auto ld = attribute_as<int64_t>(attrs, CUBLASLT_MATRIX_LAYOUT_LD).value_or(l.ld());
  auto order = attribute_as<int32_t>(attrs, CUBLASLT_MATRIX_LAYOUT_ORDER).value_or(CUBLASLT_ORDER_COL);
  auto batch = attribute_as<int32_t>(attrs, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT).value_or(1);
  auto stride = attribute_as<int64_t>(attrs, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET).value_or(0);
  auto elem = shapes::element_size(type);
  if (elem == 0) {
    fail(CUBLAS_STATUS_NOT_SUPPORTED,
         fmt::format("cublasLtMatmul: {} has data type {}, whose size Gleam cannot check",
                     what, static_cast<int>(type)));
    return std::nullopt;
  }
  if (rows > uint64_t{std::numeric_limits<int64_t>::max()}
      || cols > uint64_t{std::numeric_limits<int64_t>::max()}) {
    invalid(fmt::format("cublasLtMatmul: {} has {} x {} elements", what, rows, cols));
    return std::nullopt;
  }
  auto r = static_cast<int64_t>(rows);
  auto c = static_cast<int64_t>(cols);
  std::optional<uint64_t> single;
  if (order == CUBLASLT_ORDER_COL)
    single = shapes::matrix_extent(r, c, ld, elem);
  else if (order == CUBLASLT_ORDER_ROW)
    single = shapes::matrix_extent(c, r, ld, elem);
  else
    // Tiled orders: at least the dense size (a lower bound of the span).
    single = shapes::matrix_extent(r, c, r, elem);
  if (!single) {
    invalid(fmt::format("cublasLtMatmul: {} is {} x {} with leading dimension {}: the "
                        "leading dimension is too small",
                        what, rows, cols, ld));
    return std::nullopt;
  }
  auto total = shapes::batched_extent(*single, stride, batch, elem);
  if (!total)
    invalid(fmt::format("cublasLtMatmul: {} has batch count {} with stride {}", what, batch,
                        stride));
  return total;
}

bool blas_runner::check_desc_pointers(const proto::BlasLtMatmulDesc& d) {
  auto mode = attribute_as<int32_t>(d.attributes(), CUBLASLT_MATMUL_DESC_POINTER_MODE);
  if (mode && *mode != CUBLASLT_POINTER_MODE_HOST) {
    fail(CUBLAS_STATUS_NOT_SUPPORTED,
         "cublasLtMatmul: only CUBLASLT_POINTER_MODE_HOST is supported by Gleam");
    return false;
  }
  for (const auto& a : d.attributes()) {
    if (a.id() == CUBLASLT_MATMUL_DESC_EMULATION_DESCRIPTOR) {
      fail(CUBLAS_STATUS_NOT_SUPPORTED,
           "cublasLtMatmul: CUBLASLT_MATMUL_DESC_EMULATION_DESCRIPTOR is not supported");
      return false;
    }
    if (!is_pointer_attribute(a.id()))
      continue;
    uint64_t p = 0;
    if (a.value().size() != sizeof(p)) {
      invalid(fmt::format("matmul descriptor attribute {} holds a pointer: 8 bytes "
                          "expected, got {}",
                          a.id(), a.value().size()));
      return false;
    }
    std::memcpy(&p, a.value().data(), sizeof(p));
    if (p != 0
        && !check_range(p, 1, fmt::format("matmul descriptor attribute {}", a.id()).c_str()))
      return false;
  }
  return true;
}

bool blas_runner::materialize(const proto::BlasLtMatmulDesc& d,
                              const proto::BlasLtLayout* const (&l)[4],
                              cublasLtMatmulDesc_t& desc_out,
                              cublasLtMatrixLayout_t (&layouts)[4]) {
  make_room_for_call();
  desc_out = desc(d);
  if (desc_out == nullptr)
    return false;
  for (int i = 0; i < 4; ++i) {
    layouts[i] = layout(*l[i]);
    if (layouts[i] == nullptr)
      return false;
  }
  return true;
}

void blas_runner::lt_heuristic(const proto::BlasLtHeuristic& op) {
  cublasLtHandle_t h = nullptr;
  if (!lookup_lt(op.handle(), h))
    return;
  if (op.requested() <= 0 || op.requested() > 1024)
    return invalid(fmt::format("cublasLtMatmulAlgoGetHeuristic: requestedAlgoCount {} "
                               "(1 to 1024)",
                               op.requested()));
  const proto::BlasLtLayout* l[4] = {&op.a_layout(), &op.b_layout(), &op.c_layout(),
                                     &op.d_layout()};
  cublasLtMatmulDesc_t d = nullptr;
  cublasLtMatrixLayout_t layouts[4] = {};
  if (!materialize(op.desc(), l, d, layouts))
    return;
  auto* pref = preference(op.preference());
  if (pref == nullptr)
    return;
  std::vector<cublasLtMatmulHeuristicResult_t> results(static_cast<size_t>(op.requested()));
  int count = 0;
  if (!report(api_.cublasLtMatmulAlgoGetHeuristic(h, d, layouts[0], layouts[1], layouts[2],
                                                  layouts[3], pref, op.requested(),
                                                  results.data(), &count),
              "cublasLtMatmulAlgoGetHeuristic"))
    return;
  auto* out = r_.mutable_blas_heuristics();
  for (int i = 0; i < count && i < op.requested(); ++i)
    out->add_results(reinterpret_cast<const char*>(&results[static_cast<size_t>(i)]),
                     sizeof(cublasLtMatmulHeuristicResult_t));
}

void blas_runner::lt_matmul(const proto::BlasLtMatmul& op) {
  cublasLtHandle_t h = nullptr;
  if (!lookup_lt(op.handle(), h) || !check_desc_pointers(op.desc()))
    return;
  if (!op.algo().empty() && op.algo().size() != sizeof(cublasLtMatmulAlgo_t))
    return invalid(fmt::format("cublasLtMatmul: algo of {} bytes ({} expected)",
                               op.algo().size(), sizeof(cublasLtMatmulAlgo_t)));
  const proto::BlasLtLayout* l[4] = {&op.a_layout(), &op.b_layout(), &op.c_layout(),
                                     &op.d_layout()};
  uint64_t ptrs[4] = {op.a(), op.b(), op.c(), op.d()};
  static const char* names[] = {"A", "B", "C", "D"};
  for (int i = 0; i < 4; ++i) {
    auto e = layout_extent(*l[i], names[i]);
    if (!e || !check_range(ptrs[i], *e, names[i]))
      return;
  }
  if (!check_range(op.workspace(), op.workspace_size(), "cublasLtMatmul workspace"))
    return;
  CUstream stream = nullptr;
  if (!lookup_stream(op.stream(), stream))
    return;
  scalar alpha;
  scalar beta;
  if (!take_scalars(op.alpha(), op.beta(), alpha, beta))
    return;
  cublasLtMatmulDesc_t d = nullptr;
  cublasLtMatrixLayout_t layouts[4] = {};
  if (!materialize(op.desc(), l, d, layouts))
    return;
  cublasLtMatmulAlgo_t algo;
  const cublasLtMatmulAlgo_t* algo_ptr = nullptr;
  if (!op.algo().empty()) {
    std::memcpy(&algo, op.algo().data(), sizeof(algo));
    algo_ptr = &algo;
  }
  report(api_.cublasLtMatmul(h, d, alpha.bytes, reinterpret_cast<const void*>(op.a()),
                             layouts[0], reinterpret_cast<const void*>(op.b()), layouts[1],
                             beta.bytes, reinterpret_cast<const void*>(op.c()), layouts[2],
                             reinterpret_cast<void*>(op.d()), layouts[3], algo_ptr,
                             reinterpret_cast<void*>(op.workspace()), op.workspace_size(),
                             stream),
         "cublasLtMatmul");
}

} // namespace gleam::executor
