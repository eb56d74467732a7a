// The codes of calls made while a stream captures, in each capture mode:
// legal ones, the ones CUDA forbids (potentially unsafe calls, syncs of a
// capturing stream, implicit legacy-stream dependencies), from the capturing
// thread and from another thread, and what cudaStreamEndCapture says after
// each. Through Gleam every line must read as it does locally.
#include "common.cuh"

#include <functional>
#include <thread>

__global__ void touch(unsigned* p) {
  *p += 1;
}

namespace {

const char* mode_name(cudaStreamCaptureMode m) {
  switch (m) {
    case cudaStreamCaptureModeGlobal:
      return "global";
    case cudaStreamCaptureModeThreadLocal:
      return "thread-local";
    default:
      return "relaxed";
  }
}

struct fixture {
  cudaStream_t blocking = nullptr;
  cudaStream_t nonblocking = nullptr;
  unsigned* dev = nullptr;
  unsigned host[4] = {1, 2, 3, 4};
  cudaEvent_t event = nullptr;
};

/// Begins a capture on `s` in `mode`, runs `call` (which returns the code
/// to print), ends the capture and prints both codes plus the status the
/// capture had just before its end.
void run_case(fixture& f, cudaStream_t s, cudaStreamCaptureMode mode, const char* what,
              const std::function<cudaError_t()>& call, gleam_program::checksum& sum) {
  GLEAM_PROGRAM_CHECK(cudaStreamBeginCapture(s, mode));
  touch<<<1, 1, 0, s>>>(f.dev);
  cudaError_t code = call();
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  cudaError_t query = cudaStreamIsCapturing(s, &status);
  cudaGraph_t graph = nullptr;
  cudaError_t end = cudaStreamEndCapture(s, &graph);
  if (graph != nullptr)
    GLEAM_PROGRAM_CHECK(cudaGraphDestroy(graph));
  cudaError_t last = cudaGetLastError();
  std::printf("%-12s %-40s -> %s; status %s %d; end %s; last %s\n", mode_name(mode), what,
              cudaGetErrorName(code), cudaGetErrorName(query), static_cast<int>(status),
              cudaGetErrorName(end), cudaGetErrorName(last));
  int codes[] = {code, query, static_cast<int>(status), end};
  sum.add(codes, sizeof codes);
  // Whatever happened, the device stays usable for the next case.
  GLEAM_PROGRAM_CHECK(cudaDeviceSynchronize());
}

cudaError_t on_other_thread(const std::function<cudaError_t()>& call) {
  cudaError_t code = cudaSuccess;
  std::thread t{[&] { code = call(); }};
  t.join();
  return code;
}

} // namespace

int main() {
  gleam_program::checksum sum;
  fixture f;
  GLEAM_PROGRAM_CHECK(cudaStreamCreate(&f.blocking));
  GLEAM_PROGRAM_CHECK(cudaStreamCreateWithFlags(&f.nonblocking, cudaStreamNonBlocking));
  GLEAM_PROGRAM_CHECK(cudaMalloc(&f.dev, 4 * sizeof(unsigned)));
  GLEAM_PROGRAM_CHECK(cudaMemset(f.dev, 0, 4 * sizeof(unsigned)));
  GLEAM_PROGRAM_CHECK(cudaEventCreate(&f.event));

  for (auto mode : {cudaStreamCaptureModeGlobal, cudaStreamCaptureModeThreadLocal,
                    cudaStreamCaptureModeRelaxed}) {
    for (cudaStream_t s : {f.nonblocking, f.blocking}) {
      const char* kind = s == f.blocking ? "[blocking] " : "[nonblocking] ";
      auto label = [&](const char* what) {
        static char buf[128];
        std::snprintf(buf, sizeof buf, "%s%s", kind, what);
        return buf;
      };
      run_case(f, s, mode, label("cudaMemsetAsync (legal)"),
               [&] { return cudaMemsetAsync(f.dev, 0, sizeof(unsigned), s); }, sum);
      run_case(f, s, mode, label("cudaMalloc"), [&] {
        void* p = nullptr;
        cudaError_t e = cudaMalloc(&p, 256);
        if (e == cudaSuccess)
          static_cast<void>(cudaFree(p));
        return e;
      }, sum);
      run_case(f, s, mode, label("cudaMalloc in relaxed thread mode"), [&] {
        cudaStreamCaptureMode m = cudaStreamCaptureModeRelaxed;
        GLEAM_PROGRAM_CHECK(cudaThreadExchangeStreamCaptureMode(&m));
        void* p = nullptr;
        cudaError_t e = cudaMalloc(&p, 256);
        GLEAM_PROGRAM_CHECK(cudaThreadExchangeStreamCaptureMode(&m));
        if (e == cudaSuccess)
          e = cudaFree(p);
        return e;
      }, sum);
      run_case(f, s, mode, label("cudaMalloc on another thread"), [&] {
        return on_other_thread([] {
          void* p = nullptr;
          cudaError_t e = cudaMalloc(&p, 256);
          if (e == cudaSuccess)
            static_cast<void>(cudaFree(p));
          return e;
        });
      }, sum);
      run_case(f, s, mode, label("cudaMemcpy host-to-device"), [&] {
        return cudaMemcpy(f.dev, f.host, sizeof f.host, cudaMemcpyHostToDevice);
      }, sum);
      run_case(f, s, mode, label("cudaStreamSynchronize(capturing)"),
               [&] { return cudaStreamSynchronize(s); }, sum);
      run_case(f, s, mode, label("cudaStreamQuery(capturing)"),
               [&] { return cudaStreamQuery(s); }, sum);
      run_case(f, s, mode, label("cudaDeviceSynchronize"),
               [&] { return cudaDeviceSynchronize(); }, sum);
      run_case(f, s, mode, label("launch on the legacy stream"), [&] {
        touch<<<1, 1>>>(f.dev);
        return cudaGetLastError();
      }, sum);
      run_case(f, s, mode, label("cudaStreamIsCapturing(legacy)"), [&] {
        cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
        return cudaStreamIsCapturing(nullptr, &st);
      }, sum);
      run_case(f, s, mode, label("cudaEventQuery of a captured event"), [&] {
        GLEAM_PROGRAM_CHECK(cudaEventRecord(f.event, s));
        return cudaEventQuery(f.event);
      }, sum);
      run_case(f, s, mode, label("cudaStreamBeginCapture twice"),
               [&] { return cudaStreamBeginCapture(s, mode); }, sum);
    }
  }

  unsigned out[4] = {};
  GLEAM_PROGRAM_CHECK(cudaMemcpy(out, f.dev, sizeof out, cudaMemcpyDeviceToHost));
  std::printf("device values %u %u %u %u\n", out[0], out[1], out[2], out[3]);
  sum.add(out, sizeof out);
  GLEAM_PROGRAM_CHECK(cudaEventDestroy(f.event));
  GLEAM_PROGRAM_CHECK(cudaFree(f.dev));
  GLEAM_PROGRAM_CHECK(cudaStreamDestroy(f.blocking));
  GLEAM_PROGRAM_CHECK(cudaStreamDestroy(f.nonblocking));
  sum.print("capture_illegal");
  return 0;
}
