#pragma once

// A fake cuRAND for the CPU tests (tests/executor/curand_test.cpp, the fake
// GPU server's tests/interpose_runtime/fake_generic_calls.cpp): generators
// whose values are computed from their seed and offset and written where
// the library would write them, distributions, the version and one host
// table; every call logged. Header-only: the entry points are plain
// function pointers over one process-wide log. Not thread-safe.

#include <curand.h>

#include <cstdint>
#include <cstdlib>
#include <set>
#include <vector>

#include "executor/curand_api.hpp"
#include "wire/curand_tables.hpp"

namespace gleam::test {

/// One generator of the fake.
struct fake_generator {
  curandRngType_t type = CURAND_RNG_PSEUDO_DEFAULT;
  bool host = false;
  unsigned long long seed = 0;
  unsigned long long offset = 0;
  cudaStream_t stream = nullptr;
};

/// What the fake saw, and where its device results go.
struct fake_curand_log {
  std::set<fake_generator*> generators;
  std::set<void*> distributions;
  int generates = 0;
  int set_streams = 0;
  /// The stream each generation of a device generator ran on, in order.
  std::vector<cudaStream_t> generated_on;
  /// Maps a device address to the host memory behind [p, p + bytes) (null:
  /// not backed, nothing is written); null: device addresses are host
  /// pointers.
  void* (*translate)(void* device, uint64_t bytes) = nullptr;
};

inline fake_curand_log& fake_curand() {
  static fake_curand_log log;
  return log;
}

/// Value `i` of generator `g` from its offset: seed * 1000 + offset + i.
inline unsigned int fake_curand_value(const fake_generator& g, size_t i) {
  return static_cast<unsigned int>(g.seed * 1000 + g.offset + i);
}

namespace fake_curand_detail {

inline fake_generator* generator_of(curandGenerator_t g) {
  auto* f = reinterpret_cast<fake_generator*>(g);
  return fake_curand().generators.count(f) != 0 ? f : nullptr;
}

/// Writes `n` values `value(fake_curand_value(...))` at `out` and advances
/// the generator's offset.
template <class T, class F>
curandStatus_t fill(curandGenerator_t g, T* out, size_t n, F value) {
  auto* f = generator_of(g);
  if (f == nullptr)
    return CURAND_STATUS_NOT_INITIALIZED;
  auto& log = fake_curand();
  ++log.generates;
  T* p = out;
  if (!f->host) {
    log.generated_on.push_back(f->stream);
    if (log.translate != nullptr)
      p = static_cast<T*>(log.translate(out, n * sizeof(T)));
  }
  for (size_t i = 0; p != nullptr && i < n; ++i)
    p[i] = value(fake_curand_value(*f, i));
  f->offset += n;
  return CURAND_STATUS_SUCCESS;
}

inline curandStatus_t make(curandGenerator_t* g, curandRngType_t type, bool host) {
  if (type == CURAND_RNG_TEST)
    return CURAND_STATUS_TYPE_ERROR;
  auto* f = new fake_generator;
  f->type = type;
  f->host = host;
  fake_curand().generators.insert(f);
  *g = reinterpret_cast<curandGenerator_t>(f);
  return CURAND_STATUS_SUCCESS;
}

template <class T>
curandStatus_t normal(curandGenerator_t g, T* out, size_t n, T mean, T stddev) {
  if (n % 2 != 0)
    return CURAND_STATUS_LENGTH_NOT_MULTIPLE;
  return fill(g, out, n, [=](unsigned int r) { return mean + stddev * static_cast<T>(r); });
}

} // namespace fake_curand_detail

/// Fills `api` with the fake: generators (curandCreateGenerator refuses
/// CURAND_RNG_TEST with CURAND_STATUS_TYPE_ERROR), SetStream, seed and
/// offset, curandGenerate (the values themselves), GenerateUniform (/
/// 4096), GenerateNormal and NormalDouble (mean + stddev * value; an odd
/// count is CURAND_STATUS_LENGTH_NOT_MULTIPLE), Poisson distributions, the
/// version 10400 and the 32-bit scramble constants (i * 7). Everything else
/// stays null: missing from this library.
inline void install_fake_curand(executor::curand_api& api) {
  namespace d = fake_curand_detail;
  api.curandCreateGenerator = [](curandGenerator_t* g, curandRngType_t type) {
    return d::make(g, type, false);
  };
  api.curandCreateGeneratorHost = [](curandGenerator_t* g, curandRngType_t type) {
    return d::make(g, type, true);
  };
  api.curandDestroyGenerator = [](curandGenerator_t g) {
    auto* f = d::generator_of(g);
    if (f == nullptr)
      return CURAND_STATUS_NOT_INITIALIZED;
    fake_curand().generators.erase(f);
    delete f;
    return CURAND_STATUS_SUCCESS;
  };
  api.curandSetStream = [](curandGenerator_t g, cudaStream_t s) {
    auto* f = d::generator_of(g);
    if (f == nullptr)
      return CURAND_STATUS_NOT_INITIALIZED;
    ++fake_curand().set_streams;
    f->stream = s;
    return CURAND_STATUS_SUCCESS;
  };
  api.curandSetPseudoRandomGeneratorSeed = [](curandGenerator_t g, unsigned long long seed) {
    auto* f = d::generator_of(g);
    if (f == nullptr)
      return CURAND_STATUS_NOT_INITIALIZED;
    f->seed = seed;
    return CURAND_STATUS_SUCCESS;
  };
  api.curandSetGeneratorOffset = [](curandGenerator_t g, unsigned long long offset) {
    auto* f = d::generator_of(g);
    if (f == nullptr)
      return CURAND_STATUS_NOT_INITIALIZED;
    f->offset = offset;
    return CURAND_STATUS_SUCCESS;
  };
  api.curandGenerate = [](curandGenerator_t g, unsigned int* out, size_t n) {
    return d::fill(g, out, n, [](unsigned int r) { return r; });
  };
  api.curandGenerateUniform = [](curandGenerator_t g, float* out, size_t n) {
    return d::fill(g, out, n, [](unsigned int r) { return static_cast<float>(r) / 4096.0f; });
  };
  api.curandGenerateNormal = [](curandGenerator_t g, float* out, size_t n, float mean,
                                float stddev) { return d::normal(g, out, n, mean, stddev); };
  api.curandGenerateNormalDouble = [](curandGenerator_t g, double* out, size_t n, double mean,
                                      double stddev) { return d::normal(g, out, n, mean, stddev); };
  api.curandCreatePoissonDistribution = [](double lambda, curandDiscreteDistribution_t* dist) {
    if (lambda <= 0)
      return CURAND_STATUS_OUT_OF_RANGE;
    auto* p = static_cast<curandDiscreteDistribution_t>(std::calloc(1, 64));
    fake_curand().distributions.insert(p);
    *dist = p;
    return CURAND_STATUS_SUCCESS;
  };
  api.curandDestroyDistribution = [](curandDiscreteDistribution_t dist) {
    if (fake_curand().distributions.erase(dist) == 0)
      return CURAND_STATUS_NOT_INITIALIZED;
    std::free(dist);
    return CURAND_STATUS_SUCCESS;
  };
  api.curandGetVersion = [](int* v) {
    *v = 10400;
    return CURAND_STATUS_SUCCESS;
  };
  api.curandGetScrambleConstants32 = [](unsigned int** constants) {
    static std::vector<unsigned int> table = [] {
      std::vector<unsigned int> t(wire::curand_tables::dimensions);
      for (size_t i = 0; i < t.size(); ++i)
        t[i] = static_cast<unsigned int>(i * 7);
      return t;
    }();
    *constants = table.data();
    return CURAND_STATUS_SUCCESS;
  };
}

} // namespace gleam::test
