// cuFFT through the shared library: a batched 1-D complex plan (cufftPlan1d)
// forward and inverse, in place and out of place; a 2-D real-to-complex and
// complex-to-real pair (cufftCreate + cufftMakePlan2d) on a stream of the
// app with a work area of ours (auto allocation off); a cufftPlanMany plan
// of the advanced layout (strided, padded input); a double-precision 3-D
// plan; a half-precision cufftXtMakePlanMany plan run by cufftXtExec; the
// work-size queries, the version and the properties. cuFFT is deterministic
// for a plan and its input on one GPU: every value is printed so that a
// local run and a run through Gleam can be compared byte for byte.
#include "common.cuh"

#include <cuda_fp16.h>
#include <cufft.h>
#include <cufftXt.h>

#include <vector>

#define GLEAM_CUFFT_CHECK(call) GLEAM_PROGRAM_CHECK_STATUS(call, CUFFT_SUCCESS)

namespace {

gleam_program::checksum sum;

/// Prints the bytes of `v` under `label` and adds them to the checksum.
template <class T>
void show(const char* label, const std::vector<T>& v) {
  gleam_program::show_words(sum, label, v);
}

std::vector<float> pattern(size_t n, uint32_t seed) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = static_cast<float>(gleam_program::next_random(seed) % 2001) / 1000.0f - 1.0f;
  return v;
}

template <class T>
std::vector<T> back(const T* d, size_t n) {
  return gleam_program::to_host(d, n);
}

} // namespace

int main() {
  int version = 0;
  GLEAM_CUFFT_CHECK(cufftGetVersion(&version));
  int major = 0, minor = 0;
  GLEAM_CUFFT_CHECK(cufftGetProperty(MAJOR_VERSION, &major));
  GLEAM_CUFFT_CHECK(cufftGetProperty(MINOR_VERSION, &minor));
  std::printf("version %d (%d.%d)\n", version, major, minor);

  // 1-D complex, 3 transforms of 64 points.
  {
    const int n = 64, batch = 3;
    auto host = pattern(2 * n * batch, 1);
    auto* in = reinterpret_cast<cufftComplex*>(gleam_program::to_device(host));
    cufftComplex* out = nullptr;
    GLEAM_PROGRAM_CHECK(cudaMalloc(&out, sizeof(cufftComplex) * n * batch));
    cufftHandle plan;
    GLEAM_CUFFT_CHECK(cufftPlan1d(&plan, n, CUFFT_C2C, batch));
    size_t work = 0;
    GLEAM_CUFFT_CHECK(cufftGetSize(plan, &work));
    std::printf("c2c work area %s\n", work > 0 ? "nonzero" : "zero");
    GLEAM_CUFFT_CHECK(cufftExecC2C(plan, in, out, CUFFT_FORWARD));
    show("c2c forward", back(out, n * batch));
    GLEAM_CUFFT_CHECK(cufftExecC2C(plan, out, out, CUFFT_INVERSE));
    show("c2c inverse in place", back(out, n * batch));
    GLEAM_CUFFT_CHECK(cufftDestroy(plan));
    // A destroyed plan is refused.
    std::printf("exec after destroy: %d\n",
                static_cast<int>(cufftExecC2C(plan, in, out, CUFFT_FORWARD)));
    GLEAM_PROGRAM_CHECK(cudaFree(in));
    GLEAM_PROGRAM_CHECK(cudaFree(out));
  }

  // 2-D real <-> complex on a stream of ours, with our own work area.
  {
    const int nx = 24, ny = 30, half = ny / 2 + 1;
    auto host = pattern(nx * ny, 2);
    auto* in = gleam_program::to_device(host);
    cufftComplex* freq = nullptr;
    float* again = nullptr;
    GLEAM_PROGRAM_CHECK(cudaMalloc(&freq, sizeof(cufftComplex) * nx * half));
    GLEAM_PROGRAM_CHECK(cudaMalloc(&again, sizeof(float) * nx * ny));
    cudaStream_t stream;
    GLEAM_PROGRAM_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    cufftHandle r2c, c2r;
    GLEAM_CUFFT_CHECK(cufftCreate(&r2c));
    GLEAM_CUFFT_CHECK(cufftCreate(&c2r));
    GLEAM_CUFFT_CHECK(cufftSetAutoAllocation(r2c, 0));
    size_t work_r2c = 0, work_c2r = 0, estimate = 0;
    GLEAM_CUFFT_CHECK(cufftEstimate2d(nx, ny, CUFFT_R2C, &estimate));
    GLEAM_CUFFT_CHECK(cufftMakePlan2d(r2c, nx, ny, CUFFT_R2C, &work_r2c));
    GLEAM_CUFFT_CHECK(cufftMakePlan2d(c2r, nx, ny, CUFFT_C2R, &work_c2r));
    std::printf("2-D work sizes %s %s, estimate %s\n", work_r2c > 0 ? "nonzero" : "zero",
                work_c2r > 0 ? "nonzero" : "zero", estimate >= work_r2c ? ">= plan" : "< plan");
    void* area = nullptr;
    GLEAM_PROGRAM_CHECK(cudaMalloc(&area, work_r2c > 0 ? work_r2c : 1));
    GLEAM_CUFFT_CHECK(cufftSetWorkArea(r2c, area));
    GLEAM_CUFFT_CHECK(cufftSetStream(r2c, stream));
    GLEAM_CUFFT_CHECK(cufftSetStream(c2r, stream));
    GLEAM_CUFFT_CHECK(cufftExecR2C(r2c, in, freq));
    GLEAM_CUFFT_CHECK(cufftExecC2R(c2r, freq, again));
    GLEAM_PROGRAM_CHECK(cudaStreamSynchronize(stream));
    show("r2c", back(freq, nx * half));
    show("c2r", back(again, nx * ny));
    GLEAM_CUFFT_CHECK(cufftDestroy(r2c));
    GLEAM_CUFFT_CHECK(cufftDestroy(c2r));
    GLEAM_PROGRAM_CHECK(cudaStreamDestroy(stream));
    GLEAM_PROGRAM_CHECK(cudaFree(area));
    GLEAM_PROGRAM_CHECK(cudaFree(in));
    GLEAM_PROGRAM_CHECK(cudaFree(freq));
    GLEAM_PROGRAM_CHECK(cudaFree(again));
  }

  // The advanced layout: 4 transforms of 16 points, every second float of a
  // padded input (stride 2, distance 40), into a packed output.
  {
    int n[1] = {16}, inembed[1] = {40}, onembed[1] = {16};
    const int batch = 4, istride = 2, idist = 40;
    auto host = pattern(2 * idist * batch, 3);
    auto* in = reinterpret_cast<cufftComplex*>(gleam_program::to_device(host));
    cufftComplex* out = nullptr;
    GLEAM_PROGRAM_CHECK(cudaMalloc(&out, sizeof(cufftComplex) * 16 * batch));
    cufftHandle plan;
    GLEAM_CUFFT_CHECK(cufftPlanMany(&plan, 1, n, inembed, istride, idist, onembed, 1, 16,
                                    CUFFT_C2C, batch));
    GLEAM_CUFFT_CHECK(cufftExecC2C(plan, in, out, CUFFT_FORWARD));
    show("many", back(out, 16 * batch));
    GLEAM_CUFFT_CHECK(cufftDestroy(plan));
    GLEAM_PROGRAM_CHECK(cudaFree(in));
    GLEAM_PROGRAM_CHECK(cudaFree(out));
  }

  // 3-D double complex.
  {
    const int nx = 6, ny = 8, nz = 10, count = nx * ny * nz;
    auto f = pattern(2 * count, 4);
    std::vector<double> host(f.begin(), f.end());
    auto* in = reinterpret_cast<cufftDoubleComplex*>(gleam_program::to_device(host));
    cufftDoubleComplex* out = nullptr;
    GLEAM_PROGRAM_CHECK(cudaMalloc(&out, sizeof(cufftDoubleComplex) * count));
    cufftHandle plan;
    GLEAM_CUFFT_CHECK(cufftPlan3d(&plan, nx, ny, nz, CUFFT_Z2Z));
    GLEAM_CUFFT_CHECK(cufftExecZ2Z(plan, in, out, CUFFT_FORWARD));
    show("z2z 3-D", back(out, count));
    GLEAM_CUFFT_CHECK(cufftDestroy(plan));
    GLEAM_PROGRAM_CHECK(cudaFree(in));
    GLEAM_PROGRAM_CHECK(cudaFree(out));
  }

  // Half precision through the Xt API: 2 transforms of 128 points.
  {
    long long n[1] = {128};
    const long long batch = 2;
    auto f = pattern(2 * 128 * batch, 5);
    std::vector<__half> host(f.size());
    for (size_t i = 0; i < f.size(); ++i)
      host[i] = __float2half(f[i]);
    auto* in = gleam_program::to_device(host);
    __half* out = nullptr;
    GLEAM_PROGRAM_CHECK(cudaMalloc(&out, sizeof(__half) * f.size()));
    cufftHandle plan;
    GLEAM_CUFFT_CHECK(cufftCreate(&plan));
    size_t work = 0;
    GLEAM_CUFFT_CHECK(cufftXtMakePlanMany(plan, 1, n, nullptr, 1, 0, CUDA_C_16F, nullptr, 1, 0,
                                          CUDA_C_16F, batch, &work, CUDA_C_16F));
    GLEAM_CUFFT_CHECK(cufftXtExec(plan, in, out, CUFFT_FORWARD));
    show("xt half", back(out, f.size()));
    GLEAM_CUFFT_CHECK(cufftDestroy(plan));
    GLEAM_PROGRAM_CHECK(cudaFree(in));
    GLEAM_PROGRAM_CHECK(cudaFree(out));
  }
  GLEAM_PROGRAM_CHECK(cudaDeviceSynchronize());
  sum.print("cufft_plans");
  return 0;
}
