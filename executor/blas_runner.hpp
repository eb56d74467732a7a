#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <cublasLt.h>
#include <cublas_api.h>
#include <cuda.h>

#include <google/protobuf/repeated_field.h>

#include "actors/proto/ops.pb.h"
#include "executor/blas.hpp"
#include "executor/blas_api.hpp"
#include "executor/driver_api.hpp"
#include "executor/session.hpp"

namespace gleam::executor {

class blas_call_env;

/// Runs one cuBLAS / cuBLASLt op of a session into its result for run_blas
/// (executor/blas.hpp): handles, streams and every device address checked
/// before the library sees them. Made for one op over the session's
/// blas_tables and dropped after it. Its handle, gemm and generated-call
/// parts are executor/blas.cpp, its cuBLASLt part executor/blas_lt.cpp.
/// Not thread-safe (like the executor).
class blas_runner {
public:
  friend class blas_call_env;

  blas_runner(blas_tables& t, driver_api& driver, session& s, proto::OpResult& r)
    : t_(t), api_(*t.api), driver_(driver), s_(s), r_(r) {
  }

  void run(const proto::Op& op);

private:
  /// A 16-byte aligned copy of a scalar sent by value (at most a complex double).
  struct scalar {
    alignas(16) unsigned char bytes[16] = {};
  };

  // --- results ---------------------------------------------------------------

  void fail(cublasStatus_t st, std::string detail);

  void invalid(std::string detail);

  /// Records the library's status `st` of call `what`; true on success.
  bool report(cublasStatus_t st, const char* what);

  // --- lookups ---------------------------------------------------------------

  /// The session's stream `handle` for a cuBLAS call on it: with `work`,
  /// for work about to be issued there (ordered by the legacy-stream rule,
  /// executor/session_streams.hpp); without, only resolved.
  bool lookup_stream(uint64_t handle, CUstream& out, bool work = true);

  blas_handle_entry* lookup(uint64_t id);

  /// A cuBLAS handle (cublasCreate).
  blas_handle_entry* lookup_blas(uint64_t id);

  /// A cuBLASLt handle, or a cuBLAS handle used as one (the vendor allows
  /// the cast).
  bool lookup_lt(uint64_t id, cublasLtHandle_t& out);

  bool check_range(uint64_t ptr, uint64_t len, const char* what);

  bool take_scalars(const std::string& alpha, const std::string& beta, scalar& a, scalar& b);

  // --- handles ---------------------------------------------------------------

  void create(uint64_t id, bool lt);

  void destroy(uint64_t id, bool lt);

  void set_stream(const proto::BlasSetStream& op);

  /// Puts cuBLAS handle `h` on the session's stream `handle`; with `work`,
  /// for work about to be issued there (ordered by the legacy-stream rule,
  /// as any work is). cublasSetStream resets a workspace set by
  /// cublasSetWorkspace, so the library hears of a stream only when it
  /// changes.
  bool bind(blas_handle_entry& h, uint64_t handle, bool work = true);

  void set_workspace(const proto::BlasSetWorkspace& op);

  // --- gemm ------------------------------------------------------------------

  /// Validates the pointer arrays of a batched gemm and every matrix they
  /// name. The arrays are read from the device after the handle's stream
  /// has finished the work before this op (which may have written them).
  bool check_pointer_arrays(const proto::BlasGemm& g, CUstream stream, const uint64_t* arrays,
                            const uint64_t* extents);

  template <class T, class Plain, class Plain64, class Strided, class Strided64, class Batched,
            class Batched64>
  cublasStatus_t typed(Plain plain, Plain64 plain64, Strided strided, Strided64 strided64,
                       Batched batched, Batched64 batched64, cublasHandle_t h,
                       const proto::BlasGemm& g, const scalar& alpha, const scalar& beta,
                       bool small);

  cublasStatus_t ex(cublasHandle_t h, const proto::BlasGemm& g, const scalar& alpha,
                    const scalar& beta, bool small);

  void gemm(const proto::BlasGemm& g);

  // --- cuBLASLt --------------------------------------------------------------

  /// Empties a cache that could not take `needed` more objects, so that no
  /// object fetched for the current call is destroyed before the call.
  template <class Map, class Destroy>
  void make_room(Map& cache, size_t needed, Destroy destroy);

  /// Room for one call's descriptor, four layouts and a preference.
  void make_room_for_call();

  bool apply_attributes(const google::protobuf::RepeatedPtrField<proto::BlasLtAttribute>& attrs,
                        const char* what,
                        cublasStatus_t (*set)(void*, int32_t, const void*, size_t, blas_api&),
                        void* object);

  /// A cuBLASLt object made by `create` (the vendor's `create_name`), with
  /// `attrs` set on it through `set`; destroyed again by `destroy` when the
  /// library refuses one of them. Null, with the result set, on a failure.
  template <class T, class Create, class Destroy>
  T make_object(const google::protobuf::RepeatedPtrField<proto::BlasLtAttribute>& attrs,
                const char* what, const char* create_name, Create create,
                cublasStatus_t (*set)(void*, int32_t, const void*, size_t, blas_api&),
                Destroy destroy) {
    T x = nullptr;
    if (!report(create(&x), create_name))
      return nullptr;
    if (!apply_attributes(attrs, what, set, x)) {
      static_cast<void>(destroy(x));
      return nullptr;
    }
    return x;
  }

  cublasLtMatmulDesc_t desc(const proto::BlasLtMatmulDesc& d);

  cublasLtMatrixLayout_t layout(const proto::BlasLtLayout& l);

  cublasLtMatmulPreference_t preference(const proto::BlasLtPreference& p);

  cublasLtMatrixTransformDesc_t transform_desc(const proto::BlasLtTransformDesc& d);

  /// Bytes a matrix of layout `l` spans from its start address, for a call
  /// of `function` (cublasLtMatrixTransform counts the batch stride of a
  /// planar-complex matrix in complex elements, cublasLtMatmul in real ones).
  std::optional<uint64_t> layout_extent(const proto::BlasLtLayout& l, const char* what,
                                        const char* function = "cublasLtMatmul");

  bool check_desc_pointers(const proto::BlasLtMatmulDesc& d);

  bool materialize(const proto::BlasLtMatmulDesc& d, const proto::BlasLtLayout* const (&l)[4],
                   cublasLtMatmulDesc_t& desc_out, cublasLtMatrixLayout_t (&layouts)[4]);

  void lt_heuristic(const proto::BlasLtHeuristic& op);

  void lt_matmul(const proto::BlasLtMatmul& op);

  void lt_algo_get_ids(const proto::BlasLtAlgoGetIds& op);

  void lt_algo_init(const proto::BlasLtAlgoInit& op);

  void lt_algo_check(const proto::BlasLtAlgoCheck& op);

  /// cublasLtMatmulAlgoCapGetAttribute / ConfigGetAttribute / ConfigSetAttribute.
  void lt_algo_attribute(const proto::BlasLtAlgoAttribute& op);

  void lt_transform(const proto::BlasLtTransform& op);

  void lt_heuristics_cache(const proto::BlasLtHeuristicsCache& op);

  // --- generated functions -----------------------------------------------------

  void library_call(const proto::LibraryCall& op);

  /// The handle `id` for a generated call: bound to its stream for work, in
  /// the call's pointer mode.
  blas_handle_entry* generated_handle(uint64_t id, bool device_scalars);

  /// A device array of `count` device pointers, each to `bytes_each`
  /// bytes: the array checked, then read once `stream` has done the work
  /// before this call (which may have written it), then every pointer.
  bool check_device_array(CUstream stream, uint64_t ptr, int64_t count, uint64_t bytes_each,
                          const char* what);

  blas_tables& t_;
  blas_api& api_;
  driver_api& driver_;
  session& s_;
  proto::OpResult& r_;
};

} // namespace gleam::executor
