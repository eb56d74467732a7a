// cuFFT's executions and work areas: error-code-only calls on the plan's
// stream (like cuBLAS's gemms), their device ranges checked by the server
// against the plan's shape (executor/cufft_plans.cpp). cufftXtQueryPlan
// and cufftXtSetWorkAreaPolicy wait for their answer.
#include <cstdint>

#include "interpose/cufft/library.hpp"
#include "interpose/cufft_export.hpp"
#include "interpose/cufft_function_ids.hpp"

namespace {

namespace ids = gleam::generated::cufft_ids;
using gleam::interpose::library_call;
using gleam::interpose::cufft::plan_type;
using gleam::interpose::cufft::traits;

/// An execution of function `id`: plan, input, output and, for complex
/// transforms, the direction.
cufftResult exec(uint32_t id, const char* name, cufftHandle plan, const void* in, const void* out,
                 const int* direction) {
  return static_cast<cufftResult>(gleam::interpose::library_guarded(traits, [&]() -> int {
    if (!gleam::interpose::value_handle_live(traits, plan_type, plan))
      return CUFFT_INVALID_PLAN;
    library_call call(traits, id, name);
    call.handle_id(static_cast<uint64_t>(plan));
    call.device(in);
    call.device(out);
    if (direction != nullptr)
      call.value(*direction);
    return call.finish(false);
  }));
}

/// A call on plan `plan` whose arguments `add` packs; `wait`: the call
/// waits for the server's status.
template <class F>
cufftResult on_plan(uint32_t id, const char* name, cufftHandle plan, bool wait, F&& add) {
  return static_cast<cufftResult>(gleam::interpose::library_guarded(traits, [&]() -> int {
    if (!gleam::interpose::value_handle_live(traits, plan_type, plan))
      return CUFFT_INVALID_PLAN;
    library_call call(traits, id, name);
    call.handle_id(static_cast<uint64_t>(plan));
    if (int st = add(call); st != CUFFT_SUCCESS)
      return st;
    return call.finish(wait);
  }));
}

} // namespace

extern "C" {

GLEAM_INTERPOSE_EXPORT cufftResult cufftExecC2C(cufftHandle plan, cufftComplex* idata,
                                                cufftComplex* odata, int direction) {
  return exec(ids::cufftExecC2C, "cufftExecC2C", plan, idata, odata, &direction);
}

GLEAM_INTERPOSE_EXPORT cufftResult cufftExecZ2Z(cufftHandle plan, cufftDoubleComplex* idata,
                                                cufftDoubleComplex* odata, int direction) {
  return exec(ids::cufftExecZ2Z, "cufftExecZ2Z", plan, idata, odata, &direction);
}

GLEAM_INTERPOSE_EXPORT cufftResult cufftExecR2C(cufftHandle plan, cufftReal* idata,
                                                cufftComplex* odata) {
  return exec(ids::cufftExecR2C, "cufftExecR2C", plan, idata, odata, nullptr);
}

GLEAM_INTERPOSE_EXPORT cufftResult cufftExecC2R(cufftHandle plan, cufftComplex* idata,
                                                cufftReal* odata) {
  return exec(ids::cufftExecC2R, "cufftExecC2R", plan, idata, odata, nullptr);
}

GLEAM_INTERPOSE_EXPORT cufftResult cufftExecD2Z(cufftHandle plan, cufftDoubleReal* idata,
                                                cufftDoubleComplex* odata) {
  return exec(ids::cufftExecD2Z, "cufftExecD2Z", plan, idata, odata, nullptr);
}

GLEAM_INTERPOSE_EXPORT cufftResult cufftExecZ2D(cufftHandle plan, cufftDoubleComplex* idata,
                                                cufftDoubleReal* odata) {
  return exec(ids::cufftExecZ2D, "cufftExecZ2D", plan, idata, odata, nullptr);
}

GLEAM_INTERPOSE_EXPORT cufftResult cufftXtExec(cufftHandle plan, void* input, void* output,
                                               int direction) {
  return exec(ids::cufftXtExec, "cufftXtExec", plan, input, output, &direction);
}

GLEAM_INTERPOSE_EXPORT cufftResult cufftSetWorkArea(cufftHandle plan, void* workArea) {
  return on_plan(ids::cufftSetWorkArea, "cufftSetWorkArea", plan, false,
                 [&](library_call& call) -> int {
                   call.device(workArea);
                   return CUFFT_SUCCESS;
                 });
}

GLEAM_INTERPOSE_EXPORT cufftResult cufftXtSetWorkArea(cufftHandle plan, void** workArea) {
  // One work area per GPU of the plan; a Gleam plan has one GPU.
  return on_plan(ids::cufftXtSetWorkArea, "cufftXtSetWorkArea", plan, false,
                 [&](library_call& call) -> int {
                   if (workArea == nullptr)
                     return CUFFT_INVALID_VALUE;
                   call.device(workArea[0]);
                   return CUFFT_SUCCESS;
                 });
}

GLEAM_INTERPOSE_EXPORT cufftResult cufftXtQueryPlan(cufftHandle plan, void* queryStruct,
                                                    cufftXtQueryType queryType) {
  return on_plan(ids::cufftXtQueryPlan, "cufftXtQueryPlan", plan, true,
                 [&](library_call& call) -> int {
                   if (queryType != CUFFT_QUERY_1D_FACTORS)
                     return CUFFT_INVALID_VALUE;
                   call.value(queryType);
                   return call.host_output(queryStruct, sizeof(cufftXt1dFactors));
                 });
}

GLEAM_INTERPOSE_EXPORT cufftResult cufftXtSetWorkAreaPolicy(cufftHandle plan,
                                                            cufftXtWorkAreaPolicy policy,
                                                            size_t* workSize) {
  return on_plan(ids::cufftXtSetWorkAreaPolicy, "cufftXtSetWorkAreaPolicy", plan, true,
                 [&](library_call& call) -> int {
                   call.value(policy);
                   call.value(static_cast<uint8_t>(workSize != nullptr));
                   call.value(static_cast<uint64_t>(workSize != nullptr ? *workSize : 0));
                   return CUFFT_SUCCESS;
                 });
}

} // extern "C"
