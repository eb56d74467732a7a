#pragma once

// A fake cuFFT for the CPU tests (tests/executor/cufft_test.cpp): plans
// with their shape, executions that write values computed from the input
// where the library would write them (C2C: input * 2 forward, * 3 inverse;
// R2C: each real becomes (value, 0) in the first n/2 + 1 outputs of its
// transform), work sizes, streams and work areas; every call logged. Plans
// are ints from 0 on, as a library's may be. Header-only; not thread-safe.

#include <cufft.h>
#include <cufftXt.h>

#include <complex>
#include <cstdint>
#include <map>
#include <vector>

#include "executor/cufft_api.hpp"

namespace gleam::test {

/// One plan of the fake.
struct fake_plan {
  bool made = false;
  int nx = 0;
  int batch = 0;
  cufftType type = CUFFT_C2C;
  cudaStream_t stream = nullptr;
  void* work_area = nullptr;
};

/// What the fake saw.
struct fake_cufft_log {
  std::map<int, fake_plan> plans;
  int next = 0;
  int executions = 0;
  int set_streams = 0;
  /// The stream each execution ran on, in order.
  std::vector<cudaStream_t> executed_on;
};

inline fake_cufft_log& fake_cufft() {
  static fake_cufft_log log;
  return log;
}

/// The fake's work size of an nx-point plan.
inline size_t fake_cufft_work(int nx) {
  return static_cast<size_t>(nx) * 16;
}

namespace fake_cufft_detail {

inline fake_plan* plan_of(cufftHandle h) {
  auto i = fake_cufft().plans.find(h);
  return i == fake_cufft().plans.end() ? nullptr : &i->second;
}

inline cufftResult make(cufftHandle h, int nx, cufftType type, int batch, size_t* work) {
  auto* p = plan_of(h);
  if (p == nullptr)
    return CUFFT_INVALID_PLAN;
  if (nx < 2 || batch < 1)
    return CUFFT_INVALID_SIZE;
  p->made = true;
  p->nx = nx, p->type = type, p->batch = batch;
  if (work != nullptr)
    *work = fake_cufft_work(nx);
  return CUFFT_SUCCESS;
}

inline fake_plan* ran(cufftHandle h, cufftType type) {
  auto* p = plan_of(h);
  if (p == nullptr || !p->made || p->type != type)
    return nullptr;
  ++fake_cufft().executions;
  fake_cufft().executed_on.push_back(p->stream);
  return p;
}

} // namespace fake_cufft_detail

/// Fills `api` with the fake: cufftCreate, cufftPlan1d, cufftMakePlan1d,
/// cufftEstimate1d, cufftGetSize, cufftSetStream, cufftSetWorkArea,
/// cufftExecC2C, cufftExecR2C, cufftDestroy and cufftGetVersion (12000).
/// Everything else stays null: missing from this library.
inline void install_fake_cufft(executor::cufft_api& api) {
  namespace d = fake_cufft_detail;
  api.cufftCreate = [](cufftHandle* h) {
    *h = fake_cufft().next++;
    fake_cufft().plans[*h] = fake_plan{};
    return CUFFT_SUCCESS;
  };
  api.cufftPlan1d = [](cufftHandle* h, int nx, cufftType type, int batch) {
    int id = fake_cufft().next++;
    fake_cufft().plans[id] = fake_plan{};
    auto st = d::make(id, nx, type, batch, nullptr);
    if (st != CUFFT_SUCCESS) {
      fake_cufft().plans.erase(id);
      return st;
    }
    *h = id;
    return CUFFT_SUCCESS;
  };
  api.cufftMakePlan1d = [](cufftHandle h, int nx, cufftType type, int batch, size_t* work) {
    return d::make(h, nx, type, batch, work);
  };
  api.cufftEstimate1d = [](int nx, cufftType, int, size_t* work) {
    *work = fake_cufft_work(nx);
    return CUFFT_SUCCESS;
  };
  api.cufftGetSize = [](cufftHandle h, size_t* work) {
    auto* p = d::plan_of(h);
    if (p == nullptr)
      return CUFFT_INVALID_PLAN;
    *work = fake_cufft_work(p->nx);
    return CUFFT_SUCCESS;
  };
  api.cufftSetStream = [](cufftHandle h, cudaStream_t s) {
    auto* p = d::plan_of(h);
    if (p == nullptr)
      return CUFFT_INVALID_PLAN;
    ++fake_cufft().set_streams;
    p->stream = s;
    return CUFFT_SUCCESS;
  };
  api.cufftSetWorkArea = [](cufftHandle h, void* area) {
    auto* p = d::plan_of(h);
    if (p == nullptr)
      return CUFFT_INVALID_PLAN;
    p->work_area = area;
    return CUFFT_SUCCESS;
  };
  api.cufftExecC2C = [](cufftHandle h, cufftComplex* in, cufftComplex* out, int direction) {
    auto* p = d::ran(h, CUFFT_C2C);
    if (p == nullptr)
      return CUFFT_INVALID_PLAN;
    float k = direction == CUFFT_FORWARD ? 2.0f : 3.0f;
    for (int i = 0; i < p->nx * p->batch; ++i)
      out[i] = cufftComplex{in[i].x * k, in[i].y * k};
    return CUFFT_SUCCESS;
  };
  api.cufftExecR2C = [](cufftHandle h, cufftReal* in, cufftComplex* out) {
    auto* p = d::ran(h, CUFFT_R2C);
    if (p == nullptr)
      return CUFFT_INVALID_PLAN;
    int half = p->nx / 2 + 1;
    for (int b = 0; b < p->batch; ++b)
      for (int i = 0; i < half; ++i)
        out[b * half + i] = cufftComplex{in[b * p->nx + i], 0.0f};
    return CUFFT_SUCCESS;
  };
  api.cufftDestroy = [](cufftHandle h) {
    return fake_cufft().plans.erase(h) != 0 ? CUFFT_SUCCESS : CUFFT_INVALID_PLAN;
  };
  api.cufftGetVersion = [](int* v) {
    *v = 12000;
    return CUFFT_SUCCESS;
  };
}

} // namespace gleam::test
