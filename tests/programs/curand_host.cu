// cuRAND's host API through the shared library: pseudorandom generators
// (XORWOW and PHILOX) with seeds, offsets and an ordering, on the legacy
// stream and on a stream of the app, generating uniform, normal, log-normal,
// Poisson and raw values into device memory; quasirandom generators (Sobol
// 32 with two dimensions, Sobol 64); a host generator whose values come
// back into host memory (a small call and one larger than a message); a
// Poisson distribution that a kernel of ours samples with the device API
// (curand_discrete); the direction vectors and scramble constants tables;
// the version and properties. cuRAND is deterministic for a given seed,
// offset and ordering: every value is printed so that a local run and a run
// through Gleam can be compared byte for byte.
#include "common.cuh"

#include <curand.h>
#include <curand_kernel.h>

#include <vector>

#define GLEAM_CURAND_CHECK(call)                                                  \
  do {                                                                            \
    curandStatus_t gleam_curand_status_ = (call);                                 \
    if (gleam_curand_status_ != CURAND_STATUS_SUCCESS) {                          \
      std::fprintf(stderr, "%s:%d: %s failed: curandStatus_t %d\n", __FILE__,     \
                   __LINE__, #call, static_cast<int>(gleam_curand_status_));      \
      std::exit(1);                                                               \
    }                                                                             \
  } while (false)

namespace {

gleam_program::checksum sum;

void print_value(float x) {
  std::printf(" %.9g", static_cast<double>(x));
}
void print_value(double x) {
  std::printf(" %.17g", x);
}
void print_value(unsigned int x) {
  std::printf(" %u", x);
}
void print_value(unsigned long long x) {
  std::printf(" %llu", x);
}

/// Prints every value of `v` under `label` and adds them to the checksum.
template <class T>
void show(const char* label, const std::vector<T>& v) {
  std::printf("%s:", label);
  for (const auto& x : v)
    print_value(x);
  std::printf("\n");
  sum.add(v.data(), v.size() * sizeof(T));
}

template <class T>
std::vector<T> to_host(const T* p, size_t n) {
  std::vector<T> v(n);
  GLEAM_PROGRAM_CHECK(cudaMemcpy(v.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost));
  return v;
}

void version() {
  int v = 0, major = 0, minor = 0, patch = 0;
  GLEAM_CURAND_CHECK(curandGetVersion(&v));
  GLEAM_CURAND_CHECK(curandGetProperty(MAJOR_VERSION, &major));
  GLEAM_CURAND_CHECK(curandGetProperty(MINOR_VERSION, &minor));
  GLEAM_CURAND_CHECK(curandGetProperty(PATCH_LEVEL, &patch));
  GLEAM_PROGRAM_EXPECT(v / 1000 == major, "curandGetVersion agrees with MAJOR_VERSION");
  std::printf("curand major %d\n", major);
}

/// XORWOW on the legacy stream: uniform, normal and Poisson values, then
/// the same seed again after curandGenerateSeeds and an offset.
void xorwow() {
  curandGenerator_t g = nullptr;
  GLEAM_CURAND_CHECK(curandCreateGenerator(&g, CURAND_RNG_PSEUDO_XORWOW));
  GLEAM_CURAND_CHECK(curandSetPseudoRandomGeneratorSeed(g, 1234ull));
  GLEAM_CURAND_CHECK(curandSetGeneratorOffset(g, 0));
  float* f = nullptr;
  unsigned int* u = nullptr;
  GLEAM_PROGRAM_CHECK(cudaMalloc(&f, 64 * sizeof(float)));
  GLEAM_PROGRAM_CHECK(cudaMalloc(&u, 64 * sizeof(unsigned int)));
  GLEAM_CURAND_CHECK(curandGenerateUniform(g, f, 64));
  auto uniform = to_host(f, 64);
  for (float x : uniform)
    GLEAM_PROGRAM_EXPECT(x > 0.0f && x <= 1.0f, "uniform values lie in (0, 1]");
  show("xorwow uniform", uniform);
  GLEAM_CURAND_CHECK(curandGenerateNormal(g, f, 64, 0.0f, 1.0f));
  show("xorwow normal", to_host(f, 64));
  GLEAM_CURAND_CHECK(curandGeneratePoisson(g, u, 64, 4.0));
  show("xorwow poisson", to_host(u, 64));
  GLEAM_CURAND_CHECK(curandGenerate(g, u, 16));
  show("xorwow raw", to_host(u, 16));
  // Seeded again at an offset of 32: the state is regenerated.
  GLEAM_CURAND_CHECK(curandSetPseudoRandomGeneratorSeed(g, 1234ull));
  GLEAM_CURAND_CHECK(curandSetGeneratorOffset(g, 32));
  GLEAM_CURAND_CHECK(curandGenerateSeeds(g));
  GLEAM_CURAND_CHECK(curandGenerateUniform(g, f, 32));
  show("xorwow uniform at offset 32", to_host(f, 32));
  GLEAM_CURAND_CHECK(curandDestroyGenerator(g));
  GLEAM_PROGRAM_CHECK(cudaFree(f));
  GLEAM_PROGRAM_CHECK(cudaFree(u));
}

/// PHILOX on a stream of the app, with an offset and the legacy ordering:
/// doubles (uniform, normal, log-normal) and floats.
void philox() {
  cudaStream_t stream = nullptr;
  GLEAM_PROGRAM_CHECK(cudaStreamCreate(&stream));
  curandGenerator_t g = nullptr;
  GLEAM_CURAND_CHECK(curandCreateGenerator(&g, CURAND_RNG_PSEUDO_PHILOX4_32_10));
  GLEAM_CURAND_CHECK(curandSetStream(g, stream));
  GLEAM_CURAND_CHECK(curandSetPseudoRandomGeneratorSeed(g, 42ull));
  GLEAM_CURAND_CHECK(curandSetGeneratorOffset(g, 1000));
  GLEAM_CURAND_CHECK(curandSetGeneratorOrdering(g, CURAND_ORDERING_PSEUDO_LEGACY));
  double* d = nullptr;
  float* f = nullptr;
  GLEAM_PROGRAM_CHECK(cudaMalloc(&d, 48 * sizeof(double)));
  GLEAM_PROGRAM_CHECK(cudaMalloc(&f, 48 * sizeof(float)));
  GLEAM_CURAND_CHECK(curandGenerateUniformDouble(g, d, 48));
  std::vector<double> ud(48);
  GLEAM_PROGRAM_CHECK(
    cudaMemcpyAsync(ud.data(), d, 48 * sizeof(double), cudaMemcpyDeviceToHost, stream));
  GLEAM_PROGRAM_CHECK(cudaStreamSynchronize(stream));
  show("philox uniform double", ud);
  GLEAM_CURAND_CHECK(curandGenerateNormalDouble(g, d, 48, 10.0, 2.0));
  GLEAM_PROGRAM_CHECK(cudaStreamSynchronize(stream));
  show("philox normal double", to_host(d, 48));
  GLEAM_CURAND_CHECK(curandGenerateLogNormalDouble(g, d, 48, 0.0, 0.5));
  GLEAM_CURAND_CHECK(curandGenerateLogNormal(g, f, 48, 0.0f, 0.5f));
  GLEAM_PROGRAM_CHECK(cudaStreamSynchronize(stream));
  show("philox lognormal double", to_host(d, 48));
  show("philox lognormal", to_host(f, 48));
  GLEAM_CURAND_CHECK(curandGenerateNormal(g, f, 48, -1.0f, 0.25f));
  GLEAM_PROGRAM_CHECK(cudaStreamSynchronize(stream));
  show("philox normal", to_host(f, 48));
  GLEAM_CURAND_CHECK(curandDestroyGenerator(g));
  GLEAM_PROGRAM_CHECK(cudaStreamDestroy(stream));
  GLEAM_PROGRAM_CHECK(cudaFree(d));
  GLEAM_PROGRAM_CHECK(cudaFree(f));
}

/// Sobol 32 in two dimensions and Sobol 64 (64-bit raw values).
void sobol() {
  curandGenerator_t g = nullptr;
  GLEAM_CURAND_CHECK(curandCreateGenerator(&g, CURAND_RNG_QUASI_SOBOL32));
  GLEAM_CURAND_CHECK(curandSetQuasiRandomGeneratorDimensions(g, 2));
  float* f = nullptr;
  GLEAM_PROGRAM_CHECK(cudaMalloc(&f, 32 * sizeof(float)));
  GLEAM_CURAND_CHECK(curandGenerateUniform(g, f, 32));
  show("sobol32 uniform (2 dimensions)", to_host(f, 32));
  GLEAM_CURAND_CHECK(curandDestroyGenerator(g));
  GLEAM_CURAND_CHECK(curandCreateGenerator(&g, CURAND_RNG_QUASI_SOBOL64));
  unsigned long long* ll = nullptr;
  GLEAM_PROGRAM_CHECK(cudaMalloc(&ll, 16 * sizeof(unsigned long long)));
  GLEAM_CURAND_CHECK(curandGenerateLongLong(g, ll, 16));
  show("sobol64 raw", to_host(ll, 16));
  GLEAM_CURAND_CHECK(curandDestroyGenerator(g));
  GLEAM_PROGRAM_CHECK(cudaFree(f));
  GLEAM_PROGRAM_CHECK(cudaFree(ll));
}

/// A host generator: its values come back into host memory, a small call
/// and one of 300,000 floats (more than a message).
void host_generator() {
  curandGenerator_t g = nullptr;
  GLEAM_CURAND_CHECK(curandCreateGeneratorHost(&g, CURAND_RNG_PSEUDO_PHILOX4_32_10));
  GLEAM_CURAND_CHECK(curandSetPseudoRandomGeneratorSeed(g, 7ull));
  std::vector<float> small(40);
  GLEAM_CURAND_CHECK(curandGenerateUniform(g, small.data(), small.size()));
  show("host uniform", small);
  std::vector<double> normal(20);
  GLEAM_CURAND_CHECK(curandGenerateNormalDouble(g, normal.data(), normal.size(), 1.0, 3.0));
  show("host normal double", normal);
  std::vector<unsigned int> poisson(24);
  GLEAM_CURAND_CHECK(curandGeneratePoisson(g, poisson.data(), poisson.size(), 2.5));
  show("host poisson", poisson);
  std::vector<float> large(300000, -1.0f);
  GLEAM_CURAND_CHECK(curandGenerateUniform(g, large.data(), large.size()));
  double total = 0;
  for (float x : large) {
    GLEAM_PROGRAM_EXPECT(x > 0.0f && x <= 1.0f, "every host value was written");
    total += x;
  }
  std::printf("host uniform x300000: first %.9g last %.9g sum %.17g\n",
              static_cast<double>(large.front()), static_cast<double>(large.back()), total);
  sum.add(large.data(), large.size() * sizeof(float));
  GLEAM_CURAND_CHECK(curandDestroyGenerator(g));
}

__global__ void sample_discrete(curandDiscreteDistribution_t dist, unsigned int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  curandState state;
  curand_init(99ull, static_cast<unsigned long long>(i), 0, &state);
  out[i] = curand_discrete(&state, dist);
}

/// A Poisson distribution made by the host API and sampled by our kernel:
/// its handle is the library's device address.
void poisson_distribution() {
  curandDiscreteDistribution_t dist = nullptr;
  GLEAM_CURAND_CHECK(curandCreatePoissonDistribution(10.0, &dist));
  unsigned int* out = nullptr;
  GLEAM_PROGRAM_CHECK(cudaMalloc(&out, 64 * sizeof(unsigned int)));
  sample_discrete<<<2, 32>>>(dist, out, 64);
  GLEAM_PROGRAM_CHECK_LAUNCH();
  show("discrete poisson(10) kernel", to_host(out, 64));
  GLEAM_CURAND_CHECK(curandDestroyDistribution(dist));
  GLEAM_PROGRAM_CHECK(cudaFree(out));
}

/// The library's host tables.
void tables() {
  curandDirectionVectors32_t* v32 = nullptr;
  GLEAM_CURAND_CHECK(curandGetDirectionVectors32(&v32, CURAND_DIRECTION_VECTORS_32_JOEKUO6));
  std::vector<unsigned int> first(v32[1], v32[1] + 8);
  show("direction vectors 32, dimension 1", first);
  sum.add(v32, 20000 * sizeof(curandDirectionVectors32_t));
  curandDirectionVectors32_t* again = nullptr;
  GLEAM_CURAND_CHECK(curandGetDirectionVectors32(&again, CURAND_DIRECTION_VECTORS_32_JOEKUO6));
  GLEAM_PROGRAM_EXPECT(again == v32, "the same table twice");
  curandDirectionVectors64_t* v64 = nullptr;
  GLEAM_CURAND_CHECK(
    curandGetDirectionVectors64(&v64, CURAND_SCRAMBLED_DIRECTION_VECTORS_64_JOEKUO6));
  show("direction vectors 64 scrambled, dimension 2",
       std::vector<unsigned long long>(v64[2], v64[2] + 4));
  unsigned int* c32 = nullptr;
  unsigned long long* c64 = nullptr;
  GLEAM_CURAND_CHECK(curandGetScrambleConstants32(&c32));
  GLEAM_CURAND_CHECK(curandGetScrambleConstants64(&c64));
  show("scramble constants 32", std::vector<unsigned int>(c32, c32 + 6));
  show("scramble constants 64", std::vector<unsigned long long>(c64, c64 + 6));
}

} // namespace

int main() {
  version();
  xorwow();
  philox();
  sobol();
  host_generator();
  poisson_distribution();
  tables();
  sum.print("curand_host");
  return 0;
}
