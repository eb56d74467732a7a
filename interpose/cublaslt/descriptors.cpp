#include "interpose/cublaslt/descriptors.hpp"

#include <algorithm>
#include <mutex>
#include <unordered_map>
#include <unordered_set>

#include "interpose/blas/common.hpp"

namespace gleam::interpose::cublaslt {

namespace {

/// Marks a descriptor initialized in the app's buffer ("GLMBLTI\0").
constexpr uint64_t init_magic = 0x0049544c424d4c47ull;

/// What an *Init_internal function writes at the start of the app's buffer
/// (every vendor descriptor is at least 64 bytes).
struct init_header {
  uint64_t magic = init_magic;
  lt_kind kind;
  lt_object* object;
};

/// The objects behind initialized buffers, by buffer address. Bounded: an
/// app that initializes descriptors in ever new buffers (never reusing one)
/// gets CUBLAS_STATUS_ALLOC_FAILED past max_initialized of them.
constexpr size_t max_initialized = 65536;

struct init_registry {
  std::mutex mutex;
  std::unordered_map<const void*, lt_object*> by_buffer;
  std::unordered_set<const lt_object*> live;
};

init_registry& initialized() {
  static auto* r = new init_registry;
  return *r;
}

/// The size of attribute `attr` of a transform or emulation descriptor
/// (cublasLt.h); 0 for an attribute the kind does not have.
size_t fixed_size(lt_kind k, int32_t attr) {
  if (k == lt_kind::transform_desc)
    return attr >= CUBLASLT_MATRIX_TRANSFORM_DESC_SCALE_TYPE
               && attr <= CUBLASLT_MATRIX_TRANSFORM_DESC_TRANSB
             ? sizeof(int32_t)
             : 0;
  if (k == lt_kind::emulation_desc) {
    if (attr >= CUBLASLT_EMULATION_DESC_STRATEGY
        && attr <= CUBLASLT_EMULATION_DESC_FIXEDPOINT_MANTISSA_BIT_OFFSET)
      return sizeof(int32_t);
    if (attr == CUBLASLT_EMULATION_DESC_FIXEDPOINT_MANTISSA_BIT_COUNT_POINTER)
      return sizeof(void*);
  }
  return 0;
}

/// Whether attributes of kind `k` have one exact size each (the vendor
/// refuses any other size).
bool has_fixed_sizes(lt_kind k) {
  return k == lt_kind::transform_desc || k == lt_kind::emulation_desc;
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
    case lt_kind::transform_desc:
      if (attr == CUBLASLT_MATRIX_TRANSFORM_DESC_SCALE_TYPE)
        return bytes(o.scale_type);
      if (attr == CUBLASLT_MATRIX_TRANSFORM_DESC_POINTER_MODE)
        return bytes(int32_t{CUBLASLT_POINTER_MODE_HOST});
      if (attr == CUBLASLT_MATRIX_TRANSFORM_DESC_TRANSA
          || attr == CUBLASLT_MATRIX_TRANSFORM_DESC_TRANSB)
        return bytes(int32_t{CUBLAS_OP_N});
      return {};
    case lt_kind::emulation_desc:
      if (attr == CUBLASLT_EMULATION_DESC_SPECIAL_VALUES_SUPPORT)
        return bytes(int32_t{0xFFFF});
      if (attr == CUBLASLT_EMULATION_DESC_FIXEDPOINT_MANTISSA_BIT_COUNT_POINTER)
        return bytes(static_cast<void*>(nullptr));
      if (fixed_size(o.kind, attr) == sizeof(int32_t))
        return bytes(int32_t{0});
      return {};
  }
  return {};
}

} // namespace

lt_object* object_of(const void* p, lt_kind k) {
  if (p == nullptr)
    return nullptr;
  uint64_t magic = 0;
  std::memcpy(&magic, p, sizeof(magic));
  if (magic == init_magic) {
    init_header h;
    std::memcpy(&h, p, sizeof(h));
    auto& r = initialized();
    std::lock_guard<std::mutex> guard{r.mutex};
    return h.kind == k && r.live.count(h.object) != 0 ? h.object : nullptr;
  }
  auto* o = static_cast<lt_object*>(const_cast<void*>(p));
  return o->magic == descriptor_magic && o->kind == k ? o : nullptr;
}

/// An *Init_internal function: `o` (owned) placed behind the app's buffer
/// `p` of `size` bytes, which must hold the vendor's `needed` bytes.
cublasStatus_t init_in(void* p, size_t size, size_t needed, lt_object* o) {
  if (o == nullptr)
    return CUBLAS_STATUS_ALLOC_FAILED;
  if (p == nullptr) {
    delete o;
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  if (size < needed) {
    delete o;
    return CUBLAS_STATUS_ALLOC_FAILED;
  }
  auto& r = initialized();
  std::lock_guard<std::mutex> guard{r.mutex};
  auto i = r.by_buffer.find(p);
  if (i == r.by_buffer.end() && r.by_buffer.size() >= max_initialized) {
    delete o;
    gleam::interpose::blas::report_unsupported(
      "more than 65536 buffers holding cuBLASLt descriptors from *Init",
      "Gleam keeps a client object per initialized buffer: reuse buffers, or use *Create and "
      "*Destroy");
    return CUBLAS_STATUS_ALLOC_FAILED;
  }
  if (i != r.by_buffer.end()) {
    r.live.erase(i->second);
    delete i->second;
    i->second = o;
  } else {
    r.by_buffer.emplace(p, o);
  }
  r.live.insert(o);
  init_header h;
  h.kind = o->kind;
  h.object = o;
  std::memset(p, 0, needed);
  std::memcpy(p, &h, sizeof(h));
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t destroy(const void* p, lt_kind k) {
  // Destroying a null descriptor is a no-op for the vendor as well.
  if (p == nullptr)
    return CUBLAS_STATUS_SUCCESS;
  auto* o = object_of(p, k);
  if (o == nullptr)
    return CUBLAS_STATUS_INVALID_VALUE;
  uint64_t magic = 0;
  std::memcpy(&magic, p, sizeof(magic));
  if (magic == init_magic) {
    // Destroying an initialized descriptor: its buffer stays the app's.
    auto& r = initialized();
    std::lock_guard<std::mutex> guard{r.mutex};
    r.live.erase(o);
    for (auto i = r.by_buffer.begin(); i != r.by_buffer.end(); ++i)
      if (i->second == o) {
        r.by_buffer.erase(i);
        break;
      }
    std::memset(const_cast<void*>(p), 0, sizeof(init_header));
  }
  o->magic = 0;
  delete o;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t set_attribute(const void* p, lt_kind k, int32_t attr, const void* buf,
                             size_t size) {
  auto* o = object_of(p, k);
  if (o == nullptr || buf == nullptr || size == 0 || size > 64)
    return CUBLAS_STATUS_INVALID_VALUE;
  if (has_fixed_sizes(k) && size != fixed_size(k, attr))
    return CUBLAS_STATUS_INVALID_VALUE;
  o->attributes[attr].assign(static_cast<const char*>(buf), size);
  return CUBLAS_STATUS_SUCCESS;
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
  if (buf == nullptr || size < value.size() || (has_fixed_sizes(k) && size != value.size()))
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

/// The emulation descriptor a matmul descriptor's
/// CUBLASLT_MATMUL_DESC_EMULATION_DESCRIPTOR names; null when none is set
/// (or NULL was); `bad` when it names no emulation descriptor of ours.
lt_object* emulation_of(const lt_object& o, bool& bad) {
  bad = false;
  auto i = o.attributes.find(CUBLASLT_MATMUL_DESC_EMULATION_DESCRIPTOR);
  if (i == o.attributes.end())
    return nullptr;
  void* p = nullptr;
  if (i->second.size() != sizeof(p)) {
    bad = true;
    return nullptr;
  }
  std::memcpy(&p, i->second.data(), sizeof(p));
  if (p == nullptr)
    return nullptr;
  auto* e = object_of(p, lt_kind::emulation_desc);
  bad = e == nullptr;
  return e;
}

/// A matmul descriptor on the wire: its emulation descriptor (read now,
/// as the vendor reads it at the call) travels by value, not as a pointer.
void put_desc(const lt_object& o, proto::BlasLtMatmulDesc* out) {
  out->set_compute_type(o.compute_type);
  out->set_scale_type(o.scale_type);
  for (const auto& [id, value] : o.attributes) {
    if (id == CUBLASLT_MATMUL_DESC_EMULATION_DESCRIPTOR)
      continue;
    auto* a = out->add_attributes();
    a->set_id(id);
    a->set_value(value);
  }
  bool bad = false;
  if (auto* e = emulation_of(o, bad))
    put_attributes(*e, out->mutable_emulation()->mutable_attributes());
}

void put_layout(const lt_object& o, proto::BlasLtLayout* out) {
  out->set_type(o.type);
  out->set_rows(o.rows);
  out->set_cols(o.cols);
  out->set_ld(o.ld);
  put_attributes(o, out->mutable_attributes());
}

void put_transform_desc(const lt_object& o, proto::BlasLtTransformDesc* out) {
  out->set_scale_type(o.scale_type);
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

} // namespace gleam::interpose::cublaslt
