// The server side of cuFFT's manual functions (interpose/spec/cufft.spec,
// class manual with an id): the plan-making functions call the vendor's
// function of the same name with the app's shape (wire/fft_geometry.hpp)
// and keep the plan's input, output and work-area bytes in the session's
// handle table; executions and work areas are checked against them before
// the vendor's call. A plan whose shape is not known (made by no function
// here) runs no execution: the vendor would fail it as CUFFT_INVALID_PLAN
// too.
#include <algorithm>
#include <cstring>
#include <memory>

#include <fmt/format.h>

#include "executor/cufft_api.hpp"
#include "executor/cufft_function_ids.hpp"
#include "executor/library_handles.hpp"
#include "wire/fft_geometry.hpp"

namespace gleam::executor {

namespace {

namespace ids = generated::cufft_ids;
namespace fft = wire::fft;

/// The spec's handle type index of cufftHandle.
constexpr int32_t plan_type = 0;

/// A plan's shape in bytes, kept in its handle entry's note.
struct plan_shape {
  uint64_t input = 0, output = 0, work = 0;
};

/// The shape's arrays in the integer type `T` of the vendor's function.
template <class T>
struct arrays {
  T n[fft::max_rank] = {}, inembed[fft::max_rank] = {}, onembed[fft::max_rank] = {};

  explicit arrays(const fft::geometry& g) {
    for (int i = 0; i < fft::max_rank; ++i) {
      n[i] = static_cast<T>(g.n[i]);
      inembed[i] = static_cast<T>(g.inembed[i]);
      onembed[i] = static_cast<T>(g.onembed[i]);
    }
  }
  T* in(const fft::geometry& g) {
    return g.in_embedded ? inembed : nullptr;
  }
  T* out(const fft::geometry& g) {
    return g.out_embedded ? onembed : nullptr;
  }
};

/// Calls the vendor's plan-making function `function` for `plan` (a fresh
/// one for cufftPlan*, written there) with shape `g`; its status, or -1
/// when `function` is none of them or this cuFFT lacks it.
int call_shape(cufft_api& a, uint32_t function, cufftHandle* plan, const fft::geometry& g,
               size_t* work) {
  auto type = static_cast<cufftType>(g.type);
  int nx = static_cast<int>(g.n[0]), ny = static_cast<int>(g.n[1]), nz = static_cast<int>(g.n[2]);
  int batch = static_cast<int>(g.batch);
  arrays<int> i32(g);
  arrays<long long> i64(g);
  auto istride = static_cast<int>(g.istride), idist = static_cast<int>(g.idist);
  auto ostride = static_cast<int>(g.ostride), odist = static_cast<int>(g.odist);
  auto in_type = static_cast<cudaDataType>(g.input_type);
  auto out_type = static_cast<cudaDataType>(g.output_type);
  auto exec_type = static_cast<cudaDataType>(g.execution_type);
#define GLEAM_CALL(fn, ...) return a.fn == nullptr ? -1 : static_cast<int>(a.fn(__VA_ARGS__))
  switch (function) {
    case ids::cufftPlan1d:
      GLEAM_CALL(cufftPlan1d, plan, nx, type, batch);
    case ids::cufftPlan2d:
      GLEAM_CALL(cufftPlan2d, plan, nx, ny, type);
    case ids::cufftPlan3d:
      GLEAM_CALL(cufftPlan3d, plan, nx, ny, nz, type);
    case ids::cufftPlanMany:
      GLEAM_CALL(cufftPlanMany, plan, g.rank, i32.n, i32.in(g), istride, idist, i32.out(g),
                 ostride, odist, type, batch);
    case ids::cufftMakePlan1d:
      GLEAM_CALL(cufftMakePlan1d, *plan, nx, type, batch, work);
    case ids::cufftMakePlan2d:
      GLEAM_CALL(cufftMakePlan2d, *plan, nx, ny, type, work);
    case ids::cufftMakePlan3d:
      GLEAM_CALL(cufftMakePlan3d, *plan, nx, ny, nz, type, work);
    case ids::cufftMakePlanMany:
      GLEAM_CALL(cufftMakePlanMany, *plan, g.rank, i32.n, i32.in(g), istride, idist, i32.out(g),
                 ostride, odist, type, batch, work);
    case ids::cufftMakePlanMany64:
      GLEAM_CALL(cufftMakePlanMany64, *plan, g.rank, i64.n, i64.in(g), g.istride, g.idist,
                 i64.out(g), g.ostride, g.odist, type, g.batch, work);
    case ids::cufftXtMakePlanMany:
      GLEAM_CALL(cufftXtMakePlanMany, *plan, g.rank, i64.n, i64.in(g), g.istride, g.idist,
                 in_type, i64.out(g), g.ostride, g.odist, out_type, g.batch, work, exec_type);
    case ids::cufftGetSize1d:
      GLEAM_CALL(cufftGetSize1d, *plan, nx, type, batch, work);
    case ids::cufftGetSize2d:
      GLEAM_CALL(cufftGetSize2d, *plan, nx, ny, type, work);
    case ids::cufftGetSize3d:
      GLEAM_CALL(cufftGetSize3d, *plan, nx, ny, nz, type, work);
    case ids::cufftGetSizeMany:
      GLEAM_CALL(cufftGetSizeMany, *plan, g.rank, i32.n, i32.in(g), istride, idist, i32.out(g),
                 ostride, odist, type, batch, work);
    case ids::cufftGetSizeMany64:
      GLEAM_CALL(cufftGetSizeMany64, *plan, g.rank, i64.n, i64.in(g), g.istride, g.idist,
                 i64.out(g), g.ostride, g.odist, type, g.batch, work);
    case ids::cufftXtGetSizeMany:
      GLEAM_CALL(cufftXtGetSizeMany, *plan, g.rank, i64.n, i64.in(g), g.istride, g.idist,
                 in_type, i64.out(g), g.ostride, g.odist, out_type, g.batch, work, exec_type);
    case ids::cufftEstimate1d:
      GLEAM_CALL(cufftEstimate1d, nx, type, batch, work);
    case ids::cufftEstimate2d:
      GLEAM_CALL(cufftEstimate2d, nx, ny, type, work);
    case ids::cufftEstimate3d:
      GLEAM_CALL(cufftEstimate3d, nx, ny, nz, type, work);
    case ids::cufftEstimateMany:
      GLEAM_CALL(cufftEstimateMany, g.rank, i32.n, i32.in(g), istride, idist, i32.out(g),
                 ostride, odist, type, batch, work);
    default:
      return -1;
  }
#undef GLEAM_CALL
}

/// The functions call_shape() serves, by what they do with their plan.
enum class shape_kind { none, creates, makes, sizes, estimates };

shape_kind kind_of(uint32_t function) {
  switch (function) {
    case ids::cufftPlan1d:
    case ids::cufftPlan2d:
    case ids::cufftPlan3d:
    case ids::cufftPlanMany:
      return shape_kind::creates;
    case ids::cufftMakePlan1d:
    case ids::cufftMakePlan2d:
    case ids::cufftMakePlan3d:
    case ids::cufftMakePlanMany:
    case ids::cufftMakePlanMany64:
    case ids::cufftXtMakePlanMany:
      return shape_kind::makes;
    case ids::cufftGetSize1d:
    case ids::cufftGetSize2d:
    case ids::cufftGetSize3d:
    case ids::cufftGetSizeMany:
    case ids::cufftGetSizeMany64:
    case ids::cufftXtGetSizeMany:
      return shape_kind::sizes;
    case ids::cufftEstimate1d:
    case ids::cufftEstimate2d:
    case ids::cufftEstimate3d:
    case ids::cufftEstimateMany:
      return shape_kind::estimates;
    default:
      return shape_kind::none;
  }
}

const char* name_of(uint32_t function) {
  switch (function) {
#define GLEAM_NAME(fn)                                                                             \
  case ids::fn:                                                                                    \
    return #fn;
    GLEAM_NAME(cufftPlan1d)
    GLEAM_NAME(cufftPlan2d)
    GLEAM_NAME(cufftPlan3d)
    GLEAM_NAME(cufftPlanMany)
    GLEAM_NAME(cufftMakePlan1d)
    GLEAM_NAME(cufftMakePlan2d)
    GLEAM_NAME(cufftMakePlan3d)
    GLEAM_NAME(cufftMakePlanMany)
    GLEAM_NAME(cufftMakePlanMany64)
    GLEAM_NAME(cufftXtMakePlanMany)
    GLEAM_NAME(cufftGetSize1d)
    GLEAM_NAME(cufftGetSize2d)
    GLEAM_NAME(cufftGetSize3d)
    GLEAM_NAME(cufftGetSizeMany)
    GLEAM_NAME(cufftGetSizeMany64)
    GLEAM_NAME(cufftXtGetSizeMany)
    GLEAM_NAME(cufftEstimate1d)
    GLEAM_NAME(cufftEstimate2d)
    GLEAM_NAME(cufftEstimate3d)
    GLEAM_NAME(cufftEstimateMany)
    GLEAM_NAME(cufftExecC2C)
    GLEAM_NAME(cufftExecR2C)
    GLEAM_NAME(cufftExecC2R)
    GLEAM_NAME(cufftExecZ2Z)
    GLEAM_NAME(cufftExecD2Z)
    GLEAM_NAME(cufftExecZ2D)
    GLEAM_NAME(cufftXtExec)
    GLEAM_NAME(cufftSetWorkArea)
    GLEAM_NAME(cufftXtSetWorkArea)
    GLEAM_NAME(cufftXtQueryPlan)
    GLEAM_NAME(cufftXtSetWorkAreaPolicy)
#undef GLEAM_NAME
    default:
      return "cuFFT";
  }
}

/// A plan-making call: [plan id,] shape; the work size comes back (but for
/// cufftPlan*, which answer with the status alone).
bool run_shape(cufft_api& a, library_call_env& env, uint32_t function, shape_kind kind,
               wire::arg_reader& in) {
  const char* name = name_of(function);
  uint64_t id = kind == shape_kind::estimates ? 0 : in.address();
  bool ok = false;
  auto g = fft::read(in, &ok);
  if (!ok || !in.done())
    return env.malformed(name), true;
  cufftHandle plan = 0;
  if (kind == shape_kind::creates) {
    if (!env.fresh(id, plan_type))
      return true;
  } else if (kind != shape_kind::estimates) {
    auto* h = env.library_handle(id, plan_type, handle_use::setting);
    if (h == nullptr)
      return true;
    plan = value_handle_of<cufftHandle>(h);
  }
  size_t work = 0;
  size_t* work_out = &work;
  if (kind != shape_kind::creates) {
    work_out = static_cast<size_t*>(env.host_output(sizeof(size_t), "workSize"));
    if (work_out == nullptr)
      return true;
  }
  int st = call_shape(a, function, &plan, g, work_out);
  if (st < 0)
    return env.unavailable(name), true;
  if (st != CUFFT_SUCCESS)
    return env.report(st, name), true;
  auto shape = std::make_shared<plan_shape>();
  shape->input = fft::bytes(g, true);
  shape->output = fft::bytes(g, false);
  if (kind == shape_kind::creates) {
    // cufftPlan* answer no work size: ask the plan.
    if (a.cufftGetSize != nullptr && a.cufftGetSize(plan, &work) == CUFFT_SUCCESS)
      shape->work = work;
    if (!env.adopt(id, plan_type, value_handle_ptr(plan), false))
      return true;
    if (auto* note = env.handle_note(id, plan_type); note != nullptr)
      *note = std::move(shape);
  } else if (kind == shape_kind::makes) {
    shape->work = *work_out;
    if (auto* note = env.handle_note(id, plan_type); note != nullptr)
      *note = std::move(shape);
  }
  env.report(st, name);
  return true;
}

/// The plan's kept shape, or null after failing the call (a plan made by
/// no plan-making function of this session). Call after library_handle().
const plan_shape* shaped(library_call_env& env, uint64_t id, const char* name) {
  auto* note = env.handle_note(id, plan_type);
  if (note != nullptr && *note != nullptr)
    return static_cast<const plan_shape*>(note->get());
  env.report(CUFFT_INVALID_PLAN, name);
  return nullptr;
}

/// An execution: plan, input, output[, direction].
bool run_exec(cufft_api& a, library_call_env& env, uint32_t function, wire::arg_reader& in) {
  const char* name = name_of(function);
  auto id = in.address();
  auto input = in.address();
  auto output = in.address();
  bool complex = function == ids::cufftExecC2C || function == ids::cufftExecZ2Z
                 || function == ids::cufftXtExec;
  int direction = complex ? in.value<int>() : 0;
  if (!in.done())
    return env.malformed(name), true;
  auto* h = env.library_handle(id, plan_type, handle_use::work);
  if (h == nullptr)
    return true;
  const auto* shape = shaped(env, id, name);
  if (shape == nullptr)
    return true;
  auto in_bytes = shape->input, out_bytes = shape->output;
  // In place, one buffer holds both sides.
  if (input == output)
    in_bytes = out_bytes = std::max(in_bytes, out_bytes);
  if (!env.device(input, in_bytes, "input") || !env.device(output, out_bytes, "output"))
    return true;
  auto plan = value_handle_of<cufftHandle>(h);
  auto* i = reinterpret_cast<void*>(static_cast<uintptr_t>(input));
  auto* o = reinterpret_cast<void*>(static_cast<uintptr_t>(output));
  int st = -1;
#define GLEAM_EXEC(fn, T_in, T_out, ...)                                                           \
  if (a.fn != nullptr)                                                                             \
    st = a.fn(plan, static_cast<T_in*>(i), static_cast<T_out*>(o) __VA_ARGS__);
  switch (function) {
    case ids::cufftExecC2C:
      GLEAM_EXEC(cufftExecC2C, cufftComplex, cufftComplex, , direction)
      break;
    case ids::cufftExecZ2Z:
      GLEAM_EXEC(cufftExecZ2Z, cufftDoubleComplex, cufftDoubleComplex, , direction)
      break;
    case ids::cufftExecR2C:
      GLEAM_EXEC(cufftExecR2C, cufftReal, cufftComplex)
      break;
    case ids::cufftExecC2R:
      GLEAM_EXEC(cufftExecC2R, cufftComplex, cufftReal)
      break;
    case ids::cufftExecD2Z:
      GLEAM_EXEC(cufftExecD2Z, cufftDoubleReal, cufftDoubleComplex)
      break;
    case ids::cufftExecZ2D:
      GLEAM_EXEC(cufftExecZ2D, cufftDoubleComplex, cufftDoubleReal)
      break;
    case ids::cufftXtExec:
      GLEAM_EXEC(cufftXtExec, void, void, , direction)
      break;
    default:
      break;
  }
#undef GLEAM_EXEC
  if (st < 0)
    return env.unavailable(name), true;
  env.report(st, name);
  return true;
}

/// cufftSetWorkArea / cufftXtSetWorkArea: the area must hold the plan's
/// work size.
bool run_work_area(cufft_api& a, library_call_env& env, uint32_t function, wire::arg_reader& in) {
  const char* name = name_of(function);
  auto id = in.address();
  auto area = in.address();
  if (!in.done())
    return env.malformed(name), true;
  auto* h = env.library_handle(id, plan_type, handle_use::setting);
  if (h == nullptr)
    return true;
  const auto* shape = shaped(env, id, name);
  if (shape == nullptr || !env.device(area, shape->work, "workArea"))
    return true;
  auto plan = value_handle_of<cufftHandle>(h);
  void* p = reinterpret_cast<void*>(static_cast<uintptr_t>(area));
  int st = -1;
  if (function == ids::cufftSetWorkArea && a.cufftSetWorkArea != nullptr)
    st = a.cufftSetWorkArea(plan, p);
  else if (function == ids::cufftXtSetWorkArea && a.cufftXtSetWorkArea != nullptr)
    st = a.cufftXtSetWorkArea(plan, &p);
  if (st < 0)
    return env.unavailable(name), true;
  env.report(st, name);
  return true;
}

} // namespace

bool run_manual_cufft(cufft_api& api, library_call_env& env, uint32_t function,
                      wire::arg_reader& in) {
  if (auto kind = kind_of(function); kind != shape_kind::none)
    return run_shape(api, env, function, kind, in);
  switch (function) {
    case ids::cufftExecC2C:
    case ids::cufftExecR2C:
    case ids::cufftExecC2R:
    case ids::cufftExecZ2Z:
    case ids::cufftExecD2Z:
    case ids::cufftExecZ2D:
    case ids::cufftXtExec:
      return run_exec(api, env, function, in);
    case ids::cufftSetWorkArea:
    case ids::cufftXtSetWorkArea:
      return run_work_area(api, env, function, in);
    case ids::cufftXtQueryPlan: {
      auto id = in.address();
      auto type = in.value<cufftXtQueryType>();
      if (!in.done())
        return env.malformed("cufftXtQueryPlan"), true;
      if (api.cufftXtQueryPlan == nullptr)
        return env.unavailable("cufftXtQueryPlan"), true;
      auto* h = env.library_handle(id, plan_type, handle_use::setting);
      if (h == nullptr)
        return true;
      auto* out = env.host_output(sizeof(cufftXt1dFactors), "queryStruct");
      if (out == nullptr)
        return true;
      env.report(api.cufftXtQueryPlan(value_handle_of<cufftHandle>(h), out, type),
                 "cufftXtQueryPlan");
      return true;
    }
    case ids::cufftXtSetWorkAreaPolicy: {
      auto id = in.address();
      auto policy = in.value<cufftXtWorkAreaPolicy>();
      bool has_size = in.value<uint8_t>() != 0;
      auto size = static_cast<size_t>(in.value<uint64_t>());
      if (!in.done())
        return env.malformed("cufftXtSetWorkAreaPolicy"), true;
      if (api.cufftXtSetWorkAreaPolicy == nullptr)
        return env.unavailable("cufftXtSetWorkAreaPolicy"), true;
      auto* h = env.library_handle(id, plan_type, handle_use::setting);
      if (h == nullptr)
        return true;
      env.report(api.cufftXtSetWorkAreaPolicy(value_handle_of<cufftHandle>(h), policy,
                                              has_size ? &size : nullptr),
                 "cufftXtSetWorkAreaPolicy");
      return true;
    }
    default:
      return false;
  }
}

} // namespace gleam::executor
