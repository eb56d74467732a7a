// The cuBLASLt part of blas_runner (executor/blas_runner.hpp): the
// session's descriptor, layout and preference caches keyed by content, the
// extent of each matrix from its layout, and the heuristic and matmul ops.

#include "executor/blas_runner.hpp"

#include <algorithm>
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
  // Emulation descriptors live as long as the matmul descriptors using them.
  if (t_.descs.size() + 1 > blas_tables::max_cached) {
    for (auto& kv : t_.emulations)
      static_cast<void>(api_.cublasLtEmulationDescDestroy(kv.second));
    t_.emulations.clear();
  }
  make_room(t_.descs, 1, api_.cublasLtMatmulDescDestroy);
  make_room(t_.layouts, 4, api_.cublasLtMatrixLayoutDestroy);
  make_room(t_.preferences, 1, api_.cublasLtMatmulPreferenceDestroy);
  make_room(t_.transforms, 1, api_.cublasLtMatrixTransformDescDestroy);
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
  // The library would follow this pointer in the server's memory: an
  // emulation descriptor travels as BlasLtMatmulDesc.emulation only.
  for (const auto& a : d.attributes())
    if (a.id() == CUBLASLT_MATMUL_DESC_EMULATION_DESCRIPTOR) {
      invalid("matmul descriptor: CUBLASLT_MATMUL_DESC_EMULATION_DESCRIPTOR travels as the "
              "descriptor's emulation field, not as a pointer");
      return nullptr;
    }
  auto x = make_object<cublasLtMatmulDesc_t>(
    d.attributes(), "matmul descriptor", "cublasLtMatmulDescCreate",
    [&](cublasLtMatmulDesc_t* out) {
      return api_.cublasLtMatmulDescCreate(out, static_cast<cublasComputeType_t>(d.compute_type()),
                                           static_cast<cudaDataType>(d.scale_type()));
    },
    [](void* o, int32_t id, const void* buf, size_t n, blas_api& api) {
      return api.cublasLtMatmulDescSetAttribute(static_cast<cublasLtMatmulDesc_t>(o),
                                                static_cast<cublasLtMatmulDescAttributes_t>(id),
                                                buf, n);
    },
    api_.cublasLtMatmulDescDestroy);
  if (x == nullptr)
    return nullptr;
  if (d.has_emulation()) {
    cublasLtEmulationDesc_t e = nullptr;
    if (!report(api_.cublasLtEmulationDescCreate(&e), "cublasLtEmulationDescCreate")) {
      static_cast<void>(api_.cublasLtMatmulDescDestroy(x));
      return nullptr;
    }
    auto set_e = [](void* o, int32_t id, const void* buf, size_t n, blas_api& api) {
      return api.cublasLtEmulationDescSetAttribute(static_cast<cublasLtEmulationDesc_t>(o),
                                                   static_cast<cublasLtEmulationDescAttributes_t>(id),
                                                   buf, n);
    };
    if (!apply_attributes(d.emulation().attributes(), "emulation descriptor", set_e, e)
        || !report(api_.cublasLtMatmulDescSetAttribute(x, CUBLASLT_MATMUL_DESC_EMULATION_DESCRIPTOR,
                                                       &e, sizeof(e)),
                   "cublasLtMatmulDescSetAttribute(CUBLASLT_MATMUL_DESC_EMULATION_DESCRIPTOR)")) {
      static_cast<void>(api_.cublasLtEmulationDescDestroy(e));
      static_cast<void>(api_.cublasLtMatmulDescDestroy(x));
      return nullptr;
    }
    t_.emulations[key] = e;
  }
  t_.descs.emplace(std::move(key), x);
  return x;
}

cublasLtMatrixLayout_t blas_runner::layout(const proto::BlasLtLayout& l) {
  auto key = l.SerializeAsString();
  if (auto i = t_.layouts.find(key); i != t_.layouts.end())
    return i->second;
  auto x = make_object<cublasLtMatrixLayout_t>(
    l.attributes(), "matrix layout", "cublasLtMatrixLayoutCreate",
    [&](cublasLtMatrixLayout_t* out) {
      return api_.cublasLtMatrixLayoutCreate(out, static_cast<cudaDataType>(l.type()), l.rows(),
                                             l.cols(), l.ld());
    },
    [](void* o, int32_t id, const void* buf, size_t n, blas_api& api) {
      return api.cublasLtMatrixLayoutSetAttribute(static_cast<cublasLtMatrixLayout_t>(o),
                                                  static_cast<cublasLtMatrixLayoutAttribute_t>(id),
                                                  buf, n);
    },
    api_.cublasLtMatrixLayoutDestroy);
  if (x == nullptr)
    return nullptr;
  t_.layouts.emplace(std::move(key), x);
  return x;
}

cublasLtMatmulPreference_t blas_runner::preference(const proto::BlasLtPreference& p) {
  auto key = p.SerializeAsString();
  if (auto i = t_.preferences.find(key); i != t_.preferences.end())
    return i->second;
  auto x = make_object<cublasLtMatmulPreference_t>(
    p.attributes(), "matmul preference", "cublasLtMatmulPreferenceCreate",
    [&](cublasLtMatmulPreference_t* out) { return api_.cublasLtMatmulPreferenceCreate(out); },
    [](void* o, int32_t id, const void* buf, size_t n, blas_api& api) {
      return api.cublasLtMatmulPreferenceSetAttribute(
        static_cast<cublasLtMatmulPreference_t>(o),
        static_cast<cublasLtMatmulPreferenceAttributes_t>(id), buf, n);
    },
    api_.cublasLtMatmulPreferenceDestroy);
  if (x == nullptr)
    return nullptr;
  t_.preferences.emplace(std::move(key), x);
  return x;
}

cublasLtMatrixTransformDesc_t blas_runner::transform_desc(const proto::BlasLtTransformDesc& d) {
  auto key = d.SerializeAsString();
  if (auto i = t_.transforms.find(key); i != t_.transforms.end())
    return i->second;
  auto x = make_object<cublasLtMatrixTransformDesc_t>(
    d.attributes(), "matrix transform descriptor", "cublasLtMatrixTransformDescCreate",
    [&](cublasLtMatrixTransformDesc_t* out) {
      return api_.cublasLtMatrixTransformDescCreate(out,
                                                    static_cast<cudaDataType>(d.scale_type()));
    },
    [](void* o, int32_t id, const void* buf, size_t n, blas_api& api) {
      return api.cublasLtMatrixTransformDescSetAttribute(
        static_cast<cublasLtMatrixTransformDesc_t>(o),
        static_cast<cublasLtMatrixTransformDescAttributes_t>(id), buf, n);
    },
    api_.cublasLtMatrixTransformDescDestroy);
  if (x == nullptr)
    return nullptr;
  t_.transforms.emplace(std::move(key), x);
  return x;
}

std::optional<uint64_t> blas_runner::layout_extent(const proto::BlasLtLayout& l, const char* what,
                                                   const char* function) {
  const auto& attrs = l.attributes();
  auto type = static_cast<cudaDataType>(
    attribute_as<uint32_t>(attrs, CUBLASLT_MATRIX_LAYOUT_TYPE).value_or(uint32_t(l.type())));
  auto rows = attribute_as<uint64_t>(attrs, CUBLASLT_MATRIX_LAYOUT_ROWS).value_or(l.rows());
  auto cols = attribute_as<uint64_t>(attrs, CUBLASLT_MATRIX_LAYOUT_COLS).value_or(l.cols());
  auto ld = attribute_as<int64_t>(attrs, CUBLASLT_MATRIX_LAYOUT_LD).value_or(l.ld());
  auto order = attribute_as<int32_t>(attrs, CUBLASLT_MATRIX_LAYOUT_ORDER).value_or(CUBLASLT_ORDER_COL);
  auto batch = attribute_as<int32_t>(attrs, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT).value_or(1);
  auto stride = attribute_as<int64_t>(attrs, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET).value_or(0);
  auto plane = attribute_as<int64_t>(attrs, CUBLASLT_MATRIX_LAYOUT_PLANE_OFFSET).value_or(0);
  auto elem = shapes::element_size(type);
  if (elem == 0) {
    fail(CUBLAS_STATUS_NOT_SUPPORTED,
         fmt::format("{}: {} has data type {}, whose size Gleam cannot check", function, what,
                     static_cast<int>(type)));
    return std::nullopt;
  }
  if (rows > uint64_t{std::numeric_limits<int64_t>::max()}
      || cols > uint64_t{std::numeric_limits<int64_t>::max()}) {
    invalid(fmt::format("{}: {} has {} x {} elements", function, what, rows, cols));
    return std::nullopt;
  }
  if (plane < 0) {
    fail(CUBLAS_STATUS_NOT_SUPPORTED,
         fmt::format("{}: {} has a negative plane offset {}, whose extent Gleam cannot check",
                     function, what, plane));
    return std::nullopt;
  }
  // A planar-complex matrix is two planes of real values, the imaginary one
  // `plane` bytes after the real one.
  auto value = plane != 0 && elem % 2 == 0 ? elem / 2 : elem;
  auto r = static_cast<int64_t>(rows);
  auto c = static_cast<int64_t>(cols);
  std::optional<uint64_t> single;
  // Tiled orders: column groups of 32, each group `ld` elements after the
  // previous one and spanning 32 columns of its rows rounded up to the tile.
  auto tiled = [&](int64_t tile_rows) -> std::optional<uint64_t> {
    if (r == 0 || c == 0)
      return uint64_t{0};
    if (r > (int64_t{1} << 40))
      return std::nullopt;
    auto padded = (r + tile_rows - 1) / tile_rows * tile_rows;
    auto group = 32 * padded;
    auto groups = (c + 31) / 32;
    if (groups > 1 && ld < group)
      return std::nullopt;
    return shapes::matrix_extent(group, groups, groups > 1 ? ld : group, value);
  };
  switch (order) {
    case CUBLASLT_ORDER_COL:
      single = shapes::matrix_extent(r, c, ld, value);
      break;
    case CUBLASLT_ORDER_ROW:
      single = shapes::matrix_extent(c, r, ld, value);
      break;
    case CUBLASLT_ORDER_COL32:
      single = tiled(1);
      break;
    case CUBLASLT_ORDER_COL4_4R2_8C:
      single = tiled(8);
      break;
    case CUBLASLT_ORDER_COL32_2R_4R4:
      single = tiled(32);
      break;
    default:
      fail(CUBLAS_STATUS_NOT_SUPPORTED,
           fmt::format("{}: {} has memory order {}, whose extent Gleam cannot check", function,
                       what, order));
      return std::nullopt;
  }
  if (!single) {
    invalid(fmt::format("{}: {} is {} x {} with leading dimension {} in order {}: the "
                        "leading dimension is too small",
                        function, what, rows, cols, ld, order));
    return std::nullopt;
  }
  // cublasLtMatrixTransform counts a planar matrix's batch stride in complex
  // elements, cublasLtMatmul in real ones (cublasLt.h).
  auto stride_unit = plane != 0 && std::strcmp(function, "cublasLtMatrixTransform") != 0 ? value
                                                                                          : elem;
  auto total = shapes::batched_extent(*single, stride, batch, stride_unit);
  if (total && plane != 0 && *total != 0) {
    uint64_t both = 0;
    if (__builtin_add_overflow(*total, static_cast<uint64_t>(plane), &both))
      total.reset();
    else
      total = std::max(*total, both);
  }
  if (!total)
    invalid(fmt::format("{}: {} has batch count {} with stride {}", function, what, batch,
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
  // The emulation descriptor's device address: where the library writes
  // the mantissa bits it kept (an int32_t).
  for (const auto& a : d.emulation().attributes()) {
    if (a.id() != CUBLASLT_EMULATION_DESC_FIXEDPOINT_MANTISSA_BIT_COUNT_POINTER)
      continue;
    uint64_t p = 0;
    if (a.value().size() != sizeof(p)) {
      invalid(fmt::format("emulation descriptor attribute {} holds a pointer: 8 bytes "
                          "expected, got {}",
                          a.id(), a.value().size()));
      return false;
    }
    std::memcpy(&p, a.value().data(), sizeof(p));
    if (p != 0 && !check_range(p, sizeof(int32_t), "emulation descriptor mantissa bit count"))
      return false;
  }
  for (const auto& a : d.attributes()) {
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

// --- the algo-level API ------------------------------------------------------
// The app's arguments are reproduced exactly, null pointers included, so
// that the status is the library's own.

namespace {

/// A cublasLtMatmulAlgo_t sent as bytes: false when it is neither empty
/// (NULL) nor 64 bytes.
bool take_algo(const std::string& bytes, cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgo_t*& ptr) {
  ptr = nullptr;
  if (bytes.empty())
    return true;
  if (bytes.size() != sizeof(algo))
    return false;
  std::memcpy(&algo, bytes.data(), sizeof(algo));
  ptr = &algo;
  return true;
}

/// Bound of sizeInBytes of an algo attribute query (the largest, the tile
/// list, is a few hundred bytes).
constexpr uint64_t max_attribute_bytes = 65536;

/// Bound of requestedAlgoCount for cublasLtMatmulAlgoGetIds (the library
/// knows a few dozen ids).
constexpr int32_t max_algo_ids = 65536;

} // namespace

void blas_runner::lt_algo_get_ids(const proto::BlasLtAlgoGetIds& op) {
  cublasLtHandle_t h = nullptr;
  if (!lookup_lt(op.handle(), h))
    return;
  if (op.requested() > max_algo_ids)
    return invalid(fmt::format("cublasLtMatmulAlgoGetIds: requestedAlgoCount {} (at most {} "
                               "through Gleam)",
                               op.requested(), max_algo_ids));
  std::vector<int> ids(static_cast<size_t>(std::max(op.requested(), 1)));
  int count = 0;
  auto st = api_.cublasLtMatmulAlgoGetIds(
    h, static_cast<cublasComputeType_t>(op.compute_type()),
    static_cast<cudaDataType_t>(op.scale_type()), static_cast<cudaDataType_t>(op.a_type()),
    static_cast<cudaDataType_t>(op.b_type()), static_cast<cudaDataType_t>(op.c_type()),
    static_cast<cudaDataType_t>(op.d_type()), op.requested(), op.ids_null() ? nullptr : ids.data(),
    op.count_null() ? nullptr : &count);
  if (!report(st, "cublasLtMatmulAlgoGetIds"))
    return;
  auto* out = r_.mutable_blas_lt_answer();
  out->set_size_written(static_cast<uint64_t>(std::max(count, 0)));
  for (int i = 0; i < count && i < op.requested() && !op.ids_null(); ++i)
    out->add_ids(ids[static_cast<size_t>(i)]);
}

void blas_runner::lt_algo_init(const proto::BlasLtAlgoInit& op) {
  cublasLtHandle_t h = nullptr;
  if (!lookup_lt(op.handle(), h))
    return;
  cublasLtMatmulAlgo_t algo;
  std::memset(&algo, 0, sizeof(algo));
  auto st = api_.cublasLtMatmulAlgoInit(
    h, static_cast<cublasComputeType_t>(op.compute_type()),
    static_cast<cudaDataType_t>(op.scale_type()), static_cast<cudaDataType_t>(op.a_type()),
    static_cast<cudaDataType_t>(op.b_type()), static_cast<cudaDataType_t>(op.c_type()),
    static_cast<cudaDataType_t>(op.d_type()), op.algo_id(), op.algo_null() ? nullptr : &algo);
  if (!report(st, "cublasLtMatmulAlgoInit"))
    return;
  if (!op.algo_null())
    r_.mutable_blas_lt_answer()->set_algo(reinterpret_cast<const char*>(&algo), sizeof(algo));
}

void blas_runner::lt_algo_check(const proto::BlasLtAlgoCheck& op) {
  cublasLtHandle_t h = nullptr;
  if (!lookup_lt(op.handle(), h))
    return;
  cublasLtMatmulAlgo_t algo;
  cublasLtMatmulAlgo_t* algo_ptr = nullptr;
  if (!take_algo(op.algo(), algo, algo_ptr))
    return invalid(fmt::format("cublasLtMatmulAlgoCheck: algo of {} bytes ({} expected)",
                               op.algo().size(), sizeof(cublasLtMatmulAlgo_t)));
  cublasLtMatmulHeuristicResult_t result;
  std::memset(&result, 0, sizeof(result));
  if (!op.result().empty() && op.result().size() != sizeof(result))
    return invalid(fmt::format("cublasLtMatmulAlgoCheck: result of {} bytes ({} expected)",
                               op.result().size(), sizeof(result)));
  if (!op.result().empty())
    std::memcpy(&result, op.result().data(), sizeof(result));
  const proto::BlasLtLayout* l[4] = {&op.a_layout(), &op.b_layout(), &op.c_layout(),
                                     &op.d_layout()};
  cublasLtMatmulDesc_t d = nullptr;
  cublasLtMatrixLayout_t layouts[4] = {};
  if (!materialize(op.desc(), l, d, layouts))
    return;
  auto st = api_.cublasLtMatmulAlgoCheck(h, d, layouts[0], layouts[1], layouts[2], layouts[3],
                                         algo_ptr, op.result().empty() ? nullptr : &result);
  if (!report(st, "cublasLtMatmulAlgoCheck"))
    return;
  if (!op.result().empty())
    r_.mutable_blas_lt_answer()->set_result(reinterpret_cast<const char*>(&result),
                                            sizeof(result));
}

void blas_runner::lt_algo_attribute(const proto::BlasLtAlgoAttribute& op) {
  static const char* names[] = {"cublasLtMatmulAlgoCapGetAttribute",
                                "cublasLtMatmulAlgoConfigGetAttribute",
                                "cublasLtMatmulAlgoConfigSetAttribute"};
  auto kind = op.kind();
  if (kind < proto::BlasLtAlgoAttribute::CAP_GET || kind > proto::BlasLtAlgoAttribute::CONFIG_SET)
    return invalid(fmt::format("algo attribute query of unknown kind {}", static_cast<int>(kind)));
  const char* name = names[kind];
  cublasLtMatmulAlgo_t algo;
  cublasLtMatmulAlgo_t* algo_ptr = nullptr;
  if (!take_algo(op.algo(), algo, algo_ptr))
    return invalid(fmt::format("{}: algo of {} bytes ({} expected)", name, op.algo().size(),
                               sizeof(cublasLtMatmulAlgo_t)));
  if (op.size() > max_attribute_bytes)
    return invalid(fmt::format("{}: sizeInBytes {} (at most {} through Gleam)", name, op.size(),
                               max_attribute_bytes));
  // 8-byte aligned storage of sizeInBytes bytes (at least one word).
  std::vector<uint64_t> storage(static_cast<size_t>((op.size() + 7) / 8) + 1, 0);
  void* buf = op.buf_null() ? nullptr : storage.data();
  auto size = static_cast<size_t>(op.size());
  if (kind == proto::BlasLtAlgoAttribute::CONFIG_SET) {
    if (buf != nullptr)
      std::memcpy(buf, op.value().data(), std::min(op.value().size(), size));
    auto st = api_.cublasLtMatmulAlgoConfigSetAttribute(
      algo_ptr, static_cast<cublasLtMatmulAlgoConfigAttributes_t>(op.attr()), buf, size);
    if (!report(st, name))
      return;
    if (algo_ptr != nullptr)
      r_.mutable_blas_lt_answer()->set_algo(reinterpret_cast<const char*>(&algo), sizeof(algo));
    return;
  }
  // sizeWritten is passed as NULL only where that changes the outcome
  // (sizeInBytes 0); otherwise the server needs it to send back just what
  // was written.
  size_t written = 0;
  size_t* written_ptr = op.size_written_null() && size == 0 ? nullptr : &written;
  auto st = kind == proto::BlasLtAlgoAttribute::CAP_GET
              ? api_.cublasLtMatmulAlgoCapGetAttribute(
                  algo_ptr, static_cast<cublasLtMatmulAlgoCapAttributes_t>(op.attr()), buf, size,
                  written_ptr)
              : api_.cublasLtMatmulAlgoConfigGetAttribute(
                  algo_ptr, static_cast<cublasLtMatmulAlgoConfigAttributes_t>(op.attr()), buf,
                  size, written_ptr);
  if (!report(st, name))
    return;
  auto* out = r_.mutable_blas_lt_answer();
  out->set_size_written(written);
  if (buf != nullptr && size != 0)
    out->set_buf(static_cast<const char*>(buf), std::min(written, size));
}

void blas_runner::lt_transform(const proto::BlasLtTransform& op) {
  constexpr const char* name = "cublasLtMatrixTransform";
  cublasLtHandle_t h = nullptr;
  if (!lookup_lt(op.handle(), h))
    return;
  auto mode = attribute_as<int32_t>(op.desc().attributes(),
                                    CUBLASLT_MATRIX_TRANSFORM_DESC_POINTER_MODE);
  if (mode && *mode != CUBLASLT_POINTER_MODE_HOST)
    return fail(CUBLAS_STATUS_NOT_SUPPORTED,
                "cublasLtMatrixTransform: only CUBLASLT_POINTER_MODE_HOST is supported by Gleam");
  if (op.alpha().size() > sizeof(scalar::bytes) || op.beta().size() > sizeof(scalar::bytes))
    return invalid("cublasLtMatrixTransform: alpha or beta larger than 16 bytes");
  scalar alpha;
  scalar beta;
  std::memcpy(alpha.bytes, op.alpha().data(), op.alpha().size());
  std::memcpy(beta.bytes, op.beta().data(), op.beta().size());
  auto nonzero = [](const std::string& v) {
    return std::any_of(v.begin(), v.end(), [](char ch) { return ch != 0; });
  };
  struct operand {
    const char* what;
    uint64_t ptr;
    const proto::BlasLtLayout* layout;
    bool read;
  };
  // A is read where alpha is not zero, B where beta is not; C is written.
  operand ops[3] = {
    {"A", op.a(), op.has_a_layout() ? &op.a_layout() : nullptr, nonzero(op.alpha())},
    {"B", op.b(), op.has_b_layout() ? &op.b_layout() : nullptr, nonzero(op.beta())},
    {"C", op.c(), op.has_c_layout() ? &op.c_layout() : nullptr, true},
  };
  for (const auto& o : ops) {
    if (o.ptr != 0 && o.layout == nullptr)
      return invalid(fmt::format("{}: {} is not NULL but its layout is NULL", name, o.what));
    if (o.layout == nullptr)
      continue;
    auto e = layout_extent(*o.layout, o.what, name);
    if (!e)
      return;
    if (o.ptr == 0) {
      // A NULL operand the library would have to read or write.
      if (o.read && *e != 0)
        return invalid(fmt::format("{}: {} is NULL but has a layout of {} bytes and a "
                                   "non-zero scale",
                                   name, o.what, *e));
      continue;
    }
    if (!check_range(o.ptr, *e, o.what))
      return;
  }
  CUstream stream = nullptr;
  if (!lookup_stream(op.stream(), stream))
    return;
  make_room_for_call();
  auto* d = transform_desc(op.desc());
  if (d == nullptr)
    return;
  cublasLtMatrixLayout_t layouts[3] = {};
  for (int i = 0; i < 3; ++i)
    if (ops[i].layout != nullptr) {
      layouts[i] = layout(*ops[i].layout);
      if (layouts[i] == nullptr)
        return;
    }
  report(api_.cublasLtMatrixTransform(
           h, d, op.alpha().empty() ? nullptr : alpha.bytes, reinterpret_cast<const void*>(op.a()),
           layouts[0], op.beta().empty() ? nullptr : beta.bytes,
           reinterpret_cast<const void*>(op.b()), layouts[1], reinterpret_cast<void*>(op.c()),
           layouts[2], stream),
         name);
}

void blas_runner::lt_heuristics_cache(const proto::BlasLtHeuristicsCache& op) {
  if (op.set()) {
    report(api_.cublasLtHeuristicsCacheSetCapacity(static_cast<size_t>(op.capacity())),
           "cublasLtHeuristicsCacheSetCapacity");
    return;
  }
  size_t capacity = 0;
  if (report(api_.cublasLtHeuristicsCacheGetCapacity(&capacity),
             "cublasLtHeuristicsCacheGetCapacity"))
    r_.mutable_blas_lt_answer()->set_capacity(capacity);
}

} // namespace gleam::executor
