// cuFFT's hand-written functions: the plan-making ones (cufftPlan*,
// cufftMakePlan*, cufftGetSize*, cufftEstimate*, cufftXtMakePlanMany,
// cufftXtGetSizeMany) send the plan's shape in one packing
// (wire/fft_geometry.hpp) so that the server keeps each plan's input,
// output and work-area bytes; executions and work areas are checked there
// against them (executor/cufft_plans.cpp). Plans are the process's value
// handles (interpose/library_call.hpp).
#include <cstdint>

#include "interpose/cufft/library.hpp"
#include "interpose/cufft_export.hpp"
#include "interpose/cufft_function_ids.hpp"
#include "wire/fft_geometry.hpp"

namespace {

namespace ids = gleam::generated::cufft_ids;
namespace fft = gleam::wire::fft;
using gleam::interpose::library_call;
using gleam::interpose::cufft::plan_type;
using gleam::interpose::cufft::traits;

template <class F>
cufftResult guarded(F&& f) {
  return static_cast<cufftResult>(gleam::interpose::library_guarded(traits, f));
}

bool live(cufftHandle plan) {
  return gleam::interpose::value_handle_live(traits, plan_type, plan);
}

/// The shape of an n-dimensional plan whose arrays are `n`, `inembed` and
/// `onembed` (either null: the basic layout) of element type T.
template <class T>
bool shape(int rank, const T* n, const T* inembed, long long istride, long long idist,
           const T* onembed, long long ostride, long long odist, long long batch,
           fft::geometry* g) {
  if (rank < 1 || rank > fft::max_rank || n == nullptr)
    return false;
  g->rank = rank;
  g->in_embedded = inembed != nullptr;
  g->out_embedded = onembed != nullptr;
  for (int i = 0; i < rank; ++i) {
    g->n[i] = static_cast<int64_t>(n[i]);
    g->inembed[i] = inembed != nullptr ? static_cast<int64_t>(inembed[i]) : 0;
    g->onembed[i] = onembed != nullptr ? static_cast<int64_t>(onembed[i]) : 0;
  }
  g->istride = istride, g->idist = idist, g->ostride = ostride, g->odist = odist;
  g->batch = batch;
  return true;
}

/// A 1, 2 or 3-dimensional plan of the basic layout.
fft::geometry dims(int rank, int nx, int ny, int nz, cufftType type, int batch) {
  fft::geometry g;
  g.rank = rank;
  g.n[0] = nx, g.n[1] = ny, g.n[2] = nz;
  g.type = type;
  g.batch = batch;
  return g;
}

/// What a plan-making call does with its plan.
enum class target {
  /// Creates one (cufftPlan*): its new handle goes into *created.
  create,
  /// Makes or sizes the app's plan `plan`.
  existing,
  /// None (cufftEstimate*).
  none,
};

/// One plan-making call of function `id`: the shape, the plan, and the
/// work size it reports (into *work_size when not null).
cufftResult shape_call(uint32_t id, const char* name, target t, cufftHandle plan,
                       cufftHandle* created, const fft::geometry& g, size_t* work_size) {
  return guarded([&]() -> int {
    if (t == target::existing && !live(plan))
      return CUFFT_INVALID_PLAN;
    if (t == target::create && created == nullptr)
      return CUFFT_INVALID_VALUE;
    library_call call(traits, id, name);
    int fresh = 0;
    if (t == target::create) {
      fresh = gleam::interpose::make_value_handle(traits, plan_type);
      if (fresh == 0)
        return CUFFT_ALLOC_FAILED;
      call.handle_id(static_cast<uint64_t>(fresh));
    } else if (t == target::existing) {
      call.handle_id(static_cast<uint64_t>(plan));
    }
    fft::pack(call.args(), g);
    // The work size comes back whether or not the app asked for it.
    size_t ignored = 0;
    if (t != target::create)
      if (auto st = call.host_output(work_size != nullptr ? work_size : &ignored, sizeof(size_t));
          st != CUFFT_SUCCESS)
        return st;
    auto st = call.finish(true);
    if (t == target::create) {
      if (st == CUFFT_SUCCESS)
        *created = fresh;
      else
        gleam::interpose::release_value_handle(traits, plan_type, fresh);
    }
    return st;
  });
}

} // namespace

extern "C" {

GLEAM_INTERPOSE_EXPORT cufftResult cufftPlan1d(cufftHandle* plan, int nx, cufftType type,
                                               int batch) {
  return shape_call(ids::cufftPlan1d, "cufftPlan1d", target::create, 0, plan,
                    dims(1, nx, 0, 0, type, batch), nullptr);
}

GLEAM_INTERPOSE_EXPORT cufftResult cufftPlan2d(cufftHandle* plan, int nx, int ny,
                                               cufftType type) {
  return shape_call(ids::cufftPlan2d, "cufftPlan2d", target::create, 0, plan,
                    dims(2, nx, ny, 0, type, 1), nullptr);
}

GLEAM_INTERPOSE_EXPORT cufftResult cufftPlan3d(cufftHandle* plan, int nx, int ny, int nz,
                                               cufftType type) {
  return shape_call(ids::cufftPlan3d, "cufftPlan3d", target::create, 0, plan,
                    dims(3, nx, ny, nz, type, 1), nullptr);
}

GLEAM_INTERPOSE_EXPORT cufftResult cufftPlanMany(cufftHandle* plan, int rank, int* n,
                                                 int* inembed, int istride, int idist,
                                                 int* onembed, int ostride, int odist,
                                                 cufftType type, int batch) {
  fft::geometry g;
  if (!shape(rank, n, inembed, istride, idist, onembed, ostride, odist, batch, &g))
    return CUFFT_INVALID_VALUE;
  g.type = type;
  return shape_call(ids::cufftPlanMany, "cufftPlanMany", target::create, 0, plan, g, nullptr);
}

GLEAM_INTERPOSE_EXPORT cufftResult cufftMakePlan1d(cufftHandle plan, int nx, cufftType type,
                                                   int batch, size_t* workSize) {
  return shape_call(ids::cufftMakePlan1d, "cufftMakePlan1d", target::existing, plan, nullptr,
                    dims(1, nx, 0, 0, type, batch), workSize);
}

GLEAM_INTERPOSE_EXPORT cufftResult cufftMakePlan2d(cufftHandle plan, int nx, int ny,
                                                   cufftType type, size_t* workSize) {
  return shape_call(ids::cufftMakePlan2d, "cufftMakePlan2d", target::existing, plan, nullptr,
                    dims(2, nx, ny, 0, type, 1), workSize);
}

GLEAM_INTERPOSE_EXPORT cufftResult cufftMakePlan3d(cufftHandle plan, int nx, int ny, int nz,
                                                   cufftType type, size_t* workSize) {
  return shape_call(ids::cufftMakePlan3d, "cufftMakePlan3d", target::existing, plan, nullptr,
                    dims(3, nx, ny, nz, type, 1), workSize);
}

GLEAM_INTERPOSE_EXPORT cufftResult cufftMakePlanMany(cufftHandle plan, int rank, int* n,
                                                     int* inembed, int istride, int idist,
                                                     int* onembed, int ostride, int odist,
                                                     cufftType type, int batch,
                                                     size_t* workSize) {
  fft::geometry g;
  if (!shape(rank, n, inembed, istride, idist, onembed, ostride, odist, batch, &g))
    return CUFFT_INVALID_VALUE;
  g.type = type;
  return shape_call(ids::cufftMakePlanMany, "cufftMakePlanMany", target::existing, plan,
                    nullptr, g, workSize);
}

GLEAM_INTERPOSE_EXPORT cufftResult cufftMakePlanMany64(
    cufftHandle plan, int rank, long long int* n, long long int* inembed, long long int istride,
    long long int idist, long long int* onembed, long long int ostride, long long int odist,
    cufftType type, long long int batch, size_t* workSize) {
  fft::geometry g;
  if (!shape(rank, n, inembed, istride, idist, onembed, ostride, odist, batch, &g))
    return CUFFT_INVALID_VALUE;
  g.type = type;
  return shape_call(ids::cufftMakePlanMany64, "cufftMakePlanMany64", target::existing, plan,
                    nullptr, g, workSize);
}

GLEAM_INTERPOSE_EXPORT cufftResult cufftXtMakePlanMany(
    cufftHandle plan, int rank, long long int* n, long long int* inembed, long long int istride,
    long long int idist, cudaDataType inputtype, long long int* onembed, long long int ostride,
    long long int odist, cudaDataType outputtype, long long int batch, size_t* workSize,
    cudaDataType executiontype) {
  fft::geometry g;
  if (!shape(rank, n, inembed, istride, idist, onembed, ostride, odist, batch, &g))
    return CUFFT_INVALID_VALUE;
  g.input_type = inputtype, g.output_type = outputtype, g.execution_type = executiontype;
  return shape_call(ids::cufftXtMakePlanMany, "cufftXtMakePlanMany", target::existing, plan,
                    nullptr, g, workSize);
}

GLEAM_INTERPOSE_EXPORT cufftResult cufftGetSize1d(cufftHandle handle, int nx, cufftType type,
                                                  int batch, size_t* workSize) {
  return shape_call(ids::cufftGetSize1d, "cufftGetSize1d", target::existing, handle, nullptr,
                    dims(1, nx, 0, 0, type, batch), workSize);
}

GLEAM_INTERPOSE_EXPORT cufftResult cufftGetSize2d(cufftHandle handle, int nx, int ny,
                                                  cufftType type, size_t* workSize) {
  return shape_call(ids::cufftGetSize2d, "cufftGetSize2d", target::existing, handle, nullptr,
                    dims(2, nx, ny, 0, type, 1), workSize);
}

GLEAM_INTERPOSE_EXPORT cufftResult cufftGetSize3d(cufftHandle handle, int nx, int ny, int nz,
                                                  cufftType type, size_t* workSize) {
  return shape_call(ids::cufftGetSize3d, "cufftGetSize3d", target::existing, handle, nullptr,
                    dims(3, nx, ny, nz, type, 1), workSize);
}

GLEAM_INTERPOSE_EXPORT cufftResult cufftGetSizeMany(cufftHandle handle, int rank, int* n,
                                                    int* inembed, int istride, int idist,
                                                    int* onembed, int ostride, int odist,
                                                    cufftType type, int batch,
                                                    size_t* workArea) {
  fft::geometry g;
  if (!shape(rank, n, inembed, istride, idist, onembed, ostride, odist, batch, &g))
    return CUFFT_INVALID_VALUE;
  g.type = type;
  return shape_call(ids::cufftGetSizeMany, "cufftGetSizeMany", target::existing, handle,
                    nullptr, g, workArea);
}

GLEAM_INTERPOSE_EXPORT cufftResult cufftGetSizeMany64(
    cufftHandle plan, int rank, long long int* n, long long int* inembed, long long int istride,
    long long int idist, long long int* onembed, long long int ostride, long long int odist,
    cufftType type, long long int batch, size_t* workSize) {
  fft::geometry g;
  if (!shape(rank, n, inembed, istride, idist, onembed, ostride, odist, batch, &g))
    return CUFFT_INVALID_VALUE;
  g.type = type;
  return shape_call(ids::cufftGetSizeMany64, "cufftGetSizeMany64", target::existing, plan,
                    nullptr, g, workSize);
}

GLEAM_INTERPOSE_EXPORT cufftResult cufftXtGetSizeMany(
    cufftHandle plan, int rank, long long int* n, long long int* inembed, long long int istride,
    long long int idist, cudaDataType inputtype, long long int* onembed, long long int ostride,
    long long int odist, cudaDataType outputtype, long long int batch, size_t* workSize,
    cudaDataType executiontype) {
  fft::geometry g;
  if (!shape(rank, n, inembed, istride, idist, onembed, ostride, odist, batch, &g))
    return CUFFT_INVALID_VALUE;
  g.input_type = inputtype, g.output_type = outputtype, g.execution_type = executiontype;
  return shape_call(ids::cufftXtGetSizeMany, "cufftXtGetSizeMany", target::existing, plan,
                    nullptr, g, workSize);
}

GLEAM_INTERPOSE_EXPORT cufftResult cufftEstimate1d(int nx, cufftType type, int batch,
                                                   size_t* workSize) {
  return shape_call(ids::cufftEstimate1d, "cufftEstimate1d", target::none, 0, nullptr,
                    dims(1, nx, 0, 0, type, batch), workSize);
}

GLEAM_INTERPOSE_EXPORT cufftResult cufftEstimate2d(int nx, int ny, cufftType type,
                                                   size_t* workSize) {
  return shape_call(ids::cufftEstimate2d, "cufftEstimate2d", target::none, 0, nullptr,
                    dims(2, nx, ny, 0, type, 1), workSize);
}

GLEAM_INTERPOSE_EXPORT cufftResult cufftEstimate3d(int nx, int ny, int nz, cufftType type,
                                                   size_t* workSize) {
  return shape_call(ids::cufftEstimate3d, "cufftEstimate3d", target::none, 0, nullptr,
                    dims(3, nx, ny, nz, type, 1), workSize);
}

GLEAM_INTERPOSE_EXPORT cufftResult cufftEstimateMany(int rank, int* n, int* inembed,
                                                     int istride, int idist, int* onembed,
                                                     int ostride, int odist, cufftType type,
                                                     int batch, size_t* workSize) {
  fft::geometry g;
  if (!shape(rank, n, inembed, istride, idist, onembed, ostride, odist, batch, &g))
    return CUFFT_INVALID_VALUE;
  g.type = type;
  return shape_call(ids::cufftEstimateMany, "cufftEstimateMany", target::none, 0, nullptr, g,
                    workSize);
}

} // extern "C"
