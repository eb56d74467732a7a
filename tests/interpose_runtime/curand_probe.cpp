// interpose_curand_probe LIB SCENARIO: loads LIB (a libcudart.so.13) and the
// libcurand.so.10 next to it with dlopen, as an app would, and runs one
// scenario against a server (fake_gpu_server in the CPU tests, whose fake
// cuRAND computes value i of a generator as seed * 1000 + offset + i).
// Prints one "key=value" line per observation; exit code 0 unless the
// libraries could not be used.
//
//   curand   a device generator (seed, offset, stream, uniform and raw
//            values into device memory, read back), a host generator (a
//            small call and one larger than a message), a Poisson
//            distribution, the version and a host table, the checks made at
//            the call, failures the server reports later (an odd count for
//            a normal distribution, a range past its allocation, a
//            function the fake lacks), and the destroys
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>
#include <curand.h>

#include "probe_bind.hpp"

namespace {

using gleam::test::bind;

const char* status(curandStatus_t s) {
  switch (s) {
    case CURAND_STATUS_SUCCESS:
      return "CURAND_STATUS_SUCCESS";
    case CURAND_STATUS_NOT_INITIALIZED:
      return "CURAND_STATUS_NOT_INITIALIZED";
    case CURAND_STATUS_ALLOCATION_FAILED:
      return "CURAND_STATUS_ALLOCATION_FAILED";
    case CURAND_STATUS_OUT_OF_RANGE:
      return "CURAND_STATUS_OUT_OF_RANGE";
    case CURAND_STATUS_LENGTH_NOT_MULTIPLE:
      return "CURAND_STATUS_LENGTH_NOT_MULTIPLE";
    case CURAND_STATUS_ARCH_MISMATCH:
      return "CURAND_STATUS_ARCH_MISMATCH";
    case CURAND_STATUS_INITIALIZATION_FAILED:
      return "CURAND_STATUS_INITIALIZATION_FAILED";
    default:
      return "another status";
  }
}

struct cuda {
  cudaError_t (*malloc)(void**, size_t);
  cudaError_t (*memcpy)(void*, const void*, size_t, cudaMemcpyKind);
  cudaError_t (*stream_create)(cudaStream_t*);
  const char* (*error_name)(cudaError_t);
};

struct rand_api {
  decltype(&curandCreateGenerator) create;
  decltype(&curandCreateGeneratorHost) create_host;
  decltype(&curandDestroyGenerator) destroy;
  decltype(&curandSetPseudoRandomGeneratorSeed) seed;
  decltype(&curandSetGeneratorOffset) offset;
  decltype(&curandSetStream) set_stream;
  decltype(&curandSetQuasiRandomGeneratorDimensions) dimensions;
  decltype(&curandGenerate) generate;
  decltype(&curandGenerateUniform) uniform;
  decltype(&curandGenerateNormal) normal;
  decltype(&curandGeneratePoisson) poisson;
  decltype(&curandGeneratePoissonMethod) poisson_method;
  decltype(&curandCreatePoissonDistribution) create_distribution;
  decltype(&curandDestroyDistribution) destroy_distribution;
  decltype(&curandGetVersion) version;
  decltype(&curandGetScrambleConstants32) constants;
  decltype(&curandGetDirectionVectors32) vectors;
};

/// The first `n` values, comma-separated.
template <class T>
std::string list(const T* v, size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i)
    out += (i == 0 ? "" : ",") + std::to_string(v[i]);
  return out;
}

int run(const cuda& c, const rand_api& r) {
  auto show = [](const char* what, curandStatus_t s) { std::printf("%s=%s\n", what, status(s)); };
  int v = 0;
  auto vs = r.version(&v);
  std::printf("version=%s value=%d\n", status(vs), v);
  void* p = nullptr;
  if (c.malloc(&p, 4096) != cudaSuccess)
    return 5;
  auto* f = static_cast<float*>(p);
  auto read_back = [&](void* dst, size_t bytes) { return c.error_name(c.memcpy(dst, p, bytes, cudaMemcpyDeviceToHost)); };

  curandGenerator_t g = nullptr;
  show("create", r.create(&g, CURAND_RNG_PSEUDO_XORWOW));
  show("seed", r.seed(g, 2));
  show("offset", r.offset(g, 10));
  show("uniform", r.uniform(g, f, 4));
  float back[8] = {};
  auto e = read_back(back, sizeof(back));
  std::printf("sync=%s values=%s\n", e, list(back, 4).c_str());
  cudaStream_t s = nullptr;
  c.stream_create(&s);
  show("stream", r.set_stream(g, s));
  show("raw", r.generate(g, static_cast<unsigned int*>(p), 3));
  unsigned int raw[3] = {};
  e = read_back(raw, sizeof(raw));
  std::printf("sync=%s raw=%s\n", e, list(raw, 3).c_str());
  // Checks the vendor makes at the call: nothing is sent.
  show("dimensions_zero", r.dimensions(g, 0));
  unsigned int counts[4];
  show("poisson_lambda", r.poisson(g, counts, 4, -1.0));
  show("null_generator", r.uniform(nullptr, f, 4));
  // Failures the server reports: deferred to the next synchronizing call.
  show("normal_odd", r.normal(g, f, 3, 0.0f, 1.0f));
  std::printf("sync_after=%s\n", read_back(back, 4));
  show("past_end", r.uniform(g, f, size_t{1} << 28));
  std::printf("sync_after=%s\n", read_back(back, 4));
  show("missing", r.poisson_method(g, static_cast<unsigned int*>(p), 4, 3.0, CURAND_POISSON));
  std::printf("sync_after=%s\n", read_back(back, 4));

  curandGenerator_t h = nullptr;
  show("host_create", r.create_host(&h, CURAND_RNG_PSEUDO_PHILOX4_32_10));
  show("host_seed", r.seed(h, 3));
  float small[5] = {};
  show("host_uniform", r.uniform(h, small, 5));
  std::printf("host_values=%s\n", list(small, 5).c_str());
  // 300,000 values: more than one message, read back in pieces.
  std::vector<unsigned int> many(300000, 0);
  show("host_large", r.generate(h, many.data(), many.size()));
  size_t wrong = 0;
  for (size_t i = 0; i < many.size(); ++i)
    wrong += many[i] != 3 * 1000 + 5 + i;
  std::printf("host_large_wrong=%zu\n", wrong);

  curandDiscreteDistribution_t d = nullptr;
  show("distribution", r.create_distribution(4.0, &d));
  std::printf("distribution_set=%d\n", d != nullptr ? 1 : 0);
  show("destroy_distribution", r.destroy_distribution(d));
  unsigned int* constants = nullptr;
  show("constants", r.constants(&constants));
  std::printf("constant_3=%u\n", constants != nullptr ? constants[3] : 0u);
  unsigned int* again = nullptr;
  r.constants(&again);
  std::printf("same_table=%d\n", again == constants ? 1 : 0);
  curandDirectionVectors32_t* vectors = nullptr;
  show("vectors", r.vectors(&vectors, CURAND_DIRECTION_VECTORS_32_JOEKUO6));
  show("destroy", r.destroy(g));
  show("host_destroy", r.destroy(h));
  std::printf("final_sync=%s\n", read_back(back, 4));
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: interpose_curand_probe LIB SCENARIO\n");
    return 2;
  }
  std::string dir = argv[1];
  dir = dir.substr(0, dir.rfind('/') + 1);
  void* lib = ::dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  void* rand = ::dlopen((dir + "libcurand.so.10").c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr || rand == nullptr) {
    std::fprintf(stderr, "dlopen: %s\n", ::dlerror());
    return 3;
  }
  cuda c{};
  rand_api r{};
  if (!bind(lib, "cudaMalloc", c.malloc) || !bind(lib, "cudaMemcpy", c.memcpy)
      || !bind(lib, "cudaStreamCreate", c.stream_create)
      || !bind(lib, "cudaGetErrorName", c.error_name)
      || !bind(rand, "curandCreateGenerator", r.create)
      || !bind(rand, "curandCreateGeneratorHost", r.create_host)
      || !bind(rand, "curandDestroyGenerator", r.destroy)
      || !bind(rand, "curandSetPseudoRandomGeneratorSeed", r.seed)
      || !bind(rand, "curandSetGeneratorOffset", r.offset)
      || !bind(rand, "curandSetStream", r.set_stream)
      || !bind(rand, "curandSetQuasiRandomGeneratorDimensions", r.dimensions)
      || !bind(rand, "curandGenerate", r.generate)
      || !bind(rand, "curandGenerateUniform", r.uniform)
      || !bind(rand, "curandGenerateNormal", r.normal)
      || !bind(rand, "curandGeneratePoisson", r.poisson)
      || !bind(rand, "curandGeneratePoissonMethod", r.poisson_method)
      || !bind(rand, "curandCreatePoissonDistribution", r.create_distribution)
      || !bind(rand, "curandDestroyDistribution", r.destroy_distribution)
      || !bind(rand, "curandGetVersion", r.version)
      || !bind(rand, "curandGetScrambleConstants32", r.constants)
      || !bind(rand, "curandGetDirectionVectors32", r.vectors))
    return 4;
  if (std::string{argv[2]} != "curand") {
    std::fprintf(stderr, "unknown scenario %s\n", argv[2]);
    return 2;
  }
  return run(c, r);
}
