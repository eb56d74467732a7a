// The client side of cuBLASLt's descriptors (matmul descriptors, matrix
// layouts, preferences, transform and emulation descriptors): attribute maps
// that need no network, made by *Create or placed in the app's buffer by an
// *Init_internal function, and their encodings on the wire. A descriptor
// initialized in the app's buffer is a header naming a client object, kept
// in a registry by buffer address (a re-initialized buffer reuses its
// entry; the vendor's Init'd descriptors are never destroyed).
#pragma once

#include <cstdint>
#include <cstring>
#include <map>
#include <string>

#include <cublasLt.h>

#include "actors/proto/ops.pb.h"

namespace gleam::interpose::cublaslt {

enum class lt_kind : uint32_t {
  matmul_desc = 1,
  layout,
  preference,
  transform_desc,
  emulation_desc
};

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

/// The descriptor of kind `k` at `p` (a *Create handle, or an app buffer
/// an *Init_internal function initialized); null when `p` is none.
lt_object* object_of(const void* p, lt_kind k);

/// An *Init_internal function: `o` (owned) placed behind the app's buffer
/// `p` of `size` bytes, which must hold the vendor's `needed` bytes.
cublasStatus_t init_in(void* p, size_t size, size_t needed, lt_object* o);

/// *Create: hands `o` (owned, null when it could not be made) to the app
/// as its handle.
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

/// *Destroy: frees the descriptor of kind `k` at `p` (NULL: a no-op).
cublasStatus_t destroy(const void* p, lt_kind k);

/// *SetAttribute / *GetAttribute of the descriptor of kind `k` at `p`, as
/// cuBLASLt checks and answers them.
cublasStatus_t set_attribute(const void* p, lt_kind k, int32_t attr, const void* buf,
                             size_t size);
cublasStatus_t get_attribute(const void* p, lt_kind k, int32_t attr, void* buf, size_t size,
                             size_t* written);

/// Every attribute the app set on `o`, as wire attributes.
void put_attributes(const lt_object& o,
                    google::protobuf::RepeatedPtrField<proto::BlasLtAttribute>* out);

/// The emulation descriptor a matmul descriptor's
/// CUBLASLT_MATMUL_DESC_EMULATION_DESCRIPTOR names; null when none is set
/// (or NULL was); `bad` when it names no emulation descriptor of ours.
lt_object* emulation_of(const lt_object& o, bool& bad);

/// A matmul descriptor on the wire: its emulation descriptor (read now,
/// as the vendor reads it at the call) travels by value, not as a pointer.
void put_desc(const lt_object& o, proto::BlasLtMatmulDesc* out);

/// A matrix layout on the wire.
void put_layout(const lt_object& o, proto::BlasLtLayout* out);

/// A transform descriptor on the wire.
void put_transform_desc(const lt_object& o, proto::BlasLtTransformDesc* out);

/// An int32 attribute of `o` as set by the app, or `fallback`.
int32_t int_attribute(const lt_object& o, int32_t attr, int32_t fallback);

} // namespace gleam::interpose::cublaslt
